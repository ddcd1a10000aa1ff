/**
 * Decodes the chunks of one streamed chat completion into `ModelEvent`s (MO-7, MO-19 … MO-21), in
 * the shapes real providers send:
 *
 * - `delta.content` as a string, an array of parts (Mistral: `[{type: "text", text}]`,
 *   `{type: "thinking", thinking: [{type: "text", text}]}`) or a single part object; text parts are
 *   text, thinking/reasoning parts are reasoning, a refusal is text, other parts with a string `text`
 *   are text and the rest (images …) are ignored.
 * - reasoning as `delta.reasoning_content` (DeepSeek, Qwen, vLLM), `delta.reasoning` (gpt-oss
 *   servers, OpenRouter, Ollama) or, when neither is present, `delta.reasoning_details` — so a
 *   provider that sends the same text in two fields is not recorded twice. Reasoning becomes
 *   `{type: "reasoning"}` events: the loop records them, the request never carries them back.
 * - tool calls numbered densely in the order they are named, whatever the wire indexes are (a first
 *   call at index 1, no index at all, one index reused for calls with different ids); deltas that
 *   arrive before the function's name are held until it does; arguments sent as an object are
 *   JSON-encoded; empty `tool_calls` arrays, placeholder chunks and other choices than the first are
 *   ignored; the legacy `delta.function_call` is one more call.
 * - usage from any chunk (the last one wins, also from `x_groq.usage`), reported once at the end.
 */
import { randomUUID } from "node:crypto";
import { ModelError, type ModelEvent } from "@strata/agent/model";

interface CallState {
  /** Dense position, assigned when the function is named. */
  index?: number;
  id?: string;
  name?: string;
  /** Arguments received before the name. */
  held: string;
}

type Json = Record<string, unknown>;

const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);
const nonEmpty = (x: unknown): x is string => typeof x === "string" && x !== "";

export class ReplyDecoder {
  readonly #reply = randomUUID().slice(0, 8);
  /** The call currently receiving deltas for each wire index. */
  readonly #byWire = new Map<number, CallState>();
  readonly #byId = new Map<string, CallState>();
  readonly #all: CallState[] = [];
  #last: CallState | undefined;
  #named = 0;
  #usage: { inputTokens: number; outputTokens: number } | undefined;
  #finish: string | undefined;

  /** `source` names the server in error messages (its URL). */
  constructor(readonly source = "the server") {}

  /** The finish reason, once a chunk carried one. */
  get finishReason(): string | undefined {
    return this.#finish;
  }

  /** The events one parsed chunk carries; throws `protocol` for a chunk that cannot be a completion chunk. */
  chunk(value: unknown): ModelEvent[] {
    if (!isObject(value)) throw new ModelError("protocol", `${this.source} sent a chunk that is not a JSON object`, { retryable: false });
    const out: ModelEvent[] = [];
    const usage = isObject(value.usage)
      ? value.usage
      : isObject(value.x_groq) && isObject(value.x_groq.usage)
        ? value.x_groq.usage
        : undefined;
    if (usage !== undefined) this.#usage = { inputTokens: count(usage.prompt_tokens), outputTokens: count(usage.completion_tokens) };
    if (!Array.isArray(value.choices)) return out;
    // we ask for one choice; a server that sends more (n > 1) must not have them interleaved
    const choice = value.choices.find((c) => isObject(c) && (c.index === undefined || c.index === 0 || c.index === null));
    if (!isObject(choice)) return out;
    const delta = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : undefined;
    if (delta !== undefined) this.#delta(delta, out);
    if (nonEmpty(choice.finish_reason)) this.#finish = choice.finish_reason;
    return out;
  }

