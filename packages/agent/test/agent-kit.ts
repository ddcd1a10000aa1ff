/**
 * Test kit for the tool layer and the agent loop: an inline scripted model (the agent may not
 * import @strata/models), a provider-validity check for requests, and temp stores.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, type Store } from "@strata/store";
import { type Model, ModelError, type ModelErrorKind, type ModelEvent, type ModelRequest } from "../src/index.ts";

export interface Turn {
  /** Streamed before the text, in parts of 5 characters. */
  readonly reasoning?: string;
  readonly text?: string;
  readonly calls?: readonly { readonly name: string; readonly args: unknown }[];
  readonly fail?: { readonly kind: ModelErrorKind; readonly message: string; readonly afterEvents?: number };
  readonly usage?: readonly [number, number];
  /** Waits this long between events (lets tests abort mid-stream). */
  readonly delayMs?: number;
}

/** Plays turn N for a request with N assistant messages (as @strata/models' ScriptedModel does). */
export class InlineModel implements Model {
  readonly id: string;
  readonly requests: ModelRequest[] = [];
  constructor(
    readonly turns: readonly Turn[],
    name = "inline",
  ) {
    this.id = `scripted:${name}`;
  }
  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    this.requests.push(request);
    const n = request.messages.filter((m) => m.role === "assistant").length;
    const turn = this.turns[n];
    if (turn === undefined) throw new ModelError("protocol", `script exhausted at turn ${n + 1}`);
    const events: ModelEvent[] = [];
    if (turn.reasoning !== undefined)
      for (let i = 0; i < turn.reasoning.length; i += 5) events.push({ type: "reasoning", delta: turn.reasoning.slice(i, i + 5) });
    if (turn.text !== undefined)
      for (let i = 0; i < turn.text.length; i += 5) events.push({ type: "text", delta: turn.text.slice(i, i + 5) });
    (turn.calls ?? []).forEach((c, i) => {
      const args = typeof c.args === "string" ? c.args : JSON.stringify(c.args);
      events.push({ type: "tool-call", index: i, id: `call_${n}_${i}`, name: c.name });
      for (let j = 0; j < args.length; j += 7) events.push({ type: "tool-arguments", index: i, delta: args.slice(j, j + 7) });
    });
    if (turn.usage !== undefined) events.push({ type: "usage", inputTokens: turn.usage[0], outputTokens: turn.usage[1] });
    let k = 0;
    for (const e of events) {
      if (turn.fail !== undefined && k === (turn.fail.afterEvents ?? 0)) throw new ModelError(turn.fail.kind, turn.fail.message);
      if (signal.aborted) throw new ModelError("cancelled", "cancelled");
      if (turn.delayMs) await new Promise((r) => setTimeout(r, turn.delayMs));
      k++;
      yield e;
    }
    if (turn.fail !== undefined && k <= (turn.fail.afterEvents ?? 0)) throw new ModelError(turn.fail.kind, turn.fail.message);
    yield { type: "done", finishReason: (turn.calls ?? []).length > 0 ? "tool_calls" : "stop" };
  }
}

/**
 * Whether a request is valid for a chat-completions provider: every assistant tool call is
 * answered by exactly one tool message right after it, in order, and no tool message is orphaned.
 */
export function providerValid(request: ModelRequest): string | undefined {
  const m = request.messages;
  for (let i = 0; i < m.length; i++) {
    const msg = m[i] as ModelRequest["messages"][number];
    if (msg.role === "tool") return `message ${i} is a tool message without a preceding call`;
    if (msg.role === "assistant" && (msg.toolCalls?.length ?? 0) > 0) {
      for (const [j, call] of (msg.toolCalls ?? []).entries()) {
        const t = m[i + 1 + j];
        if (t?.role !== "tool" || t.toolCallId !== call.id) return `call ${call.id} of message ${i} has no tool message at ${i + 1 + j}`;
        if (t.content === "") return `call ${call.id} has an empty observation`;
      }
      i += msg.toolCalls?.length ?? 0;
    }
  }
  return undefined;
}

const dirs: string[] = [];
export function tempDir(prefix = "strata-agent-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
export function cleanup(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
export function fileStore(): { store: Store; path: string } {
  const path = join(tempDir(), "s.db");
  return { store: openStore(path), path };
}
