/**
 * A streaming chat-completions client for OpenAI and compatible servers (llama.cpp, vLLM, Ollama …)
 * (MO-7 … MO-21). It maps the provider-neutral `ModelRequest` to the wire format, streams text,
 * reasoning and tool-call argument deltas as `ModelEvent`s, and turns every failure into a
 * `ModelError` naming the URL: HTTP 429/5xx and network failures are retried with bounded
 * exponential backoff (`Retry-After` wins, up to a cap) *only before the first event was yielded*
 * (a retry after output would duplicate what the session already recorded); a stream that ends
 * without a finish is a `network` error the session records and can resume from.
 */

import { type Model, ModelError, type ModelEvent, type ModelRequest } from "@strata/agent/model";
import { chatCompletionsUrl, type OpenAIConfig, parseBaseUrl } from "./config.ts";
import { errorInfo, httpError, networkError, quote, reportedError } from "./errors.ts";
import { ReplyDecoder } from "./reply.ts";
import { parseRetryAfter } from "./retry-after.ts";
import { readSse } from "./sse.ts";
import { wait } from "./wait.ts";
import { adjustForRejection, toWireRequest, type WireOptions } from "./wire.ts";

export type { OpenAIConfig } from "./config.ts";

/** How much of an error response is read: enough for any message, never a whole hostile body. */
const MAX_ERROR_BODY = 64 * 1024;

export class OpenAICompatibleModel implements Model {
  readonly id: string;
  readonly #config: OpenAIConfig;
  readonly #url: string;
  /** Adjustments a server's rejection asked for (MO-18), kept for this model's later requests. */
  #wire: WireOptions = {};

