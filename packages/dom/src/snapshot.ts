/**
 * Canonical snapshot bytes (DOM-21 … DOM-23, decision 0003). A snapshot is JSON of the normalized
 * records in id order plus the high-water mark and the fixed skeleton: equal trees give equal bytes.
 * Pages (256 ids each) are encoded the same way so a store can keep them content-addressed and
 * load them lazily; see {@link encodePage} and {@link treeFromPages}.
 */
import { makeAttrs } from "./attrs.ts";
import { MAX_DEPTH, tooDeep } from "./depth.ts";
import { dirFromSlots } from "./dir.ts";
import { DomError } from "./errors.ts";
import { isNodeId, type NodeId } from "./ids.ts";
import { checkText, invalidCharIndex, nameProblem } from "./names.ts";
import { moveIndex } from "./tagindex.ts";
import { type Attrs, LazyPage, makeTree, PAGE_BITS, PAGE_MASK, type Page, pageOf, type Rec, type Slot, type Tree } from "./tree.ts";

/** The format tag written into every whole-tree snapshot. */
export const SNAPSHOT_FORMAT = "strata-tree@1";

type EncodedRec = [number, string, Record<string, string>, string, number, number, number, number, number];

function encodeRec(r: Rec, text: unknown = r.text): EncodedRec {
  return [r.id, r.tag, r.attrs, text as string, r.parent, r.prev, r.next, r.first, r.last];
}

/** The canonical snapshot of `tree` (a UTF-8 JSON string). */
export function toSnapshot(tree: Tree): string {
  const nodes: EncodedRec[] = [];
  for (const [, slot] of tree.slotEntries()) for (const r of pageOf(slot) as Page) if (r !== undefined) nodes.push(encodeRec(r));
  return JSON.stringify({ format: SNAPSHOT_FORMAT, hwm: tree.hwm, root: tree.rootId, fixed: tree.fixed, size: tree.size, nodes });
}

/** Header fields of a tree, as stored beside its pages. */
export interface TreeHeader {
  readonly hwm: number;
  readonly root: number;
  readonly fixed: readonly number[];
  readonly size: number;
}

/**
 * Reads a snapshot back, validating everything (it may come from an untrusted replica or a corrupt
 * file): format, record shapes, names and text, pointer consistency, reachability from the root,
 * and the fixed skeleton. Throws `bad-snapshot` (or `bad-name`/`bad-text`) saying what is wrong.
 */
