/**
 * DOM-34: one depth limit, checked up front wherever a tree can grow deeper (issue 11 item 17),
 * and no recursion over depth anywhere in @strata/dom.
 */
import { describe, expect, it } from "vitest";
import {
  advanceIndex,
  applyPatch,
  applyWithEffect,
  checkSpec,
  DomError,
  decodePatch,
  depthOf,
  diffToPatch,
  diffTrees,
  draft,
  encodePage,
  ensureIndex,
  fromSnapshot,
  invertPatch,
  MAX_DEPTH,
  type NodeSpec,
  nodeId,
  type Op,
  PAGE_SIZE,
  type Page,
  parseXml,
  type NodeRecord as Rec,
  select,
  skeletonTree,
  specDepth,
  specOf,
  subtreeHeight,
  type Tree,
  toPages,
  toSnapshot,
  toXml,
  treeFromPages,
  tryApplyPatch,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";

const n = nodeId;

/** A spec `levels` deep: a chain of <d>, the last one a leaf (with `text`, if given). */
function chain(levels: number, text?: string): NodeSpec {
  let spec: NodeSpec = text === undefined ? { tag: "d" } : { tag: "d", text };
  for (let i = 1; i < levels; i++) spec = { tag: "d", children: [spec] };
  return spec;
}

function failure(f: () => unknown): DomError {
  try {
    f();
  } catch (e) {
    if (e instanceof DomError) return e;
    throw e;
  }
  throw new Error("did not fail");
}

/** session(1) > body(3): body is at depth 2. */
const base = () => skeletonTree(SKELETON);

describe("DOM-34 the depth limit", () => {
  it("is 1,000 levels, and checkSpec refuses a deeper spec before looking further (no RangeError at any depth)", () => {
    expect(MAX_DEPTH).toBe(1000);
    expect(specDepth(chain(MAX_DEPTH))).toBe(MAX_DEPTH);
    expect(() => checkSpec(chain(MAX_DEPTH))).not.toThrow();
    for (const levels of [MAX_DEPTH + 1, 1_000_000]) {
      const e = failure(() => checkSpec(chain(levels)));
      expect(e.code).toBe("too-large");
      expect(e.message).toMatch(/1001 levels deep; a tree is at most 1000 levels deep \(MAX_DEPTH\)/);
    }
  });

  it("ins checks the depth its elements would reach under their parent, with or without checkSpec", () => {
    const fits = chain(MAX_DEPTH - 2);
    const t = applyPatch(base(), [["ins", n(3), null, fits]], { monotonic: true });
    expect(depthOf(t, t.hwm)).toBe(MAX_DEPTH);
    for (const trusted of [false, true]) {
      const r = tryApplyPatch(
        base(),
        [
          ["ins", n(3), null, { tag: "ok" }],
          ["ins", n(3), null, chain(MAX_DEPTH - 1)],
        ],
        { trusted },
      );
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("too-large");
        expect(r.error.opIndex).toBe(1);
        expect(r.error.message).toMatch(/^op 1: an element inserted under element 3 <body> would be 1001 levels deep/);
      }
    }
    // Under the deepest element nothing fits; one level up, a leaf does and a pair does not.
    expect(failure(() => applyPatch(t, [["ins", n(t.hwm), null, { tag: "x" }]])).code).toBe("too-large");
    expect(applyPatch(t, [["ins", n(t.hwm - 1), null, { tag: "x" }]]).size).toBe(t.size + 1);
    expect(failure(() => applyPatch(t, [["ins", n(t.hwm - 1), null, { tag: "x", children: [{ tag: "y" }] }]])).code).toBe("too-large");
  });

  it("mv checks the moved subtree under its new parent, including a subtree moved under a deep parent", () => {
    const t = applyPatch(base(), [
      ["ins", n(3), null, chain(MAX_DEPTH - 2)], // ids 4 … 1001, id k at depth k - 1
      ["ins", n(2), null, { tag: "pair", children: [{ tag: "leaf" }] }], // 1002 under meta, 1003 under it
    ]);
    expect(depthOf(t, 1001)).toBe(MAX_DEPTH);
    // Under element 1000 (depth 999) a leaf fits; a two-level subtree does not, nor anything under 1001.
    expect(applyPatch(t, [["mv", n(1003), n(1000), null]]).get(1003)?.parent?.id).toBe(1000);
    const e = failure(() => applyPatch(t, [["mv", n(1002), n(1000), null]]));
    expect(e.code).toBe("too-large");
    expect(e.message).toMatch(/moving element 1002 <pair> under element 1000 <d>, its deepest descendant would be 1001 levels deep/);
    expect(failure(() => applyPatch(t, [["mv", n(1003), n(1001), null]])).code).toBe("too-large");
    expect(subtreeHeight(t, 4)).toBe(MAX_DEPTH - 2);
    expect(subtreeHeight(t, 4, 10)).toBe(11); // stops at the first level past the limit
  });

  it("a move to the same depth or higher walks only parent chains, never the moved subtree", () => {
    let t = applyPatch(base(), [["ins", n(3), null, { tag: "turn" }]]);
    const turn = t.hwm;
    const wide: Op[] = [];
    for (let i = 0; i < 5_000; i++) wide.push(["ins", n(turn), null, { tag: "call", children: [{ tag: "out" }] }]);
    t = applyPatch(t, wide);
    let reads = 0;
    const counting = Object.create(t, {
      rec: {
        value: (id: number) => {
          reads++;
          return t.rec(id);
        },
      },
    }) as Tree;
    applyPatch(counting, [["mv", n(turn), n(1), null]]); // 10,001 elements move up one level
    expect(reads).toBeLessThan(100);
  });

  it("parseXml refuses deeper documents, maxDepth only lowers the limit, and fromSnapshot refuses deeper snapshots", () => {
    const deepXml = (levels: number) => `${"<d>".repeat(levels)}${"</d>".repeat(levels)}`;
    expect(parseXml(deepXml(MAX_DEPTH)).size).toBe(MAX_DEPTH);
    expect(failure(() => parseXml(deepXml(MAX_DEPTH + 1))).code).toBe("too-large");
    const e = failure(() => parseXml("<a/>", { maxDepth: MAX_DEPTH + 1 }));
    expect([e.code, e.message]).toEqual(["bad-op", "maxDepth must be an integer from 1 to 1000 (MAX_DEPTH: no tree is deeper), got 1001"]);
    // A snapshot of a 1,001-deep chain, written by hand (no strata tree can be that deep).
    const nodes = [];
    for (let id = 1; id <= MAX_DEPTH + 1; id++)
      nodes.push([id, "d", {}, "", id - 1, 0, 0, id > MAX_DEPTH ? 0 : id + 1, id > MAX_DEPTH ? 0 : id + 1]);
    const snap = JSON.stringify({ format: "strata-tree@1", hwm: MAX_DEPTH + 1, root: 1, fixed: [1], size: MAX_DEPTH + 1, nodes });
    const s = failure(() => fromSnapshot(snap));
    expect(s.code).toBe("too-large");
    expect(s.message).toMatch(/element 1001 would be 1001 levels deep/);
  });
});

