/**
 * A streaming chat-completions client for OpenAI and compatible servers (llama.cpp, vLLM, Ollama …)
 * (MO-7 … MO-14). It maps the provider-neutral `ModelRequest` to the wire format, streams text and
 * tool-call argument deltas as `ModelEvent`s, and turns every failure into a `ModelError`: HTTP
 * 429/5xx and network failures are retried with bounded exponential backoff *only before the first
 * event was yielded* (a retry after output would duplicate what the session already recorded); a
 * stream that ends without a finish is a `network` error the session records and can resume from.
 */

import { randomUUID } from "node:crypto";
import { type ChatMessage, type Model, ModelError, type ModelEvent, type ModelRequest } from "@strata/engine";
import { readSse } from "./sse.ts";
import { wait } from "./wait.ts";

export interface OpenAIConfig {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly model: string;
  /** Retries after the first attempt for 429, 5xx and network errors (default 3). */
  readonly maxRetries?: number;
  /** First backoff in milliseconds, doubled each retry, capped at 30 s; `Retry-After` wins (default 500). */
  readonly backoffMs?: number;
  /** Time to the response headers, and the longest silence between chunks, in ms (default 120 000). */
  readonly idleTimeoutMs?: number;
  /** Bound on the bytes of one response (default 32 MiB). */
  readonly maxResponseBytes?: number;
  /** Extra headers (e.g. an organization). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Reads the configuration from the environment: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`. */
export function openAIConfigFromEnv(env: NodeJS.ProcessEnv, overrides: Partial<OpenAIConfig> = {}): OpenAIConfig {
  const model = overrides.model ?? env.OPENAI_MODEL;
  if (model === undefined || model === "") throw new Error("no model name: pass one (e.g. openai:gpt-4o-mini) or set OPENAI_MODEL");
  const apiKey = overrides.apiKey ?? env.OPENAI_API_KEY;
  return {
    baseUrl: overrides.baseUrl ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    model,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(overrides.maxRetries !== undefined ? { maxRetries: overrides.maxRetries } : {}),
    ...(overrides.backoffMs !== undefined ? { backoffMs: overrides.backoffMs } : {}),
  };
}

/** The wire form of the request body (exported for tests and for `strata prompt --json`). */
export function toWireRequest(request: ModelRequest, model: string): Record<string, unknown> {
  const messages: unknown[] = [];
  if (request.system !== "") messages.push({ role: "system", content: request.system });
  for (const m of request.messages) messages.push(wireMessage(m));
  const body: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } };
  if (request.tools.length > 0)
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  if (request.settings.temperature !== undefined) body.temperature = request.settings.temperature;
  if (request.settings.maxTokens !== undefined) body.max_tokens = request.settings.maxTokens;
  return body;
}

function wireMessage(m: ChatMessage): unknown {
  switch (m.role) {
    case "user":
      return { role: "user", content: m.content };
    case "tool":
      return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
    case "assistant": {
      const calls = m.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: m.content };
      return {
        role: "assistant",
        content: m.content === "" ? null : m.content,
        tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
      };
    }
  }
}

const CONTEXT_OVERFLOW = /context[_ ]length|maximum context|too many tokens|context window/i;

/** Classifies an HTTP error response. */
function httpError(status: number, body: string, retryAfter: string | null): ModelError {
  let detail = body.slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string; code?: string } };
    if (parsed.error?.message !== undefined) detail = parsed.error.message + (parsed.error.code ? ` (${parsed.error.code})` : "");
  } catch {
    // a non-JSON body is quoted as is
  }
  const after = retryAfter === null ? undefined : Number(retryAfter) * 1000;
  const retryAfterMs = after !== undefined && Number.isFinite(after) && after >= 0 ? after : undefined;
  const opts = { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (status === 429) return new ModelError("rate-limit", `the server is rate-limiting (HTTP 429): ${detail}`, opts);
  if (status >= 500) return new ModelError("server", `the server failed (HTTP ${status}): ${detail}`, opts);
  if (status === 401 || status === 403)
    return new ModelError("auth", `the server refused the credentials (HTTP ${status}): ${detail}; check OPENAI_API_KEY`, opts);
  if (CONTEXT_OVERFLOW.test(detail))
    return new ModelError("context-overflow", `the prompt is longer than the model's context (HTTP ${status}): ${detail}`, opts);
  return new ModelError("bad-request", `the server rejected the request (HTTP ${status}): ${detail}`, opts);
}

interface WireChunk {
  choices?: {
    delta?: { content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] };
    finish_reason?: string | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

export class OpenAICompatibleModel implements Model {
  readonly id: string;
  readonly #config: OpenAIConfig;

