/**
 * A model that plays a recorded script (MO-1 … MO-6). It is the embedded default for the demo and
 * the tests: deterministic, offline, and stateless about the conversation — the turn it plays is the
 * number of assistant messages already in the request, so a session resumed after a crash asks for
 * the same turn again and gets the same reply.
 */
import { type Model, ModelError, type ModelEvent, type ModelRequest } from "@strata/agent/model";
import {
  callArguments,
  loadScript,
  type ModelScript,
  parseScript,
  type ScriptedCall,
  type ScriptedFailure,
  type ScriptLimits,
} from "./script.ts";
import { wait } from "./wait.ts";

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
  /** Each turn's calls' arguments, encoded once when the script is checked. */
  readonly #arguments: readonly (readonly string[])[];

  /** Throws `ScriptError` for a script that is not valid or is over `limits`. */
  constructor(script: ModelScript, limits?: ScriptLimits) {
    this.#script = parseScript(script, `script ${script?.name ?? ""}`.trim(), limits);
    this.#arguments = this.#script.turns.map((t) => (t.toolCalls ?? []).map(callArguments));
    this.id = `scripted:${script.name}`;
  }

  /** Loads, checks and plays a script file (`loadScript`). */
  static fromFile(path: string, limits?: ScriptLimits): ScriptedModel {
    return new ScriptedModel(loadScript(path, limits), limits);
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
    const reasoning = turn.reasoning ?? "";
    for (let i = 0; i < reasoning.length; i += chunk) {
      await step();
      const delta = reasoning.slice(i, i + chunk);
      output += delta;
      yield { type: "reasoning", delta };
    }
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
      const args = this.#arguments[index]?.[c] ?? "{}";
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