export function fromSnapshot(bytes: string | Uint8Array): Tree {
  let data: unknown;
  try {
    data = JSON.parse(typeof bytes === "string" ? bytes : new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    throw new DomError("bad-snapshot", `snapshot is not valid UTF-8 JSON: ${(e as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new DomError("bad-snapshot", "snapshot must be a JSON object");
  const d = data as Record<string, unknown>;
  if (d.format !== SNAPSHOT_FORMAT)
    throw new DomError(
      "bad-snapshot",
      `snapshot format is ${JSON.stringify(d.format)}, expected "${SNAPSHOT_FORMAT}" (a foreign or newer snapshot)`,
    );
  const header = checkHeader(d);
  if (!Array.isArray(d.nodes)) throw new DomError("bad-snapshot", "snapshot.nodes must be an array");
  if (d.nodes.length !== header.size)
    throw new DomError("bad-snapshot", `snapshot.size is ${header.size} but it holds ${d.nodes.length} records`);
  const slots: (Rec | undefined)[][] = [];
  let prevId = 0;
  for (let i = 0; i < d.nodes.length; i++) {
    const r = decodeRec(d.nodes[i], `nodes[${i}]`);
    if (r.id <= prevId) throw new DomError("bad-snapshot", `nodes[${i}]: records must be in ascending id order (${r.id} after ${prevId})`);
    prevId = r.id;
    const p = r.id >>> PAGE_BITS;
    while (slots.length <= p) slots.push(undefined as unknown as (Rec | undefined)[]);
    let page = slots[p];
    if (page === undefined) {
      page = [];
      slots[p] = page;
    }
    page[r.id & PAGE_MASK] = r;
  }
  for (const page of slots) if (page !== undefined) Object.freeze(page);
  const tree = makeTree(header.hwm, header.root, header.fixed, header.size, dirFromSlots(slots));
  if (prevId > header.hwm) throw new DomError("bad-snapshot", `record ${prevId} is above the high-water mark ${header.hwm}`);
  checkStructure(tree);
  return tree;
}

function checkHeader(d: Record<string, unknown>): TreeHeader {
  const { hwm, root, fixed, size } = d;
  if (!isNodeId(hwm)) throw new DomError("bad-snapshot", `snapshot.hwm must be a positive integer, got ${JSON.stringify(hwm)}`);
  if (!isNodeId(root)) throw new DomError("bad-snapshot", `snapshot.root must be a node id, got ${JSON.stringify(root)}`);
  if (typeof size !== "number" || !Number.isInteger(size) || size < 1)
    throw new DomError("bad-snapshot", "snapshot.size must be a positive integer");
  if (!Array.isArray(fixed) || !fixed.every((f, i) => isNodeId(f) && (i === 0 || f > (fixed[i - 1] as number))))
    throw new DomError("bad-snapshot", "snapshot.fixed must be an ascending array of node ids");
  return { hwm, root, fixed: fixed as number[], size };
}

/**
 * Where a record is, for messages: a path (`nodes[3]`), or a page number with `recordIndex` (the
 * message is built only when something is wrong: a page decode checks 256 records).
 */
type Where = string | number;

function place(where: Where, recordIndex: number): string {
  return typeof where === "string" ? where : `page ${where} record ${recordIndex}`;
}

function decodeRec(v: unknown, where: Where, text?: string, defer?: DeferredTexts, recordIndex = 0): Rec {
  try {
    return decodeRecUnchecked(v, where, text, defer, recordIndex);
  } catch (e) {
    if (e instanceof DomError && e.code !== "bad-snapshot") throw new DomError("bad-snapshot", e.message);
    throw e;
  }
}

function checkKnownName(name: unknown, kind: "tag" | "attribute", where: Where, recordIndex: number): void {
  // nameProblem remembers the names it found valid: a page's repeated names cost a set lookup.
  const problem = nameProblem(name, kind);
  if (problem !== undefined) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: ${problem}`);
}

/** checkText, with the message (and its `what`) made only when `value` fails. */
function checkTextAt(value: unknown, where: Where, recordIndex: number, what: string): void {
  if (typeof value !== "string" || invalidCharIndex(value) >= 0) checkText(value, `${place(where, recordIndex)}${what}`);
}

/**
 * Checks and freezes one record; `text`, when given, stands for the record's stored text (a decoded
 * reference). With `defer`, the stored text is a reference read on first use (DOM-42).
 */
function decodeRecUnchecked(v: unknown, where: Where, text?: string, defer?: DeferredTexts, recordIndex = 0): Rec {
  if (!Array.isArray(v) || v.length !== 9)
    throw new DomError("bad-snapshot", `${place(where, recordIndex)} must be a 9-element record array`);
  const id = v[0] as unknown;
  const tag = v[1] as unknown;
  const attrs = v[2] as unknown;
  const t = defer !== undefined ? "" : text === undefined ? (v[3] as unknown) : text;
  const parent = v[4] as unknown;
  const prev = v[5] as unknown;
  const next = v[6] as unknown;
  const first = v[7] as unknown;
  const last = v[8] as unknown;
  if (!isNodeId(id)) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: id must be a node id`);
  checkKnownName(tag, "tag", where, recordIndex);
  if (typeof attrs !== "object" || attrs === null || Array.isArray(attrs))
    throw new DomError("bad-snapshot", `${place(where, recordIndex)}: attrs must be an object`);
  for (const k of Object.keys(attrs)) {
    checkKnownName(k, "attribute", where, recordIndex);
    checkTextAt((attrs as Record<string, unknown>)[k], where, recordIndex, ` attribute ${k}`);
  }
  checkTextAt(t, where, recordIndex, " text");
  if (!isLink(parent)) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: parent must be 0 or a node id`);
  if (!isLink(prev)) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: prev must be 0 or a node id`);
  if (!isLink(next)) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: next must be 0 or a node id`);
  if (!isLink(first)) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: first must be 0 or a node id`);
  if (!isLink(last)) throw new DomError("bad-snapshot", `${place(where, recordIndex)}: last must be 0 or a node id`);
  if (defer !== undefined)
    return defer.rec(v as unknown[], recordIndex, id as NodeId, tag as string, makeAttrs(attrs as Record<string, string>));
  return Object.freeze({
    id: id as NodeId,
    tag: tag as string,
    attrs: makeAttrs(attrs as Record<string, string>),
    text: t as string,
    parent: parent as number,
    prev: prev as number,
    next: next as number,
    first: first as number,
    last: last as number,
  });
}

function isLink(p: unknown): boolean {
  return p === 0 || isNodeId(p);
}

/**
 * Checks that a tree's records form one tree: every child list is consistent in both directions,
 * every element is reachable from the root exactly once, no element mixes text and children, and
 * the fixed skeleton exists and is closed upwards. O(size). A tree deeper than `MAX_DEPTH` fails
 * with `too-large` (DOM-34); every other inconsistency with `bad-snapshot`.
 */
export function checkStructure(tree: Tree): void {
  const fail = (msg: string): never => {
    throw new DomError("bad-snapshot", msg);
  };
  const root = tree.rec(tree.rootId) ?? fail(`root ${tree.rootId} has no record`);
  if (root.parent !== 0 || root.prev !== 0 || root.next !== 0) fail(`root ${root.id} has a parent or siblings`);
  let reached = 1;
  const queue: Rec[] = [root];
  const depths: number[] = [1];
  while (queue.length > 0) {
    const r = queue.pop() as Rec;
    const depth = depths.pop() as number;
    if (depth > MAX_DEPTH) throw tooDeep(`element ${r.id}`, depth);
    if (r.first !== 0 && r.text !== "") fail(`element ${r.id} has both text and children`);
    let prev = 0;
    for (let c = r.first; c !== 0; ) {
      const cr = tree.rec(c) ?? fail(`element ${r.id} lists child ${c}, which has no record`);
      if (cr.parent !== r.id) fail(`element ${c} is listed under ${r.id} but names ${cr.parent} as parent`);
      if (cr.prev !== prev) fail(`element ${c} has prev ${cr.prev}, expected ${prev}`);
      if (++reached > tree.size) fail("child lists contain a cycle or more elements than recorded");
      queue.push(cr);
      depths.push(depth + 1);
      prev = c;
      c = cr.next;
    }
    if (r.last !== prev) fail(`element ${r.id} has last ${r.last}, expected ${prev}`);
  }
  if (reached !== tree.size) fail(`${tree.size - reached} records are not reachable from the root`);
  if (!tree.isFixed(tree.rootId)) fail("the root must be fixed");
  for (const f of tree.fixed) {
    const r = tree.rec(f) ?? fail(`fixed element ${f} does not exist`);
    if (r.parent !== 0 && !tree.isFixed(r.parent)) fail(`fixed element ${f} has a parent that is not fixed`);
  }
}

/**
 * How a store represents record texts inside pages. A store may keep long texts out of pages (a
 * reference to where the text is already stored) as long as `decodeText(encodeText(t))` is `t`.
 */
export interface PageCodec {
  /** The value to store for the text of element `id` (default: the text itself). */
  encodeText?(text: string, id: number): unknown;
  /** The text for a stored non-string value (strings are texts as they are). */
  decodeText?(value: unknown, id: number): string;
  /**
   * DOM-42: decode stored non-string texts on first read of the record's `text`, not while the page
   * is decoded. The page's structure (tags, attributes, links) is checked at once as always; a
   * deferred text is decoded and checked (`bad-snapshot` if it cannot be) when first read, and
   * kept. Before the first deferred text of a page is decoded, `prepareTexts` gets every stored
   * value of the page that is deferred, so a codec can fetch them in one batch.
   */
  readonly deferTexts?: boolean;
  prepareTexts?(values: readonly unknown[]): void;
  /**
   * DOM-43: a record decoded from a page of the same store (deferred, or copied from one by an edit
   * that left its text alone) is written with the stored value it was read from, without reading
   * its text or calling `encodeText`, when this returns true for that value. Only for a codec
   * writing to the store the page came from.
   */
  reuseStored?(value: unknown): boolean;
}

/** Position of the text in an encoded record `[id, tag, attrs, text, parent, prev, next, first, last]`. */
export const RECORD_TEXT = 3;

/** The page of records as JSON (records in id order); canonical when `codec` keeps texts inline. */
export function encodePage(page: Page, codec: PageCodec = {}): string {
  const out: unknown[][] = [];
  const enc = codec.encodeText;
  const reuse = codec.reuseStored;
  for (const r of page) {
    if (r === undefined) continue;
    const stored = reuse !== undefined ? storedTextOf(r) : undefined;
    if (stored !== undefined && (reuse as (v: unknown) => boolean)(stored)) {
      out.push(encodeRec(r, stored));
      continue;
    }
    const rec: unknown[] = encodeRec(r);
    if (enc !== undefined && r.text !== "") {
      const v = enc(r.text, r.id);
      // Strings are read back as themselves; a stored form must be some other JSON value.
      if (typeof v === "string" && v !== r.text)
        throw new DomError("bad-op", "a PageCodec must store a text as itself or as a non-string value");
      rec[RECORD_TEXT] = v;
    }
    out.push(rec);
  }
  return JSON.stringify(out);
}

/**
 * Decodes page number `index` from JSON (or already parsed records), checking every record and that
 * each id belongs to this page. `codec.decodeText` turns stored text values back into texts.
 */
export function decodePage(index: number, input: string | Uint8Array | readonly unknown[], codec: PageCodec = {}): Page {
  let data: unknown = input;
  if (typeof input === "string" || input instanceof Uint8Array) {
    try {
      data = JSON.parse(typeof input === "string" ? input : new TextDecoder("utf-8", { fatal: true }).decode(input));
    } catch (e) {
      throw new DomError("bad-snapshot", `page ${index} is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (!Array.isArray(data)) throw new DomError("bad-snapshot", `page ${index} must be an array of records`);
  const dec = codec.decodeText;
  const deferred = dec !== undefined && codec.deferTexts === true ? new DeferredTexts(index, dec, codec.prepareTexts) : undefined;
  const page: (Rec | undefined)[] = [];
  let prev = 0;
  for (let i = 0; i < data.length; i++) {
    const raw = data[i] as unknown;
    const stored = dec !== undefined && Array.isArray(raw) && raw.length === 9 && typeof raw[RECORD_TEXT] !== "string";
    let r: Rec;
    if (stored && deferred !== undefined) r = decodeRec(raw, index, undefined, deferred, i);
    else
      r = decodeRec(
        raw,
        index,
        stored ? (dec as (v: unknown, id: number) => string)((raw as unknown[])[RECORD_TEXT], raw[0] as number) : undefined,
        undefined,
        i,
      );
    if (r.id >>> PAGE_BITS !== index)
      throw new DomError("bad-snapshot", `page ${index} holds record ${r.id}, which belongs to page ${r.id >>> PAGE_BITS}`);
    if (r.id <= prev) throw new DomError("bad-snapshot", `page ${index}: records must be in ascending id order (${r.id} after ${prev})`);
    prev = r.id;
    page[r.id & PAGE_MASK] = r;
  }
  return Object.freeze(page);
}

