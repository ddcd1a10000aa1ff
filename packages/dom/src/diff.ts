/**
 * Structural diffs between two versions, keyed by id (DOM-28 … DOM-31). Diffs carry before and
 * after, so they reverse without either tree, and turn into a patch that transforms one tree into
 * the other exactly. When `b` was derived from `a` by patches, pages and records that were not
 * touched are shared by reference and skipped, so the cost follows what changed.
 */

import { applyPatch } from "./apply.ts";
import { dirDiff } from "./dir.ts";
import { DomError } from "./errors.ts";
import type { NodeId } from "./ids.ts";
import type { Op } from "./ops.ts";
import { type NodeSpec, specOf } from "./spec.ts";
import { LazyPage, PAGE_SIZE, type Page, pageOf, type Rec, type Tree } from "./tree.ts";

export interface DiffPosition {
  readonly parent: NodeId;
  /** The preceding sibling, or null for the first position. */
  readonly after: NodeId | null;
}
/** A subtree present on one side only; `node` is in restore form and holds only elements of that side. */
export interface DiffSubtree {
  readonly id: NodeId;
  readonly at: DiffPosition;
  readonly node: NodeSpec;
}
export interface DiffAttr {
  readonly id: NodeId;
  readonly name: string;
  readonly before: string | null;
  readonly after: string | null;
}
export interface DiffText {
  readonly id: NodeId;
  readonly before: string;
  readonly after: string;
}
export interface DiffMove {
  readonly id: NodeId;
  readonly from: DiffPosition;
  readonly to: DiffPosition;
}

/**
 * What differs between two versions of one tree. `added`/`removed` list subtree roots; elements of
 * such a subtree that exist on both sides appear in `moved` instead. Attribute and text changes are
 * for elements present on both sides.
 */
export interface TreeDiff {
  readonly added: readonly DiffSubtree[];
  readonly removed: readonly DiffSubtree[];
  readonly attrs: readonly DiffAttr[];
  readonly text: readonly DiffText[];
  readonly moved: readonly DiffMove[];
  readonly hwm: { readonly before: number; readonly after: number };
}

/** True when the two versions are identical (the diff holds no change). */
export function isEmptyDiff(d: TreeDiff): boolean {
  return d.added.length + d.removed.length + d.attrs.length + d.text.length + d.moved.length === 0 && d.hwm.before === d.hwm.after;
}

/** The diff that undoes `d` (from `b` back to `a`). */
export function reverseDiff(d: TreeDiff): TreeDiff {
  return {
    added: d.removed,
    removed: d.added,
    attrs: d.attrs.map((c) => ({ id: c.id, name: c.name, before: c.after, after: c.before })),
    text: d.text.map((c) => ({ id: c.id, before: c.after, after: c.before })),
    moved: d.moved.map((m) => ({ id: m.id, from: m.to, to: m.from })),
    hwm: { before: d.hwm.after, after: d.hwm.before },
  };
}

const position = (r: Rec): DiffPosition => ({ parent: r.parent as NodeId, after: r.prev === 0 ? null : (r.prev as NodeId) });

