/**
 * A model that plays a recorded script (MO-1 … MO-6). It is the embedded default for the demo and
 * the tests: deterministic, offline, and stateless about the conversation — the turn it plays is the
 * number of assistant messages already in the request, so a session resumed after a crash asks for
 * the same turn again and gets the same reply.
 */
import { readFileSync } from "node:fs";
import { type Model, ModelError, type ModelErrorKind, type ModelEvent, type ModelRequest } from "@strata/engine";
import { wait } from "./wait.ts";

/** One scripted tool call; `arguments` is written as the model would (an object is JSON-encoded). */
export interface ScriptedCall {
  readonly name: string;
  readonly arguments: unknown;
  /** Optional call id (default `call_<turn>_<index>`). */
  readonly id?: string;
}

/** A failure the script injects: before any output, or after `afterChunks` chunks. */
export interface ScriptedFailure {
  readonly kind: ModelErrorKind;
  readonly message: string;
  /** How many times this turn fails before it succeeds (default: always). */
  readonly times?: number;
  readonly afterChunks?: number;
}

export interface ScriptedTurn {
  readonly text?: string;
  readonly toolCalls?: readonly ScriptedCall[];
  readonly finishReason?: string;
  readonly fail?: ScriptedFailure;
  /** Only play this turn when the last message of the request contains this string (a guard that
   * makes a script fail loudly when the conversation is not the one it was written for). */
  readonly expect?: string;
}

export interface ModelScript {
  /** Recorded as the model id: `scripted:<name>`. */
  readonly name: string;
  /** Characters per streamed chunk (default 16). */
  readonly chunk?: number;
  /** Pause between chunks, in milliseconds (default 0). */
  readonly delayMs?: number;
  readonly turns: readonly ScriptedTurn[];
}

/** Thrown for a script file that cannot be used, naming the file and the field. */
export class ScriptError extends Error {
  override readonly name = "ScriptError";
}

function fail(where: string, what: string): never {
  throw new ScriptError(`${where}: ${what}`);
}

const KINDS: readonly ModelErrorKind[] = [
  "network",
  "rate-limit",
  "server",
  "auth",
  "bad-request",
  "protocol",
  "context-overflow",
  "cancelled",
];

/** Checks a parsed script's shape; `where` names the source in messages. */
export function parseScript(value: unknown, where = "script"): ModelScript {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    fail(where, "a model script must be a JSON object with `name` and `turns`");
  const v = value as Record<string, unknown>;
  if (typeof v.name !== "string" || v.name === "") fail(where, "`name` must be a non-empty string");
  if (v.chunk !== undefined && (!Number.isInteger(v.chunk) || (v.chunk as number) < 1)) fail(where, "`chunk` must be a positive integer");
  if (v.delayMs !== undefined && (typeof v.delayMs !== "number" || v.delayMs < 0)) fail(where, "`delayMs` must be a number ≥ 0");
  if (!Array.isArray(v.turns) || v.turns.length === 0) fail(where, "`turns` must be a non-empty array");
  v.turns.forEach((t: unknown, i: number) => {
    const at = `${where}: turns[${i}]`;
    if (typeof t !== "object" || t === null || Array.isArray(t)) fail(at, "must be an object");
    const turn = t as Record<string, unknown>;
    if (turn.text !== undefined && typeof turn.text !== "string") fail(at, "`text` must be a string");
    if (turn.expect !== undefined && typeof turn.expect !== "string") fail(at, "`expect` must be a string");
    if (turn.toolCalls !== undefined) {
      if (!Array.isArray(turn.toolCalls)) fail(at, "`toolCalls` must be an array");
      turn.toolCalls.forEach((c: unknown, j: number) => {
        if (typeof c !== "object" || c === null || typeof (c as { name?: unknown }).name !== "string")
          fail(at, `toolCalls[${j}] needs a string \`name\``);
      });
    }
    if (turn.fail !== undefined) {
      const f = turn.fail as Record<string, unknown>;
      if (!KINDS.includes(f.kind as ModelErrorKind)) fail(at, `\`fail.kind\` must be one of ${KINDS.join(", ")}`);
      if (typeof f.message !== "string") fail(at, "`fail.message` must be a string");
    }
    if (turn.text === undefined && turn.toolCalls === undefined && turn.fail === undefined)
      fail(at, "a turn needs `text`, `toolCalls` or `fail`");
  });
  return value as ModelScript;
}

