/** DOM-16 … DOM-18: canonical XML out, exact XML in. */
import { describe, expect, it } from "vitest";
import { applyPatch, DomError, MAX_DEPTH, nodeId, parseXml, skeletonTree, toSnapshot, toXml } from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";

const n = nodeId;

describe("DOM-16 canonical form", () => {
  it("writes one line: header, ids first, attributes in code-unit order, <a/> for empty", () => {
    const t = applyPatch(skeletonTree(SKELETON), [
      ["ins", n(2), null, { tag: "todo", attrs: { z: "1", B: "2", a: "3" } }],
      ["ins", n(3), null, { tag: "turn", children: [{ tag: "user", text: "hi" }, { tag: "empty" }] }],
    ]);
    expect(toXml(t)).toBe(
      '<?strata hwm="7" fixed="1 2 3"?><session _id="1"><meta _id="2"><todo _id="4" B="2" a="3" z="1"/></meta>' +
        '<body _id="3"><turn _id="5"><user _id="6">hi</user><empty _id="7"/></turn></body></session>',
    );
    expect(toXml(t, { ids: false })).toBe(
      '<session><meta><todo B="2" a="3" z="1"/></meta><body><turn><user>hi</user><empty/></turn></body></session>',
    );
    expect(toXml(t, { root: 5 })).toBe('<turn _id="5"><user _id="6">hi</user><empty _id="7"/></turn>');
  });

  it("equal trees give equal XML however they were built", () => {
    const a = applyPatch(skeletonTree(SKELETON), [["ins", n(3), null, { tag: "x", attrs: { b: "1", a: "2" } }]]);
    const b = applyPatch(skeletonTree(SKELETON), [
      ["ins", n(3), null, { tag: "x" }],
      ["set", n(4), "a", "2"],
      ["set", n(4), "b", "1"],
    ]);
    expect(toXml(a)).toBe(toXml(b));
    expect(toSnapshot(a)).toBe(toSnapshot(b));
  });

  it("writes and reads trees of the largest depth (MAX_DEPTH) without recursion", () => {
    const ops = [];
    // session > body are levels 1 and 2; the chain below fills the rest.
    for (let i = 0; i < MAX_DEPTH - 2; i++) ops.push(["ins", n(i === 0 ? 3 : i + 3), null, { tag: "d" }] as const);
    const t = applyPatch(skeletonTree(SKELETON), ops);
    const xml = toXml(t);
    expect(xml.length).toBeGreaterThan((MAX_DEPTH - 2) * 8);
    expect(toSnapshot(parseXml(xml))).toBe(toSnapshot(t));
  });
});

describe("DOM-17 escaping", () => {
  const cases: Array<[string, string]> = [
    ["<>&", "&lt;&gt;&amp;"],
    ["\"quotes' stay", "\"quotes' stay"],
    ["cr\r\nlf", "cr&#13;\nlf"],
    ["tab\there", "tab\there"],
    ["]]>", "]]&gt;"],
    ["astral 😀𝄞", "astral 😀𝄞"],
    ["&amp; literal", "&amp;amp; literal"],
  ];
  for (const [text, written] of cases)
    it(`text ${JSON.stringify(text)} round-trips`, () => {
      const t = applyPatch(skeletonTree(SKELETON), [["ins", n(3), null, { tag: "t", attrs: { v: text }, text }]]);
      const xml = toXml(t);
      expect(xml).toContain(`>${written}</t>`);
      const back = parseXml(xml);
      expect(back.get(4)?.text).toBe(text);
      expect(back.get(4)?.attrs.v).toBe(text);
      expect(toXml(back)).toBe(xml);
    });

  it("attribute values escape quotes, tabs and newlines as references", () => {
    const t = applyPatch(skeletonTree(SKELETON), [["ins", n(3), null, { tag: "t", attrs: { v: 'a"b\tc\nd\re<f&' } }]]);
    expect(toXml(t, { root: 4, ids: false })).toBe('<t v="a&quot;b&#9;c&#10;d&#13;e&lt;f&amp;"/>');
  });
});

