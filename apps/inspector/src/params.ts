/**
 * Query parameters that are counts (IN-22, IN-24): `offset` and `limit` of a page. A value that
 * is not a decimal integer in the endpoint's range is a 400 naming the parameter, the value and
 * the range — never clamped or read as 0 behind the caller's back.
 */
import { HttpError } from "./failure.ts";

export interface CountRange {
  readonly min: number;
  readonly max: number;
  /** When the parameter is absent or empty. */
  readonly default: number;
}

/** `text` (the value of `?name=`) as an integer in `range`, or 400. */
export function countParam(name: string, text: string | null, range: CountRange): number {
  if (text === null || text === "") return range.default;
  const n = /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= range.min && n <= range.max))
    throw new HttpError(400, `?${name}=${JSON.stringify(text.slice(0, 40))} is not a count from ${range.min} to ${range.max}`);
  return n;
}
