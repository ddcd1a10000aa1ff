/**
 * The XML reader (DOM-18, DOM-19): one linear pass over a decoded document that checks it is
 * well-formed XML 1.0 within strata's subset and returns its elements in document order. No
 * regular expression touches the document and nothing recurses, so time is linear in the input
 * whatever it holds (an unclosed quote, a name without `=`, a million `<`) and depth is bounded.
 *
 * The subset: one root element; before it only white space, the XML declaration (read by the
 * caller) and one `<?strata?>` header; after it only white space. Content is elements, text, the
 * five predefined entities, character references and CDATA. Refused, with line and column: any
 * DOCTYPE (so no entity can be declared or expanded), comments, other processing instructions,
 * names outside DOM-5, text mixed with child elements (DOM-4: only space, tab, CR and LF between
 * elements are ignored; a character reference or CDATA there is text), and every well-formedness
 * error (`]]>` in text, `<` in an attribute value, unclosed or mismatched tags, `</a/>`,
 * repeated attributes, a bare `&`, …).
 */
import type { DomError } from "./errors.ts";
import { isNodeId } from "./ids.ts";
import { ID_ATTR, nameProblem } from "./names.ts";
import { readStrataHeader, type StrataHeader, startsWithStrataHeader, startsWithXmlDecl } from "./xml-decl.ts";
import { isXmlChar, isXmlSpace, type Positions, scanName, showChar, skipSpace } from "./xml-text.ts";

/** One element as read, before ids are assigned. `kids` are indices into the element list. */
export interface ReadElement {
  readonly tag: string;
  /** Attributes as read (undefined: none), in document order. */
  readonly attrs: Record<string, string> | undefined;
  text: string;
  readonly explicitId: number | undefined;
  readonly parentIndex: number;
  readonly kids: number[];
  /** Offset of the element's `<`. */
  readonly offset: number;
}

export interface ReadDocument {
  readonly header: StrataHeader | undefined;
  /** Every element in document order; the first is the root. */
  readonly elements: ReadElement[];
}

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const EQUALS = 0x3d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;

const PREDEFINED: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }),
);

/** The next occurrence of a string at or after a position, each searched for once (linear overall). */
class NextOf {
  #at = -2;
  constructor(
    private readonly xml: string,
    private readonly needle: string,
  ) {}
  /** Offset of the next occurrence at or after `from`, or -1 when there is none. */
  from(from: number): number {
    if (this.#at !== -1 && this.#at < from) this.#at = this.xml.indexOf(this.needle, from);
    return this.#at;
  }
}

/** An element whose end tag has not been read yet. */
interface Open {
  readonly index: number;
  /** Text read so far, kept while the element has no child element. */
  parts: string[];
  /** Offset of the first text that is not XML white space (-1: none yet). */
  significantAt: number;
  hasKids: boolean;
}

/** Reads the document after its XML declaration (`from`: where the declaration ended, or 0). */
export function readDocument(xml: string, from: number, pos: Positions, maxDepth: number): ReadDocument {
  return new Reader(xml, pos, maxDepth).read(from);
}

class Reader {
  readonly n: number;
  readonly elements: ReadElement[] = [];
  readonly open: Open[] = [];
  readonly lt: NextOf;
  readonly amp: NextOf;
  readonly cr: NextOf;
  readonly cdataEnd: NextOf;
  /** Names already checked against DOM-5 (documents repeat a few names many times). */
  readonly goodTags = new Set<string>();
  readonly goodAttrs = new Set<string>();

  constructor(
    readonly xml: string,
    readonly pos: Positions,
    readonly maxDepth: number,
  ) {
    this.n = xml.length;
    this.lt = new NextOf(xml, "<");
    this.amp = new NextOf(xml, "&");
    this.cr = new NextOf(xml, "\r");
    this.cdataEnd = new NextOf(xml, "]]>");
  }

  fail(
    msg: string,
    at: number,
    code: "bad-xml" | "bad-name" | "bad-text" | "mixed-content" | "bad-id" | "too-large" = "bad-xml",
  ): DomError {
    return this.pos.error(code, msg, at);
  }

