/** DOM-21 … DOM-23: canonical snapshots, untrusted snapshot input, paged snapshots. */
import { afterEach, describe, expect, it } from "vitest";
import {
  applyPatch,
  DomError,
  decodePage,
  encodePage,
  ensureIndex,
  fromSnapshot,
  indexOf,
  LazyPage,
  lazyTree,
  nodeId,
  type Op,
  pageCache,
  parseXml,
  SNAPSHOT_FORMAT,
  select,
  skeletonTree,
  slotsOf,
  toPages,
  toSnapshot,
  toXml,
  treeFromPages,
  withStoredPages,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";

const n = nodeId;
const sample = () =>
  applyPatch(skeletonTree(SKELETON), [
    ["ins", n(2), null, { tag: "todo", children: [{ tag: "item", attrs: { status: "pending" }, text: "a" }] }],
    ["ins", n(3), null, { tag: "turn", attrs: { n: "1" }, text: "x\r\ny" }],
  ]);

const mutate = (snap: string, f: (d: { hwm: number; root: number; fixed: number[]; size: number; nodes: unknown[][] }) => void) => {
  const d = JSON.parse(snap);
  f(d);
  return JSON.stringify(d);
};

describe("DOM-21 canonical snapshots", () => {
  it("carries format, high-water mark, root, fixed skeleton and every record in id order", () => {
    const s = JSON.parse(toSnapshot(sample()));
    expect(s.format).toBe(SNAPSHOT_FORMAT);
    expect([s.hwm, s.root, s.fixed, s.size]).toEqual([6, 1, [1, 2, 3], 6]);
    expect(s.nodes.map((r: unknown[]) => r[0])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(s.nodes[4]).toEqual([5, "item", { status: "pending" }, "a", 4, 0, 0, 0, 0]);
  });

  it("equal trees give equal bytes; a different high-water mark gives different bytes", () => {
    const a = sample();
    expect(toSnapshot(parseXml(toXml(a)))).toBe(toSnapshot(a));
    expect(toSnapshot(fromSnapshot(new TextEncoder().encode(toSnapshot(a))))).toBe(toSnapshot(a));
    expect(toSnapshot(applyPatch(a, [["set", 0, "hwm", "7"]]))).not.toBe(toSnapshot(a));
  });
});

describe("DOM-22 snapshots from untrusted sources are validated", () => {
  const cases: Array<[string, (s: string) => string, RegExp]> = [
    ["not JSON", () => "{", /not valid UTF-8 JSON/],
    ["foreign format", (s) => mutate(s, (d) => Object.assign(d, { format: "other@2" })), /foreign or newer snapshot/],
    ["size mismatch", (s) => mutate(s, (d) => Object.assign(d, { size: 5 })), /holds 6 records/],
    ["unordered records", (s) => mutate(s, (d) => d.nodes.reverse()), /ascending id order/],
    ["record above hwm", (s) => mutate(s, (d) => Object.assign(d, { hwm: 5 })), /above the high-water mark/],
    ["dangling child", (s) => mutate(s, (d) => ((d.nodes[3] as unknown[])[7] = 99)), /lists child 99, which has no record/],
    ["wrong parent", (s) => mutate(s, (d) => ((d.nodes[4] as unknown[])[4] = 3)), /names 3 as parent/],
    ["cycle", (s) => mutate(s, (d) => ((d.nodes[4] as unknown[])[6] = 5)), /cycle|prev/],
    ["unreachable", (s) => mutate(s, (d) => ((d.nodes[3] as unknown[])[7] = 0)), /last|not reachable/],
    ["mixed content", (s) => mutate(s, (d) => ((d.nodes[3] as unknown[])[3] = "t")), /both text and children/],
    ["bad name", (s) => mutate(s, (d) => ((d.nodes[3] as unknown[])[1] = "__proto__")), /reserved/],
    ["bad text", (s) => mutate(s, (d) => ((d.nodes[4] as unknown[])[3] = "\u0001")), /cannot carry/],
    ["fixed missing", (s) => mutate(s, (d) => Object.assign(d, { fixed: [1, 2, 3, 7] })), /fixed element 7 does not exist/],
    ["root not fixed", (s) => mutate(s, (d) => Object.assign(d, { fixed: [2, 3] })), /root must be fixed/],
    ["short record", (s) => mutate(s, (d) => (d.nodes[0] as unknown[]).pop()), /9-element record/],
  ];
  for (const [name, corrupt, message] of cases)
    it(`rejects ${name}`, () => {
      const bytes = corrupt(toSnapshot(sample()));
      try {
        fromSnapshot(bytes);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(DomError);
        expect((e as DomError).code).toBe("bad-snapshot");
        expect((e as DomError).message).toMatch(message);
      }
    });
});

describe("DOM-23 paged snapshots", () => {
  it("loads pages only when touched, and gives the same tree", () => {
    let t = skeletonTree(SKELETON);
    const ops = [];
    for (let i = 0; i < 2000; i++) ops.push(["ins", n(3), i === 0 ? null : n(3 + i), { tag: "turn", attrs: { n: String(i) } }] as const);
    t = applyPatch(t, ops);
    const { header, pages } = toPages(t);
    expect(pages.length).toBe(8);
    const loads: string[] = [];
    const lazy = treeFromPages(
      header,
      pages.map((p, i) => (p === undefined ? undefined : `p${i}`)),
      (ref) => {
        loads.push(ref);
        return pages[Number(ref.slice(1))] as string;
      },
    );
    expect(lazy.get(2003)?.attrs.n).toBe("1999");
    expect(loads).toEqual(["p7"]);
    const next = applyPatch(lazy, [["set", n(2003), "done", "1"]]);
    expect(loads).toEqual(["p7"]);
    expect(slotsOf(next)[0]).toBeInstanceOf(LazyPage);
    expect(toSnapshot(lazy)).toBe(toSnapshot(t));
    expect(select(next, "turn[done]").map((e) => e.id)).toEqual([2003]);
  });

  it("decodePage validates the page number of every record", () => {
    const { pages } = toPages(sample());
    expect(() => decodePage(1, pages[0] as string)).toThrow(/belongs to page 0/);
    expect(encodePage(decodePage(0, pages[0] as string))).toBe(pages[0]);
    expect(() => decodePage(0, "{}")).toThrow(/array of records/);
  });
});

/** The code of the `DomError` that `f` throws, or undefined when it returns. */
function errorCode(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as DomError).code;
  }
}
const skeleton = () => skeletonTree(SKELETON);

