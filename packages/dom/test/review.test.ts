/**
 * Findings of the first code review of @strata/dom, each pinned as a test (see the issue note).
 */
import { describe, expect, it } from "vitest";
import {
  applyPatch,
  type DomError,
  decodePage,
  diffToPatch,
  diffTrees,
  encodePage,
  fromSnapshot,
  invertPatch,
  MAX_HWM_RAISE,
  MAX_NODE_ID,
  nodeId,
  type Op,
  parseXml,
  select,
  skeletonTree,
  toPages,
  toSnapshot,
  toXml,
  treeFromPages,
  tryApplyPatch,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";
import { checkLaws } from "./laws.ts";

const n = nodeId;
const base = () => skeletonTree(SKELETON);
const code = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as DomError).code;
  }
};

describe("review: ids, pages and the high-water mark", () => {
  it("DOM-1: ids stop at 2^31 - 1, so page arithmetic never wraps onto the root", () => {
    expect(MAX_NODE_ID).toBe(2 ** 31 - 1);
    expect(code(() => applyPatch(base(), [["set", 0, "hwm", String(2 ** 32)]]))).toBe("bad-op");
    const top = applyPatch(base(), [
      ["set", 0, "hwm", String(MAX_NODE_ID - 1)],
      ["ins", n(3), null, { tag: "last" }],
    ]);
    expect(top.get(MAX_NODE_ID)?.tag).toBe("last");
    expect(top.get(1)?.tag).toBe("session");
    expect(code(() => applyPatch(top, [["ins", n(3), null, { tag: "x" }]]))).toBe("too-large");
    checkLaws(top, [["rm", n(MAX_NODE_ID)]]);
    expect(code(() => parseXml('<a _id="1"><b _id="4294967298"/></a>'))).toBe("bad-id");
  });

  it("DOM-11: a journaled patch may not jump the mark arbitrarily; sparse trees stay cheap anyway", () => {
    const r = tryApplyPatch(base(), [["set", 0, "hwm", String(3 + MAX_HWM_RAISE + 1)]], { monotonic: true });
    expect(!r.ok && r.error.code).toBe("bad-hwm");
    const sparse = applyPatch(base(), [
      ["set", 0, "hwm", "1000000000"],
      ["ins", n(3), null, { tag: "far" }],
    ]);
    expect(sparse.pageCount).toBe(Math.floor(1_000_000_001 / 256) + 1);
    const next = checkLaws(sparse, [["append", n(1_000_000_001), "x"]]);
    expect(next.get(1_000_000_001)?.text).toBe("x");
  });

  it("Tree.has and Tree.get take integers only", () => {
    expect(base().has(1.5)).toBe(false);
    expect(base().get(1.5)).toBeUndefined();
  });

  it("DOM-14: the inverse restores the mark even when a restore-form insert would raise it", () => {
    const p: Op[] = [
      ["ins", n(3), null, { tag: "x" }],
      ["rm", n(4)],
      ["set", 0, "hwm", "3"],
    ];
    const after = applyPatch(base(), p);
    expect(toSnapshot(applyPatch(after, invertPatch(base(), p)))).toBe(toSnapshot(base()));
  });
});

describe("review: XML", () => {
  it("DOM-16: names that are Object.prototype methods round-trip unchanged", () => {
    const t = applyPatch(base(), [
      ["ins", n(3), null, { tag: "toString", attrs: { valueOf: "1", __lookupSetter__: "2", hasOwnProperty: "3" } }],
    ]);
    expect(toXml(parseXml(toXml(t)))).toBe(toXml(t));
  });

  it("DOM-18: duplicate fixed ids, repeated or unknown header fields are refused with a position", () => {
    const e1 = (() => {
      try {
        parseXml('\n<?strata hwm="5" fixed="1 1"?><a _id="1"/>');
      } catch (e) {
        return e as DomError;
      }
    })();
    expect(e1?.message).toMatch(/lists an id twice \(line 2, column 1\)/);
    expect(code(() => parseXml('<?strata hwm="1"?><?strata hwm="1"?><a _id="1"/>'))).toBe("bad-xml");
    expect(code(() => parseXml('<?strata hwm="1" fixed="1" __proto__="x"?><a _id="1"/>'))).toBe("bad-xml");
    expect(() => parseXml('<?strata hwm="1" extra="1"?><a _id="1"/>')).toThrow(/takes hwm and fixed, not "extra" \(line 1, column 18\)/);
    expect(() => parseXml('<?strata hwm="0"?><a _id="1"/>')).toThrow(/line 1, column 1/);
  });

  it("DOM-19: CDATA outside the root and empty input are refused with a position", () => {
    expect(() => parseXml("<a/><![CDATA[x]]>")).toThrow(/text outside the root element.*\(line 1, column 5\)/);
    expect(() => parseXml("")).toThrow(/no root element \(line 1, column 1\)/);
  });

  it("DOM-19: self-closing elements count towards the depth limit", () => {
    expect(code(() => parseXml("<a><b/></a>", { maxDepth: 1 }))).toBe("too-large");
    expect(parseXml("<a><b/></a>", { maxDepth: 2 }).size).toBe(2);
  });

  it("DOM-18: raw TAB/LF/CR in a hand-written attribute value are normalized to spaces, references are kept", () => {
    const t = parseXml('<a v="x\ty\nz" w="p&#10;q"/>');
    expect(t.get(1)?.attrs).toEqual({ v: "x y z", w: "p\nq" });
  });
});