  read(from: number): ReadDocument {
    const { xml } = this;
    let header: StrataHeader | undefined;
    let i = from;
    // The prolog: white space and the <?strata?> header, then the root's "<".
    for (;;) {
      i = skipSpace(xml, i);
      if (i >= this.n) throw this.fail("the document has no root element", i);
      if (xml.charCodeAt(i) !== LT) throw this.fail("text outside the root element; a document is one element", i);
      if (startsWithStrataHeader(xml, i)) {
        if (header !== undefined) throw this.fail("a second <?strata?> header; a document has at most one", i);
        header = readStrataHeader(xml, i, this.pos);
        i = header.end;
        continue;
      }
      const c = xml.charCodeAt(i + 1);
      if (c === BANG || c === QUESTION) throw this.refuseMarkup(i, false);
      if (c === SLASH) throw this.fail("an end tag before the root element", i);
      break;
    }
    i = this.content(i);
    // After the root: only white space.
    i = skipSpace(xml, i);
    if (i < this.n) {
      if (xml.charCodeAt(i) !== LT) throw this.fail("text outside the root element; a document is one element", i);
      const c = xml.charCodeAt(i + 1);
      if (startsWithStrataHeader(xml, i)) throw this.fail("the <?strata?> header must come before the root element", i);
      if (c === BANG || c === QUESTION) throw this.refuseMarkup(i, true);
      if (c === SLASH) {
        const gt = xml.indexOf(">", i);
        const shown = xml.slice(i, gt >= 0 && gt < i + 40 ? gt + 1 : i + 2);
        throw this.fail(`end tag ${JSON.stringify(shown)} after the root element was closed`, i);
      }
      throw this.fail("a second root element; a tree has exactly one root", i);
    }
    return { header, elements: this.elements };
  }

  /** Why markup starting `<!` or `<?` at `i` is refused (outside or inside the root). */
  refuseMarkup(i: number, afterRoot: boolean): DomError {
    const { xml } = this;
    if (xml.startsWith("<!--", i)) return this.fail("comments are not part of strata XML; remove them", i);
    if (xml.startsWith("<![CDATA[", i)) return this.fail("text outside the root element; a document is one element", i);
    if (xml.startsWith("<!DOCTYPE", i))
      return this.fail("DOCTYPE declarations are not accepted (they enable entity expansion); remove it", i);
    if (xml.charCodeAt(i + 1) === BANG)
      return this.fail("markup declarations are not accepted (they enable entity expansion); remove it", i);
    const target = xml.slice(i + 2, scanName(xml, i + 2));
    if (target === "xml" && startsWithXmlDecl(xml, i))
      return this.fail("the XML declaration must be the very first thing in the document, and appear once", i);
    if (target.toLowerCase() === "xml") return this.fail(`processing instruction target ${JSON.stringify(target)} is reserved by XML`, i);
    return this.fail(
      `processing instruction <?${target}?> is not accepted; only <?xml?> and <?strata?> before the root${afterRoot ? " (this one is after it)" : ""}`,
      i,
    );
  }

  /** Reads the root element and everything in it; returns the offset after its end tag. */
  content(start: number): number {
    const { xml, open } = this;
    let i = start;
    for (;;) {
      if (i >= this.n) {
        const top = open[open.length - 1] as Open;
        const el = this.elements[top.index] as ReadElement;
        throw this.fail(`element <${el.tag}> is not closed; the document ends before </${el.tag}>`, el.offset);
      }
      const c = xml.charCodeAt(i);
      if (c === LT) {
        const c1 = xml.charCodeAt(i + 1);
        if (c1 === SLASH) {
          i = this.endTag(i);
          if (open.length === 0) return i;
        } else if (c1 === BANG) {
          if (!xml.startsWith("<![CDATA[", i)) throw this.refuseMarkup(i, false);
          i = this.cdata(i);
        } else if (c1 === QUESTION) {
          throw this.refuseMarkup(i, false);
        } else {
          i = this.startTag(i);
          if (open.length === 0) return i;
        }
      } else if (c === AMP) {
        const [value, end] = this.reference(i);
        this.addText(value, i);
        i = end;
      } else {
        i = this.text(i);
      }
    }
  }

  /** A run of literal text from `i` to the next `<` or `&`. */
  text(i: number): number {
    const { xml } = this;
    const lt = this.lt.from(i);
    const amp = this.amp.from(i);
    let end = lt < 0 ? this.n : lt;
    if (amp >= 0 && amp < end) end = amp;
    const cd = this.cdataEnd.from(i);
    if (cd >= 0 && cd < end) throw this.fail('"]]>" may not appear in text; write ]]&gt;', cd);
    let value = xml.slice(i, end);
    const cr = this.cr.from(i);
    if (cr >= 0 && cr < end) value = value.replace(/\r\n?/g, "\n"); // XML §2.11: line ends read as LF
    let significant = -1;
    for (let k = i; k < end; k++)
      if (!isXmlSpace(xml.charCodeAt(k))) {
        significant = k;
        break;
      }
    this.addText(value, significant);
    return end;
  }

  /** `<![CDATA[…]]>` at `i`: its content is text (significant unless empty). */
  cdata(i: number): number {
    const end = this.xml.indexOf("]]>", i + 9);
    if (end < 0) throw this.fail('CDATA section is not closed with "]]>"', i);
    const raw = this.xml.slice(i + 9, end);
    this.addText(raw.includes("\r") ? raw.replace(/\r\n?/g, "\n") : raw, raw === "" ? -1 : i);
    return end + 3;
  }