/** The structural diff from `a` to `b`. Both must be versions of one tree (same root). */
export function diffTrees(a: Tree, b: Tree): TreeDiff {
  if (a.rootId !== b.rootId)
    throw new DomError("bad-op", `the trees have different roots (${a.rootId} and ${b.rootId}); they are not versions of one tree`);
  const addedIds = new Set<number>();
  const removedIds = new Set<number>();
  const replaced = new Set<number>();
  const changed: Array<[Rec, Rec]> = [];
  dirDiff(a.dir, b.dir, (i, sa, sb) => {
    if (sa instanceof LazyPage && sb instanceof LazyPage && sa.ref === sb.ref) return;
    const pa: Page = pageOf(sa) ?? [];
    const pb: Page = pageOf(sb) ?? [];
    if (pa === pb) return;
    const n = Math.max(pa.length, pb.length);
    for (let j = 0; j < n; j++) {
      const ra = pa[j];
      const rb = pb[j];
      if (ra === rb) continue;
      const id = i * PAGE_SIZE + j;
      if (rb === undefined) removedIds.add(id);
      else if (ra === undefined) addedIds.add(id);
      else if (ra.tag !== rb.tag) {
        // The same id names a different element (branches that minted independently): the old
        // element is removed and the new one added.
        removedIds.add(id);
        addedIds.add(id);
        replaced.add(id);
      } else changed.push([ra, rb]);
    }
  });
  // Children of a replaced element changed parent even where their records did not change.
  const seenChanged = new Set(changed.map(([ra]) => ra.id as number));
  for (const id of replaced)
    for (let c = (a.rec(id) as Rec).first; c !== 0; c = (a.rec(c) as Rec).next) {
      const rb = b.rec(c);
      if (rb !== undefined && !replaced.has(c) && !seenChanged.has(c)) {
        seenChanged.add(c);
        changed.push([a.rec(c) as Rec, rb]);
      }
    }

  const attrs: DiffAttr[] = [];
  const text: DiffText[] = [];
  const moved: DiffMove[] = [];
  const reorder = new Set<number>();
  const survives = (id: number): boolean => {
    const x = a.rec(id);
    const y = b.rec(id);
    return x !== undefined && y !== undefined && x.tag === y.tag && x.parent === y.parent && !replaced.has(x.parent);
  };
  for (const [ra, rb] of changed) {
    if (ra.attrs !== rb.attrs) {
      for (const k in ra.attrs) {
        const after = Object.hasOwn(rb.attrs, k) ? (rb.attrs[k] as string) : null;
        if (after !== ra.attrs[k]) attrs.push({ id: ra.id, name: k, before: ra.attrs[k] as string, after });
      }
      for (const k in rb.attrs)
        if (!Object.hasOwn(ra.attrs, k)) attrs.push({ id: ra.id, name: k, before: null, after: rb.attrs[k] as string });
    }
    if (ra.text !== rb.text) text.push({ id: ra.id, before: ra.text, after: rb.text });
    if (ra.parent !== rb.parent || replaced.has(ra.parent)) moved.push({ id: ra.id, from: position(ra), to: position(rb) });
    else if (ra.prev !== rb.prev && ra.parent !== 0) {
      // Order among the siblings that stayed under this parent changed only if the nearest
      // surviving predecessor differs; the walks pass only over added/removed/moved siblings.
      let pa = ra.prev;
      while (pa !== 0 && !survives(pa)) pa = (a.rec(pa) as Rec).prev;
      let pb = rb.prev;
      while (pb !== 0 && !survives(pb)) pb = (b.rec(pb) as Rec).prev;
      if (pa !== pb) reorder.add(ra.parent);
    }
  }
  // Loops, not push(...list): a spread of 100,000+ items overflows the call stack.
  for (const parent of reorder) for (const m of reorderMoves(a, b, parent, survives)) moved.push(m);

  const added: DiffSubtree[] = [];
  for (const id of addedIds) {
    const r = b.rec(id) as Rec;
    if (!addedIds.has(r.parent)) added.push({ id: r.id, at: position(r), node: prunedSpec(b, id, addedIds) });
  }
  const removed: DiffSubtree[] = [];
  for (const id of removedIds) {
    const r = a.rec(id) as Rec;
    if (!removedIds.has(r.parent)) removed.push({ id: r.id, at: position(r), node: prunedSpec(a, id, removedIds) });
  }
  return { added, removed, attrs, text, moved, hwm: { before: a.hwm, after: b.hwm } };
}

/** The subtree at `id` restricted to elements in `keep` (the rest exist on both sides). */
function prunedSpec(tree: Tree, id: number, keep: ReadonlySet<number>): NodeSpec {
  const full = specOf(tree, id, true);
  const stack: NodeSpec[] = [full];
  while (stack.length > 0) {
    const s = stack.pop() as { -readonly [K in keyof NodeSpec]: NodeSpec[K] };
    if (s.children === undefined) continue;
    const kids = s.children.filter((c) => keep.has(c.id as number));
    if (kids.length === 0) delete s.children;
    else s.children = kids;
    for (const k of kids) stack.push(k);
  }
  return full;
}

