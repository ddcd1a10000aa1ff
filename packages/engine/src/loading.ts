/**
 * Loading on demand over the asynchronous port (decision 0037). A tree is read synchronously (the
 * fold, selectors, templates), but over an `AsyncStore` a page or text that has not been fetched
 * cannot be read in the middle of a synchronous read. It throws {@link NotLoaded} instead, which
 * carries the steps that fetch it; {@link settle} runs a synchronous computation, fetches what it
 * reached and runs it again, until it completes. The computations it runs are pure functions of a
 * tree (a fold onto a persistent tree, a lifecycle diff, a page's encoding), so running one again
 * after a fetch is the same as running it once with everything loaded.
 */
import { EngineError } from "./errors.ts";

/** A read reached a page or text not fetched yet; `load` fetches it (and may fetch more). */
export class NotLoaded extends EngineError {
  constructor(
    what: string,
    readonly load: () => Generator<unknown, void, unknown>,
  ) {
    super(
      "not-loaded",
      `${what} is not loaded: over the asynchronous port a tree reads only what has been fetched; ` +
        "load it first with `await session.load()` (or `await loadTree(tree)` for a tree from `at`)",
    );
  }
}

/**
 * Fetches that one computation may wait for before it is given up: each fetch brings what one
 * read reached, or marks it missing from the store (then the read fails with `bad-snapshot`).
 */
const MAX_ROUNDS = 1_000_000;

/** `compute()` once everything it reads is loaded, as steps (steps.ts): each round fetches what the last run reached. */
export function* settle<T>(compute: () => T): Generator<unknown, T, unknown> {
  for (let round = 0; ; round++) {
    try {
      return compute();
    } catch (e) {
      if (!(e instanceof NotLoaded) || round >= MAX_ROUNDS) throw e;
      yield* e.load();
    }
  }
}
