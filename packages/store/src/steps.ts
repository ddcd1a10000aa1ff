/**
 * Code written once for both ports (decision 0035): a body that makes store calls as a generator —
 * each `yield* value(call)` gives the call's result — runs synchronously over a `Store` (every
 * result is a value, so the whole body finishes inside a synchronous transaction, as the store
 * requires) and as a promise over an `AsyncStore` (each promise is awaited, and the body resumes
 * with its value, or with its error thrown where the call was made).
 */

/** The result of a store call inside a {@link drive}n body. */
export function* value<T>(x: T): Generator<unknown, Awaited<T>, unknown> {
  return (yield x) as Awaited<T>;
}

const thenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as { then?: unknown } | null)?.then === "function";

/** Runs `g` to its end: at once while its calls answer values, as a promise from the first one that answers a promise. */
export function drive<T>(g: Generator<unknown, T, unknown>): T | Promise<T> {
  let step = g.next();
  while (!step.done) {
    if (thenable(step.value)) return settle(g, step.value);
    step = g.next(step.value);
  }
  return step.value;
}

async function settle<T>(g: Generator<unknown, T, unknown>, first: PromiseLike<unknown>): Promise<T> {
  let pending: unknown = first;
  for (;;) {
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await pending };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const step = outcome.ok ? g.next(outcome.value) : g.throw(outcome.error);
    if (step.done) return step.value;
    pending = step.value;
  }
}
