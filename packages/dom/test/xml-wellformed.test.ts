/**
 * DOM-18, DOM-19, DOM-36: well-formedness that the first reader let through (issue 11, items 12–14):
 * malformed XML declarations, `]]>` in text, end tags with a slash, encoding declarations that
 * contradict the bytes, non-XML white space between elements (silently deleted before), and
 * character references with leading zeros (refused before). Each refusal is asserted with its
 * code, message and line/column.
 */
import { describe, expect, it } from "vitest";
import { DomError, parseXml, toXml } from "../src/index.ts";

function refusal(input: string | Uint8Array): DomError {
  try {
    parseXml(input);
  } catch (e) {
    if (e instanceof DomError) return e;
    throw e;
  }
  throw new Error(`accepted ${typeof input === "string" ? JSON.stringify(input) : "the bytes"}`);
}

type Case = [input: string, code: string, message: RegExp, line: number, column: number];

function refuses(cases: Case[]): void {
  for (const [input, code, message, line, column] of cases)
    it(`refuses ${JSON.stringify(input).slice(0, 70)}`, () => {
      const e = refusal(input);
      expect(e.code, e.message).toBe(code);
      expect(e.message).toMatch(message);
      expect([e.line, e.column], e.message).toEqual([line, column]);
    });
}

const utf16 = (s: string, order: "le" | "be", bom: boolean): Uint8Array => {
  const out = new Uint8Array((s.length + (bom ? 1 : 0)) * 2);
  const units = bom ? `\uFEFF${s}` : s;
  for (let i = 0; i < units.length; i++) {
    const u = units.charCodeAt(i);
    out[2 * i + (order === "le" ? 0 : 1)] = u & 0xff;
    out[2 * i + (order === "le" ? 1 : 0)] = u >> 8;
  }
  return out;
};
const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? [...Buffer.from(p, "latin1")] : p)));

describe("DOM-18 the XML declaration (issue 11 item 12)", () => {
  refuses([
    ["<?xml foo?><a/>", "bad-xml", /unknown pseudo-attribute "foo"/, 1, 7],
    ['<?xml VERSION="1.0"?><a/>', "bad-xml", /"VERSION" must be written "version"/, 1, 7],
    ['<?xml encoding="UTF-8"?><a/>', "bad-xml", /version is missing/, 1, 7],
    ["<?xml?><a/>", "bad-xml", /version is missing/, 1, 6],
    ['<?xml encoding="UTF-8" version="1.0"?><a/>', "bad-xml", /"version" is out of place/, 1, 24],
    ['<?xml version="1.0" version="1.0"?><a/>', "bad-xml", /"version" is out of place/, 1, 21],
    ['<?xml version="1.0" standalone="yes" encoding="UTF-8"?><a/>', "bad-xml", /"encoding" is out of place/, 1, 38],
    ['<?xml version="1.0"encoding="UTF-8"?><a/>', "bad-xml", /expected white space before "e"/, 1, 20],
    ['<?xml version="1.0" standalone="YES"?><a/>', "bad-xml", /standalone must be "yes" or "no" \(lower case\), not "YES"/, 1, 33],
    ['<?xml version="1.0" standalone=yes?><a/>', "bad-xml", /the value of standalone must be in quotes/, 1, 32],
    ['<?xml version="1.0 "?><a/>', "bad-xml", /version "1.0 " is not an XML version/, 1, 16],
    ['<?xml version="1.1"?><a/>', "bad-xml", /XML 1.1 is not supported; strata reads XML 1.0/, 1, 16],
    ['<?xml version="1.0" encoding=" UTF-8"?><a/>', "bad-xml", /" UTF-8" is not an encoding name/, 1, 31],
    ['<?xml version="1.0" encoding="a/b"?><a/>', "bad-xml", /"a\/b" is not an encoding name/, 1, 31],
    ['<?xml version="1.0" encoding="utf:8"?><a/>', "bad-xml", /"utf:8" is not an encoding name/, 1, 31],
    ['<?xml version="1.0" valid="no"?><a/>', "bad-xml", /unknown pseudo-attribute "valid"/, 1, 21],
    ['<?xml version="1.0"', "bad-xml", /not closed with "\?>"/, 1, 1],
    [' <?xml version="1.0"?><a/>', "bad-xml", /the XML declaration must be the very first thing/, 1, 2],
    ['<a><?xml version="1.0"?></a>', "bad-xml", /the XML declaration must be the very first thing/, 1, 4],
    ['<?XML version="1.0"?><a/>', "bad-xml", /target "XML" is reserved/, 1, 1],
  ]);

  it("accepts a complete declaration, single quotes and white space around =", () => {
    expect(parseXml("<?xml version = '1.0' encoding = 'utf-8' standalone = 'no' ?>\n<a>x</a>").get(1)?.text).toBe("x");
    expect(parseXml('<?xml version="1.0" standalone="yes"?><a/>').size).toBe(1);
  });
});