/**
 * Moves that explain a reordering under `parent`: the siblings present there in both versions keep
 * their longest increasing subsequence in place; every other one is reported as moved.
 */
function reorderMoves(a: Tree, b: Tree, parent: number, survives: (id: number) => boolean): DiffMove[] {
  const indexInA = new Map<number, number>();
  let k = 0;
  for (let c = (a.rec(parent) as Rec).first; c !== 0; c = (a.rec(c) as Rec).next) if (survives(c)) indexInA.set(c, k++);
  const order: number[] = [];
  for (let c = (b.rec(parent) as Rec).first; c !== 0; c = (b.rec(c) as Rec).next) if (indexInA.has(c)) order.push(c);
  const keep = longestIncreasingWith(
    order.map((id) => indexInA.get(id) as number),
    order.map((id) => a.isFixed(id)),
  );
  const out: DiffMove[] = [];
  for (let i = 0; i < order.length; i++) {
    if (keep.has(i)) continue;
    const id = order[i] as number;
    out.push({ id: id as NodeId, from: position(a.rec(id) as Rec), to: position(b.rec(id) as Rec) });
  }
  return out;
}

/**
 * Indices of a longest strictly increasing subsequence of `xs` that contains every index marked in
 * `must` (fixed elements never move, so they always keep their place; their values are increasing).
 * Elements incompatible with a fixed one are dropped first; any increasing subsequence of the rest,
 * joined with the fixed ones, is still increasing.
 */
function longestIncreasingWith(xs: readonly number[], must: readonly boolean[]): Set<number> {
  const n = xs.length;
  const maxBefore: number[] = new Array(n);
  const minAfter: number[] = new Array(n);
  let m = -1;
  for (let i = 0; i < n; i++) {
    maxBefore[i] = m;
    if (must[i]) m = xs[i] as number;
  }
  m = Number.POSITIVE_INFINITY;
  for (let i = n - 1; i >= 0; i--) {
    minAfter[i] = m;
    if (must[i]) m = xs[i] as number;
  }
  const free: number[] = [];
  for (let i = 0; i < n; i++)
    if (!must[i] && (xs[i] as number) > (maxBefore[i] as number) && (xs[i] as number) < (minAfter[i] as number)) free.push(i);
  const out = new Set<number>();
  for (const k of longestIncreasing(free.map((i) => xs[i] as number))) out.add(free[k] as number);
  for (let i = 0; i < n; i++) if (must[i]) out.add(i);
  return out;
}

/** Indices of one longest strictly increasing subsequence of `xs` (patience sorting, O(n log n)). */
function longestIncreasing(xs: readonly number[]): Set<number> {
  const tails: number[] = [];
  const prev: number[] = new Array(xs.length).fill(-1);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i] as number;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((xs[tails[mid] as number] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1] as number;
    tails[lo] = i;
  }
  const out = new Set<number>();
  for (let i = tails.length > 0 ? (tails[tails.length - 1] as number) : -1; i >= 0; i = prev[i] as number) out.add(i);
  return out;
}

/**
 * A patch that transforms `a` into the tree the diff was taken against, exactly (ids, order, text,
 * attributes, high-water mark). Uses the restore forms (explicit ids, `hwm`), so apply it without
 * `monotonic`. `diffToPatch(b, reverseDiff(d))` goes back. Each op is checked against the state
 * the previous ones produce as it is generated.
 */