describe("review: selectors", () => {
  const t = () =>
    parseXml('<r><todo><item status="done"><sub/></item><item/><item status=""/></todo><todo><item status="done"/></todo></r>');

  it("DOM-24: `within` searches the element's descendants and binds :scope to it", () => {
    expect(select(t(), ":scope > item", { within: 2 }).map((e) => e.id)).toEqual([3, 5, 6]);
    expect(select(t(), "> item", { within: 2 }).map((e) => e.id)).toEqual([3, 5, 6]);
    expect(select(t(), "item", { within: 2 }).map((e) => e.id)).toEqual([3, 5, 6]);
  });

  it('DOM-25: [a!=""] also matches elements without a', () => {
    expect(select(t(), 'item[status!=""]').map((e) => e.id)).toEqual([3, 5, 8]);
    expect(select(t(), 'todo:has(> item[status!=""])').map((e) => e.id)).toEqual([2, 7]);
  });

  it("DOM-27: a bad :nth-* formula or `of` selector fails on every tree, even one where nothing reaches it", () => {
    for (const sel of ["zzz:nth-child(foo)", "zzz:nth-child(1 of ???)", "zzz:nth-of-type(x)", ":not(zzz:nth-last-child(bad))"])
      expect(
        code(() => select(t(), sel)),
        sel,
      ).toBe("bad-selector");
  });
});

describe("review: pages and diffs", () => {
  it("DOM-23: a page codec may not store a text as a different string; pages must be in id order", () => {
    const { pages } = toPages(applyPatch(base(), [["ins", n(3), null, { tag: "x", text: "long tool output" }]]));
    expect(() => encodePage(decodePage(0, pages[0] as string), { encodeText: () => "blob:0" })).toThrow(/as itself or as a non-string/);
    const records = JSON.parse(pages[0] as string) as unknown[];
    expect(() => decodePage(0, JSON.stringify(records.reverse()))).toThrow(/ascending id order/);
    const codec = { encodeText: (t: string) => ({ ref: t.length }), decodeText: () => "long tool output" };
    const { header, pages: refPages } = toPages(applyPatch(base(), [["ins", n(3), null, { tag: "x", text: "long tool output" }]]), codec);
    const back = treeFromPages(header, ["p"], () => refPages[0] as string, codec);
    expect(back.get(4)?.text).toBe("long tool output");
  });

  it("DOM-30: a diff applied to the wrong tree names the failing op of the generated patch", () => {
    const a = applyPatch(base(), [
      ["ins", n(3), null, { tag: "x" }],
      ["ins", n(3), n(4), { tag: "y" }],
    ]);
    const b = applyPatch(a, [
      ["set", n(5), "k", "v"],
      ["mv", n(5), n(2), null],
    ]);
    const d = diffTrees(a, b);
    expect(() => diffToPatch(base(), d)).toThrow(/^op 0: /);
    const other = applyPatch(base(), [["ins", n(3), null, { tag: "x" }]]);
    try {
      diffToPatch(other, d);
      expect.unreachable();
    } catch (e) {
      expect((e as DomError).opIndex).toBe(0);
    }
  });

  it("DOM-22: fromSnapshot refuses ids beyond the maximum", () => {
    const snap = JSON.parse(toSnapshot(base()));
    snap.nodes[2][0] = 2 ** 32 + 3;
    expect(code(() => fromSnapshot(JSON.stringify(snap)))).toBe("bad-snapshot");
  });
});
