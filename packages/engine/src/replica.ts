/**
 * A replica (L8, EN-26): a tree built only from frames, with the same fold the host uses, so it is
 * byte-identical to the host's durable tree after every event. Streamed chunks are kept as an
 * overlay until the durable `append` that covers them arrives.
 *
 * Events are folded when the tree is read (`tree`, `view`) or every {@link FOLD_EVERY} ops, as one
 * patch: a replica catching up on many events does not build a tree version per event. An event
 * that does not apply is reported (thrown) at that point, naming it; the replica then stays at the
 * event before it. A `gone` or `error` frame ends the stream: the replica keeps its state and
 * reports the frame as `ended`.
 */
import { applyPatch, fromSnapshot, type NodeId, type Op, type Tree } from "@strata/dom";
import type { EventId } from "@strata/store";
import { EngineError } from "./errors.ts";
import { foldEvent, isChecked, markChecked } from "./events.ts";
import type { Frame } from "./sse.ts";

/** Events wait to be folded until this many ops are queued (or the tree is read). */
const FOLD_EVERY = 8192;

export class Replica {
  #tree: Tree | undefined;
  /** The event `#tree` is at. */
  #folded: EventId | undefined;
  #event: EventId | undefined;
  #branch: string | undefined;
  /** Event frames received and not folded yet. */
  #queue: { id: EventId; ops: readonly Op[] }[] = [];
  #queuedOps = 0;
  readonly #pending = new Map<number, string>();
  #view: Tree | undefined;
  #ended: Extract<Frame, { type: "gone" | "error" }> | undefined;

  /** The durable tree (what the host's log says); throws before the first snapshot frame. */
  get tree(): Tree {
    this.#fold();
    if (this.#tree === undefined) throw new EngineError("not-ready", "the replica has not received a snapshot frame yet");
    return this.#tree;
  }

  /** The durable tree plus streamed text not yet durable: what a screen shows. */
  get view(): Tree {
    const tree = this.tree;
    if (this.#view === undefined) {
      const ops: Op[] = [];
      for (const [id, text] of this.#pending) if (tree.rec(id)?.first === 0) ops.push(["append", id as NodeId, text]);
      this.#view = ops.length === 0 ? tree : applyPatch(tree, ops);
    }
    return this.#view;
  }

  /** The last durable event received. */
  get event(): EventId | undefined {
    return this.#event;
  }

  get branch(): string | undefined {
    return this.#branch;
  }

  apply(frame: Frame): void {
    this.#view = undefined;
    switch (frame.type) {
      case "snapshot":
      case "reset":
        this.#tree = fromSnapshot(frame.tree);
        this.#folded = frame.event;
        this.#event = frame.event;
        this.#branch = frame.branch;
        this.#queue = [];
        this.#queuedOps = 0;
        this.#pending.clear();
        this.#ended = undefined;
        return;
      case "event":
        if (this.#tree === undefined)
          throw new EngineError("not-ready", `event ${frame.id} arrived before a snapshot frame: a replica starts from a snapshot`);
        for (const op of frame.ops) if (op[0] === "append") this.#settle(op[1], op[2]);
        this.#queue.push({ id: frame.id, ops: frame.ops });
        this.#queuedOps += frame.ops.length;
        this.#event = frame.id;
        if (this.#queuedOps >= FOLD_EVERY) this.#fold();
        return;
      case "chunk":
        this.#pending.set(frame.id, (this.#pending.get(frame.id) ?? "") + frame.text);
        return;
      case "lagged":
        // Chunks were dropped; the subscription resends what is still pending after catching up.
        this.#pending.clear();
        return;
      case "gone":
      case "error":
        // The stream ends here; the replica stays at its last event (`ended` says why).
        this.#ended = frame;
        return;
      default:
        throw new EngineError("bad-input", `not a frame: ${JSON.stringify(frame satisfies never)}`);
    }
  }

  /** The `gone` or `error` frame that ended the stream, if one arrived (a later state frame clears it). */
  get ended(): Extract<Frame, { type: "gone" | "error" }> | undefined {
    return this.#ended;
  }

  /** Folds the queued events: all at once when they apply, else one by one up to the bad one. */
  #fold(): void {
    const queue = this.#queue;
    if (queue.length === 0 || this.#tree === undefined) return;
    this.#queue = [];
    this.#queuedOps = 0;
    const last = queue[queue.length - 1] as { id: EventId; ops: readonly Op[] };
    const checked = queue.every((e) => isChecked(e.ops));
    if (queue.length === 1) {
      this.#foldOne(last, checked);
      return;
    }
    const ops: Op[] = [];
    for (const e of queue) for (const op of e.ops) ops.push(op);
    try {
      this.#tree = foldEvent(this.#tree, { kind: "patch", ops: checked ? markChecked(ops) : ops, checked }, last.id);
      this.#folded = last.id;
    } catch {
      for (const e of queue) this.#foldOne(e, isChecked(e.ops));
    }
  }

  #foldOne(e: { id: EventId; ops: readonly Op[] }, checked: boolean): void {
    try {
      this.#tree = foldEvent(this.#tree, { kind: "patch", ops: e.ops, checked }, e.id);
      this.#folded = e.id;
    } catch (err) {
      this.#event = this.#folded;
      throw err;
    }
  }

  /** A durable append covers the oldest pending chunks of its element; drop them from the overlay. */
  #settle(id: number, text: string): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    if (pending.startsWith(text) && pending.length > text.length) this.#pending.set(id, pending.slice(text.length));
    else this.#pending.delete(id);
  }
}
