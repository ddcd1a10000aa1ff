/**
 * The immutable tree (DOM-1 … DOM-4). A `Tree` is one version of the session tree: a two-level
 * map from node id to an immutable record, split into pages of 256 ids. A new version copies the
 * page directory and the pages it touches and shares everything else, so holding old versions is
 * cheap and an edit costs the same at 100,000 elements as at 1,000 (decision 0004).
 *
 * Child order is a doubly linked list through the records (`first`/`last` on the parent,
 * `prev`/`next` on siblings), so inserting under a parent with 100,000 children touches three
 * records, not an array of 100,000 ids.
 */
import { type Dir, dirEntries, dirGet, dirLength } from "./dir.ts";
import type { NodeId } from "./ids.ts";

export const PAGE_BITS = 8;
/** Ids per page; a page is also the unit of snapshot storage. */
export const PAGE_SIZE = 1 << PAGE_BITS;
export const PAGE_MASK = PAGE_SIZE - 1;

/**
 * Attributes of an element: a frozen object whose keys are in code-unit order and that inherits
 * nothing — its prototype is {@link ATTRS_PROTO}, an empty frozen object of no prototype (attrs.ts).
 */
export type Attrs = Readonly<Record<string, string>>;
/** The prototype of every attribute object: empty, frozen, itself of no prototype (nothing is inherited). */
export const ATTRS_PROTO: object = Object.freeze(Object.create(null) as object);
export const NO_ATTRS: Attrs = Object.freeze(Object.create(ATTRS_PROTO) as Record<string, string>);

/**
 * The stored form of one element. Pointers are node ids, `0` meaning none. Records are frozen
 * once a version is built and shared between versions until changed.
 */
export interface Rec {
  readonly id: NodeId;
  readonly tag: string;
  readonly attrs: Attrs;
  readonly text: string;
  readonly parent: number;
  readonly prev: number;
  readonly next: number;
  readonly first: number;
  readonly last: number;
}

/** Up to {@link PAGE_SIZE} records, indexed by `id & PAGE_MASK`; holes are free ids. */
export type Page = readonly (Rec | undefined)[];

/**
 * A page that is loaded on first use (snapshots stored as pages, decision 0003). The loaded page is
 * cached in this object, which every version that shares the slot also shares: a cache, not state.
 * An evictable page (DOM-43) is one of a bounded number loaded at a time, process-wide: when more
 * are loaded, the page cache drops the one read least recently (by a clock), and the next read
 * loads it again from its `ref`. Its records are equal, not identical, to the dropped ones.
 */
export class LazyPage {
  #page: Page | undefined;
  /** Set on each read of the loaded page; the page cache's clock hand clears it. */
  #used = false;
  readonly #evictable: boolean;
  constructor(
    /** Opaque reference the loader understands (e.g. a content hash). */
    readonly ref: string,
    private readonly loader: (ref: string) => Page,
    options: { readonly evictable?: boolean } = {},
  ) {
    this.#evictable = options.evictable === true;
  }
  get page(): Page {
    const p = this.#page;
    if (p !== undefined) {
      this.#used = true;
      return p;
    }
    const loaded = this.loader(this.ref);
    this.#page = loaded;
    if (this.#evictable) PAGES.admit(this);
    return loaded;
  }
  get loaded(): boolean {
    return this.#page !== undefined;
  }
  get evictable(): boolean {
    return this.#evictable;
  }
  /** @internal the clock hand's visit: a page read since the last visit is kept (false), else dropped (true). */
  static sweep(p: LazyPage): boolean {
    if (p.#used) {
      p.#used = false;
      return false;
    }
    p.#page = undefined;
    return true;
  }
}

/** Evictable pages loaded at most at once by default (DOM-43): 131,072 ids. */
export const PAGE_CACHE_LIMIT = 512;

/**
 * The loaded evictable pages of the process (DOM-43), a clock: a page read since the hand last
 * passed it gets another round; the first one not read is dropped to admit a new one.
 */
class PageCache {
  readonly #ring: LazyPage[] = [];
  #hand = 0;
  #limit = PAGE_CACHE_LIMIT;