  constructor(config: OpenAIConfig) {
    if (!/^https?:\/\//.test(config.baseUrl))
      throw new Error(`the base URL ${JSON.stringify(config.baseUrl)} must start with http:// or https://`);
    this.#config = config;
    this.id = `openai:${config.model}`;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const maxRetries = this.#config.maxRetries ?? 3;
    const base = this.#config.backoffMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      let yielded = false;
      try {
        for await (const event of this.#attempt(request, signal)) {
          yielded = true;
          yield event;
        }
        return;
      } catch (error) {
        const e = toModelError(error, signal);
        if (yielded || !e.retryable || attempt >= maxRetries || e.kind === "cancelled") throw e;
        await wait(e.options.retryAfterMs ?? Math.min(30_000, base * 2 ** attempt), signal);
      }
    }
  }

  async *#attempt(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const url = `${this.#config.baseUrl.replace(/\/+$/, "")}/chat/completions`;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream", ...this.#config.headers };
    if (this.#config.apiKey !== undefined && this.#config.apiKey !== "") headers.authorization = `Bearer ${this.#config.apiKey}`;
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
      yield* this.#exchange(url, headers, request, AbortSignal.any([signal, idle.signal]), touch);
    } catch (error) {
      if (idle.signal.aborted && !signal.aborted)
        throw new ModelError("network", `the server was silent for ${idleMs} ms`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async *#exchange(
    url: string,
    headers: Record<string, string>,
    request: ModelRequest,
    signal: AbortSignal,
    touch: () => void,
  ): AsyncGenerator<ModelEvent> {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(toWireRequest(request, this.#config.model)),
      signal,
    });
    touch();
    if (!response.ok) throw httpError(response.status, await response.text().catch(() => ""), response.headers.get("retry-after"));
    if (response.body === null) throw new ModelError("protocol", "the server sent no response body");
    const limit = this.#config.maxResponseBytes ?? 32 * 1024 * 1024;
    let bytes = 0;
    const body = response.body as unknown as AsyncIterable<Uint8Array>;
    async function* bounded(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body) {
        touch();
        bytes += chunk.byteLength;
        if (bytes > limit) throw new ModelError("protocol", `the response is larger than ${limit} bytes`, { retryable: false });
        yield chunk;
      }
    }
    const started = new Map<number, boolean>();
    let lastIndex: number | undefined;
    let lastId: string | undefined;
    const reply = randomUUID().slice(0, 8);
    let finish: string | undefined;
    let done = false;
    for await (const data of readSse(bounded())) {
      if (data === "[DONE]") {
        done = true;
        break;
      }
      let chunk: WireChunk;
      try {
        chunk = JSON.parse(data) as WireChunk;
      } catch {
        throw new ModelError("protocol", `the server sent a chunk that is not JSON: ${data.slice(0, 200)}`, { retryable: false });
      }
      if (chunk.error !== undefined)
        throw new ModelError("server", `the server reported an error mid-stream: ${chunk.error.message ?? "unknown"}`);
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta ?? {};
        if (typeof delta.content === "string" && delta.content !== "") yield { type: "text", delta: delta.content };
        for (const tc of delta.tool_calls ?? []) {
          // Servers that omit `index` send each call whole: a delta naming a function (or a new
          // id) starts the next call, anything else continues the last one.
          let index: number;
          if (tc.index !== undefined) index = tc.index;
          else if (lastIndex === undefined || tc.function?.name !== undefined || (tc.id !== undefined && tc.id !== lastId))
            index = started.size;
          else index = lastIndex;
          lastIndex = index;
          if (!started.get(index)) {
            if (tc.function?.name === undefined)
              throw new ModelError("protocol", `tool call ${index} started without a function name`, { retryable: false });
            started.set(index, true);
            lastId = tc.id;
            // a missing id gets one unique to this reply, so ids never repeat across turns
            yield { type: "tool-call", index, id: tc.id ?? `call_${reply}_${index}`, name: tc.function.name };
          }
          const args = tc.function?.arguments;
          if (typeof args === "string" && args !== "") yield { type: "tool-arguments", index, delta: args };
        }
        if (typeof choice.finish_reason === "string") finish = choice.finish_reason;
      }
      if (chunk.usage)
        yield { type: "usage", inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
    }
    if (!done && finish === undefined)
      throw new ModelError("network", "the connection closed before the reply finished", { retryable: true });
    yield { type: "done", finishReason: finish ?? "stop" };
  }
}

function toModelError(error: unknown, signal: AbortSignal): ModelError {
  if (signal.aborted) return new ModelError("cancelled", "the request was cancelled", { cause: error });
  if (error instanceof ModelError) return error;
  const e = error as Error & { cause?: { code?: string } };
  if (e?.name === "TimeoutError") return new ModelError("network", "the server did not answer in time", { cause: error });
  const code = e?.cause?.code ? ` (${e.cause.code})` : "";
  return new ModelError("network", `cannot reach the server: ${e?.message ?? String(error)}${code}`, { cause: error });
}
