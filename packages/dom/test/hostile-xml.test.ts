/**
 * DOM-19: hostile XML gets a clear error, never a hang, a crash or an expansion; and parsing is
 * linear in the input whatever it holds (issue 11 item 24).
 */
import { describe, expect, it } from "vitest";
import { DomError, parseXml, type Tree } from "../src/index.ts";

function rejects(xml: string | Uint8Array, code: string, message: RegExp): DomError {
  let error: unknown;
  try {
    parseXml(xml);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(DomError);
  const e = error as DomError;
  expect(e.code, e.message).toBe(code);
  expect(e.message).toMatch(message);
  return e;
}

describe("DOM-19 hostile XML", () => {
  it("billion laughs: any DOCTYPE is refused before an entity is read", () => {
    const lol = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz>&lol3;</lolz>`;
    const e = rejects(lol, "bad-xml", /DOCTYPE declarations are not accepted/);
    expect([e.line, e.column]).toEqual([2, 1]);
  });

  it("external entities (SYSTEM and PUBLIC) are refused", () => {
    rejects('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>', "bad-xml", /DOCTYPE/);
    rejects('<!DOCTYPE r PUBLIC "-//x//y" "http://example.com/x.dtd"><r/>', "bad-xml", /DOCTYPE/);
  });

  it("undeclared entities are refused rather than kept as literal text", () => {
    rejects("<r>&x;</r>", "bad-xml", /unknown or malformed entity "&x;"/);
    rejects("<r>&nbsp;</r>", "bad-xml", /unknown or malformed entity/);
    rejects("<r>a & b</r>", "bad-xml", /unknown or malformed entity/);
    rejects('<r a="&x;"/>', "bad-xml", /unknown or malformed entity/);
  });

  it("10,000-deep nesting is refused at the configured depth with a position", () => {
    const deep = "<a>".repeat(10_000) + "</a>".repeat(10_000);
    const e = rejects(deep, "too-large", /nested more than 1000 deep \(the limit; see MAX_DEPTH\)/);
    expect(e.column).toBe(1000 * 3 + 1);
  });

  it("50 MB of text is refused by size before parsing", () => {
    const big = `<r>${"x".repeat(50 * 1024 * 1024)}</r>`;
    rejects(big, "too-large", /XML input is \d+ bytes; the limit is 33554432 \(raise maxBytes/);
    rejects(new Uint8Array(50 * 1024 * 1024), "too-large", /limit/);
  });

  it("invalid names and prototype-polluting names are refused", () => {
    rejects("<__proto__/>", "bad-name", /reserved \(it would reach object prototypes\)/);
    rejects('<r constructor="x"/>', "bad-name", /reserved/);
    rejects("<r><prototype/></r>", "bad-name", /reserved/);
    rejects("<1a/>", "bad-name", /tag name "1a" is not allowed/);
    rejects("< r/>", "bad-xml", /expected a tag name/);
    rejects("<r><a-b.c/><é/></r>", "bad-name", /is not allowed/);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("mismatched and unclosed tags are refused with line and column", () => {
    const e = rejects(
      "<r>\n  <a>\n  </b>\n</r>",
      "bad-xml",
      /end tag <\/b> does not match <a> \(opened at line 2, column 3\); expected <\/a>/,
    );
    expect([e.line, e.column]).toEqual([3, 3]);
    rejects("<r><a>", "bad-xml", /./);
  });

  it("two roots are refused", () => {
    rejects("<a/><b/>", "bad-xml", /a second root element/);
  });

  it("comments, foreign processing instructions, control characters and invalid UTF-8 are refused", () => {
    rejects("<r><!-- c --></r>", "bad-xml", /comments are not part of strata XML/);
    rejects('<?xml-stylesheet href="x"?><r/>', "bad-xml", /processing instruction/);
    rejects("<r>\u0007</r>", "bad-text", /U\+0007 is not allowed/);
    rejects("<r>&#0;</r>", "bad-text", /cannot carry/);
    rejects(new Uint8Array([0x3c, 0x72, 0x3e, 0xff, 0x3c, 0x2f, 0x72, 0x3e]), "bad-xml", /not valid UTF-8/);
  });
});

const MB = 1024 * 1024;

/**
 * Each input is 4 MiB of one shape that makes a backtracking parser quadratic (the first reader took
 * 3.6 s on 80 KB of an unclosed quote, 14 s on 160 KB: it would need hours on these). A linear
 * reader finishes each in well under a second; the test timeout is the bound, no clock is read.
 */
describe("DOM-19 linear time on hostile input (issue 11 item 24)", () => {
  const refused: Array<[string, () => string, string, RegExp]> = [
    ["an unclosed attribute quote", () => `<a b="${"x".repeat(4 * MB)}`, "bad-xml", /the value of attribute b is not closed/],
    [
      "an unclosed single quote after many attributes",
      () => `<a${' k="v"'.replace("k", "k0")}${" c='".concat("y".repeat(4 * MB))}`,
      "bad-xml",
      /not closed/,
    ],
    ["an attribute name without =", () => `<a ${"b".repeat(4 * MB)}>`, "bad-xml", /has no value; write b+="…"/],
    ["many attribute names without =", () => `<a${" b".repeat(2 * MB)}/>`, "bad-xml", /attribute b of <a> has no value/],
    [
      "an unclosed quote in the XML declaration",
      () => `<?xml version="1.0" encoding="${"U".repeat(4 * MB)}`,
      "bad-xml",
      /not closed with "\?>"/,
    ],
    ["a name-only header", () => `<?strata ${"a".repeat(4 * MB)}?><r/>`, "bad-xml", /takes hwm and fixed/],
    ["an unclosed header value", () => `<?strata hwm="${"1".repeat(4 * MB)}?><r/>`, "bad-xml", /the value of hwm is not closed/],
    ["an unclosed CDATA section", () => `<a><![CDATA[${"x".repeat(4 * MB)}`, "bad-xml", /CDATA section is not closed/],
    ["an unclosed comment", () => `<a><!--${"x".repeat(4 * MB)}`, "bad-xml", /comments are not part of strata XML/],
    ["a run of <", () => `<a>${"<".repeat(4 * MB)}`, "bad-xml", /expected a tag name/],
    ["a run of &", () => `<a>${"&".repeat(4 * MB)}`, "bad-xml", /unknown or malformed entity "&"/],
    ["deep nesting", () => "<a>".repeat(1.4 * MB), "too-large", /nested more than 1000 deep/],
    ["a 4 MiB tag name", () => `<${"a".repeat(4 * MB)}/>`, "bad-name", /characters long \(limit 128\)/],
    ["a 4 MiB end tag that does not match", () => `<a></${"b".repeat(4 * MB)}>`, "bad-xml", /does not match <a>/],
    [
      "an error after 4 MiB of line breaks",
      () => `${"\n".repeat(4 * MB)}<a`,
      "bad-xml",
      /start tag of <a> is not closed \(line 4194305, column 1\)/,
    ],
    ["a character reference that never ends", () => `<a>&#${"0".repeat(4 * MB)}`, "bad-xml", /malformed character reference/],
    ["an attribute value full of unknown entities", () => `<a b="${"&x".repeat(2 * MB)}"/>`, "bad-xml", /unknown or malformed entity "&x"/],
    ["text full of ]] ending in ]]>", () => `<a>${"]]".repeat(2 * MB)}></a>`, "bad-xml", /"]]>" may not appear in text/],
    ["white space then a second root", () => `<a/>${" ".repeat(4 * MB)}<b/>`, "bad-xml", /a second root element/],
  ];
  for (const [name, make, code, message] of refused)
    it(`refuses ${name}`, { timeout: 30_000 }, () => {
      rejects(make(), code, message);
    });

  const accepted: Array<[string, () => string, (t: Tree) => void]> = [
    ["a million sibling elements", () => `<r>${"<a/>".repeat(MB)}</r>`, (t) => expect(t.size).toBe(MB + 1)],
    [
      "200,000 attributes",
      () => `<a ${Array.from({ length: 200_000 }, (_, i) => `k${i}="v"`).join(" ")}/>`,
      (t) => expect(Object.keys(t.root.attrs)).toHaveLength(200_000),
    ],
    ["800,000 references in a value", () => `<a b="${"&amp;".repeat(800_000)}"/>`, (t) => expect(t.root.attrs.b).toHaveLength(800_000)],
    ["4 MiB of CR", () => `<a>${"\r".repeat(4 * MB)}</a>`, (t) => expect(t.root.text).toBe("\n".repeat(4 * MB))],
    ["4 MiB of ]] in text", () => `<a>${"]]".repeat(2 * MB)}</a>`, (t) => expect(t.root.text).toHaveLength(4 * MB)],
    ["a reference with 4 MiB of leading zeros", () => `<a>&#${"0".repeat(4 * MB)}65;</a>`, (t) => expect(t.root.text).toBe("A")],
    ["4 MiB of white space between elements", () => `<r>${" \t\n".repeat(1.4 * MB)}<a/></r>`, (t) => expect(t.size).toBe(2)],
    ["many CDATA sections", () => `<a>${"<![CDATA[x]]>".repeat(300_000)}</a>`, (t) => expect(t.root.text).toHaveLength(300_000)],
  ];
  for (const [name, make, check] of accepted)
    it(`parses ${name}`, { timeout: 30_000 }, () => {
      check(parseXml(make()));
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

describe("DOM-19 malformed input: positions and the depth limit", () => {
  it("DOM-19: CDATA outside the root and empty input are refused with a position", () => {
    expect(() => parseXml("<a/><![CDATA[x]]>")).toThrow(/text outside the root element.*\(line 1, column 5\)/);
    expect(() => parseXml("")).toThrow(/no root element \(line 1, column 1\)/);
  });

  it("DOM-19: self-closing elements count towards the depth limit", () => {
    expect(errorCode(() => parseXml("<a><b/></a>", { maxDepth: 1 }))).toBe("too-large");
    expect(parseXml("<a><b/></a>", { maxDepth: 2 }).size).toBe(2);
  });
});
