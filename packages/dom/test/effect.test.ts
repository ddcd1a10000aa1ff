/**
 * What each op kind says about itself (docs/spec/dom.md DOM-39 … DOM-41): the effect `applyPatch`
 * reports, the id mapping, the line for humans and the attribute values an op writes. Random
 * patches are checked in properties.test.ts, and every op test through the law helper.
 */
import { describe, expect, it } from "vitest";
import {
  type AttrVisitor,
  applyPatch,
  applyWithEffect,
  attrsWritten,
  describeOp,
  eachInserted,
  type InsertChange,
  mapIds,
  type NodeId,
  nodeId,
  OP_KINDS,
  type Op,
  type PatchEffect,
  patchText,
  shiftMinted,
  skeletonTree,
  textsWritten,
  toXml,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";
import { checkEffect } from "./effects.ts";

const n = nodeId;
const base = () =>
  applyPatch(skeletonTree(SKELETON), [
    [
      "ins",
      n(2),
      null,
      {
        tag: "todo",
        children: [
          { tag: "item", attrs: { status: "pending" }, text: "a" },
          { tag: "item", text: "b" },
        ],
      },
    ],
    ["ins", n(3), null, { tag: "turn", attrs: { n: "1" } }],
  ]);
// ids: session 1, meta 2, body 3, todo 4, item 5, item 6, turn 7

const spec = { tag: "p", children: [{ tag: "q", text: "x" }, { tag: "r" }] };
const every: Op[] = [
  ["ins", n(7), null, spec],
  ["set", n(5), "status", "done"],
  ["set", n(6), "k", null],
  ["text", n(9), "y"],
  ["append", n(9), "z"],
  ["mv", n(6), n(7), n(8)],
  ["rm", n(4)],
  ["set", 0, "hwm", "20"],
];

describe("DOM-39 effects", () => {
  it("applyPatch reports each op's changes in op order, with before and after, and the mark before and after", () => {
    let effect: PatchEffect | undefined;
    const t = applyPatch(base(), every, { onEffect: (e) => (effect = e) });
    const at = (parent: number, after: number | null) => ({ parent, after });
    expect(effect).toEqual({
      hwm: { before: 7, after: 20 },
      changes: [
        { type: "insert", op: 0, root: 8, at: at(7, null), spec, minted: true, count: 3 },
        { type: "attr", op: 1, id: 5, name: "status", before: "pending", after: "done" },
        { type: "attr", op: 2, id: 6, name: "k", before: null, after: null },
        { type: "text", op: 3, id: 9, mode: "set", before: "x", after: "y" },
        { type: "text", op: 4, id: 9, mode: "append", before: "y", after: "yz" },
        { type: "move", op: 5, id: 6, from: at(4, 5), to: at(7, 8) },
        { type: "remove", op: 6, root: 4, at: at(2, null), ids: [4, 5] },
      ],
    });
    expect(toXml(t, { ids: false })).toBe('<session><meta/><body><turn n="1"><p><q>yz</q><r/></p><item>b</item></turn></body></session>');
    checkEffect(base(), every);
  });

  it("a minted insert names its id range in pre-order (DOM-2); a restore-form insert names the spec's own ids", () => {
    const minted = applyWithEffect(base(), [["ins", n(3), null, spec]]).effect.changes[0] as InsertChange;
    const ids: number[] = [];
    eachInserted(minted, (id, node, index) => ids.push(id, index, node.tag.length));
    expect(ids).toEqual([8, 0, 1, 9, 1, 1, 10, 2, 1]);
    const restore = { tag: "x", id: n(40), children: [{ tag: "y", id: n(30) }] };
    const back = applyWithEffect(base(), [["ins", n(3), null, restore]]).effect.changes[0] as InsertChange;
    expect(back).toMatchObject({ root: 40, minted: false, count: 2 });
    const restored: number[] = [];
    eachInserted(back, (id) => restored.push(id));
    expect(restored).toEqual([40, 30]);
  });

  it("an op that changes nothing still reports what it wrote; a patch that fails reports nothing", () => {
    const b = base();
    const { tree, effect } = applyWithEffect(b, [
      ["set", n(5), "status", "pending"],
      ["text", n(6), "b"],
      ["mv", n(5), n(4), null],
    ]);
    expect(tree).toBe(b);
    expect(effect.changes.map((c) => c.type)).toEqual(["attr", "text", "move"]);
    let called = false;
    expect(() =>
      applyPatch(
        b,
        [
          ["set", n(5), "a", "1"],
          ["rm", n(99)],
        ],
        { onEffect: () => (called = true) },
      ),
    ).toThrow(/op 1/);
    expect(called).toBe(false);
  });
});

describe("DOM-40 id mapping", () => {
  it("mapIds passes every id an op names through the map: targets, parents, anchors, restore-form ids, the mark", () => {
    const map = (id: NodeId) => n(id + 100);
    const restore = { tag: "x", id: n(40), children: [{ tag: "y", id: n(41) }] };
    expect(mapIds(["ins", n(3), n(5), restore], map)).toEqual(["ins", 103, 105, { tag: "x", id: 140, children: [{ tag: "y", id: 141 }] }]);
    expect(restore.id).toBe(40); // the op is not changed
    expect(mapIds(["ins", n(3), null, spec], map)).toEqual(["ins", 103, null, spec]);
    expect(mapIds(["rm", n(4)], map)).toEqual(["rm", 104]);
    expect(mapIds(["set", n(5), "k", "v"], map)).toEqual(["set", 105, "k", "v"]);
    expect(mapIds(["set", 0, "hwm", "9"], map)).toEqual(["set", 0, "hwm", "109"]);
    expect(mapIds(["mv", n(6), n(7), null], map)).toEqual(["mv", 106, 107, null]);
    expect(mapIds(["text", n(9), "y"], map)).toEqual(["text", 109, "y"]);
    expect(mapIds(["append", n(9), "z"], map)).toEqual(["append", 109, "z"]);
  });

  it("shiftMinted moves only ids above the mark, so a patch that refers to what it inserts keeps doing so", () => {
    const ops: Op[] = [
      ["ins", n(7), null, spec],
      ["set", n(9), "k", "v"],
      ["mv", n(6), n(8), n(10)],
      ["append", n(5), "!"],
    ];
    expect(shiftMinted(ops, 7, 1000)).toEqual([
      ["ins", 7, null, spec],
      ["set", 1009, "k", "v"],
      ["mv", 6, 1008, 1010],
      ["append", 5, "!"],
    ]);
    const shifted = applyPatch(base(), [["set", 0, "hwm", "1007"], ...shiftMinted(ops, 7, 1000)], { monotonic: true });
    expect(toXml(shifted, { ids: false })).toBe(toXml(applyPatch(base(), ops), { ids: false }));
    expect(shiftMinted(ops, 7, 0)).toEqual(ops);
  });
});

describe("DOM-41 one home per op kind", () => {
  it("describeOp gives one line per kind; a tree names removed elements; quote decides how strings are written", () => {
    const lines = every.map((op) => describeOp(op));
    expect(lines).toEqual(["+<p>(+2) in #7", '#5 status="done"', "#6 k=∅", '#9 text "y"', "#9 +1 chars", "#6 → #7", "-#4", "hwm=20"]);
    expect(describeOp(["rm", n(4)], { tree: base() })).toBe("-#4 <todo>");
    expect(describeOp(["text", n(9), "x".repeat(30)])).toBe(`#9 text "${"x".repeat(23)}…"`);
    expect(describeOp(["set", n(5), "k", "a\nb"], { quote: (s, max) => `<${s.replace("\n", "⏎")}/${max}>` })).toBe("#5 k=<a⏎b/24>");
    expect(new Set(every.map((op) => op[0]))).toEqual(new Set(OP_KINDS));
  });

  it("attrsWritten lists the attribute values an op writes, with the tag when the op carries it", () => {
    const seen = (op: Op) => {
      const out: unknown[] = [];
      const visit: AttrVisitor = (tag, name, value, id) => out.push(id === undefined ? [tag, name, value] : [tag, name, value, id]);
      attrsWritten(op, visit);
      return out;
    };
    const written = { tag: "a", attrs: { k: "v", l: "w" }, children: [{ tag: "b", attrs: { h: "x" } }, { tag: "c" }] };
    expect(seen(["ins", n(3), null, written]).sort()).toEqual(
      [
        ["a", "k", "v"],
        ["a", "l", "w"],
        ["b", "h", "x"],
      ].sort(),
    );
    expect(seen(["set", n(5), "status", "done"])).toEqual([[undefined, "status", "done", 5]]);
    for (const op of every.slice(2)) expect(seen(op), op[0]).toEqual([]);
  });

  it("SE-1: textsWritten lists the texts an op writes, in document order; every kind says, and patchText joins them", () => {
    const texts = (op: Op) => {
      const out: string[] = [];
      textsWritten(op, (t) => void out.push(t));
      return out;
    };
    const spec = {
      tag: "a",
      text: "first",
      children: [
        { tag: "b", text: "second", children: [{ tag: "c", text: "third" }] },
        { tag: "d", text: "" },
        { tag: "e", text: "fourth" },
      ],
    };
    expect(texts(["ins", n(3), null, spec])).toEqual(["first", "second", "third", "fourth"]);
    expect(texts(["text", n(5), "replaced"])).toEqual(["replaced"]);
    expect(texts(["append", n(5), " more"])).toEqual([" more"]);
    expect(texts(["set", n(5), "status", "done"])).toEqual([]);
    const byKind = new Map(every.map((op) => [op[0], texts(op)]));
    expect(new Set(byKind.keys())).toEqual(new Set(OP_KINDS));
    for (const kind of ["mv", "rm", "set"]) expect(byKind.get(kind as Op[0]), kind).toEqual([]);
    expect(
      patchText([
        ["text", n(5), "a"],
        ["rm", n(6)],
        ["append", n(5), "b"],
      ]),
    ).toBe("a\nb");
    expect(patchText([["rm", n(6)]])).toBe("");
  });
});
