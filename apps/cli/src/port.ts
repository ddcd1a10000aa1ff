/**
 * The command on either storage port (decisions 0036 … 0038): SQLite, or PostgreSQL behind the
 * asynchronous port. Commands written for both await every store and session call (a value
 * awaited is itself), and read trees through these helpers: over the asynchronous port a tree
 * loads on demand (decision 0037).
 */
import type { Tree } from "@strata/dom";
import { loadTree, materialize, NotLoaded, type Port, type Session } from "@strata/engine";
import { drive, type EventId, isAsyncStore } from "@strata/store";

/** A session on either port. */
export type AnySession = Session<Port>;

/** `read()` once what it reads is fetched: over the asynchronous port each miss is fetched and the read run again. */
export async function settled<T>(read: () => T): Promise<T> {
  for (;;)
    try {
      return read();
    } catch (e) {
      if (!(e instanceof NotLoaded)) throw e;
      await drive(e.load());
    }
}

/** The tree at `event`, loaded whole (what a checkout or a file diff reads). */
export async function wholeTreeAt(store: Port, event: EventId): Promise<Tree> {
  if (!isAsyncStore(store)) return materialize(store, event);
  return loadTree(await materialize(store, event));
}