  /** The events that close the reply: usage, then done. Throws `protocol` for a call never named. */
  end(): ModelEvent[] {
    const unnamed = this.#all.find((c) => c.name === undefined);
    if (unnamed !== undefined)
      throw new ModelError(
        "protocol",
        `${this.source} sent arguments for a tool call${unnamed.id !== undefined ? ` (${unnamed.id})` : ""} but never named its function`,
        { retryable: false },
      );
    const out: ModelEvent[] = [];
    if (this.#usage !== undefined) out.push({ type: "usage", ...this.#usage });
    out.push({ type: "done", finishReason: this.#finish ?? "stop" });
    return out;
  }

  #delta(delta: Json, out: ModelEvent[]): void {
    const reasoning = [delta.reasoning_content, delta.reasoning, delta.thinking].find(nonEmpty) ?? detailsText(delta.reasoning_details);
    if (reasoning !== "") out.push({ type: "reasoning", delta: reasoning });
    const content = delta.content;
    if (nonEmpty(content)) out.push({ type: "text", delta: content });
    else if (Array.isArray(content)) for (const part of content) pushPart(part, out);
    else if (isObject(content)) pushPart(content, out);
    if (nonEmpty(delta.refusal)) out.push({ type: "text", delta: delta.refusal });
    if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls) this.#toolDelta(tc, out);
    if (isObject(delta.function_call)) this.#toolDelta({ index: -1, ...delta.function_call, function: delta.function_call }, out);
  }

  #toolDelta(tc: unknown, out: ModelEvent[]): void {
    if (!isObject(tc))
      throw new ModelError("protocol", `${this.source} sent a tool call delta that is not an object`, { retryable: false });
    const fn = isObject(tc.function) ? tc.function : {};
    const id = nonEmpty(tc.id) ? tc.id : undefined;
    const name = nonEmpty(fn.name) ? fn.name : undefined;
    const state = this.#stateFor(tc.index, id, name);
    if (state.id === undefined && id !== undefined) {
      state.id = id;
      this.#byId.set(id, state);
    }
    const raw = fn.arguments;
    let args = typeof raw === "string" ? raw : "";
    if (isObject(raw) || Array.isArray(raw))
      try {
        args = JSON.stringify(raw);
      } catch {
        throw new ModelError("protocol", `${this.source} sent tool-call arguments nested too deeply to encode`, { retryable: false });
      }
    if (state.name === undefined && name !== undefined) {
      state.name = name;
      state.index = this.#named++;
      out.push({ type: "tool-call", index: state.index, id: state.id ?? `call_${this.#reply}_${state.index}`, name });
      if (state.held !== "") out.push({ type: "tool-arguments", index: state.index, delta: state.held });
      state.held = "";
    }
    if (args === "") return;
    if (state.index === undefined) state.held += args;
    else out.push({ type: "tool-arguments", index: state.index, delta: args });
  }

  /** The call a delta continues, or a new one. */
  #stateFor(wire: unknown, id: string | undefined, name: string | undefined): CallState {
    const fresh = (): CallState => {
      const s: CallState = { held: "" };
      this.#all.push(s);
      return s;
    };
    let state: CallState | undefined;
    if (typeof wire === "number" && Number.isInteger(wire)) {
      state = this.#byWire.get(wire);
      // one index reused for a call with another id and a name is a new call, not a continuation
      if (state !== undefined && id !== undefined && state.id !== undefined && id !== state.id && name !== undefined) state = undefined;
      if (state === undefined) {
        state = fresh();
        this.#byWire.set(wire, state);
      }
    } else if (id !== undefined) {
      // no index (Gemini): an id names the call
      state = this.#byId.get(id) ?? fresh();
    } else if (name !== undefined || this.#last === undefined) state = fresh();
    else state = this.#last;
    this.#last = state;
    return state;
  }
}

/** A non-negative token count, 0 for anything else. */
function count(x: unknown): number {
  return typeof x === "number" && Number.isFinite(x) && x >= 0 ? Math.floor(x) : 0;
}

function pushPart(part: unknown, out: ModelEvent[]): void {
  if (nonEmpty(part)) {
    out.push({ type: "text", delta: part });
    return;
  }
  if (!isObject(part)) return;
  const type = typeof part.type === "string" ? part.type : "";
  if (type === "thinking" || type === "reasoning" || type === "reasoning_text" || type === "redacted_thinking") {
    const text = partText(part.thinking ?? part.reasoning ?? part.text ?? part.content ?? part.summary);
    if (text !== "") out.push({ type: "reasoning", delta: text });
  } else if (type === "refusal") {
    if (nonEmpty(part.refusal)) out.push({ type: "text", delta: part.refusal });
  } else if (nonEmpty(part.text)) out.push({ type: "text", delta: part.text });
}

/** The text of a thinking part's value: a string, a part with `text`, or an array of those. */
function partText(x: unknown, depth = 0): string {
  if (typeof x === "string") return x;
  if (depth > 4) return "";
  if (Array.isArray(x)) return x.map((p) => partText(p, depth + 1)).join("");
  if (isObject(x)) return partText(x.text ?? x.thinking ?? "", depth + 1);
  return "";
}

/** OpenRouter's `reasoning_details`: `reasoning.text` and `reasoning.summary` entries (encrypted ones carry no text). */
function detailsText(x: unknown): string {
  if (!Array.isArray(x)) return "";
  let text = "";
  for (const d of x) {
    if (!isObject(d)) continue;
    if (nonEmpty(d.text)) text += d.text;
    else if (nonEmpty(d.summary)) text += d.summary;
  }
  return text;
}
