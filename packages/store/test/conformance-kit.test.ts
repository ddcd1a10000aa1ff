/**
 * ST-27: the conformance suite's transaction bodies (conformance/kit.ts: `body`, `value`) run at
 * once against a synchronous store and as a promise against an asynchronous one, with the same
 * results and the same errors where they happened.
 */
import { describe, expect, it } from "vitest";
import { body, value } from "./conformance/kit.ts";

const later = <T>(v: T): Promise<T> => new Promise((resolve) => setImmediate(() => resolve(v)));
const fails = (e: unknown): Promise<never> => new Promise((_, reject) => setImmediate(() => reject(e)));

describe("ST-27 transaction bodies for synchronous and asynchronous stores", () => {
  it("with plain values the body runs to its end at once and returns its value", () => {
    const seen: number[] = [];
    const run = body(function* () {
      const a = yield* value(1);
      seen.push(a);
      const b = yield* value(a + 1);
      seen.push(b);
      return a + b;
    });
    expect(run()).toBe(3);
    expect(seen).toEqual([1, 2]);
    const boom = new Error("sync");
    expect(() =>
      body(function* () {
        yield* value(1);
        throw boom;
      })(),
    ).toThrow(boom);
  });

  it("with promises the body is a promise of its value; a rejection comes back into the body where it happened", async () => {
    const seen: unknown[] = [];
    const run = body(function* () {
      const a = yield* value(later(1));
      const b = yield* value(2); // plain values after a promise are fine too
      try {
        yield* value(fails(new Error("rejected")));
      } catch (e) {
        seen.push((e as Error).message);
      }
      const c = yield* value(later(a + b));
      return c * 10;
    });
    const result = run() as unknown;
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toBe(30);
    expect(seen).toEqual(["rejected"]);
    const uncaught = new Error("not caught");
    await expect(
      body(function* () {
        yield* value(later(1));
        yield* value(fails(uncaught));
      })() as unknown as Promise<void>,
    ).rejects.toBe(uncaught);
  });
});
