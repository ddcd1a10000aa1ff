/** DOM-19: hostile XML gets a clear error, never a hang, a crash or an expansion. */
import { describe, expect, it } from "vitest";
import { DomError, parseXml } from "../src/index.ts";

function rejects(xml: string | Uint8Array, code: string, message: RegExp): DomError {
  const started = performance.now();
  let error: unknown;
  try {
    parseXml(xml);
  } catch (e) {
    error = e;
  }
  expect(performance.now() - started, "must fail fast, not hang").toBeLessThan(5_000);
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
    const e = rejects(deep, "too-large", /nested more than 1000 deep \(raise maxDepth/);
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
    const e = rejects("<r>\n  <a>\n  </b>\n</r>", "bad-xml", /Expected closing tag 'a'/);
    expect(e.line).toBe(3);
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
