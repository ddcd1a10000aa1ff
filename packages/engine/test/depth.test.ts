/**
 * Issue 11 item 17 (the session core's part; the agent's is in packages/agent/test/depth.test.ts):
 * no recursion over untrusted depth. A text reference read from a snapshot page (data from disk or
 * a bundle) may nest any depth: it is resolved with an explicit stack, and a group that claims to
 * hold a group of its own level or higher (the only way a damaged store could make references
 * loop) is a `bad-snapshot` error, never a hang.
 */
import { openStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { EngineError } from "../src/index.ts";
import { TextIndex, type TextRef, TextResolver } from "../src/internal.ts";

/** `["c", [["c", [ … "leaf" … ]]]]`, `depth` levels deep, built without recursion. */
function nested(depth: number, leaf: unknown): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = ["c", [v, i === 0 ? "!" : ""]];
  return v;
}

describe("EN-11 text references of any depth", () => {
  it("a concatenation nested 200,000 deep resolves (and prefetches) without a stack overflow", () => {
    const store = openStore(":memory:");
    const hash = store.putBlob("blob text");
    const resolver = new TextResolver(store);
    const deep = nested(200_000, ["b", hash]);
    resolver.prefetch([deep]);
    expect(resolver.text(deep)).toBe("blob text!");
  });

  it("groups must hold lower levels: a group claiming its own level (a loop in a damaged store) is bad-snapshot", () => {
    const store = openStore(":memory:");
    const leaf = store.putBlob(JSON.stringify(["c", ["a", "b"]]));
    const ok = store.putBlob(JSON.stringify(["c", [["r", leaf, 1], "c"]]));
    const resolver = new TextResolver(store);
    expect(resolver.text(["r", ok, 2])).toBe("abc");
    // The same list claimed one level lower than what it holds.
    expect(() => new TextResolver(store).text(["r", ok, 1])).toThrow(EngineError);
    expect(() => new TextResolver(store).text(["r", ok, 1])).toThrow(/text group [0-9a-f]+ at level 1, which cannot be there/);
    for (const bad of [["r", leaf, 0], ["r", leaf, 1e9], ["c"], ["b"], ["e", 1, 2], 42]) {
      const e = (() => {
        try {
          new TextResolver(store).text(bad);
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(EngineError);
      expect((e as EngineError).code).toBe("bad-snapshot");
    }
  });
});

describe("EN-10 EN-11 hostile references stay bounded", () => {
  it("a malformed reference nested 200,000 deep is bad-snapshot (its message shows it shallowly)", () => {
    const store = openStore(":memory:");
    const deep = nested(200_000, ["x", 1]);
    expect(() => new TextResolver(store).text(deep)).toThrow(/text reference it cannot read: \["x",1\]/);
    let bad: unknown = 7;
    for (let i = 0; i < 200_000; i++) bad = ["q", bad];
    expect(() => new TextResolver(store).text(bad)).toThrow(/cannot read: \["q",\[…2\]\]/);
  });

  it("a nested concatenation read from a page is kept flat: a later snapshot stores it without recursion", () => {
    const store = openStore(":memory:");
    const hash = store.putBlob("b".repeat(200));
    const index = new TextIndex();
    const deep = nested(100_000, ["b", hash]) as TextRef;
    const text = new TextResolver(store).text(deep);
    index.recordLoaded(7, text, deep);
    const stored = index.encode(text, 7, store);
    expect(Array.isArray(stored) && stored[0] === "c").toBe(true);
    const parts = (stored as readonly ["c", readonly unknown[]])[1];
    expect(parts.some((p) => Array.isArray(p) && p[0] === "c")).toBe(false);
    expect(new TextResolver(store).text(JSON.parse(JSON.stringify(stored)))).toBe(text);
  });
});
