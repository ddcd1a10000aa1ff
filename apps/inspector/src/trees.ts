/**
 * The trees the server answers from: a small cache of materialized trees by session and event.
 * The session is part of the key: on SQLite the ids of a removed session's newest events may be
 * handed out again (ST-35), and a tree cached for the removed one must never answer for them.
 */
import type { Tree } from "@strata/dom";
import { loadTree, materialize } from "@strata/engine";
import { type AsyncStore, type EventId, isAsyncStore, type SessionId, type Store } from "@strata/store";

/** Trees kept at most (scrubbing asks for the same few events again and again). */
const KEEP = 24;

/**
 * Materialized trees by event, least recently used dropped first. Over the asynchronous port
 * (PostgreSQL) a tree is loaded whole before it is handed out (the views read all of it), and
 * requests for the same event at the same time share one load.
 */
export class Trees {
  readonly #cache = new Map<string, Promise<Tree>>();
  constructor(private readonly store: Store | AsyncStore) {}

  /** The tree at `event` of `session` (an event of it; throws what `materialize` throws otherwise). */
  at(session: SessionId, event: EventId): Promise<Tree> {
    const key = `${session}@${event}`;
    const hit = this.#cache.get(key);
    if (hit !== undefined) {
      this.#cache.delete(key);
      this.#cache.set(key, hit);
      return hit;
    }
    const store = this.store;
    const made = isAsyncStore(store)
      ? materialize(store, event).then((t) => loadTree(t))
      : Promise.resolve().then(() => materialize(store, event));
    // A failed load is not kept: the next request tries again.
    made.catch(() => {
      if (this.#cache.get(key) === made) this.#cache.delete(key);
    });
    this.#cache.set(key, made);
    if (this.#cache.size > KEEP) this.#cache.delete(this.#cache.keys().next().value as string);
    return made;
  }
}
