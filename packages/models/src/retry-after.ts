/**
 * How long a server asks the client to wait before retrying (MO-8). `Retry-After` is either
 * delay-seconds or an HTTP-date (RFC 9110 §10.2.3) in any of the three forms of §5.6.7 (IMF-fixdate,
 * obsolete RFC 850, asctime — always GMT); a date in the past means "now". `retry-after-ms` (sent
 * by OpenAI and Azure) is milliseconds and wins when usable. Returns undefined when neither header
 * is usable, so the caller's own backoff applies.
 */
export function parseRetryAfter(retryAfter: string | null, retryAfterMs: string | null, nowMs: number): number | undefined {
  const ms = retryAfterMs?.trim() ?? "";
  if (/^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  if (retryAfter === null) return undefined;
  const value = retryAfter.trim();
  // delay-seconds is 1*DIGIT; a decimal is accepted because some servers send one
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = parseHttpDate(value, nowMs);
  return at === undefined ? undefined : Math.max(0, at - nowMs);
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY = "(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*";
const MON = "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)";
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
const IMF = new RegExp(`^${DAY},\\s+(\\d{1,2})\\s+${MON}\\s+(\\d{4})\\s+${TIME}\\s+GMT$`, "i");
const RFC850 = new RegExp(`^${DAY},\\s+(\\d{1,2})-${MON}-(\\d{2})\\s+${TIME}\\s+GMT$`, "i");
const ASCTIME = new RegExp(`^${DAY}\\s+${MON}\\s+(\\d{1,2})\\s+${TIME}\\s+(\\d{4})$`, "i");

/** Milliseconds since the epoch of an HTTP-date, or undefined when `value` is not one. */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  const parts = dateParts(value, nowMs);
  if (parts === undefined) return undefined;
  const [year, month, day, h, min, s] = parts;
  if (day < 1 || day > 31 || h > 23 || min > 59 || s > 60) return undefined;
  const at = Date.UTC(year, MONTHS.indexOf(month.toLowerCase()), day, h, min, s);
  return Number.isNaN(at) ? undefined : at;
}

function dateParts(value: string, nowMs: number): [number, string, number, number, number, number] | undefined {
  const imf = IMF.exec(value);
  if (imf !== null) return [Number(imf[3]), imf[2] as string, Number(imf[1]), Number(imf[4]), Number(imf[5]), Number(imf[6])];
  const rfc850 = RFC850.exec(value);
  if (rfc850 !== null) {
    // a two-digit year more than 50 years in the future is in the past century (RFC 9110 §5.6.7)
    const now = new Date(nowMs).getUTCFullYear();
    const year = Math.floor(now / 100) * 100 + Number(rfc850[3]);
    return [
      year > now + 50 ? year - 100 : year,
      rfc850[2] as string,
      Number(rfc850[1]),
      Number(rfc850[4]),
      Number(rfc850[5]),
      Number(rfc850[6]),
    ];
  }
  const asc = ASCTIME.exec(value);
  if (asc !== null) return [Number(asc[6]), asc[1] as string, Number(asc[2]), Number(asc[3]), Number(asc[4]), Number(asc[5])];
  return undefined;
}
