/**
 * Canonical XML (DOM-15 … DOM-19). `toXml` writes one deterministic form; `parseXml` reads that
 * form back exactly (ids and high-water mark included) and also accepts hand-written XML without
 * ids, which it numbers in document order. Parsing uses fast-xml-parser behind a strict pre-scan
 * that rejects DOCTYPEs (no entity expansion of any kind), comments, unknown entities, characters
 * XML cannot carry, excessive depth and size, each with a line and column.
 */
import { EntityDecoder, XML } from "@nodable/entities";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { makeAttrs } from "./apply.ts";
import { dirFromSlots } from "./dir.ts";
import { DomError } from "./errors.ts";
import { isNodeId, type NodeId } from "./ids.ts";
import { ID_ATTR, invalidCharIndex, nameProblem } from "./names.ts";
import { makeTree, PAGE_BITS, PAGE_MASK, type Rec, type Tree } from "./tree.ts";

export interface ToXmlOptions {
  /** Serialize only this element's subtree (default: the root). Implies no `<?strata?>` header. */
  readonly root?: number;
  /** Carry ids (`_id`) and the `<?strata?>` header (default true). `false` gives readable XML. */
  readonly ids?: boolean;
}

/** The canonical XML of `tree`: equal trees give equal strings, and `parseXml` reads it back exactly. */
export function toXml(tree: Tree, options: ToXmlOptions = {}): string {
  const ids = options.ids ?? true;
  const rootId = options.root ?? tree.rootId;
  const root = tree.rec(rootId);
  if (root === undefined) throw new DomError("unknown-node", `element ${rootId} does not exist in this tree`);
  let out = ids && options.root === undefined ? `<?strata hwm="${tree.hwm}" fixed="${tree.fixed.join(" ")}"?>` : "";
  // Stack of ids to open (positive) or close (negative).
  const stack: number[] = [rootId];
  while (stack.length > 0) {
    const id = stack.pop() as number;
    if (id < 0) {
      out += `</${(tree.rec(-id) as Rec).tag}>`;
      continue;
    }
    const r = tree.rec(id) as Rec;
    out += ids ? `<${r.tag} ${ID_ATTR}="${r.id}"` : `<${r.tag}`;
    const attrs = r.attrs;
    for (const k in attrs) out += ` ${k}="${escapeAttr(attrs[k] as string)}"`;
    if (r.first !== 0) {
      out += ">";
      stack.push(-id);
      // Push children in reverse so the first child is opened first.
      for (let c = r.last; c !== 0; c = (tree.rec(c) as Rec).prev) stack.push(c);
    } else if (r.text !== "") out += `>${escapeText(r.text)}</${r.tag}>`;
    else out += "/>";
  }
  return out;
}

