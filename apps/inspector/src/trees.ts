/** The trees the server answers from: a small cache of materialized trees by event. */
import type { Tree } from "@strata/dom";
import { loadTree, materialize } from "@strata/engine";
import { type AsyncStore, type EventId, isAsyncStore, type Store } from "@strata/store";

/** Trees kept at most (scrubbing asks for the same few events again and again). */
const KEEP = 24;

/**
 * Materialized trees by event, least recently used dropped first. Over the asynchronous port
 * (PostgreSQL) a tree is loaded whole before it is handed out (the views read all of it), and
 * requests for the same event at the same time share one load.
 */
export class Trees {
  readonly #cache = new Map<number, Promise<Tree>>();
  constructor(private readonly store: Store | AsyncStore) {}

  /** The tree at `event` (an event of the store; throws what `materialize` throws otherwise). */
  at(event: EventId): Promise<Tree> {
    const hit = this.#cache.get(event);
    if (hit !== undefined) {
      this.#cache.delete(event);
      this.#cache.set(event, hit);
      return hit;
    }
    const store = this.store;
    const made = isAsyncStore(store)
      ? materialize(store, event).then((t) => loadTree(t))
      : Promise.resolve().then(() => materialize(store, event));
    // A failed load is not kept: the next request tries again.
    made.catch(() => {
      if (this.#cache.get(event) === made) this.#cache.delete(event);
    });
    this.#cache.set(event, made);
    if (this.#cache.size > KEEP) this.#cache.delete(this.#cache.keys().next().value as number);
    return made;
  }
}