  /** Throws for a base URL or header that can never be sent (`checkOpenAIConfig` says it up front). */
  constructor(config: OpenAIConfig) {
    const url = parseBaseUrl(config.baseUrl);
    if (!(url instanceof URL)) throw new Error(url.message);
    const headers = { ...config.headers, ...(config.apiKey ? { authorization: `Bearer ${config.apiKey.trim()}` } : {}) };
    for (const [name, value] of Object.entries(headers))
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || !/^[\t\x20-\x7e]*$/.test(value))
        throw new Error(`the header ${JSON.stringify(name)} has a name or value HTTP cannot carry (a line break or non-ASCII character)`);
    this.#config = config;
    this.#url = chatCompletionsUrl(config.baseUrl);
    this.id = `openai:${config.model}`;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const maxRetries = this.#config.maxRetries ?? 3;
    const base = this.#config.backoffMs ?? 500;
    const maxAfter = this.#config.maxRetryAfterMs ?? 60_000;
    const adjusted = new Set<string>();
    for (let attempt = 0; ; ) {
      let yielded = false;
      try {
        for await (const event of this.#attempt(request, signal)) {
          yielded = true;
          yield event;
        }
        return;
      } catch (error) {
        const e = toModelError(error, signal, this.#url);
        if (e.kind === "cancelled") throw e;
        if (!yielded && e instanceof RejectedParameter) {
          const next = adjustForRejection(e.info, request, this.#wire);
          const key = JSON.stringify(next);
          if (next !== undefined && !adjusted.has(key)) {
            adjusted.add(key);
            this.#wire = next;
            continue; // not a retry: the same request in the form this server accepts
          }
        }
        if (yielded || !e.retryable || attempt >= maxRetries) throw e;
        const after = e.options.retryAfterMs;
        if (after !== undefined && after > maxAfter)
          throw new ModelError(
            e.kind,
            `${e.message}; the server asks to wait ${Math.ceil(after / 1000)} s, longer than the ${Math.ceil(maxAfter / 1000)} s this client waits: try again later`,
            { ...e.options, retryable: false },
          );
        await wait(after ?? Math.min(30_000, base * 2 ** attempt), signal);
        attempt++;
      }
    }
  }

  async *#attempt(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream", ...this.#config.headers };
    const key = this.#config.apiKey?.trim() ?? "";
    if (key !== "") headers.authorization = `Bearer ${key}`;
    // One timer covers the wait for headers and every silence between chunks, so a long reply is
    // never cut while a stalled server is.
    const idle = new AbortController();
    const idleMs = this.#config.idleTimeoutMs ?? 120_000;
    let timer = setTimeout(() => idle.abort(), idleMs);
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), idleMs);
    };
    try {
      yield* this.#exchange(headers, key !== "", request, AbortSignal.any([signal, idle.signal]), touch);
    } catch (error) {
      if (idle.signal.aborted && !signal.aborted)
        throw new ModelError("network", `${this.#url} was silent for ${idleMs} ms`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async *#exchange(
    headers: Record<string, string>,
    sentKey: boolean,
    request: ModelRequest,
    signal: AbortSignal,
    touch: () => void,
  ): AsyncGenerator<ModelEvent> {
    const url = this.#url;
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify(toWireRequest(request, this.#config.model, this.#wire)),
        signal,
        // a redirected POST would silently become a GET (Fetch §4.4): report the new address instead
        redirect: "manual",
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw networkError(url, error, "connect");
    }
    touch();
    const limit = this.#config.maxResponseBytes ?? 32 * 1024 * 1024;
    if (!response.ok) {
      const text = await readText(response, Math.min(limit, MAX_ERROR_BODY), touch).catch(() => "");
      const info = errorInfo(
        response.status >= 300 && response.status < 400 ? `redirected to ${response.headers.get("location") ?? "(no location)"}` : text,
      );
      const after = parseRetryAfter(response.headers.get("retry-after"), response.headers.get("retry-after-ms"), Date.now());
      const error = httpError(url, response.status, info, after, sentKey);
      throw response.status === 400 || response.status === 422 ? new RejectedParameter(error, info) : error;
    }
    if (response.body === null)
      throw new ModelError("protocol", `${url} answered HTTP ${response.status} with no body`, { retryable: false });
    const body = bounded(response.body as unknown as AsyncIterable<Uint8Array>, limit, touch, url);
    const decoder = new ReplyDecoder(url);
    let done = false;
    try {
      const { mode, chunks } = await sniff(body, (response.headers.get("content-type") ?? "").toLowerCase());
      if (mode !== "sse") {
        const text = await collectText(chunks, mode === "other" ? MAX_ERROR_BODY : Number.POSITIVE_INFINITY);
        yield* whole(url, response, mode, text, decoder);
        return;
      }
      for await (const sse of readSse(chunks)) {
        if (sse.data.trim() === "[DONE]") {
          done = true;
          break;
        }
        if (sse.event === "error") throw reportedError(url, errorInfo(sse.data), "mid-stream");
        // named events (pings …) carry no completion chunks; nor does an empty `data:` line
        if (sse.event !== "message" || sse.data.trim() === "") continue;
        let value: unknown;
        try {
          value = JSON.parse(sse.data);
        } catch {
          // the body ended inside this event: the reply was cut, not malformed
          if (!sse.terminated) break;
          throw new ModelError("protocol", `${url} sent a chunk that is not JSON: ${quote(sse.data, 200)}`, { retryable: false });
        }
        if (hasError(value)) throw reportedError(url, errorInfo(value), "mid-stream");
        yield* decoder.chunk(value);
        if (decoder.finishReason === "error")
          throw reportedError(url, { message: 'the reply ended with finish_reason "error"' }, "mid-stream");
      }
    } catch (error) {
      if (error instanceof ModelError || signal.aborted) throw error;
      throw networkError(url, error, "stream");
    }
    if (!done && decoder.finishReason === undefined)
      throw new ModelError("network", `the connection to ${url} closed before the reply finished`, { retryable: true });
    yield* decoder.end();
  }
}

/** A 400/422 kept with what the body said, so the caller can see whether a parameter was refused. */
class RejectedParameter extends ModelError {
  constructor(
    error: ModelError,
    readonly info: ReturnType<typeof errorInfo>,
  ) {
    super(error.kind, error.message, error.options);
  }
}

/** The body's chunks, failing once it exceeds `limit` bytes; every chunk resets the idle timer. */
async function* bounded(body: AsyncIterable<Uint8Array>, limit: number, touch: () => void, url: string): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  for await (const chunk of body) {
    touch();
    bytes += chunk.byteLength;
    if (bytes > limit) throw new ModelError("protocol", `the response from ${url} is larger than ${limit} bytes`, { retryable: false });
    yield chunk;
  }
}

