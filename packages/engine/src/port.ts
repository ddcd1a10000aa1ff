/**
 * The two storage ports the engine runs on (decision 0036): the synchronous `Store` (SQLite) and
 * the asynchronous `AsyncStore` (PostgreSQL, or any store through `asyncStore`). Code that touches
 * storage is written once, as steps (`drive`/`value`, @strata/store's steps.ts); what it answers
 * is the value over a `Store` and a promise of it over an `AsyncStore`.
 */
import { type AsyncStore, drive, type Store } from "@strata/store";

/** Either storage port. */
export type Port = Store | AsyncStore;

/** What an operation on port `P` answers: `T` over a `Store`, `Promise<T>` over an `AsyncStore`. */
export type Answer<P, T> = P extends AsyncStore ? Promise<T> : T;

/** Runs `steps` on the port they were written for: at once over a `Store`, as a promise over an `AsyncStore`. */
export function answer<P extends Port, T>(_store: P, steps: Generator<unknown, T, unknown>): Answer<P, T> {
  return drive(steps) as Answer<P, T>;
}