  get limit(): number {
    return this.#limit;
  }
  /** Sets how many evictable pages may be loaded at once (at least 1); extra loaded ones are dropped. */
  set limit(n: number) {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`the page cache limit must be a positive integer, got ${n}`);
    this.#limit = n;
    while (this.#ring.length > n) {
      const victim = this.#ring.pop() as LazyPage;
      while (!LazyPage.sweep(victim));
    }
    if (this.#hand >= this.#ring.length) this.#hand = 0;
  }
  /** Evictable pages loaded now. */
  get loaded(): number {
    return this.#ring.length;
  }
  admit(p: LazyPage): void {
    const ring = this.#ring;
    if (ring.length < this.#limit) {
      ring.push(p);
      return;
    }
    // Ends within two turns: each visit of a kept page clears its mark.
    for (;;) {
      const victim = ring[this.#hand] as LazyPage;
      const dropped = LazyPage.sweep(victim);
      if (dropped) ring[this.#hand] = p;
      this.#hand = (this.#hand + 1) % ring.length;
      if (dropped) return;
    }
  }
}

/** The process-wide cache of evictable pages (DOM-43): `pageCache.limit` reads or sets its size in pages. */
const PAGES = new PageCache();
export const pageCache: { limit: number; readonly loaded: number } = PAGES;

export type Slot = Page | LazyPage | undefined;

export function pageOf(slot: Slot): Page | undefined {
  return slot instanceof LazyPage ? slot.page : slot;
}

/** Read access to an element of one version. Views are cheap and made on demand. */
export interface Element {
  readonly id: NodeId;
  readonly tag: string;
  /** Attributes in canonical (code-unit) order. */
  readonly attrs: Attrs;
  /** Own text content; `""` for an element with children (DOM-4). */
  readonly text: string;
  readonly parent: Element | null;
  readonly children: readonly Element[];
  readonly firstChild: Element | null;
  readonly lastChild: Element | null;
  readonly prevSibling: Element | null;
  readonly nextSibling: Element | null;
  /** The value of attribute `name`, or `undefined`. */
  attr(name: string): string | undefined;
  /** Text of this element and all its descendants, in document order. */
  textContent(): string;
  /** The version this view reads. */
  readonly tree: Tree;
}

/** One immutable version of a session tree. Create with `emptyTree`, `parseXml`, `fromSnapshot`. */
export class Tree {
  /** @internal use {@link makeTree} */
  constructor(
    /** High-water mark: the largest id ever minted or accepted; the next minted id is `hwm + 1`. */
    readonly hwm: number,
    /** Id of the root element. */
    readonly rootId: NodeId,
    /** Ids of the fixed skeleton (sorted): they cannot be removed or moved. */
    readonly fixed: readonly NodeId[],
    /** Number of elements. */
    readonly size: number,
    /** @internal page directory: page `i` holds ids `i * PAGE_SIZE …`. */
    readonly dir: Dir,
  ) {
    Object.freeze(this);
  }

  /** @internal the stored record of `id`, or `undefined`. */
  rec(id: number): Rec | undefined {
    const i = id >>> PAGE_BITS;
    const dir = this.dir;
    let node = dir.root as readonly unknown[] | undefined;
    if (node === undefined) return undefined;
    if (dir.height > 1) {
      if (i >= 64 ** dir.height) return undefined;
      for (let shift = (dir.height - 1) * 6; shift > 0; shift -= 6) {
        node = node[(i >>> shift) & 63] as readonly unknown[] | undefined;
        if (node === undefined) return undefined;
      }
    } else if (i >= 64) return undefined;
    const slot = node[i & 63] as Slot;
    if (slot === undefined) return undefined;
    return (slot instanceof LazyPage ? slot.page : slot)[id & PAGE_MASK];
  }

  /** True when the tree has an element with this id. */
  has(id: number): boolean {
    return Number.isInteger(id) && id > 0 && this.rec(id) !== undefined;
  }

  /** A view of element `id`, or `undefined` when the tree has none. */
  get(id: number): Element | undefined {
    const r = Number.isInteger(id) && id > 0 ? this.rec(id) : undefined;
    return r === undefined ? undefined : new ElementView(this, r);
  }

  /** The root element. */
  get root(): Element {
    return new ElementView(this, this.rec(this.rootId) as Rec);
  }

  /** True when `id` is part of the fixed skeleton. */
  isFixed(id: number): boolean {
    return binarySearch(this.fixed, id);
  }

  /** Ids of the children of `id`, in order. */
  childIds(id: number): NodeId[] {
    const out: NodeId[] = [];
    const r = this.rec(id);
    for (let c = r === undefined ? 0 : r.first; c !== 0; c = (this.rec(c) as Rec).next) out.push(c as NodeId);
    return out;
  }

  /** @internal the slot of page `i`. */
  slotAt(i: number): Slot {
    return dirGet(this.dir, i);
  }

  /** One more than the last page number in use: slots `0 … pageCount - 1` describe the tree. */
  get pageCount(): number {
    return dirLength(this.dir);
  }

  /** @internal present page slots, in page order. */
  slotEntries(): Generator<[number, NonNullable<Slot>]> {
    return dirEntries(this.dir);
  }
}

function binarySearch(sorted: readonly number[], x: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = sorted[mid] as number;
    if (v === x) return true;
    if (v < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** @internal */
export function makeTree(hwm: number, rootId: number, fixed: readonly number[], size: number, dir: Dir): Tree {
  return new Tree(hwm, rootId as NodeId, Object.freeze([...fixed]) as readonly NodeId[], size, dir);
}

class ElementView implements Element {
  constructor(
    readonly tree: Tree,
    private readonly r: Rec,
  ) {}
  get id(): NodeId {
    return this.r.id;
  }
  get tag(): string {
    return this.r.tag;
  }
  get attrs(): Attrs {
    return this.r.attrs;
  }
  get text(): string {
    return this.r.text;
  }
  get parent(): Element | null {
    return this.view(this.r.parent);
  }
  get firstChild(): Element | null {
    return this.view(this.r.first);
  }
  get lastChild(): Element | null {
    return this.view(this.r.last);
  }
  get prevSibling(): Element | null {
    return this.view(this.r.prev);
  }
  get nextSibling(): Element | null {
    return this.view(this.r.next);
  }
  get children(): readonly Element[] {
    const out: Element[] = [];
    for (let c = this.r.first; c !== 0; ) {
      const cr = this.tree.rec(c) as Rec;
      out.push(new ElementView(this.tree, cr));
      c = cr.next;
    }
    return out;
  }
  attr(name: string): string | undefined {
    return Object.hasOwn(this.r.attrs, name) ? this.r.attrs[name] : undefined;
  }
  textContent(): string {
    return textContent(this.tree, this.r);
  }
  toJSON(): unknown {
    return { id: this.r.id, tag: this.r.tag, attrs: this.r.attrs, text: this.r.text };
  }
  private view(id: number): Element | null {
    return id === 0 ? null : new ElementView(this.tree, this.tree.rec(id) as Rec);
  }
}

/** Text of `r` and its descendants in document order (iterative: trees may be deep). */
export function textContent(tree: Tree, r: Rec): string {
  if (r.first === 0) return r.text;
  let out = "";
  const stack: number[] = [r.first];
  while (stack.length > 0) {
    const id = stack.pop() as number;
    const c = tree.rec(id) as Rec;
    if (c.next !== 0) stack.push(c.next);
    if (c.first !== 0) stack.push(c.first);
    else out += c.text;
  }
  return out;
}

/** Calls `visit` for `r` and each descendant in document order (pre-order, iterative). */
export function walk(tree: Tree, rootId: number, visit: (r: Rec, depth: number) => void): void {
  const root = tree.rec(rootId);
  if (root === undefined) return;
  visit(root, 0);
  const stack: Array<[number, number]> = [];
  if (root.first !== 0) stack.push([root.first, 1]);
  while (stack.length > 0) {
    const [id, depth] = stack.pop() as [number, number];
    const c = tree.rec(id) as Rec;
    if (c.next !== 0) stack.push([c.next, depth]);
    visit(c, depth);
    if (c.first !== 0) stack.push([c.first, depth + 1]);
  }
}

/** Wraps a record of `tree` as an element view (for modules that hold records). */
export function viewOf(tree: Tree, r: Rec): Element {
  return new ElementView(tree, r);
}