const TEXT_SPECIAL = /[&<>\r]/;
const ATTR_SPECIAL = /[&<>"\r\n\t]/;

/** Escapes text content: `& < >` as entities and CR as `&#13;` (a raw CR would be normalized away). */
export function escapeText(s: string): string {
  if (!TEXT_SPECIAL.test(s)) return s;
  return s.replace(/[&<>\r]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&#13;"));
}

/** Escapes an attribute value: entities, plus TAB/LF/CR as character references (else normalized). */
export function escapeAttr(s: string): string {
  if (!ATTR_SPECIAL.test(s)) return s;
  return s.replace(/[&<>"\r\n\t]/g, (c) => ATTR_ESCAPES[c] as string);
}
const ATTR_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "\r": "&#13;",
  "\n": "&#10;",
  "\t": "&#9;",
};

export interface ParseXmlOptions {
  /** Largest input accepted, in UTF-16 code units for strings or bytes for binary (default 32 MiB). */
  readonly maxBytes?: number;
  /** Deepest element nesting accepted (default 1,000). */
  readonly maxDepth?: number;
}

export const DEFAULT_MAX_XML_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_XML_DEPTH = 1000;

interface XNode {
  [key: string]: unknown;
}

/**
 * Reads XML into a tree. Accepts the canonical form (ids in `_id`, `<?strata hwm fixed?>`), and
 * hand-written XML where no element has `_id` (ids are then minted 1, 2, … in document order and the
 * root is the only fixed element). Throws `DomError` (`bad-xml`, `bad-name`, `bad-text`,
 * `mixed-content`, `bad-id`, `too-large`) with line and column.
 */
export function parseXml(input: string | Uint8Array, options: ParseXmlOptions = {}): Tree {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_XML_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_XML_DEPTH;
  const size = typeof input === "string" ? input.length : input.byteLength;
  if (size > maxBytes)
    throw new DomError("too-large", `XML input is ${size} bytes; the limit is ${maxBytes} (raise maxBytes to accept it)`);
  let xml: string;
  try {
    xml = typeof input === "string" ? input : new TextDecoder("utf-8", { fatal: true }).decode(input);
  } catch {
    throw new DomError("bad-xml", "XML input is not valid UTF-8");
  }
  if (xml.charCodeAt(0) === 0xfeff) xml = xml.slice(1);
  const pos = new Positions(xml);
  const scan = prescan(xml, pos, maxDepth);
  // XML normalizes raw TAB/LF/CR in attribute values to spaces (character references stay).
  if (scan.whitespaceValues.length > 0) {
    let out = "";
    let from = 0;
    for (const [start, end] of scan.whitespaceValues) {
      out += xml.slice(from, start) + xml.slice(start, end).replace(/\r\n|[\t\n\r]/g, " ");
      from = end;
    }
    xml = out + xml.slice(from);
  }
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: false });
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new DomError("bad-xml", `${msg} (line ${line}, column ${col})`, { line, column: col });
  }
  let doc: XNode[];
  try {
    doc = parser(maxDepth).parse(xml) as XNode[];
  } catch (e) {
    throw new DomError("bad-xml", `XML could not be parsed: ${(e as Error).message}`);
  }
  return build(doc, pos, scan.header);
}

function parser(maxDepth: number): XMLParser {
  return new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: "",
    trimValues: false,
    parseTagValue: false,
    parseAttributeValue: false,
    allowBooleanAttributes: false,
    commentPropName: "#comment",
    cdataPropName: "#cdata",
    captureMetaData: true,
    maxNestedTags: maxDepth + 1,
    // Names like "toString" are valid here (DOM-5); keep them as they are. "__proto__" and friends
    // never reach the parser: the prescan refuses them.
    onDangerousProperty: (name: string) => name,
    entityDecoder: new EntityDecoder({ namedEntities: { ...XML }, numericAllowed: true }),
  } as ConstructorParameters<typeof XMLParser>[0]);
}

const META = XMLParser.getMetaDataSymbol() as unknown as symbol;

/** Line and column of string offsets, computed on demand (only error paths need them). */
class Positions {
  private lineStarts: number[] | undefined;
  constructor(private readonly text: string) {}
  at(offset: number): { line: number; column: number } {
    if (this.lineStarts === undefined) {
      const starts = [0];
      for (let i = this.text.indexOf("\n"); i >= 0; i = this.text.indexOf("\n", i + 1)) starts.push(i + 1);
      this.lineStarts = starts;
    }
    const starts = this.lineStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
  }
  error(code: "bad-xml" | "bad-name" | "bad-text" | "mixed-content" | "bad-id" | "too-large", msg: string, offset: number): DomError {
    const { line, column } = this.at(offset);
    return new DomError(code, `${msg} (line ${line}, column ${column})`, { line, column });
  }
}

const ENTITY = /^&(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});/;