describe("DOM-18 text and end tags (issue 11 item 12)", () => {
  refuses([
    ["<doc>a]]>b</doc>", "bad-xml", /"]]>" may not appear in text; write ]]&gt;/, 1, 7],
    ["<doc>]]]></doc>", "bad-xml", /"]]>" may not appear in text/, 1, 7],
    ["<doc>\n<x/>]]></doc>", "bad-xml", /"]]>" may not appear in text/, 2, 5],
    ["<doc/></doc/>", "bad-xml", /end tag "<\/doc\/>" after the root element was closed/, 1, 7],
    ["<a/></b/>", "bad-xml", /end tag "<\/b\/>" after the root element was closed/, 1, 5],
    ["<a></a/>", "bad-xml", /an end tag has no "\/" before ">": write <\/a>/, 1, 7],
    ["<a><b></b/></a>", "bad-xml", /write <\/b>/, 1, 10],
    ["<a></a >x", "bad-xml", /text outside the root element/, 1, 9],
    ["<a></ a>", "bad-xml", /expected an element name after "<\/"/, 1, 4],
    ['<a b="1"c="2"/>', "bad-xml", /attributes of <a> must be separated by white space/, 1, 9],
    ['<a b="1" / >', "bad-xml", /expected ">" after "\/"/, 1, 10],
    ["<a><![CDATA[x]]></a><![CDATA[y]]>", "bad-xml", /text outside the root element/, 1, 21],
    ["<a><![CDATA[<![CDATA[x]]>]]></a>", "bad-xml", /"]]>" may not appear in text/, 1, 26],
    ["<a>&#X41;</a>", "bad-xml", /malformed character reference "&#X"/, 1, 4],
    ["<a>&#x;</a>", "bad-xml", /malformed character reference/, 1, 4],
    ["<a>&amp</a>", "bad-xml", /unknown or malformed entity "&amp"/, 1, 4],
  ]);

  it("keeps `]]` and `>` apart in text, and `]]>` in attribute values, CDATA and references", () => {
    const t = parseXml('<a v="]]>"><b>]]&gt; ] ]> ]]</b><c><![CDATA[]]]]><![CDATA[>]]></c></a>');
    expect(t.get(1)?.attrs.v).toBe("]]>");
    expect(t.get(2)?.text).toBe("]]> ] ]> ]]");
    expect(t.get(3)?.text).toBe("]]>");
  });
});

describe("DOM-18 encodings (issue 11 item 12)", () => {
  it("reads UTF-16 with a byte-order mark in either order, and without one when declared", () => {
    for (const order of ["le", "be"] as const) {
      expect(parseXml(utf16('<?xml version="1.0" encoding="UTF-16"?><a>é😀</a>', order, true)).get(1)?.text).toBe("é😀");
      expect(parseXml(utf16("<a>x</a>", order, true)).get(1)?.text).toBe("x");
      const name = `UTF-16${order.toUpperCase()}`;
      expect(parseXml(utf16(`<?xml version="1.0" encoding="${name}"?><a>y</a>`, order, false)).get(1)?.text).toBe("y");
    }
  });

  it("reads ISO-8859-1 and US-ASCII as declared", () => {
    expect(parseXml(bytes('<?xml version="1.0" encoding="ISO-8859-1"?><a>caf', [0xe9], "</a>")).get(1)?.text).toBe("café");
    expect(parseXml(bytes("<?xml version='1.0' encoding='latin1'?><a>", [0x80, 0xff], "</a>")).get(1)?.text).toBe("\u0080ÿ");
    expect(parseXml(bytes('<?xml version="1.0" encoding="US-ASCII"?><a>plain</a>')).get(1)?.text).toBe("plain");
  });

  it("refuses a declaration that contradicts the bytes, and encodings it does not read", () => {
    const cases: Array<[Uint8Array, RegExp, number | undefined]> = [
      [
        bytes('<?xml version="1.0" encoding="UTF-16"?><a/>'),
        /says "utf-16", but the document starts with neither a byte-order mark.*contradicts the bytes/,
        1,
      ],
      [
        utf16('<?xml version="1.0" encoding="UTF-8"?><a/>', "le", true),
        /is UTF-16 .* but its encoding declaration says "UTF-8": the declaration contradicts the bytes/,
        1,
      ],
      [
        bytes([0xef, 0xbb, 0xbf], '<?xml version="1.0" encoding="ISO-8859-1"?><a/>'),
        /is UTF-8 \(it starts with a UTF-8 byte-order mark\), but its encoding declaration says "ISO-8859-1"/,
        1,
      ],
      [utf16("<a/>", "le", false), /looks like UTF-16LE without a byte-order mark or an encoding declaration/, 1],
      [utf16("<a/>", "be", false), /looks like UTF-16BE without a byte-order mark or an encoding declaration/, 1],
      [
        utf16('<?xml version="1.0"?><a/>', "le", false),
        /UTF-16LE without a byte-order mark, so its declaration must say encoding="UTF-16LE"/,
        1,
      ],
      [utf16('<?xml version="1.0" encoding="UTF-16"?><a/>', "be", false), /UTF-16BE without a byte-order mark.*not "UTF-16"/, 1],
      [
        bytes('<?xml version="1.0" encoding="US-ASCII"?>\n<a>', [0xe9], "</a>"),
        /byte 0xE9 at offset 45 is not US-ASCII.*\(line 2, column 4\)/,
        2,
      ],
      [
        bytes('<?xml version="1.0" encoding="Shift_JIS"?><a/>'),
        /encoding "shift_jis" is not supported; strata reads UTF-8, UTF-16, ISO-8859-1 and US-ASCII/,
        1,
      ],
      [bytes("<a>", [0xc3, 0x28], "</a>"), /not valid UTF-8: byte 0xC3 at offset 3 \(line 1, column 4\)/, 1],
      [bytes([0, 0, 0, 0x3c], "<a/>"), /UCS-4/, undefined],
      [bytes([0x4c, 0x6f, 0xa7, 0x94]), /EBCDIC/, undefined],
    ];
    for (const [input, message, line] of cases) {
      const e = refusal(input);
      expect(e.code).toBe("bad-xml");
      expect(e.message).toMatch(message);
      expect(e.line).toBe(line);
    }
  });

  it("a string carries no bytes: any well-formed encoding name is accepted for it", () => {
    expect(parseXml('<?xml version="1.0" encoding="Shift_JIS"?><a>x</a>').get(1)?.text).toBe("x");
    expect(parseXml('\uFEFF<?xml version="1.0" encoding="UTF-16"?><a/>').size).toBe(1);
  });
});

