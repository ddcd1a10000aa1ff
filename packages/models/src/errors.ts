/**
 * Turning what an OpenAI-compatible server (or the network) does wrong into classified
 * `ModelError`s (MO-9, MO-10, MO-14, MO-17): every message names the URL that was tried, quotes the
 * server's own words (sanitized and shortened) and, for a network failure, the operating system's
 * error as `CODE address:port`, dug out of fetch's `cause` chain (including `AggregateError`, which
 * Node uses when every address of a host refused).
 */
import { ModelError, type ModelErrorKind } from "@strata/agent/model";

/** What an error body says, whichever of the common shapes it has. */
export interface ErrorInfo {
  readonly message: string;
  readonly code?: string;
  readonly type?: string;
  readonly param?: string;
  /** A numeric `code`/`status` in the body (mid-stream errors carry the HTTP status there). */
  readonly status?: number;
}

/** Makes server text safe to record and print: no control characters, white space collapsed, bounded. */
export function quote(text: string, max = 300): string {
  const clean = text
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/**
 * Reads an error body: OpenAI's `{error: {message, type, param, code}}`, `{error: "text"}`
 * (Ollama), `{message}` / `{object: "error", message}` (vLLM), `{detail}` (FastAPI servers), or any
 * text (quoted as is).
 */
export function errorInfo(body: unknown): ErrorInfo {
  let value = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return { message: quote(body) || "(no message)" };
    }
  }
  if (typeof value !== "object" || value === null) return { message: quote(String(value)) };
  const v = value as Record<string, unknown>;
  const inner = typeof v.error === "object" && v.error !== null ? (v.error as Record<string, unknown>) : v;
  const str = (x: unknown): string | undefined => (typeof x === "string" && x !== "" ? x : undefined);
  let message = str(inner.message) ?? str(v.error) ?? str(v.message) ?? str(v.detail);
  if (message === undefined && Array.isArray(v.detail))
    message = v.detail
      .map((d) => (typeof d === "object" && d !== null ? String((d as { msg?: unknown }).msg ?? "") : String(d)))
      .join("; ");
  const code = inner.code ?? inner.status ?? v.status;
  const status = typeof code === "number" ? code : typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : undefined;
  const info: ErrorInfo = {
    message: quote(message ?? encode(value)),
    ...(str(inner.code) !== undefined ? { code: str(inner.code) } : {}),
    ...(str(inner.type) !== undefined ? { type: str(inner.type) } : {}),
    ...(str(inner.param) !== undefined ? { param: str(inner.param) } : {}),
    ...(status !== undefined ? { status } : {}),
  };
  return info;
}

/** JSON text of a value, or a placeholder for one too deep to encode. */
function encode(value: unknown): string {
  try {
    return JSON.stringify(value).slice(0, 1000);
  } catch {
    return "(an error body nested too deeply to quote)";
  }
}