describe("DOM-22, DOM-23 the id limit in snapshots; page codecs keep texts and id order", () => {
  it("DOM-23: a page codec may not store a text as a different string; pages must be in id order", () => {
    const { pages } = toPages(applyPatch(skeleton(), [["ins", n(3), null, { tag: "x", text: "long tool output" }]]));
    expect(() => encodePage(decodePage(0, pages[0] as string), { encodeText: () => "blob:0" })).toThrow(/as itself or as a non-string/);
    const records = JSON.parse(pages[0] as string) as unknown[];
    expect(() => decodePage(0, JSON.stringify(records.reverse()))).toThrow(/ascending id order/);
    const codec = { encodeText: (t: string) => ({ ref: t.length }), decodeText: () => "long tool output" };
    const { header, pages: refPages } = toPages(
      applyPatch(skeleton(), [["ins", n(3), null, { tag: "x", text: "long tool output" }]]),
      codec,
    );
    const back = treeFromPages(header, ["p"], () => refPages[0] as string, codec);
    expect(back.get(4)?.text).toBe("long tool output");
  });

  it("DOM-22: fromSnapshot refuses ids beyond the maximum", () => {
    const snap = JSON.parse(toSnapshot(skeleton()));
    snap.nodes[2][0] = 2 ** 32 + 3;
    expect(errorCode(() => fromSnapshot(JSON.stringify(snap)))).toBe("bad-snapshot");
  });
});

