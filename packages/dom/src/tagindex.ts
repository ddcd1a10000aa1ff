/**
 * A tag index for fast selectors on big trees (DOM-33). For each tag, the ids of its elements in
 * document order, so a selector whose every alternative names a tag (`call[status=running]`,
 * `todo item[status!=completed]`) tests only elements of that tag instead of walking the tree.
 *
 * Document order is kept as an order label per element (a float; integers when built, midpoints
 * when something is inserted between two elements). Building costs one walk of the tree; after
 * that, `advanceIndex(before, after, effect)` carries the index from a version to the next in time
 * proportional to the patch, from what the patch did (its `PatchEffect`) (appends at the end, the common case, are O(1) per element). An index
 * belongs to one version at a time: carrying it moves it, and a version without one falls back to
 * a full traversal (or builds one when it is queried on a large tree).
 *
 * The index is a cache, never state (L1): it is derived from a tree and can be dropped at any time.
 */
import type { PatchEffect } from "./effect.ts";
import type { Rec, Tree } from "./tree.ts";

/** Trees with at least this many elements get an index on their first indexed query. */
export const INDEX_MIN_SIZE = 2_048;

const attached = new WeakMap<Tree, TagIndex>();

export class TagIndex {
  /** Document-order label of every element. */
  readonly #label = new Map<number, number>();
  /** Tag → ids, sorted by label. */
  readonly #lists = new Map<string, number[]>();
  /** `tag attr` → value → ids sorted by label, for the (tag, attribute) pairs queried so far. */
  readonly #values = new Map<string, Map<string, number[]>>();
  /** tag → the attributes indexed for it. */
  readonly #attrsOf = new Map<string, Set<string>>();

  /** Builds the index of `tree` in one walk (labels 1, 2, 3 … in document order). */
  static build(tree: Tree): TagIndex {
    const index = new TagIndex();
    let n = 0;
    const stack: number[] = [tree.rootId];
    while (stack.length > 0) {
      const id = stack.pop() as number;
      const r = tree.rec(id) as Rec;
      index.#label.set(id, ++n);
      index.#push(r.tag, id);
      // children pushed last-first so the first child pops next
      let c = r.last;
      while (c !== 0) {
        stack.push(c);
        c = (tree.rec(c) as Rec).prev;
      }
    }
    return index;
  }

  /** The elements with tag `tag`, in document order (do not mutate). */
  ids(tag: string): readonly number[] {
    return this.#lists.get(tag) ?? [];
  }

  /**
   * The elements with tag `tag` whose attribute `attr` is `value`, in document order. The first
   * query of a (tag, attr) pair indexes it from the tag's list (one pass); later patches keep it.
   */
  withAttr(tree: Tree, tag: string, attr: string, value: string): readonly number[] {
    const key = `${tag} ${attr}`;
    let byValue = this.#values.get(key);
    if (byValue === undefined) {
      byValue = new Map();
      for (const id of this.ids(tag)) {
        const v = (tree.rec(id) as Rec).attrs[attr];
        if (v === undefined) continue;
        let list = byValue.get(v);
        if (list === undefined) byValue.set(v, (list = []));
        list.push(id);
      }
      this.#values.set(key, byValue);
      let attrs = this.#attrsOf.get(tag);
      if (attrs === undefined) this.#attrsOf.set(tag, (attrs = new Set()));
      attrs.add(attr);
    }
    return byValue.get(value) ?? [];
  }

  /** Where `id` (labelled) sits in a label-sorted list: appends at the end cost no search. */
  #sorted(list: readonly number[], id: number): number {
    const label = this.#label.get(id) as number;
    const last = list[list.length - 1];
    if (last === undefined || (this.#label.get(last) as number) < label) return list.length;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#label.get(list[mid] as number) as number) < label) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds `id` to, or removes it from, a label-sorted list. */
  #place(list: number[], id: number, add: boolean): void {
    const at = this.#sorted(list, id);
    if (add) {
      if (list[at] !== id) list.splice(at, 0, id);
    } else if (list[at] === id) list.splice(at, 1);
  }

  /** Adds (or removes) `id` to the value lists of its indexed attributes, as `r` has them. */
  #byValue(r: Rec, id: number, add: boolean): void {
    const attrs = this.#attrsOf.get(r.tag);
    if (attrs === undefined) return;
    for (const attr of attrs) {
      const v = r.attrs[attr];
      if (v === undefined) continue;
      const byValue = this.#values.get(`${r.tag} ${attr}`) as Map<string, number[]>;
      let list = byValue.get(v);
      if (list === undefined) {
        if (!add) continue;
        byValue.set(v, (list = []));
      }
      this.#place(list, id, add);
    }
  }

  get size(): number {
    return this.#label.size;
  }

  /** The document-order label of `id` (undefined: not in the tree). */
  label(id: number): number | undefined {
    return this.#label.get(id);
  }