  /** Adds text to the open element; `significantAt` is where it stops being XML white space (-1: it is all white space). */
  addText(value: string, significantAt: number): void {
    const top = this.open[this.open.length - 1] as Open;
    if (top.hasKids) {
      if (significantAt >= 0) throw this.mixed(top, significantAt);
      return; // white space between child elements is not content
    }
    top.parts.push(value);
    if (top.significantAt < 0) top.significantAt = significantAt;
  }

  mixed(top: Open, at: number): DomError {
    const el = this.elements[top.index] as ReadElement;
    const { xml } = this;
    let shown: string;
    if (xml.startsWith("<![CDATA[", at)) shown = "a CDATA section";
    else if (xml.charCodeAt(at) === AMP) {
      const semi = xml.indexOf(";", at);
      shown = JSON.stringify(xml.slice(at, semi >= 0 && semi < at + 16 ? semi + 1 : at + 1));
    } else shown = showChar(xml, at);
    return this.fail(
      `<${el.tag}> mixes text and child elements (${shown} here); an element holds one or the other, and only space, tab, CR and LF between elements are ignored`,
      at,
      "mixed-content",
    );
  }

  /** A start tag at `i` (`<` then a name); returns the offset after it. */
  startTag(i: number): number {
    const { xml, open } = this;
    const nameEnd = scanName(xml, i + 1);
    if (nameEnd === i + 1) throw this.fail(`expected a tag name after "<", found ${showChar(xml, i + 1)}`, i);
    const tag = xml.slice(i + 1, nameEnd);
    if (!this.goodTags.has(tag)) {
      const problem = nameProblem(tag, "tag");
      if (problem !== undefined) throw this.fail(problem, i, "bad-name");
      this.goodTags.add(tag);
    }
    if (open.length + 1 > this.maxDepth)
      throw this.fail(`elements are nested more than ${this.maxDepth} deep (the limit; see MAX_DEPTH)`, i, "too-large");
    const parent = open[open.length - 1];
    if (parent !== undefined && !parent.hasKids) {
      if (parent.significantAt >= 0) throw this.mixed(parent, parent.significantAt);
      parent.parts = [];
      parent.hasKids = true;
    }
    let attrs: Record<string, string> | undefined;
    let explicitId: number | undefined;
    let k = nameEnd;
    let empty: boolean;
    for (;;) {
      const s = skipSpace(xml, k);
      const c = xml.charCodeAt(s);
      if (c === GT) {
        k = s + 1;
        empty = false;
        break;
      }
      if (c === SLASH) {
        if (xml.charCodeAt(s + 1) !== GT) throw this.fail(`expected ">" after "/" in the start tag of <${tag}>`, s);
        k = s + 2;
        empty = true;
        break;
      }
      if (s >= this.n) throw this.fail(`the start tag of <${tag}> is not closed`, i);
      const an = scanName(xml, s);
      if (an === s)
        throw this.fail(`unexpected ${showChar(xml, s)} in the start tag of <${tag}>; expected an attribute name, ">" or "/>"`, s);
      if (s === k) throw this.fail(`attributes of <${tag}> must be separated by white space`, s);
      const name = xml.slice(s, an);
      let e = skipSpace(xml, an);
      if (xml.charCodeAt(e) !== EQUALS) throw this.fail(`attribute ${name} of <${tag}> has no value; write ${name}="…"`, s);
      e = skipSpace(xml, e + 1);
      const q = xml.charCodeAt(e);
      if (q !== DQUOTE && q !== SQUOTE) throw this.fail(`the value of attribute ${name} of <${tag}> must be in quotes`, e);
      const [value, after] = this.attrValue(e + 1, q, name);
      if (name === ID_ATTR) {
        if (explicitId !== undefined) throw this.fail(`attribute ${name} appears twice on <${tag}>`, s);
        const id = /^[1-9][0-9]{0,14}$/.test(value) ? Number(value) : Number.NaN;
        if (!isNodeId(id)) throw this.fail(`${ID_ATTR}="${value}" on <${tag}> is not a node id (a positive integer)`, s, "bad-id");
        explicitId = id;
      } else {
        if (attrs === undefined) attrs = Object.create(null) as Record<string, string>;
        else if (Object.hasOwn(attrs, name)) throw this.fail(`attribute ${name} appears twice on <${tag}>`, s);
        if (!this.goodAttrs.has(name)) {
          const p = nameProblem(name, "attribute");
          if (p !== undefined) throw this.fail(`${p} (on <${tag}>)`, s, "bad-name");
          this.goodAttrs.add(name);
        }
        attrs[name] = value;
      }
      k = after;
    }
    const index = this.elements.length;
    const parentIndex = parent === undefined ? -1 : parent.index;
    this.elements.push({ tag, attrs, text: "", explicitId, parentIndex, kids: [], offset: i });
    if (parentIndex >= 0) (this.elements[parentIndex] as ReadElement).kids.push(index);
    if (!empty) open.push({ index, parts: [], significantAt: -1, hasKids: false });
    return k;
  }