describe("DOM-18 reading XML", () => {
  it("numbers hand-written XML in document order and fixes only the root", () => {
    const t = parseXml(`<?xml version="1.0" encoding="UTF-8"?>
<session>
  <meta>
    <todo status="open">a &amp; b &#x1F600; &#169;</todo>
  </meta>
  <body/>
</session>
`);
    expect(toXml(t)).toBe(
      '<?strata hwm="4" fixed="1"?><session _id="1"><meta _id="2"><todo _id="3" status="open">a &amp; b 😀 ©</todo></meta><body _id="4"/></session>',
    );
  });

  it("keeps whitespace-only text of a leaf, drops it between elements, accepts CDATA", () => {
    const t = parseXml("<r>\n  <a>  </a>\n  <b><![CDATA[<raw> & ]]></b>\n</r>");
    expect(t.get(2)?.text).toBe("  ");
    expect(t.get(3)?.text).toBe("<raw> & ");
    expect(t.childIds(1)).toEqual([2, 3]);
  });

  it("accepts Uint8Array input and a byte-order mark", () => {
    const bytes = new TextEncoder().encode("\uFEFF<r><a>é</a></r>");
    expect(parseXml(bytes).get(2)?.text).toBe("é");
  });

  it("keeps explicit ids, the high-water mark and the fixed skeleton", () => {
    const xml = '<?strata hwm="90" fixed="5 7"?><session _id="5"><meta _id="7"/><body _id="42">x</body></session>';
    const t = parseXml(xml);
    expect([t.hwm, t.rootId, t.fixed, t.size]).toEqual([90, 5, [5, 7], 3]);
    expect(toXml(t)).toBe(xml);
  });

  const bad: Array<[string, string, RegExp]> = [
    ["<r><a _id='1'/></r>", "bad-id", /either every element carries _id or none does/],
    ['<r _id="1"><a _id="1"/></r>', "bad-id", /_id="1" is used twice/],
    ['<r _id="x"/>', "bad-id", /is not a node id/],
    ['<?strata hwm="1"?><r _id="1"><a _id="2"/></r>', "bad-xml", /no smaller than the largest id/],
    ['<?strata fixed="2"?><r _id="1"><a _id="2"/></r>', "bad-xml", /must include the root/],
    ['<?strata fixed="1 3"?><r _id="1"><a _id="2"><b _id="3"/></a></r>', "bad-xml", /parent that is not fixed/],
    ["<r>text<a/></r>", "mixed-content", /<r> mixes text and child elements \("t" here\); .* \(line 1, column 4\)/],
    ["<r>\n  <a>x<b/>y</a></r>", "mixed-content", /<a> mixes text .* \(line 2, column 6\)/],
    ['<r a="1" a="2"/>', "bad-xml", /attribute a appears twice on <r> \(line 1, column 10\)/],
    ["<r><a></b></r>", "bad-xml", /line 1/],
    ["<r disabled/>", "bad-xml", /boolean attribute|has no value|line 1/],
    ["", "bad-xml", /no root element|line/],
    ["text only", "bad-xml", /./],
    ["<r/>trailing", "bad-xml", /text outside the root element.*\(line 1, column 5\)/],
    ["<r/>\n<s/>", "bad-xml", /a second root element.*\(line 2, column 1\)/],
    ["x<r/>", "bad-xml", /text outside the root/],
    ["<r><?pi x?></r>", "bad-xml", /processing instruction <\?pi\?> is not accepted/],
    ["<a:b/>", "bad-name", /is not allowed/],
    ['<r xml:lang="en"/>', "bad-name", /./],
    ["<r>&#1;</r>", "bad-text", /&#1; names a character XML cannot carry/],
  ];
  for (const [xml, code, message] of bad)
    it(`rejects ${JSON.stringify(xml).slice(0, 60)} with ${code}`, () => {
      try {
        parseXml(xml);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(DomError);
        expect((e as DomError).code, (e as DomError).message).toBe(code);
        expect((e as DomError).message).toMatch(message);
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
const skeleton = () => skeletonTree(SKELETON);

describe("DOM-16, DOM-18 names, the header and white space in attributes", () => {
  it("DOM-16: names that are Object.prototype methods round-trip unchanged", () => {
    const t = applyPatch(skeleton(), [
      ["ins", n(3), null, { tag: "toString", attrs: { valueOf: "1", __lookupSetter__: "2", hasOwnProperty: "3" } }],
    ]);
    expect(toXml(parseXml(toXml(t)))).toBe(toXml(t));
  });

  it("DOM-11: attribute objects inherit nothing and are frozen, however they were made (op, XML, snapshot, edit)", () => {
    const t = applyPatch(skeleton(), [["ins", n(3), null, { tag: "a", attrs: { z: "1", b: "2" } }]]);
    const a = t.childIds(n(3)).at(-1) as never;
    const made = [
      t.get(a)?.attrs,
      parseXml(toXml(t)).get(a)?.attrs,
      applyPatch(t, [["set", a, "c", "3"]]).get(a)?.attrs,
      applyPatch(t, [["set", a, "z", null]]).get(a)?.attrs,
      t.get(n(3))?.attrs,
    ];
    for (const attrs of made) {
      expect(Object.isFrozen(attrs)).toBe(true);
      const proto = Object.getPrototypeOf(attrs);
      expect(proto === null || Object.getPrototypeOf(proto) === null).toBe(true);
      expect(proto === null ? [] : Reflect.ownKeys(proto)).toEqual([]);
      for (const name of ["toString", "constructor", "hasOwnProperty", "__proto__", "valueOf"])
        expect(name in (attrs as object), name).toBe(false);
    }
    expect(Object.keys(made[0] as object)).toEqual(["b", "z"]);
    expect(Object.keys(made[2] as object)).toEqual(["b", "c", "z"]);
    expect({ ...made[1] }).toEqual({ b: "2", z: "1" });
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
    expect(errorCode(() => parseXml('<?strata hwm="1"?><?strata hwm="1"?><a _id="1"/>'))).toBe("bad-xml");
    expect(errorCode(() => parseXml('<?strata hwm="1" fixed="1" __proto__="x"?><a _id="1"/>'))).toBe("bad-xml");
    expect(() => parseXml('<?strata hwm="1" extra="1"?><a _id="1"/>')).toThrow(/takes hwm and fixed, not "extra" \(line 1, column 18\)/);
    expect(() => parseXml('<?strata hwm="0"?><a _id="1"/>')).toThrow(/line 1, column 1/);
  });

  it("DOM-18: raw TAB/LF/CR in a hand-written attribute value are normalized to spaces, references are kept", () => {
    const t = parseXml('<a v="x\ty\nz" w="p&#10;q"/>');
    expect(t.get(1)?.attrs).toEqual({ v: "x y z", w: "p\nq" });
  });
});