/** A 2xx body that is not an event stream: one whole completion, an error object, or not the API at all. */
function* whole(url: string, response: Response, mode: "json" | "other", text: string, decoder: ReplyDecoder): Generator<ModelEvent> {
  if (mode === "other")
    throw new ModelError(
      "protocol",
      `${url} answered HTTP ${response.status} with ${quote(response.headers.get("content-type") ?? "no content type", 80)} instead of an event stream: ${quote(text, 200)}; check OPENAI_BASE_URL (it usually ends in /v1)`,
      { retryable: false },
    );
  // a server that ignores `stream: true` answers with one completion (or an error object)
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ModelError("protocol", `${url} answered with JSON that does not parse: ${quote(text, 200)}`, { retryable: false });
  }
  if (hasError(value)) throw reportedError(url, errorInfo(value), "in an HTTP 200 response");
  yield* decoder.chunk(value);
  yield* decoder.end();
}

/** True for a body that is an error object rather than a completion. */
function hasError(value: unknown): boolean {
  return typeof value === "object" && value !== null && "error" in value && (value as { error: unknown }).error != null;
}

/**
 * Decides how to read a 2xx body: the content type when it says event stream or JSON, else the
 * first characters (some servers and proxies label an event stream `text/plain`, or send none).
 * Returns the body's chunks with those already read put back in front.
 */
async function sniff(
  body: AsyncGenerator<Uint8Array>,
  type: string,
): Promise<{ mode: "sse" | "json" | "other"; chunks: AsyncGenerator<Uint8Array> }> {
  const head: Uint8Array[] = [];
  let mode: "sse" | "json" | "other" | undefined = type.includes("event-stream") ? "sse" : type.includes("json") ? "json" : undefined;
  if (mode === undefined) {
    const decoder = new TextDecoder();
    let seen = "";
    while (seen.trimStart().length < 8) {
      const next = await body.next();
      if (next.done) break;
      head.push(next.value);
      seen += decoder.decode(next.value, { stream: true });
    }
    const start = seen.trimStart();
    mode = /^(data|event|id|retry)\b|^:/.test(start) ? "sse" : /^[{[]/.test(start) ? "json" : "other";
  }
  async function* chunks(): AsyncGenerator<Uint8Array> {
    yield* head;
    yield* body;
  }
  return { mode, chunks: chunks() };
}

/** The (already bounded) body as text, stopping after `max` characters. */
async function collectText(chunks: AsyncIterable<Uint8Array>, max: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of chunks) {
    text += decoder.decode(chunk, { stream: true });
    if (text.length >= max) return text; // leaving the loop cancels the rest of the body
  }
  return text + decoder.decode();
}

/** Up to `limit` bytes of the body as text; a longer body is cut there (its reader cancelled). */
async function readText(response: Response, limit: number, touch: () => void): Promise<string> {
  if (response.body === null) return "";
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    touch();
    const room = limit - bytes;
    bytes += chunk.byteLength;
    text += decoder.decode(chunk.byteLength > room ? chunk.subarray(0, room) : chunk, { stream: true });
    if (bytes >= limit) break; // leaving the loop cancels the rest of the body
  }
  return text + decoder.decode();
}

function toModelError(error: unknown, signal: AbortSignal, url: string): ModelError {
  if (signal.aborted) return new ModelError("cancelled", "the request was cancelled", { cause: error });
  if (error instanceof ModelError) return error;
  return networkError(url, error, "connect");
}
