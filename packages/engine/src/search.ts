/**
 * The search backlog (SE-6): events written before their file had a search index are indexed
 * here, newest first, in batches — each batch one `indexSearch` transaction that also lowers the
 * backlog — so a run cut off anywhere (kill -9 included) leaves every indexed event indexed and
 * the rest still in the backlog, and the next run goes on where it stopped.
 */
import type { EventId } from "@strata/store";
import { value } from "@strata/store";
import { searchTextOfPayload } from "./events.ts";
import { type Answer, answer, type Port } from "./port.ts";

/** Event ids one batch covers (one `events` read, one `indexSearch` transaction). */
const BATCH = 2000;

export interface IndexBacklogOptions {
  /** Called after every batch: the backlog left, and the events indexed so far. */
  readonly progress?: (left: number, indexed: number) => void;
  /** Ids per batch (default 2000). */
  readonly batch?: number;
}

/** Indexes the store's whole search backlog (SE-6); answers how many events got searchable text. */
export function indexSearchBacklog<P extends Port>(store: P, options: IndexBacklogOptions = {}): Answer<P, number> {
  return answer(store, backlogSteps(store, options));
}

function* backlogSteps(store: Port, options: IndexBacklogOptions): Generator<unknown, number, unknown> {
  const batch = Math.max(1, Math.floor(options.batch ?? BATCH));
  let left = yield* value(store.searchBacklog());
  let indexed = 0;
  while (left > 0) {
    const low = Math.max(0, left - batch);
    const ids: EventId[] = [];
    for (let id = left; id > low; id--) ids.push(id as EventId);
    const events = yield* value(store.events(ids));
    const entries: { event: EventId; text: string; derived: true }[] = [];
    for (const e of events) {
      const text = searchTextOfPayload(e.kind, e.data);
      if (text !== undefined) entries.push({ event: e.id, text, derived: true });
    }
    yield* value(store.indexSearch(entries, low));
    indexed += entries.length;
    left = low;
    options.progress?.(left, indexed);
  }
  return indexed;
}
