/** DOM-24 … DOM-27: CSS selectors over tree versions. */
import { describe, expect, it } from "vitest";
import { applyPatch, count, DomError, matches, type NodeId, nodeId, parseXml, select, selectOne, type Tree } from "../src/index.ts";

const n = nodeId;
const doc = () =>
  parseXml(`<session><meta><todo>
  <item status="completed">ship</item><item status="in_progress">test</item><item>plan</item>
</todo><Todo/></meta><body>
  <turn n="1"><call tool="read" status="executed"/><call tool="write" status="env_error"/></turn>
  <turn n="2"><call tool="read"/><note>hello world</note></turn>
</body></session>`);
const ids = (els: { id: NodeId }[]) => els.map((e) => e.id as number);

describe("DOM-24 selectors", () => {
  it("the article's selector counts open items", () => {
    expect(count(doc(), "todo item[status!=completed]")).toBe(2);
    expect(select(doc(), "todo item[status!=completed]").map((e) => e.text)).toEqual(["test", "plan"]);
  });

  it("DOM-25: [a!=v] also matches elements without the attribute", () => {
    expect(ids(select(doc(), "call[status!=executed]"))).toEqual([11, 13]);
  });

  it("is case-sensitive (XML mode), includes the root, and returns document order", () => {
    expect(count(doc(), "todo")).toBe(1);
    expect(count(doc(), "Todo")).toBe(1);
    expect(selectOne(doc(), ":root")?.tag).toBe("session");
    expect(select(doc(), "*").map((e) => e.id)).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
  });

  it("supports combinators, :has, :not, :contains, attribute operators", () => {
    const t = doc();
    expect(ids(select(t, "turn:has(> call[status=env_error])"))).toEqual([9]);
    expect(ids(select(t, "call:not([status])"))).toEqual([13]);
    expect(ids(select(t, "turn > note:contains(world)"))).toEqual([14]);
    expect(ids(select(t, "call[tool^=wr], call[tool$=ad][status]"))).toEqual([10, 11]);
    expect(ids(select(t, "turn + turn"))).toEqual([12]);
    expect(ids(select(t, "meta ~ body"))).toEqual([8]);
    expect(ids(select(t, "[status=COMPLETED i]"))).toEqual([4]);
  });

  it("element views expose id, tag, attrs, text, parent and children", () => {
    const turn = selectOne(doc(), "turn[n='2']");
    expect(turn?.id).toBe(12);
    expect(turn?.attrs).toEqual({ n: "2" });
    expect(turn?.parent?.tag).toBe("body");
    expect(turn?.children.map((c) => c.tag)).toEqual(["call", "note"]);
    expect(turn?.textContent()).toBe("hello world");
    expect(turn?.children[1]?.prevSibling?.attr("tool")).toBe("read");
    expect(turn?.attr("missing")).toBeUndefined();
  });

  it("scopes to the descendants of an element with `within`", () => {
    expect(ids(select(doc(), "call", { within: 12 }))).toEqual([13]);
    expect(count(doc(), "turn", { within: 12 })).toBe(0);
    expect(matches(doc(), 13, "turn > call:not([status])")).toBe(true);
  });
});

describe("DOM-26 per-version correctness", () => {
  it("a version keeps answering for itself while newer versions change (no stale caches)", () => {
    const v1 = doc();
    const q = "turn:has(call[status=env_error])";
    expect(count(v1, q)).toBe(1);
    const v2 = applyPatch(v1, [["set", n(11), "status", "executed"]]);
    const v3 = applyPatch(v2, [["set", n(13), "status", "env_error"]]);
    for (let round = 0; round < 2; round++) {
      expect(ids(select(v1, q))).toEqual([9]);
      expect(ids(select(v2, q))).toEqual([]);
      expect(ids(select(v3, q))).toEqual([12]);
    }
    expect(count(v1, "note:contains(world)")).toBe(1);
    expect(count(applyPatch(v1, [["text", n(14), "bye"]]), "note:contains(world)")).toBe(0);
    expect(count(v1, "note:contains(world)")).toBe(1);
  });
});

describe("DOM-27 positional selectors and errors", () => {
  const wide = (k: number): Tree => {
    const ops = [];
    for (let i = 0; i < k; i++) ops.push(["ins", n(1), i === 0 ? null : n(i + 1), { tag: i % 3 === 0 ? "a" : "b" }] as const);
    return applyPatch(parseXml("<r/>"), ops);
  };

  it("nth-child and friends under 20,000 siblings give exact answers", () => {
    const t = wide(20_000);
    expect(ids(select(t, "r > :nth-child(2)"))).toEqual([3]);
    expect(ids(select(t, "r > :last-child"))).toEqual([20_001]);
    expect(ids(select(t, "r > :first-child"))).toEqual([2]);
    expect(count(t, "r > :nth-child(odd)")).toBe(10_000);
    expect(ids(select(t, "r > :nth-last-child(1)"))).toEqual([20_001]);
    expect(ids(select(t, "r > a:nth-of-type(2)"))).toEqual([5]);
    expect(ids(select(t, "r > b:last-of-type"))).toEqual([20_001]);
    expect(ids(select(t, "r > a:last-of-type"))).toEqual([20_000]);
    expect(ids(select(t, "r > b:first-of-type"))).toEqual([3]);
    expect(count(t, "r > :only-child")).toBe(0);
    expect(ids(select(t, "r > :nth-child(2 of a)"))).toEqual([5]);
    expect(ids(select(t, "r > :nth-last-child(2 of b)"))).toEqual([19_999]);
    expect(count(t, "r > a:only-of-type")).toBe(0);
    expect(ids(select(wide(1), "r > :only-child"))).toEqual([2]);
  });

  it("bad selectors are DomError bad-selector with the position when known", () => {
    const cases: Array<[string, RegExp]> = [
      ["todo[", /invalid selector "todo\[".*\(column 6\)/],
      ["todo )", /unexpected "\)" \(column 6\)/],
      ["a:unknown", /unknown or unsupported pseudo-class :unknown \(column 2\)/],
      ["ns|todo", /namespaced selectors are not supported/],
      ["", /the selector is empty/],
      [":first-child(2)", /:first-child takes no arguments/],
      ["[n=1]", /a quoted string such as \[n="1"\]/],
      [":has(:has(b))", /:has\(\) cannot be nested inside :has\(\)/],
      [":nth-child(2n+-1)", /is not an An\+B formula/],
      ["::before", /pseudo-elements are not supported/],
      ["a,", /a selector is missing at the end/],
    ];
    for (const [sel, message] of cases) {
      try {
        select(doc(), sel);
        expect.unreachable(sel);
      } catch (e) {
        expect(e).toBeInstanceOf(DomError);
        expect((e as DomError).code).toBe("bad-selector");
        expect((e as DomError).message).toMatch(message);
      }
    }
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

describe("DOM-24, DOM-25, DOM-27 scoped queries, not-equal on empty values, formulas checked up front", () => {
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
        errorCode(() => select(t(), sel)),
        sel,
      ).toBe("bad-selector");
  });
});