describe("DOM-42 deferred page texts", () => {
  const LONG = "a long tool output, stored elsewhere";
  /** A page of three texted elements, its texts stored as `{ ref }` values. */
  function storedPage(): { records: unknown[]; texts: Map<number, string> } {
    const tree = applyPatch(skeleton(), [
      ["ins", n(3), null, { tag: "x", attrs: { k: "v" }, text: `${LONG} 1` }],
      ["ins", n(3), n(4), { tag: "x", text: `${LONG} 2` }],
      ["ins", n(3), n(5), { tag: "y", text: "short" }],
    ]);
    const texts = new Map<number, string>();
    const { pages } = toPages(tree, {
      encodeText: (t, id) => {
        if (t === "short") return t;
        texts.set(id, t);
        return { ref: id };
      },
    });
    return { records: JSON.parse(pages[0] as string) as unknown[], texts };
  }

  it("DOM-42: structure is checked at once, texts are decoded on first read, once, after one batch of the page's values", () => {
    const { records, texts } = storedPage();
    const decoded: number[] = [];
    const prepared: unknown[][] = [];
    const page = decodePage(0, records, {
      deferTexts: true,
      prepareTexts: (values) => prepared.push([...values]),
      decodeText: (v, id) => {
        decoded.push(id);
        return texts.get((v as { ref: number }).ref) as string;
      },
    });
    expect(decoded).toEqual([]);
    expect(prepared).toEqual([]);
    expect(page[4]?.tag).toBe("x");
    expect(page[4]?.attrs).toEqual({ k: "v" });
    expect(page[6]?.text).toBe("short");
    expect(decoded).toEqual([]);
    expect(page[5]?.text).toBe(`${LONG} 2`);
    expect(prepared).toEqual([[{ ref: 4 }, { ref: 5 }]]);
    expect(page[5]?.text).toBe(`${LONG} 2`);
    expect(decoded).toEqual([5]);
    // A copy reads the text; the record stays frozen and equal to an eagerly decoded one.
    const copy = { ...(page[4] as object) } as { text: string };
    expect(copy.text).toBe(`${LONG} 1`);
    expect(Object.isFrozen(page[4])).toBe(true);
    const eager = decodePage(0, records, { decodeText: (v) => texts.get((v as { ref: number }).ref) as string });
    expect(page).toEqual(eager);
    expect(prepared).toHaveLength(1);
  });

  it("DOM-42: a deferred text that cannot be decoded or that XML cannot carry is bad-snapshot when read; a bad structure fails at once", () => {
    const { records } = storedPage();
    const page = decodePage(0, records, {
      deferTexts: true,
      decodeText: (v) => ((v as { ref: number }).ref === 4 ? "bad \u0001 char" : "fine"),
    });
    expect(page[5]?.text).toBe("fine");
    expect(() => page[4]?.text).toThrow(DomError);
    expect(() => page[4]?.text).toThrow(/U\+0001/);
    try {
      page[4]?.text;
    } catch (e) {
      expect((e as DomError).code).toBe("bad-snapshot");
    }
    const broken = JSON.parse(JSON.stringify(records)) as unknown[][];
    (broken[3] as unknown[])[1] = "bad tag";
    expect(() => decodePage(0, broken, { deferTexts: true, decodeText: () => "x" })).toThrow(/tag name "bad tag"/);
  });
});

