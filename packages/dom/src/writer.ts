/**
 * A transient, single-use builder of the next version (like a Clojure transient). The first write
 * to a page copies it (and the directory path to it) and the first write to a record copies it;
 * later writes in the same patch mutate those private copies. `finish()` freezes them into a new
 * `Tree`. The base tree is never written, so an op that fails half-way leaves it as it was (DOM-8).
 */
import { DirWriter, dirEntriesReverse } from "./dir.ts";
import type { NodeId } from "./ids.ts";
import { keepStoredText } from "./snapshot.ts";
import { LazyPage, makeTree, PAGE_BITS, PAGE_MASK, type Page, type Rec, type Tree } from "./tree.ts";

/** Anything that can read records: a `Tree` or a `TreeWriter`. */
export interface RecReader {
  rec(id: number): Rec | undefined;
}

export type MutRec = { -readonly [K in keyof Rec]: Rec[K] };

export class TreeWriter implements RecReader {
  hwm: number;
  size: number;
  readonly #dir: DirWriter;
  readonly #ownedPages = new Set<Page>();
  readonly #ownedRecs = new Set<Rec>();

  constructor(readonly base: Tree) {
    this.hwm = base.hwm;
    this.size = base.size;
    this.#dir = new DirWriter(base.dir);
  }

  get rootId(): NodeId {
    return this.base.rootId;
  }

  isFixed(id: number): boolean {
    return this.base.isFixed(id);
  }

  rec(id: number): Rec | undefined {
    if (!this.#dir.changed) return this.base.rec(id);
    const slot = this.#dir.get(id >>> PAGE_BITS);
    if (slot === undefined) return undefined;
    return (slot instanceof LazyPage ? slot.page : slot)[id & PAGE_MASK];
  }

  /** A writable copy of record `id` (which must exist), installed in this version. */
  edit(id: number): MutRec {
    const r = this.rec(id) as Rec;
    if (this.#ownedRecs.has(r)) return r as MutRec;
    const copy: MutRec = { ...r };
    keepStoredText(r, copy);
    this.#install(copy);
    return copy;
  }

  /** Adds a new record; its id must be free. */
  add(r: MutRec): void {
    this.#install(r);
    this.size++;
  }

  /** Removes record `id` (which must exist). */
  remove(id: number): void {
    this.#writablePage(id >>> PAGE_BITS)[id & PAGE_MASK] = undefined;
    this.size--;
  }

  /** Largest live id, or 0 for an empty tree (used to validate lowering the high-water mark). */
  maxLiveId(): number {
    const w = this.#dir.changed ? this.#dir.view() : this.base.dir;
    for (const [i, slot] of dirEntriesReverse(w)) {
      const page = slot instanceof LazyPage ? slot.page : slot;
      for (let j = page.length - 1; j >= 0; j--) if (page[j] !== undefined) return i * (PAGE_MASK + 1) + j;
    }
    return 0;
  }

  /** True when nothing was written: `finish()` will return the base tree itself. */
  get unchanged(): boolean {
    return !this.#dir.changed && this.hwm === this.base.hwm;
  }

  /** Freezes the written records and pages into a new version. */
  finish(): Tree {
    if (this.unchanged) return this.base;
    for (const r of this.#ownedRecs) Object.freeze(r);
    for (const p of this.#ownedPages) {
      const page = p as (Rec | undefined)[];
      let n = page.length;
      while (n > 0 && page[n - 1] === undefined) n--;
      page.length = n;
      Object.freeze(page);
    }
    // Empty pages become holes, so the directory does not keep dead pages alive.
    for (const p of this.#ownedPages) if (p.length === 0) this.#dir.set(this.#pageNumber(p), undefined);
    this.#ownedRecs.clear();
    this.#ownedPages.clear();
    this.#pageNumbers.clear();
    return makeTree(this.hwm, this.base.rootId, this.base.fixed, this.size, this.#dir.finish());
  }

  readonly #pageNumbers = new Map<Page, number>();

  #pageNumber(p: Page): number {
    return this.#pageNumbers.get(p) as number;
  }

  #install(r: MutRec): void {
    this.#writablePage(r.id >>> PAGE_BITS)[r.id & PAGE_MASK] = r;
    this.#ownedRecs.add(r);
  }

  #writablePage(i: number): (Rec | undefined)[] {
    const slot = this.#dir.get(i);
    if (slot !== undefined && !(slot instanceof LazyPage) && this.#ownedPages.has(slot)) return slot as (Rec | undefined)[];
    // Spread, not slice(): V8 (Node 20) slices a frozen page ~20× slower (24 µs) than it spreads one
    // (holes become undefined, which is what a page's holes mean).
    const page: (Rec | undefined)[] = slot === undefined ? [] : [...(slot instanceof LazyPage ? slot.page : slot)];
    this.#dir.set(i, page);
    this.#ownedPages.add(page);
    this.#pageNumbers.set(page, i);
    return page;
  }
}