describe("DOM-34 every operation works on the deepest tree allowed", () => {
  it("JSON, XML, snapshots, pages, the tag index, selectors, diffs, inverses, specOf and drafts", () => {
    const ops: Op[] = [["ins", n(3), null, chain(MAX_DEPTH - 2, "leaf")]];
    const before = base();
    // The op survives a JSON round trip (JSON.stringify recurses: the limit keeps it shallow enough).
    const decoded = decodePatch(JSON.parse(JSON.stringify(ops)));
    const { tree: t, effect } = applyWithEffect(before, decoded, { monotonic: true });
    expect(toXml(parseXml(toXml(t)))).toBe(toXml(t));
    expect(toSnapshot(fromSnapshot(toSnapshot(t)))).toBe(toSnapshot(t));
    const { header, pages } = toPages(t);
    expect(
      toSnapshot(
        treeFromPages(
          header,
          pages.map((p, i) => (p === undefined ? undefined : String(i))),
          (_, i) => pages[i] as string,
        ),
      ),
    ).toBe(toSnapshot(t));
    ensureIndex(before);
    advanceIndex(before, t, effect);
    expect(select(t, "d d d d:empty")).toHaveLength(0);
    expect(select(t, "body d:not(:has(d))").map((e) => e.text)).toEqual(["leaf"]);
    const d = diffTrees(before, t);
    expect(toSnapshot(applyPatch(before, diffToPatch(before, d)))).toBe(toSnapshot(t));
    expect(toSnapshot(applyPatch(t, invertPatch(before, decoded)))).toBe(toSnapshot(before));
    expect(JSON.parse(JSON.stringify(specOf(t, 4)))).toEqual(chain(MAX_DEPTH - 2, "leaf"));
    const drafted = draft(before, (dr) => {
      let parent: number = 3;
      for (let i = 0; i < MAX_DEPTH - 2; i++) parent = dr.appendChild(n(parent), { tag: "d" });
      expect(() => dr.appendChild(n(parent), { tag: "d" })).toThrow(/1001 levels deep/);
    });
    expect(depthOf(drafted.tree, drafted.tree.hwm)).toBe(MAX_DEPTH);
  });

  it("nothing recurses on depth: a 20,000-deep tree loaded from pages (whose structure is trusted) is written, indexed, queried, diffed and removed", () => {
    const levels = 20_000;
    const pageRecords: Rec[][] = [];
    for (let id = 1; id <= levels; id++) {
      const last = id === levels;
      const rec: Rec = {
        id: n(id),
        tag: "d",
        attrs: {},
        text: last ? "leaf" : "",
        parent: id - 1,
        prev: 0,
        next: 0,
        first: last ? 0 : id + 1,
        last: last ? 0 : id + 1,
      };
      const p = Math.floor(id / PAGE_SIZE);
      pageRecords[p] ??= [];
      (pageRecords[p] as Rec[])[id % PAGE_SIZE] = rec;
    }
    const encoded = pageRecords.map((records) => encodePage(records as Page));
    const deep = treeFromPages(
      { hwm: levels, root: 1, fixed: [1], size: levels },
      encoded.map((_, i) => String(i)),
      (_, i) => encoded[i] as string,
    );
    expect(depthOf(deep, levels)).toBe(levels);
    expect(subtreeHeight(deep, 1)).toBe(levels);
    expect(toXml(deep).length).toBeGreaterThan(levels * 8);
    expect(toPages(deep).pages).toHaveLength(encoded.length);
    expect(ensureIndex(deep).ids("d")).toHaveLength(levels);
    expect(select(deep, "d d d:empty")).toHaveLength(0);
    expect(select(deep, "d:not(:has(d))").map((e) => e.id)).toEqual([levels]);
    expect(deep.root.textContent()).toBe("leaf");
    const gone = applyPatch(deep, [["rm", n(2)]]);
    expect(gone.size).toBe(1);
    expect(diffTrees(deep, gone).removed.map((r) => r.id)).toEqual([2]);
    expect(applyPatch(deep, [["ins", n(10), null, { tag: "x" }]]).size).toBe(levels + 1);
    expect(failure(() => applyPatch(deep, [["ins", n(levels - 1), n(levels), { tag: "x" }]])).code).toBe("too-large");
  });
});