function isXmlChar(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/**
 * One linear pass that enforces what fast-xml-parser does not: no DOCTYPE, no comments, processing
 * instructions only in the prolog (`<?xml?>`, `<?strata?>`), only the five XML entities and valid
 * numeric references, only characters XML can carry, and at most `maxDepth` levels.
 */
interface Prescan {
  /** The `<?strata?>` header's attributes and where it stands. */
  header: { attrs: Record<string, string>; offset: number } | undefined;
  /** Attribute values holding raw TAB, LF or CR, which XML normalizes to spaces: [start, end). */
  whitespaceValues: Array<[number, number]>;
}

function prescan(xml: string, pos: Positions, maxDepth: number): Prescan {
  const result: Prescan = { header: undefined, whitespaceValues: [] };
  const bad = invalidCharIndex(xml);
  if (bad >= 0) {
    const code = xml.charCodeAt(bad).toString(16).toUpperCase().padStart(4, "0");
    throw pos.error("bad-text", `character U+${code} is not allowed in XML`, bad);
  }
  let depth = 0;
  let seenRoot = false;
  const n = xml.length;
  let i = 0;
  // Cached positions of the next "&" and "<" (-1: none left), so each is searched for once.
  let amp = -2;
  let lt = -2;
  while (i < n) {
    if (lt !== -1 && lt < i) lt = xml.indexOf("<", i);
    if (amp !== -1 && amp < i) amp = xml.indexOf("&", i);
    const stop = amp >= 0 && (lt < 0 || amp < lt) ? amp : lt < 0 ? n : lt;
    if (depth === 0) outsideRoot(xml, i, stop, pos);
    if (stop === amp) {
      checkEntity(xml, amp, pos);
      i = amp + 1;
      continue;
    }
    if (lt < 0) break;
    const c = xml.charCodeAt(lt + 1);
    if (xml.startsWith("<![CDATA[", lt)) {
      if (depth === 0) throw pos.error("bad-xml", "text outside the root element; a document is one element", lt);
      const end = xml.indexOf("]]>", lt + 9);
      if (end < 0) throw pos.error("bad-xml", "CDATA section is not closed", lt);
      i = end + 3;
    } else if (xml.startsWith("<!--", lt)) {
      throw pos.error("bad-xml", "comments are not part of strata XML; remove them", lt);
    } else if (c === 0x21 /* ! */) {
      const what = xml.startsWith("<!DOCTYPE", lt) ? "DOCTYPE declarations" : "markup declarations";
      throw pos.error("bad-xml", `${what} are not accepted (they enable entity expansion); remove it`, lt);
    } else if (c === 0x3f /* ? */) {
      const end = xml.indexOf("?>", lt + 2);
      if (end < 0) throw pos.error("bad-xml", "processing instruction is not closed", lt);
      const target = /^<\?([^\s?]*)/.exec(xml.slice(lt, Math.min(end, lt + 64)))?.[1] ?? "";
      if (seenRoot || (target !== "xml" && target !== "strata"))
        throw pos.error("bad-xml", `processing instruction <?${target}?> is not accepted; only <?xml?> and <?strata?> before the root`, lt);
      if (target === "strata") result.header = readHeader(xml.slice(lt, end), lt, pos, result.header !== undefined);
      i = end + 2;
    } else if (c === 0x2f /* / */) {
      depth--;
      const end = xml.indexOf(">", lt);
      i = end < 0 ? n : end + 1;
    } else {
      // A start tag: find its end, skipping quoted attribute values (which may hold ">").
      let j = lt + 1;
      let quote = 0;
      let valueStart = 0;
      let rawWhitespace = false;
      for (; j < n; j++) {
        const ch = xml.charCodeAt(j);
        if (quote !== 0) {
          if (ch === quote) {
            quote = 0;
            if (rawWhitespace) result.whitespaceValues.push([valueStart, j]);
          } else if (ch === 0x26 /* & */) checkEntity(xml, j, pos);
          else if (ch === 0x3c) throw pos.error("bad-xml", 'attribute values may not contain a raw "<"; write &lt;', j);
          else if (ch === 0x09 || ch === 0x0a || ch === 0x0d) rawWhitespace = true;
        } else if (ch === 0x22 || ch === 0x27) {
          quote = ch;
          valueStart = j + 1;
          rawWhitespace = false;
        } else if (ch === 0x3e /* > */) break;
      }
      if (seenRoot && depth === 0) throw pos.error("bad-xml", "a second root element; a tree has exactly one root", lt);
      checkTagNames(xml.slice(lt, j), lt, pos);
      seenRoot = true;
      const selfClosing = xml.charCodeAt(j - 1) === 0x2f;
      if (depth + 1 > maxDepth)
        throw pos.error("too-large", `elements are nested more than ${maxDepth} deep (raise maxDepth to accept it)`, lt);
      if (!selfClosing) depth++;
      i = j + 1;
    }
  }
  if (!seenRoot) throw pos.error("bad-xml", "the document has no root element", n);
  return result;
}

/** Reads `<?strata hwm="…" fixed="…"?>`: those two attributes, once. */
function readHeader(pi: string, at: number, pos: Positions, repeated: boolean): { attrs: Record<string, string>; offset: number } {
  if (repeated) throw pos.error("bad-xml", "a second <?strata?> header; a document has at most one", at);
  const attrs: Record<string, string> = {};
  const body = pi.slice("<?strata".length);
  const pattern = /([^\s=/<>"'?]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
  for (const m of body.matchAll(pattern)) {
    const name = m[1] as string;
    if (name !== "hwm" && name !== "fixed") throw pos.error("bad-xml", `<?strata?> takes hwm and fixed, not ${JSON.stringify(name)}`, at);
    if (Object.hasOwn(attrs, name)) throw pos.error("bad-xml", `<?strata?> gives ${name} twice`, at);
    attrs[name] = m[2] ?? m[3] ?? "";
  }
  const rest = body.replace(pattern, "").trim();
  if (rest !== "") throw pos.error("bad-xml", `<?strata?> header is malformed near ${JSON.stringify(rest.slice(0, 20))}`, at);
  return { attrs, offset: at };
}

const TAG_NAME = /^<([^\s/>]*)/;
const ATTRIBUTE = /([^\s=/<>"']+)\s*=\s*(?:"[^"]*"|'[^']*')/g;

/** Checks tag and attribute names where they stand, before the parser sees them. */
function checkTagNames(tag: string, at: number, pos: Positions): void {
  const name = TAG_NAME.exec(tag)?.[1] ?? "";
  const problem = nameProblem(name, "tag");
  if (name === "") throw pos.error("bad-xml", 'expected a tag name after "<"', at);
  if (problem !== undefined) throw pos.error("bad-name", problem, at);
  for (const m of tag.matchAll(ATTRIBUTE)) {
    const attr = m[1] as string;
    if (attr === ID_ATTR) continue;
    const p = nameProblem(attr, "attribute");
    if (p !== undefined) throw pos.error("bad-name", `${p} (on <${name}>)`, at + (m.index ?? 0));
  }
}

/** Only white space may stand outside the root element. */
function outsideRoot(xml: string, from: number, to: number, pos: Positions): void {
  for (let k = from; k < to; k++) {
    const ch = xml.charCodeAt(k);
    if (ch !== 0x20 && ch !== 0x09 && ch !== 0x0a && ch !== 0x0d)
      throw pos.error("bad-xml", "text outside the root element; a document is one element", k);
  }
}

function checkEntity(xml: string, at: number, pos: Positions): void {
  const m = ENTITY.exec(xml.slice(at, at + 12));
  if (m === null) {
    const shown = /^&[^\s;<&]{0,20};?/.exec(xml.slice(at, at + 24))?.[0] ?? "&";
    throw pos.error(
      "bad-xml",
      `unknown or malformed entity ${JSON.stringify(shown)}; only &amp; &lt; &gt; &quot; &apos; and &#N; are accepted`,
      at,
    );
  }
  const ref = m[0];
  if (ref.startsWith("&#")) {
    const cp = ref[2] === "x" ? Number.parseInt(ref.slice(3, -1), 16) : Number.parseInt(ref.slice(2, -1), 10);
    if (!isXmlChar(cp)) throw pos.error("bad-text", `character reference ${ref} names a character XML cannot carry`, at);
  }
}

interface Pending {
  readonly node: XNode;
  readonly tag: string;
  readonly parentIndex: number;
  readonly offset: number;
}

interface Built {
  tag: string;
  attrs: Record<string, string>;
  text: string;
  explicitId: number | undefined;
  parentIndex: number;
  kids: number[];
  offset: number;
}

function tagOf(node: XNode): string | undefined {
  for (const k of Object.keys(node)) if (k !== ":@") return k;
  return undefined;
}

function offsetOf(node: XNode, fallback: number): number {
  const meta = (node as unknown as Record<symbol, { startIndex?: number } | undefined>)[META];
  return meta?.startIndex ?? fallback;
}

function build(doc: XNode[], pos: Positions, header: Prescan["header"]): Tree {
  let root: XNode | undefined;
  for (const item of doc) {
    const key = tagOf(item);
    if (key === "?xml") continue;
    if (key === "?strata") continue; // read by the prescan, with its position
    if (key === "#text") {
      const t = (item["#text"] as string) ?? "";
      if (t.trim() !== "") throw pos.error("bad-xml", `text outside the root element: ${JSON.stringify(t.trim().slice(0, 30))}`, 0);
      continue;
    }
    if (key === undefined || key.startsWith("#"))
      throw pos.error("bad-xml", `unsupported content ${key ?? "(empty)"} outside the root element`, 0);
    if (root !== undefined) throw pos.error("bad-xml", `a second root element <${key}>; a tree has exactly one root`, offsetOf(item, 0));
    root = item;
  }
  if (root === undefined) throw pos.error("bad-xml", "the document has no root element", 0);

  // Flatten in document order (iteratively), validating names, text and mixed content.
  const nodes: Built[] = [];
  const stack: Pending[] = [{ node: root, tag: tagOf(root) as string, parentIndex: -1, offset: offsetOf(root, 0) }];
  while (stack.length > 0) {
    const { node, tag, parentIndex, offset } = stack.pop() as Pending;
    const tagProblem = nameProblem(tag, "tag");
    if (tagProblem !== undefined) throw pos.error("bad-name", tagProblem, offset);
    const rawAttrs = (node[":@"] as Record<string, unknown> | undefined) ?? {};
    const attrs: Record<string, string> = {};
    let explicitId: number | undefined;
    for (const [k, v] of Object.entries(rawAttrs)) {
      if (typeof v !== "string") throw pos.error("bad-xml", `attribute ${k} of <${tag}> has no value`, offset);
      if (k === ID_ATTR) {
        const id = /^[1-9][0-9]{0,14}$/.test(v) ? Number(v) : Number.NaN;
        if (!isNodeId(id)) throw pos.error("bad-id", `${ID_ATTR}="${v}" on <${tag}> is not a node id (a positive integer)`, offset);
        explicitId = id;
        continue;
      }
      const p = nameProblem(k, "attribute");
      if (p !== undefined) throw pos.error("bad-name", `${p} (on <${tag}>)`, offset);
      attrs[k] = v;
    }
    const index = nodes.length;
    const built: Built = { tag, attrs, text: "", explicitId, parentIndex, kids: [], offset };
    nodes.push(built);
    if (parentIndex >= 0) (nodes[parentIndex] as Built).kids.push(index);
    let text = "";
    let textOnlyWhitespace = true;
    const elements: Pending[] = [];
    for (const child of (node[tag] as XNode[] | undefined) ?? []) {
      const key = tagOf(child);
      if (key === "#text") {
        const t = child["#text"] as string;
        text += t;
        if (textOnlyWhitespace && t.trim() !== "") textOnlyWhitespace = false;
      } else if (key === "#cdata") {
        for (const part of (child["#cdata"] as XNode[] | undefined) ?? []) text += (part["#text"] as string | undefined) ?? "";
        textOnlyWhitespace = false;
      } else if (key === undefined || key.startsWith("#") || key.startsWith("?")) {
        throw pos.error("bad-xml", `unsupported content ${key ?? "(empty)"} inside <${tag}>`, offset);
      } else {
        elements.push({ node: child, tag: key, parentIndex: index, offset: offsetOf(child, offset) });
      }
    }
    if (elements.length > 0) {
      if (!textOnlyWhitespace)
        throw pos.error("mixed-content", `<${tag}> mixes text and child elements; an element holds one or the other`, offset);
    } else built.text = text;
    for (let i = elements.length - 1; i >= 0; i--) stack.push(elements[i] as Pending);
  }
  return assemble(nodes, header, pos);
}

function assemble(nodes: Built[], scanned: Prescan["header"], pos: Positions): Tree {
  const header = scanned?.attrs;
  const at = scanned?.offset ?? 0;
  const withIds = (nodes[0] as Built).explicitId !== undefined;
  const ids: number[] = new Array(nodes.length);
  let maxId = 0;
  const seen = new Set<number>();
  for (let i = 0; i < nodes.length; i++) {
    const b = nodes[i] as Built;
    if ((b.explicitId !== undefined) !== withIds)
      throw pos.error(
        "bad-id",
        `either every element carries ${ID_ATTR} or none does; <${b.tag}> ${withIds ? "lacks" : "has"} one`,
        b.offset,
      );
    const id = withIds ? (b.explicitId as number) : i + 1;
    if (seen.has(id)) throw pos.error("bad-id", `${ID_ATTR}="${id}" is used twice`, b.offset);
    seen.add(id);
    ids[i] = id;
    if (id > maxId) maxId = id;
  }
  let hwm = maxId;
  if (header?.hwm !== undefined) {
    const h = /^[1-9][0-9]{0,14}$/.test(header.hwm) ? Number(header.hwm) : Number.NaN;
    if (!isNodeId(h) || h < maxId)
      throw pos.error("bad-xml", `<?strata hwm="${header.hwm}"?> must be an integer no smaller than the largest id (${maxId})`, at);
    hwm = h;
  }
  const rootId = ids[0] as number;
  let fixed = [rootId];
  if (header?.fixed !== undefined) {
    const parts = header.fixed.trim() === "" ? [] : header.fixed.trim().split(/\s+/);
    fixed = parts.map((p) => (/^[1-9][0-9]{0,14}$/.test(p) ? Number(p) : Number.NaN));
    fixed.sort((a, b) => a - b);
    const index = new Map<number, number>();
    for (let i = 0; i < ids.length; i++) index.set(ids[i] as number, i);
    const fixedSet = new Set(fixed);
    if (fixedSet.size !== fixed.length) throw pos.error("bad-xml", `<?strata fixed="${header.fixed}"?> lists an id twice`, at);
    if (!fixedSet.has(rootId)) throw pos.error("bad-xml", `<?strata fixed="${header.fixed}"?> must include the root (${rootId})`, at);
    for (const f of fixed) {
      const i = index.get(f);
      if (i === undefined)
        throw pos.error(
          "bad-xml",
          `<?strata fixed?> names ${Number.isNaN(f) ? "a non-id" : f}, which is not an element of the document`,
          at,
        );
      const parentIndex = (nodes[i] as Built).parentIndex;
      if (parentIndex >= 0 && !fixedSet.has(ids[parentIndex] as number))
        throw pos.error("bad-xml", `fixed element ${f} has a parent that is not fixed; the skeleton must be closed upwards`, at);
    }
  }

  const slots: (Rec | undefined)[][] = [];
  for (let i = 0; i < nodes.length; i++) {
    const b = nodes[i] as Built;
    const id = ids[i] as number;
    const parent = b.parentIndex >= 0 ? (ids[b.parentIndex] as number) : 0;
    let prev = 0;
    let next = 0;
    if (b.parentIndex >= 0) {
      // kids of the parent were pushed in order; siblings are found through the parent's list.
      const kids = (nodes[b.parentIndex] as Built).kids;
      const k = kidPosition(kids, i);
      prev = k > 0 ? (ids[kids[k - 1] as number] as number) : 0;
      next = k < kids.length - 1 ? (ids[kids[k + 1] as number] as number) : 0;
    }
    const rec: Rec = Object.freeze({
      id: id as NodeId,
      tag: b.tag,
      attrs: makeAttrs(b.attrs),
      text: b.text,
      parent,
      prev,
      next,
      first: b.kids.length > 0 ? (ids[b.kids[0] as number] as number) : 0,
      last: b.kids.length > 0 ? (ids[b.kids[b.kids.length - 1] as number] as number) : 0,
    });
    const p = id >>> PAGE_BITS;
    while (slots.length <= p) slots.push(undefined as unknown as (Rec | undefined)[]);
    let page = slots[p];
    if (page === undefined) {
      page = [];
      slots[p] = page;
    }
    page[id & PAGE_MASK] = rec;
  }
  for (const page of slots) if (page !== undefined) Object.freeze(page);
  return makeTree(hwm, rootId, fixed, nodes.length, dirFromSlots(slots));
}

/** Position of node `i` in its parent's (ascending) kid list, by binary search. */
function kidPosition(kids: readonly number[], i: number): number {
  let lo = 0;
  let hi = kids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = kids[mid] as number;
    if (v === i) return mid;
    if (v < i) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
