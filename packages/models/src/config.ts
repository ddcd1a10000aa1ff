/**
 * Configuration of the OpenAI-compatible client and its checks (MO-16): where the server is, whether
 * it needs a key, and whether the values can be sent at all. Nothing here touches the network.
 */
import { ModelSpecError, type ModelSpecProblem } from "./spec-error.ts";

export interface OpenAIConfig {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1` (a URL that already ends in
   * `/chat/completions` is used as is; a query such as Azure's `?api-version=` is kept). */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly model: string;
  /** Retries after the first attempt for 429, 5xx and network errors (default 3). */
  readonly maxRetries?: number;
  /** First backoff in milliseconds, doubled each retry, capped at 30 s; `Retry-After` wins (default 500). */
  readonly backoffMs?: number;
  /** The longest `Retry-After` the client waits; a server asking for more is not retried (default 60 000). */
  readonly maxRetryAfterMs?: number;
  /** Time to the response headers, and the longest silence between chunks, in ms (default 120 000). */
  readonly idleTimeoutMs?: number;
  /** Bound on the bytes of one response (default 32 MiB). */
  readonly maxResponseBytes?: number;
  /** Extra headers (e.g. an organization). */
  readonly headers?: Readonly<Record<string, string>>;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** `env` with empty values treated as unset (`OPENAI_BASE_URL=` is a common way to "unset"). */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === "" ? undefined : v;
}

/**
 * Reads the configuration from the environment: `OPENAI_BASE_URL`, `OPENAI_API_KEY`,
 * `OPENAI_MODEL` (overrides win). Throws `ModelSpecError` when there is no model name or the base
 * URL is unusable; a missing key is not checked here (see `checkOpenAIConfig`).
 */
export function openAIConfigFromEnv(env: NodeJS.ProcessEnv, overrides: Partial<OpenAIConfig> = {}): OpenAIConfig {
  const model = overrides.model ?? envValue(env, "OPENAI_MODEL");
  const apiKey = overrides.apiKey ?? envValue(env, "OPENAI_API_KEY");
  const baseUrl = overrides.baseUrl ?? envValue(env, "OPENAI_BASE_URL") ?? DEFAULT_BASE_URL;
  const problems: ModelSpecProblem[] = [];
  if (model === undefined || model === "")
    problems.push({
      code: "model-name-missing",
      message: "no model name: pass one (e.g. --model openai:gpt-4o-mini) or set OPENAI_MODEL",
    });
  const url = parseBaseUrl(baseUrl, overrides.baseUrl === undefined && envValue(env, "OPENAI_BASE_URL") !== undefined);
  if (!(url instanceof URL)) problems.push(url);
  const [first, ...rest] = problems;
  if (first !== undefined) throw new ModelSpecError([first, ...rest]);
  return {
    ...overrides,
    baseUrl,
    model: model as string,
    ...(apiKey !== undefined ? { apiKey } : {}),
  };
}

/**
 * The problems that make `config` unusable or certain to be refused: a base URL that is not
 * http(s), carries credentials or a fragment; a key an HTTP header cannot carry; no key for a
 * server that is not on this machine or a private network (loopback, RFC 1918, link-local, IPv6
 * ULA, `*.localhost`, `*.local`, `*.internal`, `*.lan`, `*.home.arpa` and single-label names such as a
 * compose service `ollama` need none — llama.cpp, vLLM and Ollama run without one).
 */
export function checkOpenAIConfig(config: OpenAIConfig, fromEnv = false): ModelSpecProblem[] {
  const problems: ModelSpecProblem[] = [];
  const url = parseBaseUrl(config.baseUrl, fromEnv);
  if (!(url instanceof URL)) return [url];
  const key = config.apiKey;
  if (key === undefined || key.trim() === "") {
    if (!isLocalHost(url.hostname))
      problems.push({
        code: "api-key-missing",
        message: `no OPENAI_API_KEY is set for ${url.origin}: set it (a server that needs none accepts any value, e.g. OPENAI_API_KEY=none)`,
      });
  } else {
    const bad = [...key.trim()].findIndex((c) => c < "\x21" || c > "\x7e");
    if (bad >= 0)
      problems.push({
        code: "api-key-invalid",
        message: `OPENAI_API_KEY has a character an HTTP header cannot carry at position ${bad + 1} (a space, line break or non-ASCII character, often from copying): set it again`,
      });
  }
  return problems;
}

/** The endpoint requests go to: `{baseUrl}/chat/completions`, keeping a query. */
export function chatCompletionsUrl(baseUrl: string): string {
  const url = new URL(baseUrl.trim());
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = /\/chat\/completions$/.test(path) ? path : `${path}/chat/completions`;
  return url.href;
}

/** Parses a base URL, or returns the problem with it. */
export function parseBaseUrl(baseUrl: string, fromEnv = false): URL | ModelSpecProblem {
  const name = fromEnv ? "OPENAI_BASE_URL" : "the base URL";
  const problem = (why: string): ModelSpecProblem => ({
    code: "base-url-invalid",
    message: `${name} ${JSON.stringify(baseUrl)} ${why}; set it like http://127.0.0.1:8080/v1 or ${DEFAULT_BASE_URL}`,
  });
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    return problem("is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return problem("must start with http:// or https://");
  if (url.username !== "" || url.password !== "") return problem("must not carry a user or password (put the key in OPENAI_API_KEY)");
  if (url.hash !== "") return problem("must not have a #fragment");
  return url;
}

/** True for a host on this machine or a private network (see `checkOpenAIConfig`). */
export function isLocalHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (/\.(local|internal|lan|home\.arpa)$/.test(host)) return true;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4 !== null) return privateV4(v4.slice(1).map(Number));
  if (host.includes(":")) {
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
    if (mapped !== null) {
      const [hi, lo] = [Number.parseInt(mapped[1] as string, 16), Number.parseInt(mapped[2] as string, 16)];
      return privateV4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
    }
    return host === "::1" || host === "::" || /^f[cd][0-9a-f]{2}:/.test(host) || /^fe[89ab][0-9a-f]:/.test(host);
  }
  // a single-label name (no dot) only resolves on a local network: a compose or cluster service
  return !host.includes(".");
}

function privateV4([a, b]: number[]): boolean {
  if (a === undefined || b === undefined) return false;
  return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254);
}
