/**
 * A replica (L8, EN-26): a tree built only from frames, with the same fold the host uses, so it is
 * byte-identical to the host's durable tree after every event. Streamed chunks are kept as an
 * overlay until the durable `append` that covers them arrives.
 */
import { applyPatch, fromSnapshot, type NodeId, type Op, type Tree } from "@strata/dom";
import type { EventId } from "@strata/store";
import { EngineError } from "./errors.ts";
import { foldEvent } from "./events.ts";
import type { Frame } from "./sse.ts";

export class Replica {
  #tree: Tree | undefined;
  #event: EventId | undefined;
  #branch: string | undefined;
  readonly #pending = new Map<number, string>();
  #view: Tree | undefined;

  /** The durable tree (what the host's log says); throws before the first snapshot frame. */
  get tree(): Tree {
    if (this.#tree === undefined) throw new EngineError("not-found", "the replica has not received a snapshot frame yet");
    return this.#tree;
  }

  /** The durable tree plus streamed text not yet durable: what a screen shows. */
  get view(): Tree {
    if (this.#view === undefined) {
      const ops: Op[] = [];
      for (const [id, text] of this.#pending) if (this.tree.has(id)) ops.push(["append", id as NodeId, text]);
      this.#view = ops.length === 0 ? this.tree : applyPatch(this.tree, ops);
    }
    return this.#view;
  }

  /** The last durable event applied. */
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
        this.#event = frame.event;
        this.#branch = frame.branch;
        this.#pending.clear();
        return;
      case "event":
        if (this.#tree === undefined) throw new EngineError("not-found", `event ${frame.id} arrived before a snapshot frame`);
        for (const op of frame.ops) if (op[0] === "append") this.#settle(op[1], op[2]);
        this.#tree = foldEvent(this.#tree, { kind: "patch", ops: frame.ops }, frame.id);
        this.#event = frame.id;
        return;
      case "chunk":
        this.#pending.set(frame.id, (this.#pending.get(frame.id) ?? "") + frame.text);
        return;
      case "lagged":
        return;
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
