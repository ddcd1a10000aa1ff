/** DOM-28 … DOM-31: structural diffs keyed by id. */
import { describe, expect, it } from "vitest";
import {
  applyPatch,
  type DomError,
  diffToPatch,
  diffTrees,
  isEmptyDiff,
  nodeId,
  parseXml,
  reverseDiff,
  skeletonTree,
  toPages,
  toSnapshot,
  toXml,
  treeFromPages,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";
import { checkLaws } from "./laws.ts";

const n = nodeId;
const base = () =>
  parseXml(`<session><meta><todo><item status="pending">a</item><item status="pending">b</item></todo></meta>
<body><turn n="1"><call tool="read"><output>x</output></call></turn><turn n="2"/></body></session>`);
// session 1, meta 2, todo 3, item 4, item 5, body 6, turn 7, call 8, output 9, turn 10

describe("DOM-28 diffTrees", () => {
  it("reports added and removed subtrees, attribute and text changes with before and after", () => {
    const a = base();
    const b = applyPatch(a, [
      ["set", n(4), "status", "completed"],
      ["set", n(5), "owner", "me"],
      ["set", n(7), "n", null],
      ["text", n(9), "y"],
      ["rm", n(8)],
      ["ins", n(10), null, { tag: "user", children: [{ tag: "p", text: "hi" }] }],
    ]);
    const d = diffTrees(a, b);
    expect(d.attrs).toEqual([
      { id: 4, name: "status", before: "pending", after: "completed" },
      { id: 5, name: "owner", before: null, after: "me" },
      { id: 7, name: "n", before: "1", after: null },
    ]);
    expect(d.text).toEqual([]); // the text change happened inside a removed subtree
    expect(d.removed).toEqual([
      {
        id: 8,
        at: { parent: 7, after: null },
        node: { tag: "call", id: 8, attrs: { tool: "read" }, children: [{ tag: "output", id: 9, text: "x" }] },
      },
    ]);
    expect(d.added).toEqual([
      { id: 11, at: { parent: 10, after: null }, node: { tag: "user", id: 11, children: [{ tag: "p", id: 12, text: "hi" }] } },
    ]);
    expect(d.moved).toEqual([]);
    expect(d.hwm).toEqual({ before: 10, after: 12 });
  });

  it("reports moves across parents and the minimal moves within a parent", () => {
    const a = base();
    const b = applyPatch(a, [
      ["mv", n(5), n(3), null],
      ["mv", n(8), n(10), null],
    ]);
    const d = diffTrees(a, b);
    expect(d.moved).toEqual(
      expect.arrayContaining([
        { id: 8, from: { parent: 7, after: null }, to: { parent: 10, after: null } },
        { id: 5, from: { parent: 3, after: 4 }, to: { parent: 3, after: null } },
      ]),
    );
    expect(d.moved).toHaveLength(2);
  });

  it("an unchanged pair of versions gives an empty diff", () => {
    const a = base();
    expect(isEmptyDiff(diffTrees(a, a))).toBe(true);
    expect(isEmptyDiff(diffTrees(a, parseXml(toXml(a))))).toBe(true);
  });

  it("treats an id that names different elements as removed and added (diverged branches)", () => {
    const a = applyPatch(base(), [["ins", n(10), null, { tag: "x", children: [{ tag: "y" }] }]]);
    const b = applyPatch(base(), [
      ["ins", n(6), null, { tag: "z" }],
      ["ins", n(11), null, { tag: "w" }],
    ]);
    const d = diffTrees(a, b);
    expect(d.removed.map((s) => s.id)).toEqual([11]);
    expect(d.added.map((s) => s.id)).toEqual([11]);
    expect(toSnapshot(applyPatch(a, diffToPatch(a, d)))).toBe(toSnapshot(b));
    expect(toSnapshot(applyPatch(b, diffToPatch(b, reverseDiff(d))))).toBe(toSnapshot(a));
  });
});

describe("DOM-29/30 reverse and patch", () => {
  it("the diff's patch reproduces the target and the reversed diff's patch goes back", () => {
    const a = base();
    checkLaws(a, [
      ["mv", n(9), n(3), null],
      ["rm", n(7)],
      ["text", n(4), ""],
      ["set", n(9), "k", "v"],
      ["text", n(9), ""],
      ["ins", n(9), null, { tag: "deep" }],
    ]);
  });

  it("turns text into children and children into text in one patch", () => {
    const a = base();
    checkLaws(a, [
      ["rm", n(4)],
      ["rm", n(5)],
      ["text", n(3), "now text"],
      ["text", n(9), ""],
      ["ins", n(9), null, { tag: "now-children" }],
    ]);
  });
});

describe("DOM-31 cost follows the change", () => {
  it("pages shared between the two versions are never loaded", () => {
    const ops = [];
    for (let i = 0; i < 3000; i++) ops.push(["ins", n(6), i === 0 ? null : n(10 + i), { tag: "turn" }] as const);
    const big = applyPatch(base(), ops);
    const { header, pages } = toPages(big);
    const loaded = new Set<string>();
    const lazy = treeFromPages(
      header,
      pages.map((p, i) => (p === undefined ? undefined : String(i))),
      (ref) => {
        loaded.add(ref);
        return pages[Number(ref)] as string;
      },
    );
    const next = applyPatch(lazy, [["set", n(2999), "done", "1"]]);
    loaded.clear();
    const d = diffTrees(lazy, next);
    expect(d.attrs).toEqual([{ id: 2999, name: "done", before: null, after: "1" }]);
    expect([...loaded]).toEqual([]); // page 11 was loaded by the edit already; nothing else
    expect(pages.length).toBe(12);
  });
});

const skeleton = () => skeletonTree(SKELETON);

describe("DOM-30 a patch from a diff, applied to the wrong tree", () => {
  it("DOM-30: a diff applied to the wrong tree names the failing op of the generated patch", () => {
    const a = applyPatch(skeleton(), [
      ["ins", n(3), null, { tag: "x" }],
      ["ins", n(3), n(4), { tag: "y" }],
    ]);
    const b = applyPatch(a, [
      ["set", n(5), "k", "v"],
      ["mv", n(5), n(2), null],
    ]);
    const d = diffTrees(a, b);
    expect(() => diffToPatch(skeleton(), d)).toThrow(/^op 0: /);
    const other = applyPatch(skeleton(), [["ins", n(3), null, { tag: "x" }]]);
    try {
      diffToPatch(other, d);
      expect.unreachable();
    } catch (e) {
      expect((e as DomError).opIndex).toBe(0);
    }
  });
});