/**
 * The deferred texts of one decoded page (DOM-42): it hands every deferred value of the page to
 * `prepare` once, before the first of them is decoded.
 */
class DeferredTexts {
  readonly #values: unknown[] = [];
  #prepared = false;

  constructor(
    readonly index: number,
    private readonly decode: (value: unknown, id: number) => string,
    private readonly prepare: ((values: readonly unknown[]) => void) | undefined,
  ) {}

  /** The record of encoded record `v` (record `i` of the page, its fields checked), its text read on first use. */
  rec(v: readonly unknown[], i: number, id: NodeId, tag: string, attrs: Attrs): Rec {
    const value = v[RECORD_TEXT];
    this.#values.push(value);
    return new DeferredRec(this, i, value, id, tag, attrs, v) as Rec;
  }

  /** Decodes and checks the deferred text `value` of record `i` (its first read). */
  load(value: unknown, i: number, id: number): string {
    this.#prepareOnce();
    const t = this.decode(value, id);
    try {
      checkText(t, `page ${this.index} record ${i} text`);
    } catch (e) {
      if (e instanceof DomError) throw new DomError("bad-snapshot", e.message);
      throw e;
    }
    return t;
  }

  /** Prepares the page's texts once; one that throws (its texts not fetched yet) is prepared again on the next read. */
  #prepareOnce(): void {
    if (this.#prepared) return;
    this.prepare?.(this.#values);
    this.#prepared = true;
    this.#values.length = 0;
  }
}

/**
 * A record whose text is decoded on first read. `text` is an own enumerable accessor (one shared
 * getter, so records of one shape share their hidden class): spreads, copies and equality read
 * the text like a data property. The state is in private fields, which freezing leaves writable:
 * the stored value (never a string: strings are stored as themselves), and the text once read.
 */
class DeferredRec {
  declare readonly id: NodeId;
  declare readonly tag: string;
  declare readonly attrs: Attrs;
  declare readonly text: string;
  declare readonly parent: number;
  declare readonly prev: number;
  declare readonly next: number;
  declare readonly first: number;
  declare readonly last: number;
  readonly #stored: unknown;
  #text: string | undefined;
  readonly #page: DeferredTexts;
  readonly #i: number;