  /**
   * An attribute value from `from` (after its opening quote) to the closing quote `q`. Raw TAB,
   * LF, CR and CRLF become one space each (XML §3.3.3); references are decoded and kept as they
   * are. Returns the value and the offset after the closing quote.
   */
  attrValue(from: number, q: number, name: string): [string, number] {
    const { xml } = this;
    let out = "";
    let seg = from;
    for (let j = from; ; j++) {
      if (j >= this.n) throw this.fail(`the value of attribute ${name} is not closed (no matching quote)`, from - 1);
      const c = xml.charCodeAt(j);
      if (c === q) return [out + xml.slice(seg, j), j + 1];
      if (c === LT) throw this.fail('attribute values may not contain a raw "<"; write &lt;', j);
      if (c === AMP) {
        const [value, end] = this.reference(j);
        out += xml.slice(seg, j) + value;
        seg = end;
        j = end - 1;
      } else if (c === 0x09 || c === 0x0a || c === 0x0d) {
        out += `${xml.slice(seg, j)} `;
        if (c === 0x0d && xml.charCodeAt(j + 1) === 0x0a) j++;
        seg = j + 1;
      }
    }
  }

  /** A reference at `i` (`&`): the five predefined entities or a character reference. */
  reference(i: number): [string, number] {
    const { xml } = this;
    if (xml.charCodeAt(i + 1) === 0x23 /* # */) {
      const hex = xml.charCodeAt(i + 2) === 0x78; /* x, lower case only (production [66]) */
      const base = hex ? 16 : 10;
      const start = i + (hex ? 3 : 2);
      let k = start;
      let cp = 0;
      for (; k < this.n; k++) {
        const d = digit(xml.charCodeAt(k), hex);
        if (d < 0) break;
        // Leading zeros are allowed in any number; past the largest code point the value only has to stay too large.
        if (cp <= 0x10ffff) cp = cp * base + d;
      }
      const shown = xml.slice(i, Math.min(k + 1, i + 16));
      if (k === start || xml.charCodeAt(k) !== 0x3b /* ; */)
        throw this.fail(`malformed character reference ${JSON.stringify(shown)}; write &#N; or &#xH;`, i);
      if (!isXmlChar(cp)) throw this.fail(`character reference ${shown} names a character XML cannot carry`, i, "bad-text");
      return [String.fromCodePoint(cp), k + 1];
    }
    const end = scanName(xml, i + 1);
    const name = xml.slice(i + 1, end);
    const value = end > i + 1 && xml.charCodeAt(end) === 0x3b ? PREDEFINED[name] : undefined;
    if (value === undefined) {
      const shown = end > i + 1 ? xml.slice(i, Math.min(xml.charCodeAt(end) === 0x3b ? end + 1 : end, i + 24)) : "&";
      throw this.fail(
        `unknown or malformed entity ${JSON.stringify(shown)}; only &amp; &lt; &gt; &quot; &apos; and &#N; are accepted (write a literal & as &amp;)`,
        i,
      );
    }
    return [value, end + 1];
  }

  /** An end tag at `i` (`</`); returns the offset after it. */
  endTag(i: number): number {
    const { xml, open } = this;
    const nameEnd = scanName(xml, i + 2);
    if (nameEnd === i + 2) throw this.fail(`expected an element name after "</", found ${showChar(xml, i + 2)}`, i);
    const name = xml.slice(i + 2, nameEnd);
    const e = skipSpace(xml, nameEnd);
    if (xml.charCodeAt(e) !== GT)
      throw this.fail(
        xml.charCodeAt(e) === SLASH ? `an end tag has no "/" before ">": write </${name}>` : `end tag </${name}> is not closed with ">"`,
        e,
      );
    const top = open.pop();
    if (top === undefined) throw this.fail(`end tag </${name}> has no element to close`, i);
    const el = this.elements[top.index] as ReadElement;
    if (el.tag !== name) {
      const { line, column } = this.pos.at(el.offset);
      throw this.fail(`end tag </${name}> does not match <${el.tag}> (opened at line ${line}, column ${column}); expected </${el.tag}>`, i);
    }
    if (!top.hasKids) el.text = top.parts.length === 1 ? (top.parts[0] as string) : top.parts.join("");
    return e + 1;
  }
}

function digit(c: number, hex: boolean): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (!hex) return -1;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}