export function diffToPatch(a: Tree, d: TreeDiff): Op[] {
  const ops: Op[] = [];
  let work = a;
  const emit = (op: Op): void => {
    try {
      work = applyPatch(work, [op]);
    } catch (e) {
      // Say which op of the generated patch failed (usually: the diff was taken against another tree).
      if (e instanceof DomError)
        throw new DomError(e.code, `op ${ops.length}: ${e.message.replace(/^op 0: /, "")}`, { opIndex: ops.length });
      throw e;
    }
    ops.push(op);
  };
  // 1. Clear text that must go, so elements can receive children (DOM-4).
  for (const t of d.text) if (t.after === "") emit(["text", t.id, ""]);

  // 2. Ids that name a different element on each side: park the surviving elements under them at
  //    the root, then remove the old element so the new one can take its id.
  const addedIds = new Set<number>();
  const addedParent = new Map<number, number>();
  for (const s of d.added) {
    addedParent.set(s.id, s.at.parent);
    const stack: NodeSpec[] = [s.node];
    while (stack.length > 0) {
      const x = stack.pop() as NodeSpec;
      addedIds.add(x.id as number);
      for (const c of x.children ?? []) {
        addedParent.set(c.id as number, x.id as number);
        stack.push(c);
      }
    }
  }
  const replaced = new Set([...addedIds].filter((id) => a.has(id)));
  if (replaced.size > 0) {
    for (const m of d.moved) {
      let under = false;
      for (let p = (a.rec(m.id) as Rec).parent; p !== 0 && !under; p = (a.rec(p) as Rec).parent) under = replaced.has(p);
      if (under) emit(["mv", m.id, a.rootId, null]);
    }
    for (const id of replaced) if (work.has(id)) emit(["rm", id as NodeId]);
  }

  // 3. Place added subtrees and moved elements, shallowest first (parents exist, no cycles), each
  //    right after its new predecessor once that predecessor is in place.
  const movedTo = new Map<number, DiffPosition>();
  for (const m of d.moved) movedTo.set(m.id, m.to);
  const parentInB = (id: number): number => movedTo.get(id)?.parent ?? addedParent.get(id) ?? a.rec(id)?.parent ?? 0;
  const depths = new Map<number, number>();
  const depthInB = (id: number): number => {
    const chain: number[] = [];
    let base = 0;
    for (let x = id; x !== 0; x = parentInB(x)) {
      const known = depths.get(x);
      if (known !== undefined) {
        base = known;
        break;
      }
      chain.push(x);
    }
    for (let i = chain.length - 1; i >= 0; i--) depths.set(chain[i] as number, ++base);
    return depths.get(id) as number;
  };
  type Placement = { id: number; at: DiffPosition; op: Op };
  const placements: Placement[] = [
    ...d.added.map((s) => ({ id: s.id as number, at: s.at, op: ["ins", s.at.parent, s.at.after, s.node] as Op })),
    ...d.moved.map((m) => ({ id: m.id as number, at: m.to, op: ["mv", m.id, m.to.parent, m.to.after] as Op })),
  ];
  const byDepth = new Map<number, Placement[]>();
  for (const p of placements) {
    const depth = depthInB(p.id);
    let list = byDepth.get(depth);
    if (list === undefined) byDepth.set(depth, (list = []));
    list.push(p);
  }
  for (const depth of [...byDepth.keys()].sort((x, y) => x - y)) {
    const group = byDepth.get(depth) as Placement[];
    // Within a level, an element waits for its predecessor if that predecessor is placed too.
    const pending = new Set(group.map((p) => p.id));
    const waiting = new Map<number, Placement>();
    for (const p of group) if (p.at.after !== null && pending.has(p.at.after)) waiting.set(p.at.after, p);
    for (const p of group) {
      if (p.at.after !== null && pending.has(p.at.after)) continue;
      for (let q: Placement | undefined = p; q !== undefined; q = waiting.get(q.id)) emit(q.op);
    }
  }

  // 4. Remove what is gone (surviving descendants were moved out above; replaced ids are done).
  for (const s of d.removed) if (!replaced.has(s.id) && work.has(s.id)) emit(["rm", s.id]);
  // 5. Attributes, new text, and the high-water mark.
  for (const c of d.attrs) emit(["set", c.id, c.name, c.after]);
  for (const t of d.text) if (t.after !== "") emit(["text", t.id, t.after]);
  if (work.hwm !== d.hwm.after) emit(["set", 0, "hwm", String(d.hwm.after)]);
  return ops;
}