describe("DOM-43 evictable pages and stored texts kept", () => {
  const limit = pageCache.limit;
  afterEach(() => {
    pageCache.limit = limit;
  });

  /** A tree of `pages` full pages of `<x>` elements with long texts, and its pages encoded with `{ ref }` texts. */
  function paged(pages: number): { tree: ReturnType<typeof skeleton>; encoded: string[]; texts: Map<number, string> } {
    const ops: Op[] = [];
    for (let i = 0; i < pages * 256 - 4; i++) ops.push(["ins", n(3), null, { tag: "x", text: `long text number ${i} `.repeat(3) }]);
    const tree = applyPatch(skeleton(), ops);
    const texts = new Map<number, string>();
    const { pages: encoded } = toPages(tree, {
      encodeText: (t, id) => {
        texts.set(id, t);
        return { ref: id };
      },
    });
    return { tree, encoded: encoded as string[], texts };
  }

  it("DOM-43: at most pageCache.limit evictable pages are loaded; the page read least recently goes first, and loads again equal", () => {
    const { tree, encoded, texts } = paged(4);
    const loads: number[] = [];
    const codec = { deferTexts: true, decodeText: (v: unknown) => texts.get((v as { ref: number }).ref) as string };
    const lazy = lazyTree(
      { hwm: tree.hwm, root: tree.rootId, fixed: tree.fixed, size: tree.size },
      encoded.map((_, i) => `p${i}`),
      (ref, i) => {
        loads.push(i);
        return decodePage(i, encoded[Number(ref.slice(1))] as string, codec);
      },
      { evictable: true },
    );
    pageCache.limit = 2;
    const slots = slotsOf(lazy) as LazyPage[];
    expect(lazy.rec(1)?.tag).toBe("session"); // page 0
    expect(lazy.rec(300)?.tag).toBe("x"); // page 1
    expect(pageCache.loaded).toBe(2);
    expect(lazy.rec(5)?.tag).toBe("x"); // page 0 read again: it is kept
    expect(lazy.rec(600)?.tag).toBe("x"); // page 2: page 1 (not read since) is dropped
    expect(slots.map((s) => s.loaded)).toEqual([true, false, true, false]);
    expect(pageCache.loaded).toBe(2);
    expect(lazy.rec(300)?.text).toBe(tree.rec(300)?.text); // page 1 again: loaded again, equal
    expect(loads).toEqual([0, 1, 2, 1]);
    expect(toSnapshot(lazy)).toBe(toSnapshot(tree));
    expect(pageCache.loaded).toBeLessThanOrEqual(2);
    // Lowering the limit drops loaded pages at once; a bad limit is refused.
    pageCache.limit = 1;
    expect(slots.filter((s) => s.loaded)).toHaveLength(1);
    expect(() => {
      pageCache.limit = 0;
    }).toThrow(RangeError);
    // Not evictable (the default): never dropped.
    const kept = new LazyPage("k", () => [] as never);
    kept.page;
    lazy.rec(5);
    lazy.rec(600);
    expect(kept.loaded).toBe(true);
  });

  it("DOM-43: with reuseStored, deferred records and edited copies that kept their text are written with their stored value, unread", () => {
    const { tree, encoded, texts } = paged(1);
    let decoded = 0;
    const page = decodePage(0, encoded[0] as string, {
      deferTexts: true,
      decodeText: (v) => {
        decoded++;
        return texts.get((v as { ref: number }).ref) as string;
      },
    });
    const asked: number[] = [];
    const codec = {
      encodeText: (t: string, id: number) => {
        asked.push(id);
        return { fresh: id, length: t.length };
      },
      reuseStored: (v: unknown) => typeof v === "object" && v !== null && "ref" in v,
    };
    expect(encodePage(page, codec)).toBe(encoded[0]);
    expect([decoded, asked.length]).toEqual([0, 0]);
    // Through a tree: an attribute set copies the record (reading its text); the copy keeps the
    // stored value. A text change does not: it is encoded afresh.
    const lazy = lazyTree({ hwm: tree.hwm, root: tree.rootId, fixed: tree.fixed, size: tree.size }, ["p0"], () => page);
    const edited = applyPatch(lazy, [
      ["set", n(10), "seen", "yes"],
      ["text", n(11), "a new text"],
    ]);
    const out = JSON.parse(encodePage(slotsOf(edited)[0] as never, codec)) as unknown[][];
    const rec = (id: number) => out.find((r) => r[0] === id) as unknown[];
    expect(rec(10)[3]).toEqual({ ref: 10 });
    expect(rec(10)[2]).toEqual({ seen: "yes" });
    expect(rec(11)[3]).toEqual({ fresh: 11, length: 10 });
    expect(asked).toEqual([11]);
    // Without reuseStored every text goes through encodeText.
    encodePage(page, { encodeText: codec.encodeText });
    expect(asked.length).toBe(1 + 252);
  });

  it("DOM-43: withStoredPages gives the same version with stored pages lazy and evictable, and keeps the tag index", () => {
    const { tree, encoded, texts } = paged(3);
    ensureIndex(tree);
    const codec = { deferTexts: true, decodeText: (v: unknown) => texts.get((v as { ref: number }).ref) as string };
    const loads: number[] = [];
    const next = withStoredPages(
      tree,
      (i) => (i < 2 ? `p${i}` : undefined),
      (ref, i) => {
        loads.push(i);
        return decodePage(i, encoded[Number(ref.slice(1))] as string, codec);
      },
    );
    const slots = slotsOf(next);
    expect(slots.map((s) => s instanceof LazyPage && s.evictable)).toEqual([true, true, false]);
    expect(slots[2]).toBe(slotsOf(tree)[2]);
    expect(indexOf(next)).toBeDefined();
    expect(indexOf(tree)).toBeUndefined();
    expect(loads).toEqual([]);
    expect(select(next, "x").length).toBe(select(tree, "x").length);
    expect(toSnapshot(next)).toBe(toSnapshot(tree));
    expect(
      withStoredPages(
        next,
        () => undefined,
        () => [],
      ),
    ).toBe(next);
  });
});