  constructor(page: DeferredTexts, i: number, value: unknown, id: NodeId, tag: string, attrs: Attrs, v: readonly unknown[]) {
    this.#page = page;
    this.#i = i;
    this.#stored = value;
    const self = this as unknown as Record<string, unknown>;
    self.id = id;
    self.tag = tag;
    self.attrs = attrs;
    Object.defineProperty(this, "text", TEXT);
    self.parent = v[4];
    self.prev = v[5];
    self.next = v[6];
    self.first = v[7];
    self.last = v[8];
    Object.freeze(this);
  }

  /** The value record `r` was stored with (its text unread or read), or undefined for any other record. */
  static storedOf(r: object): unknown {
    return #stored in r ? (r as DeferredRec).#stored : undefined;
  }

  static textOf(r: DeferredRec): string {
    r.#text ??= r.#page.load(r.#stored, r.#i, r.id);
    return r.#text;
  }
}

/**
 * Stored text values of records copied from a deferred one whose text the copy still has (an edit
 * of its links or attributes): the copy is written with the same value (DOM-43).
 */
const copiedStored = new WeakMap<Rec, { readonly text: string; readonly stored: unknown }>();

/** @internal the stored value `r`'s text was read from, if `r` came from a page of a store and still has that text. */
export function storedTextOf(r: Rec): unknown {
  const own = DeferredRec.storedOf(r);
  if (own !== undefined) return own;
  const copied = copiedStored.get(r);
  return copied !== undefined && copied.text === r.text ? copied.stored : undefined;
}

/** @internal called by the tree writer when it copies `from` into `to` (an edit): `to` keeps the stored text value while its text stays. */
export function keepStoredText(from: Rec, to: Rec): void {
  const stored = storedTextOf(from);
  if (stored !== undefined) copiedStored.set(to, { text: to.text, stored });
}

const TEXT: PropertyDescriptor = {
  enumerable: true,
  configurable: false,
  get(this: DeferredRec): string {
    return DeferredRec.textOf(this);
  },
};

/** The header of `tree` (what a paged snapshot stores beside its page references). */
export function headerOf(tree: Tree): TreeHeader {
  return { hwm: tree.hwm, root: tree.rootId, fixed: tree.fixed, size: tree.size };
}

/**
 * The slots of `tree` for pages `0 … pageCount - 1`: a loaded page, an unloaded lazy page (whose
 * `ref` a store can reuse without loading it), or `undefined` for an empty page.
 */
export function slotsOf(tree: Tree): Slot[] {
  const out: Slot[] = new Array(tree.pageCount).fill(undefined);
  for (const [i, slot] of tree.slotEntries()) out[i] = slot;
  return out;
}

/**
 * A tree whose pages are loaded on first touch. `refs[i]` names page `i` (or is undefined for an
 * empty page); `load(ref)` returns the encoded page. Pages are validated as they load; the
 * structure across pages is trusted (the store verifies snapshots against replay).
 */
export function treeFromPages(
  header: TreeHeader,
  refs: readonly (string | null | undefined)[],
  load: (ref: string, index: number) => string | Uint8Array,
  codec: PageCodec = {},
): Tree {
  return lazyTree(header, refs, (ref, i) => decodePage(i, load(ref, i), codec));
}

/** Like {@link treeFromPages}, with a loader that returns decoded pages (see {@link decodePage}). */
export function lazyTree(
  header: TreeHeader,
  refs: readonly (string | null | undefined)[],
  load: (ref: string, index: number) => Page,
  options: { readonly evictable?: boolean } = {},
): Tree {
  const slots: Slot[] = refs.map((ref, i) =>
    ref === undefined || ref === null ? undefined : new LazyPage(ref, (r) => load(r, i), options),
  );
  return makeTree(header.hwm, header.root, header.fixed, header.size, dirFromSlots(slots));
}

/**
 * The same version as `tree`, with each page for which `stored(index, slot)` names a stored copy
 * replaced by an evictable lazy page that loads that copy through `load` (DOM-43): how a live
 * writer lets go of the pages its snapshots hold, so its memory stays bounded. `stored` is asked
 * about loaded pages and lazy pages that are not evictable. The tag index moves to the new
 * version. Returns `tree` itself when nothing was replaced.
 */
export function withStoredPages(
  tree: Tree,
  stored: (index: number, slot: Page | LazyPage) => string | undefined,
  load: (ref: string, index: number) => Page,
): Tree {
  let replaced = 0;
  const slots = slotsOf(tree).map((slot, i) => {
    if (slot === undefined || (slot instanceof LazyPage && slot.evictable)) return slot;
    const ref = stored(i, slot);
    if (ref === undefined) return slot;
    replaced++;
    return new LazyPage(ref, (r) => load(r, i), { evictable: true });
  });
  if (replaced === 0) return tree;
  const next = makeTree(tree.hwm, tree.rootId, tree.fixed, tree.size, dirFromSlots(slots));
  moveIndex(tree, next);
  return next;
}

/** Every page of `tree` encoded (loading lazy pages), with the header: a paged snapshot. */
export function toPages(tree: Tree, codec: PageCodec = {}): { header: TreeHeader; pages: (string | undefined)[] } {
  return { header: headerOf(tree), pages: slotsOf(tree).map((s) => (s === undefined ? undefined : encodePage(pageOf(s) as Page, codec))) };
}
