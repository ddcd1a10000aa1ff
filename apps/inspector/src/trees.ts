/** The trees the server answers from: a small cache of materialized trees by event. */
import type { Tree } from "@strata/dom";
import { materialize } from "@strata/engine";
import type { EventId, Store } from "@strata/store";

/** Trees kept at most (scrubbing asks for the same few events again and again). */
const KEEP = 24;

/** Materialized trees by event, least recently used dropped first. */
export class Trees {
  readonly #cache = new Map<number, Tree>();
  constructor(private readonly store: Store) {}

  /** The tree at `event` (an event of the store; throws what `materialize` throws otherwise). */
  at(event: EventId): Tree {
    const hit = this.#cache.get(event);
    if (hit !== undefined) {
      this.#cache.delete(event);
      this.#cache.set(event, hit);
      return hit;
    }
    const tree = materialize(this.store, event);
    this.#cache.set(event, tree);
    if (this.#cache.size > KEEP) this.#cache.delete(this.#cache.keys().next().value as number);
    return tree;
  }
}
