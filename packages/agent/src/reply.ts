/**
 * A model's reply as it streams into its assistant turn (AG-1, AG-15): text into `<text>`,
 * reasoning into `<reasoning>` (opened at its first part, after the turn's `<request>`), each tool
 * call as a `<call status="arguments">` whose `<args>` stream in. Everything is coalesced by the
 * session's streams. The writer tells its own failures — the log refusing a write (AG-18) — from
 * the model's: `failure` is set only by the former.
 */
import { sanitizeText as clean, type NodeId } from "@strata/dom";
import type { StreamWriter } from "@strata/engine";
import { isAsyncStore } from "@strata/store";
import { ModelError, type ModelEvent } from "./model.ts";
import { type AnySession, commit } from "./port.ts";
import type { ReplayPolicy } from "./tools/registry.ts";
import { ATTR, CALL, LABEL, TAG } from "./vocabulary.ts";

/** What the UI hears about as the reply streams (a subset of the loop's events). */
export type ReplyEvent =
  | { readonly type: "text"; readonly delta: string }
  | { readonly type: "reasoning"; readonly delta: string }
  | { readonly type: "call"; readonly element: NodeId; readonly tool: string; readonly status: typeof CALL.arguments };

export interface ReplyCall {
  readonly element: NodeId;
  readonly tool: string;
  readonly stream: StreamWriter;
}

export class ReplyWriter {
  readonly #text: StreamWriter;
  #reasoning: StreamWriter | undefined;
  readonly calls = new Map<number, ReplyCall>();
  usage: { input: number; output: number } | undefined;
  finish = "stop";
  #failure: { error: unknown } | undefined;

  constructor(
    private readonly session: AnySession,
    private readonly turn: NodeId,
    /** The turn's `<request>`: reasoning goes right after it. */
    private readonly record: NodeId,
    text: NodeId,
    private readonly policy: (tool: string) => ReplayPolicy,
    private readonly emit: (e: ReplyEvent) => void,
  ) {
    this.#text = session.stream(text, { label: LABEL.turnText });
  }

  /** The first write the log refused, if any: the run ends with it, not with a model error. */
  get failure(): { readonly error: unknown } | undefined {
    return this.#failure;
  }

  /**
   * Takes one model event. Throws `ModelError` for a protocol violation, or the log's error. It
   * answers at once but for the events that open an element (a tool call, the first reasoning),
   * which wait for that commit.
   */
  async take(ev: ModelEvent): Promise<void> {
    switch (ev.type) {
      case "text":
        this.#own(() => this.#text.append(ev.delta));
        this.emit({ type: "text", delta: ev.delta });
        break;
      case "reasoning": {
        if (typeof ev.delta !== "string" || ev.delta === "") break;
        const r = this.#reasoning ?? (await this.#ownAsync(() => this.#openReasoning()));
        this.#own(() => r.append(ev.delta));
        this.emit({ type: "reasoning", delta: ev.delta });
        break;
      }
      case "tool-call": {
        if (this.calls.has(ev.index))
          throw new ModelError("protocol", `the model started tool call ${ev.index} twice`, { retryable: false });
        const call = await this.#ownAsync(() => this.#openCall(ev.index, ev.id, ev.name));
        this.calls.set(ev.index, call);
        this.emit({ type: "call", element: call.element, tool: ev.name, status: CALL.arguments });
        break;
      }
      case "tool-arguments": {
        const c = this.calls.get(ev.index);
        if (c === undefined)
          throw new ModelError("protocol", `the model sent arguments for tool call ${ev.index} before starting it`, { retryable: false });
        this.#own(() => c.stream.append(ev.delta));
        break;
      }
      case "usage":
        this.usage = { input: ev.inputTokens, output: ev.outputTokens };
        break;
      case "done":
        this.finish = ev.finishReason;
        break;
      default:
        // A newer client's event kind: nothing records it (the switch is over a closed union).
        ev satisfies never;
    }
  }

  /** The calls in the model's order. */
  ordered(): ReplyCall[] {
    return [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
  }

  /**
   * Closes every stream (flushing it); the first failure is thrown after all were tried. Over the
   * asynchronous port it answers once the flushes are durable (a refused one is thrown then).
   */
  async close(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const w of this.#streams())
      try {
        w.close();
      } catch (error) {
        failure ??= { error };
      }
    if (failure !== undefined) throw failure.error;
    if (isAsyncStore(this.session.store)) await this.session.flush();
    // A stream that a refused flush ended (on its timer, over the network) dropped its text: the
    // turn must not commit as complete without it.
    for (const w of this.#streams()) if (w.endedBy !== undefined) throw w.endedBy;
  }

  /** Closes on a path that already fails: what cannot be flushed stays pending until the session closes. */
  async closeQuietly(): Promise<void> {
    try {
      await this.close();
    } catch {
      // the failure being thrown is the one that counts
    }
  }

  #streams(): StreamWriter[] {
    return [this.#text, ...(this.#reasoning === undefined ? [] : [this.#reasoning]), ...[...this.calls.values()].map((c) => c.stream)];
  }

  async #openReasoning(): Promise<StreamWriter> {
    let id = 0 as NodeId;
    // Before the text, after the record: what the model thought, then what it said.
    await commit(this.session, (d) => void (id = d.insert(this.turn, this.record, { tag: TAG.reasoning })), { label: LABEL.turnReasoning });
    this.#reasoning = this.session.stream(id, { label: LABEL.turnReasoning });
    return this.#reasoning;
  }

  async #openCall(index: number, id: string, name: string): Promise<ReplyCall> {
    let element = 0 as NodeId;
    let args = 0 as NodeId;
    await commit(
      this.session,
      (d) => {
        element = d.appendChild(this.turn, {
          tag: TAG.call,
          attrs: {
            [ATTR.id]: clean(id),
            [ATTR.tool]: clean(name),
            [ATTR.index]: String(index),
            [ATTR.replay]: this.policy(name),
            [ATTR.status]: CALL.arguments,
          },
        });
        args = d.appendChild(element, { tag: TAG.args });
      },
      { label: LABEL.callOpen },
    );
    return { element, tool: name, stream: this.session.stream(args, { label: LABEL.callArgs }) };
  }

  /** Runs one of the writer's own writes that waits for a commit, remembering its failure. */
  async #ownAsync<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      this.#failure ??= { error };
      throw error;
    }
  }

  /** Runs one of the writer's own writes, remembering its failure. */
  #own<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      this.#failure ??= { error };
      throw error;
    }
  }
}