describe("DOM-4, DOM-36 only XML white space between elements is ignored (issue 11 item 13)", () => {
  const others: Array<[string, string, number]> = [
    ["&#160;", '"&#160;"', 4],
    ["\u00a0", "U+00A0", 4],
    ["\u3000", "U+3000", 4],
    ["\u2028", "U+2028", 4],
    ["\u0085", "U+0085", 4],
    ["&#xFEFF;", '"&#xFEFF;"', 4],
    ["\uFEFF", "U+FEFF", 4],
    ["&#32;", '"&#32;"', 4],
    ["&#x9;", '"&#x9;"', 4],
    ["&#10;", '"&#10;"', 4],
    ["<![CDATA[ ]]>", "a CDATA section", 4],
  ];
  for (const [between, shown, column] of others)
    it(`refuses ${JSON.stringify(between)} between child elements as mixed content, before and after them`, () => {
      for (const xml of [`<a>${between}<b/></a>`, `<a><b/>${between}</a>`, `<a><b/>${between}<c/></a>`]) {
        const e = refusal(xml);
        expect(e.code, xml).toBe("mixed-content");
        expect(e.message).toContain(`(${shown} here)`);
        expect(e.column).toBe(xml.startsWith(`<a>${between}`) ? column : 8);
      }
    });

  it("ignores space, tab, CR and LF between elements, and keeps every other character of a leaf", () => {
    const t = parseXml("<a> \t\r\n <b/>\r\n\t<c>\u00a0\u3000&#32;</c> </a>");
    expect(toXml(t, { ids: false })).toBe("<a><b/><c>\u00a0\u3000 </c></a>");
    expect(parseXml("<a><![CDATA[]]><b/></a>").size).toBe(2); // an empty CDATA section is no text
  });
});

describe("DOM-18 character references (issue 11 item 14)", () => {
  it("accepts any number of leading zeros", () => {
    expect(parseXml("<a>&#000000065;&#x0000000041;&#0010;</a>").get(1)?.text).toBe("AA\n");
    expect(parseXml(`<a v="&#${"0".repeat(100_000)}66;">&#x${"0".repeat(100_000)}1F600;</a>`).get(1)?.attrs.v).toBe("B");
    expect(parseXml(`<a>&#x${"0".repeat(100_000)}1F600;</a>`).get(1)?.text).toBe("😀");
  });

  it("still refuses references to characters XML cannot carry, however they are written", () => {
    for (const ref of [
      "&#0000000;",
      "&#x0000;",
      "&#00001;",
      "&#xD800;",
      "&#xFFFE;",
      "&#x110000;",
      `&#${"9".repeat(40)};`,
      `&#x${"F".repeat(40)};`,
    ]) {
      const e = refusal(`<a>${ref}</a>`);
      expect(e.code, ref).toBe("bad-text");
      expect([e.line, e.column]).toEqual([1, 4]);
    }
  });
});
