/**
 * A store behind an asynchronous port, for proving the suite is ready for one (ST-27): every
 * method returns a promise that settles on a later turn of the event loop — except inside a
 * transaction, a read transaction or `verify`, whose bodies and hooks the synchronous store runs at
 * once (there its calls answer at once, as `body`/`value` allow). A test that forgot an `await`
 * meets a promise where it expected a value, and fails.
 */
import type { Store } from "../../src/index.ts";

/** Methods whose callbacks run inside the synchronous store: calls made from them answer at once. */
const SCOPES = new Set(["transaction", "readTransaction", "verify"]);

export function asyncPort(inner: Store): Store {
  let inside = 0;
  return new Proxy(inner, {
    get(target, key) {
      const v = Reflect.get(target, key, target);
      if (typeof v !== "function") return v;
      const method = v as (...args: unknown[]) => unknown;
      const run = (args: unknown[]): unknown => {
        if (!SCOPES.has(String(key))) return method.apply(target, args);
        inside++;
        try {
          return method.apply(target, args);
        } finally {
          inside--;
        }
      };
      return (...args: unknown[]) => {
        if (inside > 0) return run(args);
        return new Promise((resolve, reject) =>
          setImmediate(() => {
            try {
              resolve(run(args));
            } catch (e) {
              reject(e);
            }
          }),
        );
      };
    },
  });
}