  #push(tag: string, id: number): void {
    let list = this.#lists.get(tag);
    if (list === undefined) this.#lists.set(tag, (list = []));
    list.push(id);
  }

  /** Adds `id` (already labelled) to its tag's list, or removes it (and its label). */
  #tagged(tag: string, id: number, add: boolean): void {
    let list = this.#lists.get(tag);
    if (list === undefined) {
      if (!add) return;
      this.#lists.set(tag, (list = []));
    }
    this.#place(list, id, add);
    if (!add) this.#label.delete(id);
  }

  /**
   * Updates the index from `before` to `after`, which a patch with effect `effect` made of it.
   * Returns false when the patch is one it does not follow incrementally (a move, an explicit-id
   * insert, labels too close): the caller then drops the index.
   */
  advance(before: Tree, after: Tree, effect: PatchEffect): boolean {
    for (const c of effect.changes) {
      if (c.type === "remove") {
        if (!before.has(c.root) || after.has(c.root)) return false;
        for (const id of c.ids) {
          const x = before.rec(id);
          if (x === undefined) continue; // inserted by this patch, never labelled
          this.#byValue(x, id, false);
          this.#tagged(x.tag, id, false);
        }
      } else if (c.type === "move") return false;
    }
    // Attribute changes on elements that were there before: move them between value lists.
    if (this.#values.size > 0) {
      const changed = new Set<number>();
      for (const c of effect.changes) if (c.type === "attr" && before.has(c.id)) changed.add(c.id);
      for (const id of changed) {
        const was = before.rec(id) as Rec;
        const now = after.rec(id);
        if (now === undefined || !this.#attrsOf.has(was.tag)) continue;
        this.#byValue(was, id, false);
        this.#byValue(now, id, true);
      }
    }
    for (const c of effect.changes) {
      if (c.type !== "insert") continue;
      if (!c.minted) return false;
      // removed again later in the same patch, or placed already inside an earlier insert's subtree
      if (!after.has(c.root) || this.#label.has(c.root)) continue;
      if (!this.#labelSubtree(after, c.root)) return false;
    }
    return true;
  }

  /** Labels the subtree at `root` (new in `after`) between its labelled neighbours. */
  #labelSubtree(after: Tree, root: number): boolean {
    const ids: number[] = [];
    const stack = [root];
    while (stack.length > 0) {
      const id = stack.pop() as number;
      ids.push(id);
      const r = after.rec(id) as Rec;
      for (let c = r.last; c !== 0; c = (after.rec(c) as Rec).prev) stack.push(c);
    }
    const lo = this.#labelledBefore(after, root);
    const hi = this.#labelledAfter(after, root);
    const k = ids.length;
    let label: (j: number) => number;
    if (hi === undefined) label = (j) => lo + j + 1;
    else {
      const step = (hi - lo) / (k + 1);
      if (!(step > Math.max(Math.abs(lo), 1) * 1e-12)) return false;
      label = (j) => lo + step * (j + 1);
    }
    ids.forEach((id, j) => {
      this.#label.set(id, label(j));
      const r = after.rec(id) as Rec;
      this.#tagged(r.tag, id, true);
      this.#byValue(r, id, true);
    });
    return true;
  }

  /** The label of the nearest labelled element before `id` in document order (0: none). */
  #labelledBefore(t: Tree, id: number): number {
    let cur = id;
    for (;;) {
      const r = t.rec(cur) as Rec;
      let p: number;
      if (r.prev !== 0) {
        // the previous sibling's last descendant
        p = r.prev;
        for (let last = (t.rec(p) as Rec).last; last !== 0; last = (t.rec(p) as Rec).last) p = last;
      } else if (r.parent !== 0) p = r.parent;
      else return 0;
      const l = this.#label.get(p);
      if (l !== undefined) return l;
      cur = p;
    }
  }

  /** The label of the nearest labelled element after `id`'s subtree in document order. */
  #labelledAfter(t: Tree, id: number): number | undefined {
    let cur = id;
    for (;;) {
      let r = t.rec(cur) as Rec;
      while (r.next === 0) {
        if (r.parent === 0) return undefined;
        r = t.rec(r.parent) as Rec;
      }
      const n = r.next;
      const l = this.#label.get(n);
      if (l !== undefined) return l;
      // an unlabelled (new) sibling: its first labelled descendant or what follows it
      cur = n;
    }
  }
}

/** @internal moves the index of `from` to `to`, another object for the same version (same elements, same order). */
export function moveIndex(from: Tree, to: Tree): void {
  const index = attached.get(from);
  if (index === undefined) return;
  attached.delete(from);
  attached.set(to, index);
}

/** The index attached to `tree`, if any. */
export function indexOf(tree: Tree): TagIndex | undefined {
  return attached.get(tree);
}

/** The index of `tree`, built (one walk) and attached if it has none. */
export function ensureIndex(tree: Tree): TagIndex {
  let index = attached.get(tree);
  if (index === undefined) {
    index = TagIndex.build(tree);
    attached.set(tree, index);
  }
  return index;
}

/**
 * Moves `before`'s index (if it has one) to `after`, which a patch with effect `effect` made of it
 * (`applyPatch`'s `onEffect`), updating it in time proportional to the patch; drops it when the
 * patch is one it cannot follow. `before` keeps no index (its queries fall back to a traversal).
 */
export function advanceIndex(before: Tree, after: Tree, effect: PatchEffect): void {
  const index = attached.get(before);
  if (index === undefined || before === after) return;
  attached.delete(before);
  if (index.advance(before, after, effect)) attached.set(after, index);
}