/** Reads and checks a script file. */
export function loadScript(path: string): ModelScript {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new ScriptError(`cannot read model script ${path}: ${(cause as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ScriptError(`${path} is not valid JSON: ${(cause as Error).message}`);
  }
  return parseScript(value, path);
}

/** A rough, deterministic token estimate (4 characters a token) so budgets work offline. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function requestText(request: ModelRequest): string {
  let out = request.system;
  for (const m of request.messages) {
    out += m.content;
    if (m.role === "assistant") for (const c of m.toolCalls ?? []) out += c.name + c.arguments;
  }
  return out;
}

export class ScriptedModel implements Model {
  readonly id: string;
  readonly #script: ModelScript;
  readonly #failures = new Map<number, number>();

  constructor(script: ModelScript) {
    this.#script = parseScript(script, `script ${script?.name ?? ""}`.trim());
    this.id = `scripted:${script.name}`;
  }

  static fromFile(path: string): ScriptedModel {
    return new ScriptedModel(loadScript(path));
  }

  /** The turn the script plays for this request. */
  turnOf(request: ModelRequest): number {
    return request.messages.filter((m) => m.role === "assistant").length;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const index = this.turnOf(request);
    const turn = this.#script.turns[index];
    if (turn === undefined)
      throw new ModelError(
        "protocol",
        `the script "${this.#script.name}" has ${this.#script.turns.length} turns and the session asked for turn ${index + 1}`,
        { retryable: false },
      );
    if (turn.expect !== undefined) {
      const last = request.messages.at(-1);
      if (last === undefined || !last.content.includes(turn.expect))
        throw new ModelError(
          "protocol",
          `the script "${this.#script.name}" expected turn ${index + 1} to follow a message containing ${JSON.stringify(turn.expect)}`,
          { retryable: false },
        );
    }
    const chunk = this.#script.chunk ?? 16;
    const delay = this.#script.delayMs ?? 0;
    let failAfter = Number.POSITIVE_INFINITY;
    if (turn.fail !== undefined) {
      const seen = this.#failures.get(index) ?? 0;
      if (turn.fail.times === undefined || seen < turn.fail.times) {
        this.#failures.set(index, seen + 1);
        failAfter = turn.fail.afterChunks ?? 0;
      }
    }
    let chunks = 0;
    const step = async (): Promise<void> => {
      if (signal.aborted) throw new ModelError("cancelled", "the request was cancelled");
      if (chunks >= failAfter) {
        const f = turn.fail as ScriptedFailure;
        throw new ModelError(f.kind, f.message);
      }
      chunks++;
      await wait(delay, signal);
    };
    let output = "";
    const text = turn.text ?? "";
    for (let i = 0; i < text.length; i += chunk) {
      await step();
      const delta = text.slice(i, i + chunk);
      output += delta;
      yield { type: "text", delta };
    }
    const calls = turn.toolCalls ?? [];
    for (let c = 0; c < calls.length; c++) {
      const call = calls[c] as ScriptedCall;
      await step();
      yield { type: "tool-call", index: c, id: call.id ?? `call_${index}_${c}`, name: call.name };
      const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
      for (let i = 0; i < args.length; i += chunk) {
        await step();
        yield { type: "tool-arguments", index: c, delta: args.slice(i, i + chunk) };
      }
      output += call.name + args;
    }
    if (chunks >= failAfter) await step();
    yield { type: "usage", inputTokens: estimateTokens(requestText(request)), outputTokens: estimateTokens(output) };
    yield { type: "done", finishReason: turn.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop") };
  }
}
