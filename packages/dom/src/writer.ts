/**
 * A transient, single-use builder of the next version (like a Clojure transient). The first write
 * to a page copies it and the first write to a record copies it; later writes in the same patch
 * mutate those private copies. `finish()` freezes them into a new `Tree`. The base tree is never
 * written, so an op that fails half-way leaves it exactly as it was (DOM-8).
 */
import type { NodeId } from "./ids.ts";
import { LazyPage, makeTree, PAGE_BITS, PAGE_MASK, type Page, type Rec, type Slot, type Tree } from "./tree.ts";

/** Anything that can read records: a `Tree` or a `TreeWriter`. */
export interface RecReader {
  rec(id: number): Rec | undefined;
}

export type MutRec = { -readonly [K in keyof Rec]: Rec[K] };

export class TreeWriter implements RecReader {
  hwm: number;
  size: number;
  private slots: Slot[] | undefined;
  private readonly ownedPages = new Set<Page>();
  private readonly ownedRecs = new Set<Rec>();

  constructor(readonly base: Tree) {
    this.hwm = base.hwm;
    this.size = base.size;
  }

  get rootId(): NodeId {
    return this.base.rootId;
  }

  isFixed(id: number): boolean {
    return this.base.isFixed(id);
  }

  rec(id: number): Rec | undefined {
    const slot = (this.slots ?? this.base.slots)[id >>> PAGE_BITS];
    if (slot === undefined) return undefined;
    return (slot instanceof LazyPage ? slot.page : slot)[id & PAGE_MASK];
  }

  /** A writable copy of record `id` (which must exist), installed in this version. */
  edit(id: number): MutRec {
    const r = this.rec(id) as Rec;
    if (this.ownedRecs.has(r)) return r as MutRec;
    const copy: MutRec = { ...r };
    this.install(copy);
    return copy;
  }

  /** Adds a new record; its id must be free. */
  add(r: MutRec): void {
    this.install(r);
    this.size++;
  }

  /** Removes record `id` (which must exist). */
  remove(id: number): void {
    this.writablePage(id >>> PAGE_BITS)[id & PAGE_MASK] = undefined;
    this.size--;
  }

  /** Largest live id, or 0 for an empty tree (used to validate lowering the high-water mark). */
  maxLiveId(): number {
    const slots = this.slots ?? this.base.slots;
    for (let i = slots.length - 1; i >= 0; i--) {
      const slot = slots[i];
      if (slot === undefined) continue;
      const page = slot instanceof LazyPage ? slot.page : slot;
      for (let j = page.length - 1; j >= 0; j--) if (page[j] !== undefined) return (i << PAGE_BITS) | j;
    }
    return 0;
  }

  /** True when nothing was written: `finish()` will return the base tree itself. */
  get unchanged(): boolean {
    return this.slots === undefined && this.hwm === this.base.hwm;
  }

  /** Freezes the written records and pages into a new version. */
  finish(): Tree {
    if (this.unchanged) return this.base;
    for (const r of this.ownedRecs) Object.freeze(r);
    const slots = this.slots ?? [...this.base.slots];
    for (const p of this.ownedPages) {
      const page = p as (Rec | undefined)[];
      let n = page.length;
      while (n > 0 && page[n - 1] === undefined) n--;
      page.length = n;
      Object.freeze(page);
    }
    // Empty pages become holes so the directory does not keep dead slots alive.
    for (let i = 0; i < slots.length; i++) if ((slots[i] as Page | undefined)?.length === 0) slots[i] = undefined;
    let n = slots.length;
    while (n > 0 && slots[n - 1] === undefined) n--;
    slots.length = n;
    this.ownedRecs.clear();
    this.ownedPages.clear();
    return makeTree(this.hwm, this.base.rootId, this.base.fixed, this.size, slots);
  }

  private install(r: MutRec): void {
    this.writablePage(r.id >>> PAGE_BITS)[r.id & PAGE_MASK] = r;
    this.ownedRecs.add(r);
  }

  private writablePage(i: number): (Rec | undefined)[] {
    if (this.slots === undefined) this.slots = [...this.base.slots];
    const slot = this.slots[i];
    if (slot !== undefined && !(slot instanceof LazyPage) && this.ownedPages.has(slot)) return slot as (Rec | undefined)[];
    const page: (Rec | undefined)[] = slot === undefined ? [] : (slot instanceof LazyPage ? slot.page : slot).slice();
    while (this.slots.length <= i) this.slots.push(undefined);
    this.slots[i] = page;
    this.ownedPages.add(page);
    return page;
  }
}
