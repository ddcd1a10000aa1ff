/**
 * Canonical XML (DOM-16 … DOM-19). `toXml` writes one deterministic form; `parseXml` reads that
 * form back exactly (ids and high-water mark included) and also accepts hand-written XML without
 * ids, which it numbers in document order. Reading is strata's own linear reader
 * (`xml-input.ts` → `xml-decl.ts` → `xml-reader.ts`, decision 0019); this module turns what it read
 * into a tree.
 */
import { makeAttrs } from "./attrs.ts";
import { MAX_DEPTH } from "./depth.ts";
import { dirFromSlots } from "./dir.ts";
import { DomError } from "./errors.ts";
import { isNodeId, type NodeId } from "./ids.ts";
import { ID_ATTR, invalidCharIndex } from "./names.ts";
import { makeTree, PAGE_BITS, PAGE_MASK, type Rec, type Tree } from "./tree.ts";
import { readXmlDecl, type StrataHeader, startsWithXmlDecl } from "./xml-decl.ts";
import { checkDeclaredEncoding, decodeInput } from "./xml-input.ts";
import { type ReadElement, readDocument } from "./xml-reader.ts";
import { Positions } from "./xml-text.ts";

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
  /** Deepest element nesting accepted: at most, and by default, {@link MAX_DEPTH} (1,000). */
  readonly maxDepth?: number;
}

export const DEFAULT_MAX_XML_BYTES = 32 * 1024 * 1024;
/** The default (and largest) `maxDepth`: the tree depth limit, {@link MAX_DEPTH}. */
export const DEFAULT_MAX_XML_DEPTH = MAX_DEPTH;

/**
 * Reads XML into a tree. Accepts the canonical form (ids in `_id`, `<?strata hwm fixed?>`), and
 * hand-written XML where no element has `_id` (ids are then minted 1, 2, … in document order and the
 * root is the only fixed element). Bytes are decoded as their byte-order mark and encoding
 * declaration say (UTF-8, UTF-16, ISO-8859-1, US-ASCII). Linear in the input. Throws `DomError`
 * (`bad-xml`, `bad-name`, `bad-text`, `mixed-content`, `bad-id`, `too-large`) with line and column
 * for every document that is not well-formed or lies outside strata's subset (DOM-18, DOM-19).
 */
export function parseXml(input: string | Uint8Array, options: ParseXmlOptions = {}): Tree {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_XML_BYTES;
  const maxDepth = options.maxDepth ?? MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 1 || maxDepth > MAX_DEPTH)
    throw new DomError("bad-op", `maxDepth must be an integer from 1 to ${MAX_DEPTH} (MAX_DEPTH: no tree is deeper), got ${maxDepth}`);
  const size = typeof input === "string" ? input.length : input.byteLength;
  if (size > maxBytes)
    throw new DomError("too-large", `XML input is ${size} bytes; the limit is ${maxBytes} (raise maxBytes to accept it)`);
  const { text, encoding } = decodeInput(input);
  const pos = new Positions(text);
  const bad = invalidCharIndex(text);
  if (bad >= 0) {
    const code = text.charCodeAt(bad).toString(16).toUpperCase().padStart(4, "0");
    throw pos.error("bad-text", `character U+${code} is not allowed in XML`, bad);
  }
  const decl = startsWithXmlDecl(text) ? readXmlDecl(text, pos) : undefined;
  checkDeclaredEncoding(encoding, decl?.encoding, pos, 0);
  const doc = readDocument(text, decl?.end ?? 0, pos, maxDepth);
  return assemble(doc.elements, doc.header, pos);
}

function assemble(nodes: ReadElement[], scanned: StrataHeader | undefined, pos: Positions): Tree {
  const header = scanned?.attrs;
  const at = scanned?.offset ?? 0;
  const withIds = (nodes[0] as ReadElement).explicitId !== undefined;
  const ids: number[] = new Array(nodes.length);
  let maxId = 0;
  const seen = new Set<number>();
  for (let i = 0; i < nodes.length; i++) {
    const b = nodes[i] as ReadElement;
    if ((b.explicitId !== undefined) !== withIds)
      throw pos.error(
        "bad-id",
        `either every element carries ${ID_ATTR} or none does; <${b.tag}> ${withIds ? "lacks" : "has"} one`,
        b.offset,
      );
    const id = withIds ? (b.explicitId as number) : i + 1;
    if (withIds) {
      if (seen.has(id)) throw pos.error("bad-id", `${ID_ATTR}="${id}" is used twice`, b.offset);
      seen.add(id);
    }
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
      const parentIndex = (nodes[i] as ReadElement).parentIndex;
      if (parentIndex >= 0 && !fixedSet.has(ids[parentIndex] as number))
        throw pos.error("bad-xml", `fixed element ${f} has a parent that is not fixed; the skeleton must be closed upwards`, at);
    }
  }

  const slots: (Rec | undefined)[][] = [];
  for (let i = 0; i < nodes.length; i++) {
    const b = nodes[i] as ReadElement;
    const id = ids[i] as number;
    const parent = b.parentIndex >= 0 ? (ids[b.parentIndex] as number) : 0;
    let prev = 0;
    let next = 0;
    if (b.parentIndex >= 0) {
      // kids of the parent were pushed in order; siblings are found through the parent's list.
      const kids = (nodes[b.parentIndex] as ReadElement).kids;
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
