/**
 * DOM-33: the tag index. An index carried across random patches equals one built from scratch,
 * and indexed selectors return exactly what a traversal returns, in document order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  advanceIndex,
  applyPatch,
  applyWithEffect,
  count,
  ensureIndex,
  fromSnapshot,
  indexOf,
  nodeId,
  select,
  selectOne,
  skeletonTree,
  TagIndex,
  type Tree,
  toSnapshot,
} from "../src/index.ts";
import { ATTRS, intent, opsFrom, TAGS, tree } from "./arbitraries.ts";

const RUNS = Number(process.env.STRATA_FC_RUNS ?? 600);
const SELECTORS = [
  "item",
  "todo item",
  "call[status=a]",
  "call[status!=a]",
  "turn > call",
  "a, b",
  "item[k=x][status=a]",
  "todo:first-child",
  "call:nth-child(2)",
  "b ~ item",
  "x-y[id]",
  "session > meta",
];

/** A copy with no index attached (selectors take the traversal path). */
function plain(t: Tree): Tree {
  return fromSnapshot(toSnapshot(t));
}

function sameIndex(a: TagIndex, b: TagIndex, t: Tree): void {
  for (const tag of [...TAGS, "session", "meta", "body"]) {
    expect([...a.ids(tag)], tag).toEqual([...b.ids(tag)]);
    for (const attr of ATTRS)
      for (const v of ["a", "x", "", "0"])
        expect([...a.withAttr(t, tag, attr, v)], `${tag}[${attr}=${v}]`).toEqual([...b.withAttr(t, tag, attr, v)]);
  }
}

describe("DOM-33 tag index", () => {
  it("carried across random patches, it equals an index built from scratch; indexed selectors equal traversal", () => {
    fc.assert(
      fc.property(tree, fc.array(fc.array(intent, { maxLength: 8 }), { maxLength: 4 }), (base, patches) => {
        let t = base;
        const idx = ensureIndex(t);
        for (const tag of TAGS) for (const attr of ATTRS) idx.withAttr(t, tag, attr, "a"); // index some attributes before patching
        for (const intents of patches) {
          const ops = opsFrom(t, intents, true);
          const { tree: next, effect } = applyWithEffect(t, ops);
          advanceIndex(t, next, effect);
          t = next;
        }
        const carried = indexOf(t);
        if (carried !== undefined) sameIndex(carried, TagIndex.build(t), t);
        else ensureIndex(t);
        const reference = plain(t);
        for (const s of SELECTORS) {
          expect(
            select(t, s).map((e) => e.id),
            s,
          ).toEqual(select(reference, s).map((e) => e.id));
          expect(count(t, s), s).toBe(count(reference, s));
          expect(selectOne(t, s)?.id, s).toBe(selectOne(reference, s)?.id);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("is used on large trees, follows appends in O(patch), and leaves the version it came from", () => {
    let t = skeletonTree({ tag: "session", children: [{ tag: "meta" }, { tag: "body" }] });
    t = applyPatch(t, [
      [
        "ins",
        nodeId(3),
        null,
        {
          tag: "log",
          children: Array.from({ length: 3000 }, (_, i) => ({ tag: "call", attrs: { status: i % 3 === 0 ? "running" : "done" } })),
        },
      ],
    ]);
    expect(indexOf(t)).toBeUndefined();
    expect(count(t, "call[status=running]")).toBe(1000);
    const idx = indexOf(t);
    expect(idx).toBeDefined();
    const log = select(t, "log")[0]?.id as number;
    const calls = select(t, "call").map((e) => e.id);
    const ops = [
      ["set", calls[1], "status", "running"],
      ["ins", log, calls.at(-1), { tag: "call", attrs: { status: "running" } }],
    ] as never;
    const { tree: next, effect } = applyWithEffect(t, ops);
    advanceIndex(t, next, effect);
    expect(indexOf(next)).toBe(idx);
    expect(indexOf(t)).toBeUndefined();
    expect(count(next, "call[status=running]")).toBe(1002);
    expect(select(next, "call[status=running]").at(-1)?.id).toBe(next.hwm);
    expect(count(t, "call[status=running]")).toBe(1000); // the old version still answers (by traversal or a new index)
  });
});