const CONTEXT_OVERFLOW =
  /context[_ ]length|maximum context|too many tokens|context window|prompt is too long|input is too long|exceeds? the (model's )?(maximum )?context|reduce the length of the (messages|prompt)/i;

function describe(info: ErrorInfo): string {
  const extra = [info.code, info.param !== undefined ? `param ${info.param}` : undefined].filter((x) => x !== undefined);
  return extra.length > 0 ? `${info.message} (${extra.join(", ")})` : info.message;
}

/** Classifies an HTTP error response (MO-9, MO-10). */
export function httpError(url: string, status: number, info: ErrorInfo, retryAfterMs: number | undefined, sentKey: boolean): ModelError {
  const detail = describe(info);
  const opts = { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  const at = `${url} answered HTTP ${status}`;
  if (status === 429) {
    // OpenAI answers 429 for an exhausted quota too: waiting does not help
    if (info.code === "insufficient_quota" || info.type === "insufficient_quota")
      return new ModelError("rate-limit", `${at}: ${detail}; the account's quota is used up`, { ...opts, retryable: false });
    return new ModelError("rate-limit", `${at} (rate limited): ${detail}`, opts);
  }
  if (status === 408) return new ModelError("server", `${at} (request timeout): ${detail}`, opts);
  if (status >= 500) return new ModelError("server", `${at} (server error): ${detail}`, opts);
  if (status === 401 || status === 403)
    return new ModelError(
      "auth",
      `${at} (credentials refused): ${detail}; ${sentKey ? "check OPENAI_API_KEY" : "no key was sent: set OPENAI_API_KEY"}`,
      opts,
    );
  if (status === 413 || info.code === "context_length_exceeded" || CONTEXT_OVERFLOW.test(info.message))
    return new ModelError("context-overflow", `${at}: the prompt is longer than the model accepts: ${detail}`, opts);
  if (status === 404)
    return new ModelError(
      "bad-request",
      `${at} (not found): ${detail}; check OPENAI_BASE_URL (it usually ends in /v1) and the model name`,
      opts,
    );
  if (status >= 300 && status < 400)
    return new ModelError("bad-request", `${at} (a redirect): ${detail}; set OPENAI_BASE_URL to the address it names`, opts);
  return new ModelError("bad-request", `${at} (request rejected): ${detail}`, opts);
}

/** An error object a server sent inside a stream or a 200 response (MO-17). */
export function reportedError(url: string, info: ErrorInfo, where: string): ModelError {
  const detail = describe(info);
  const tag = `${info.code ?? ""} ${info.type ?? ""}`;
  let kind: ModelErrorKind = "server";
  if (info.status === 429 || /rate.?limit|too.?many.?requests/i.test(tag)) kind = "rate-limit";
  else if (info.status === 401 || info.status === 403 || /auth|api.?key|permission/i.test(tag)) kind = "auth";
  else if (info.code === "context_length_exceeded" || CONTEXT_OVERFLOW.test(info.message)) kind = "context-overflow";
  else if (info.status !== undefined && info.status >= 400 && info.status < 500) kind = "bad-request";
  return new ModelError(kind, `${url} reported an error ${where}: ${detail}`, info.status !== undefined ? { status: info.status } : {});
}

interface SystemError {
  readonly code?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly hostname?: unknown;
  readonly message?: unknown;
  readonly errors?: unknown;
  readonly cause?: unknown;
}

/** Failures that retrying cannot fix: name resolution that found nothing, TLS trouble, a blocked port. */
const PERMANENT = /^(ENOTFOUND|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|ERR_TLS_|ERR_SSL_|ERR_INVALID_URL)/;

/**
 * The operating system's account of a network failure, from the innermost causes: `ECONNREFUSED
 * 127.0.0.1:8080`, several joined with `, ` for an `AggregateError`, else the innermost message.
 */
export function describeCause(error: unknown): { text: string; codes: string[] } {
  const codes: string[] = [];
  const leaves: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (typeof e !== "object" || e === null || depth > 8) return;
    const s = e as SystemError;
    if (Array.isArray(s.errors) && s.errors.length > 0) {
      for (const sub of s.errors.slice(0, 8)) visit(sub, depth + 1);
      return;
    }
    if (s.cause !== undefined && typeof s.cause === "object" && s.cause !== null) {
      const before = leaves.length;
      visit(s.cause, depth + 1);
      if (leaves.length > before) return;
    }
    const code = typeof s.code === "string" ? s.code : undefined;
    const message = typeof s.message === "string" ? s.message : "";
    if (code !== undefined) codes.push(code);
    let where = "";
    if (typeof s.address === "string") where = typeof s.port === "number" ? `${s.address}:${s.port}` : s.address;
    else if (typeof s.hostname === "string") where = s.hostname;
    if (code !== undefined && where !== "") leaves.push(`${code} ${where}`);
    else if (code !== undefined)
      leaves.push(message === "" || message.includes(code) ? quote(message || code, 160) : `${code}: ${quote(message, 160)}`);
    else if (message !== "") leaves.push(quote(message, 160));
  };
  visit(error, 0);
  return { text: [...new Set(leaves)].join(", "), codes };
}

/** A fetch failure before or during the response, as a `network` error naming the URL (MO-14). */
export function networkError(url: string, error: unknown, during: "connect" | "stream"): ModelError {
  const { text, codes } = describeCause(error);
  const top = error instanceof Error ? error.message : String(error);
  const why = text !== "" ? text : quote(top, 160);
  if (/bad port/i.test(why)) {
    const port = new URL(url).port;
    return new ModelError(
      "network",
      `cannot reach ${url}: fetch refuses port ${port} (a "bad port" of the Fetch standard); run the server on another port`,
      { cause: error, retryable: false },
    );
  }
  const permanent = codes.some((c) => PERMANENT.test(c));
  const hint = codes.some((c) => c.startsWith("ERR_SSL_WRONG_VERSION"))
    ? " (is the server plain http? then use http://)"
    : codes.some((c) => /^(CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(c))
      ? " (the server's certificate is not trusted: NODE_EXTRA_CA_CERTS can add a CA)"
      : "";
  const message =
    during === "connect" ? `cannot reach ${url}: ${why}${hint}` : `the connection to ${url} broke before the reply finished: ${why}`;
  return new ModelError("network", message, { cause: error, ...(permanent ? { retryable: false } : {}) });
}
