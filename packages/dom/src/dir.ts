/**
 * The page directory of a tree: a persistent 64-way radix trie from page number to page slot
 * (decision 0004). A new version copies only the path to the pages it writes — a few dozen
 * pointers whatever the tree's size — and a sparse range of ids costs nothing. Two versions are
 * compared by skipping every subtrie they share.
 */
import type { Slot } from "./tree.ts";

const BITS = 6;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

type Node = readonly unknown[];

export interface Dir {
  /** `undefined` when the tree has no page yet. */
  readonly root: Node | undefined;
  /** Levels below the root, counting the slot level: the directory holds page numbers below 64^height. */
  readonly height: number;
}

export const EMPTY_DIR: Dir = Object.freeze({ root: undefined, height: 1 });

function capacity(height: number): number {
  return WIDTH ** height;
}

export function dirGet(dir: Dir, i: number): Slot {
  let node = dir.root;
  if (node === undefined || i >= capacity(dir.height)) return undefined;
  for (let shift = (dir.height - 1) * BITS; shift > 0; shift -= BITS) {
    node = node[(i >>> shift) & MASK] as Node | undefined;
    if (node === undefined) return undefined;
  }
  return node[i & MASK] as Slot;
}

/**
 * Builds a directory from a dense list of slots (index = page number): level by level, each node
 * a slice of the level below (the shape `DirWriter` gives: a node ends at its last present entry,
 * and a subtrie with no present slot is absent). One pass, no per-slot path walk — a snapshot of
 * thousands of pages opens in a cold process without running the writer's loop for each.
 */
export function dirFromSlots(slots: readonly Slot[]): Dir {
  let n = slots.length;
  while (n > 0 && slots[n - 1] === undefined) n--;
  if (n === 0) return EMPTY_DIR;
  // `level[0 … n)` ends with a present entry at every level, so one node is left at the root.
  let level: readonly unknown[] = slots;
  for (let height = 1; ; height++) {
    const nodes: unknown[] = [];
    for (let at = 0; at < n; at += WIDTH) {
      let end = Math.min(at + WIDTH, n);
      while (end > at && level[end - 1] === undefined) end--;
      nodes.push(end === at ? undefined : Object.freeze(level.slice(at, end)));
    }
    if (n <= WIDTH) return Object.freeze({ root: nodes[0] as Node, height });
    level = nodes;
    n = nodes.length;
  }
}

/** Every present slot with its page number, in page order. */
export function* dirEntries(dir: Dir): Generator<[number, NonNullable<Slot>]> {
  if (dir.root === undefined) return;
  const stack: Array<[Node, number, number]> = [[dir.root, dir.height, 0]];
  while (stack.length > 0) {
    const [node, level, prefix] = stack.pop() as [Node, number, number];
    if (level === 1) {
      for (let j = 0; j < node.length; j++) if (node[j] !== undefined) yield [prefix * WIDTH + j, node[j] as NonNullable<Slot>];
      continue;
    }
    for (let j = node.length - 1; j >= 0; j--) if (node[j] !== undefined) stack.push([node[j] as Node, level - 1, prefix * WIDTH + j]);
  }
}

/** Present slots from the last page backwards. */
export function* dirEntriesReverse(dir: Dir): Generator<[number, NonNullable<Slot>]> {
  if (dir.root === undefined) return;
  const stack: Array<[Node, number, number]> = [[dir.root, dir.height, 0]];
  while (stack.length > 0) {
    const [node, level, prefix] = stack.pop() as [Node, number, number];
    if (level === 1) {
      for (let j = node.length - 1; j >= 0; j--) if (node[j] !== undefined) yield [prefix * WIDTH + j, node[j] as NonNullable<Slot>];
      continue;
    }
    for (let j = 0; j < node.length; j++) if (node[j] !== undefined) stack.push([node[j] as Node, level - 1, prefix * WIDTH + j]);
  }
}

/** One more than the last page number in use (0 for an empty directory). */
export function dirLength(dir: Dir): number {
  for (const [i] of dirEntriesReverse(dir)) return i + 1;
  return 0;
}

/**
 * Calls `visit(i, a, b)` for every page number whose slot differs between the two directories,
 * skipping subtries the two share by reference.
 */
export function dirDiff(a: Dir, b: Dir, visit: (i: number, sa: Slot, sb: Slot) => void): void {
  const height = Math.max(a.height, b.height);
  const walk = (na: Node | undefined, nb: Node | undefined, level: number, prefix: number): void => {
    if (na === nb) return;
    if (level === 1) {
      const n = Math.max(na?.length ?? 0, nb?.length ?? 0);
      for (let j = 0; j < n; j++) {
        const sa = na?.[j] as Slot;
        const sb = nb?.[j] as Slot;
        if (sa !== sb) visit(prefix * WIDTH + j, sa, sb);
      }
      return;
    }
    const n = Math.max(na?.length ?? 0, nb?.length ?? 0);
    for (let j = 0; j < n; j++) walk(na?.[j] as Node | undefined, nb?.[j] as Node | undefined, level - 1, prefix * WIDTH + j);
  };
  walk(lift(a, height), lift(b, height), height, 0);
}

/** The root of `dir` seen at a greater height (wrapped as child 0 of new levels). */
function lift(dir: Dir, height: number): Node | undefined {
  let root = dir.root;
  if (root === undefined) return undefined;
  for (let h = dir.height; h < height; h++) root = [root];
  return root;
}

/** A transient builder: copies each node on the first write, mutates the copy after. */
export class DirWriter {
  #root: unknown[] | undefined;
  #height: number;
  readonly #owned = new Set<unknown[]>();
  #changed = false;

  constructor(base: Dir) {
    this.#root = base.root as unknown[] | undefined;
    this.#height = base.height;
  }

  get changed(): boolean {
    return this.#changed;
  }

  get(i: number): Slot {
    return dirGet({ root: this.#root, height: this.#height }, i);
  }

  /** The directory as it stands (not frozen; do not keep it past `finish`). */
  view(): Dir {
    return { root: this.#root, height: this.#height };
  }

  set(i: number, slot: Slot): void {
    this.#changed = true;
    while (i >= capacity(this.#height)) {
      if (this.#root !== undefined) this.#root = this.#own([this.#root], true);
      this.#height++;
    }
    this.#root = this.#root === undefined ? this.#own([], true) : this.#own(this.#root);
    let node = this.#root;
    for (let shift = (this.#height - 1) * BITS; shift > 0; shift -= BITS) {
      const j = (i >>> shift) & MASK;
      const child = node[j] as unknown[] | undefined;
      const next = child === undefined ? this.#own([], true) : this.#own(child);
      node[j] = next;
      node = next;
    }
    node[i & MASK] = slot;
  }

  finish(): Dir {
    for (const n of this.#owned) Object.freeze(n);
    this.#owned.clear();
    return Object.freeze({ root: this.#root, height: this.#height });
  }

  #own(node: unknown[], fresh = false): unknown[] {
    if (fresh) {
      this.#owned.add(node);
      return node;
    }
    if (this.#owned.has(node)) return node;
    // Spread, not slice(): V8 (Node 20) slices a frozen array ~20× slower than it spreads one.
    const copy = [...node];
    this.#owned.add(copy);
    return copy;
  }
}
