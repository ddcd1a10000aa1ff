/**
 * Applying ops (DOM-7 … DOM-14). `applyPatch` is the one fold used for live writes and for replay:
 * it validates each op against the state the previous ops produced and either returns the new
 * version or throws, leaving the input untouched.
 */
import { depthOf, MAX_DEPTH, subtreeHeight, tooDeep } from "./depth.ts";
import { atOp, DomError, type DomResult } from "./errors.ts";
import { DOCUMENT, MAX_NODE_ID, type NodeId } from "./ids.ts";
import { checkOp, type InsOp, type MvOp, type NodeSpec, type Op, type SetOp } from "./ops.ts";
import { type Attrs, NO_ATTRS, type Rec, type Tree } from "./tree.ts";
import { TreeWriter } from "./writer.ts";

/** Largest single raise of the high-water mark a monotonic patch may make (keeps trees dense). */
export const MAX_HWM_RAISE = 2 ** 24;

export interface ApplyOptions {
  /**
   * Forbid the two restore forms (explicit ids in `ins`, lowering `hwm`), so ids only ever move
   * forward (L5). The engine sets this for everything it journals; inverses and diff patches need
   * the restore forms and are applied without it.
   */
  readonly monotonic?: boolean;
  /**
   * The ops already passed `checkOp`/`decodePatch` (e.g. they were decoded from the log): skip
   * re-checking their shape, names and strings. Everything that depends on the tree is still checked.
   */
  readonly trusted?: boolean;
}

/**
 * Applies `ops` in order, all or nothing. Returns the new version (the same `Tree` when nothing
 * changed). Throws a `DomError` whose `opIndex` names the first failing op; `tree` is unchanged.
 */
export function applyPatch(tree: Tree, ops: readonly Op[], options: ApplyOptions = {}): Tree {
  if (!Array.isArray(ops)) throw new DomError("bad-op", "a patch must be an array of ops");
  const w = new TreeWriter(tree);
  for (let i = 0; i < ops.length; i++) applyOpAt(w, ops[i], i, options);
  return w.finish();
}

/** Like {@link applyPatch}, but returns the failure as a value instead of throwing it. */
export function tryApplyPatch(tree: Tree, ops: readonly Op[], options: ApplyOptions = {}): DomResult<Tree> {
  try {
    return { ok: true, value: applyPatch(tree, ops, options) };
  } catch (e) {
    if (e instanceof DomError) return { ok: false, error: e };
    throw e;
  }
}

/** @internal applies op `i` of a patch to a writer, tagging errors with the index. */
export function applyOpAt(w: TreeWriter, op: unknown, i: number, options: ApplyOptions): void {
  try {
    applyOp(w, options.trusted === true ? (op as Op) : checkOp(op), options);
  } catch (e) {
    if (e instanceof DomError) throw atOp(e, i);
    throw e;
  }
}

function applyOp(w: TreeWriter, op: Op, options: ApplyOptions): void {
  switch (op[0]) {
    case "ins":
      insert(w, op, options);
      break;
    case "rm":
      remove(w, op[1]);
      break;
    case "set":
      setAttr(w, op, options);
      break;
    case "mv":
      move(w, op);
      break;
    case "text":
      setText(w, op[1], op[2], false);
      break;
    case "append":
      setText(w, op[1], op[2], true);
      break;
  }
}

/** The record of `id`, or an `unknown-node` error naming the role it was needed for. */
export function need(w: { rec(id: number): Rec | undefined }, id: number, role: string): Rec {
  const r = w.rec(id);
  if (r === undefined) throw new DomError("unknown-node", `${role} ${id} does not exist in this tree`);
  return r;
}

function label(r: Rec): string {
  return `element ${r.id} <${r.tag}>`;
}

/** Where a new child goes: the `next` sibling it will precede, after checking the anchor. */
function slotAfter(w: TreeWriter, parent: Rec, after: number | null, what: string): number {
  if (after === null) return parent.first;
  const a = w.rec(after);
  if (a === undefined || a.parent !== parent.id)
    throw new DomError(
      "bad-anchor",
      `${what}: anchor ${after} is not a child of ${label(parent)}; use a child's id, or null for the first position`,
    );
  return a.next;
}

function checkCanHoldChildren(parent: Rec): void {
  if (parent.text !== "")
    throw new DomError(
      "mixed-content",
      `${label(parent)} has text, so it cannot also have child elements (clear it with a "text" op first)`,
    );
}

interface Entry {
  readonly spec: NodeSpec;
  readonly id: number;
  readonly parentIndex: number;
  readonly kids: number[];
}

function insert(w: TreeWriter, op: InsOp, options: ApplyOptions): void {
  const [, parentId, after, spec] = op;
  const parent = need(w, parentId, "ins parent");
  checkCanHoldChildren(parent);
  const next = slotAfter(w, parent, after, "ins");
  const restore = spec.id !== undefined;
  if (restore && options.monotonic)
    throw new DomError("bad-id", "explicit ids are a restore form (inverses, diffs); journaled ops let the tree mint ids");

  // DOM-34: the deepest new element may sit at most MAX_DEPTH levels down (O(depth) to know).
  const parentDepth = depthOf(w, parentId);

  // Pre-order walk: ids are minted in document order (DOM-2), and children keep their order.
  const entries: Entry[] = [];
  const seen = restore ? new Set<number>() : undefined;
  const stack: Array<[NodeSpec, number, number]> = [[spec, -1, parentDepth + 1]];
  let hwm = w.hwm;
  while (stack.length > 0) {
    const [s, parentIndex, depth] = stack.pop() as [NodeSpec, number, number];
    if (depth > MAX_DEPTH) throw tooDeep(`an element inserted under ${label(parent)}`, depth);
    let id: number;
    if (seen !== undefined) {
      id = s.id as number;
      if (seen.has(id)) throw new DomError("bad-id", `id ${id} appears twice in the inserted subtree`);
      if (w.rec(id) !== undefined)
        throw new DomError("bad-id", `id ${id} is already in the tree; a restore-form ins may only bring back absent ids`);
      seen.add(id);
      if (id > hwm) hwm = id;
    } else {
      id = ++hwm;
      if (id > MAX_NODE_ID) throw new DomError("too-large", "the tree has minted every id it can");
    }
    const index = entries.length;
    entries.push({ spec: s, id, parentIndex, kids: [] });
    if (parentIndex >= 0) (entries[parentIndex] as Entry).kids.push(index);
    const children = s.children;
    if (children !== undefined) for (let i = children.length - 1; i >= 0; i--) stack.push([children[i] as NodeSpec, index, depth + 1]);
  }

  const prevOf = new Array<number>(entries.length).fill(0);
  const nextOf = new Array<number>(entries.length).fill(0);
  for (const e of entries)
    for (let k = 0; k < e.kids.length; k++) {
      const me = e.kids[k] as number;
      if (k > 0) prevOf[me] = (entries[e.kids[k - 1] as number] as Entry).id;
      if (k < e.kids.length - 1) nextOf[me] = (entries[e.kids[k + 1] as number] as Entry).id;
    }
  prevOf[0] = after ?? 0;
  nextOf[0] = next;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as Entry;
    const kids = e.kids;
    w.add({
      id: e.id as NodeId,
      tag: e.spec.tag,
      attrs: makeAttrs(e.spec.attrs),
      text: kids.length > 0 ? "" : (e.spec.text ?? ""),
      parent: e.parentIndex < 0 ? parentId : (entries[e.parentIndex] as Entry).id,
      prev: prevOf[i] as number,
      next: nextOf[i] as number,
      first: kids.length > 0 ? (entries[kids[0] as number] as Entry).id : 0,
      last: kids.length > 0 ? (entries[kids[kids.length - 1] as number] as Entry).id : 0,
    });
  }
  w.hwm = hwm;
  const rootId = (entries[0] as Entry).id;
  link(w, rootId, parentId, after, next);
}

/** Splices the (already stored) record `id` between `prev` (or the front) and `next` under `parentId`. */
function link(w: TreeWriter, id: number, parentId: number, prev: number | null, next: number): void {
  if (prev === null || prev === 0) w.edit(parentId).first = id;
  else w.edit(prev).next = id;
  if (next === 0) w.edit(parentId).last = id;
  else w.edit(next).prev = id;
}

/** Detaches record `id` from its parent and siblings (its own pointers are left to the caller). */
function unlink(w: TreeWriter, r: Rec): void {
  if (r.prev === 0) w.edit(r.parent).first = r.next;
  else w.edit(r.prev).next = r.next;
  if (r.next === 0) w.edit(r.parent).last = r.prev;
  else w.edit(r.next).prev = r.prev;
}

function checkMovable(w: TreeWriter, r: Rec, verb: string): void {
  if (w.isFixed(r.id) || r.id === w.rootId)
    throw new DomError("fixed-node", `${label(r)} is part of the fixed skeleton and cannot be ${verb}`);
}

function remove(w: TreeWriter, id: NodeId): void {
  const r = need(w, id, "rm target");
  checkMovable(w, r, "removed");
  unlink(w, r);
  // Remove the whole subtree, iteratively (trees may be deep).
  const stack = [id as number];
  while (stack.length > 0) {
    const x = stack.pop() as number;
    const xr = w.rec(x) as Rec;
    for (let c = xr.first; c !== 0; c = (w.rec(c) as Rec).next) stack.push(c);
    w.remove(x);
  }
}

function setAttr(w: TreeWriter, op: SetOp, options: ApplyOptions): void {
  const [, id, name, value] = op;
  if (id === DOCUMENT) {
    const hwm = Number(value);
    if (hwm < w.hwm) {
      if (options.monotonic) throw new DomError("bad-hwm", `the high-water mark only rises in journaled patches (${w.hwm} → ${hwm})`);
      const max = w.maxLiveId();
      if (hwm < max) throw new DomError("bad-hwm", `cannot lower the high-water mark to ${hwm}: element ${max} is live`);
    }
    if (options.monotonic && hwm - w.hwm > MAX_HWM_RAISE)
      throw new DomError(
        "bad-hwm",
        `a journaled patch may raise the high-water mark by at most ${MAX_HWM_RAISE} at once (${w.hwm} → ${hwm})`,
      );
    w.hwm = hwm;
    return;
  }
  const r = need(w, id, "set target");
  const has = Object.hasOwn(r.attrs, name);
  if (value === null ? !has : has && r.attrs[name] === value) return;
  w.edit(id).attrs = withAttr(r.attrs, name, value);
}

function move(w: TreeWriter, op: MvOp): void {
  const [, id, parentId, after] = op;
  const r = need(w, id, "mv target");
  checkMovable(w, r, "moved");
  const parent = need(w, parentId, "mv parent");
  checkCanHoldChildren(parent);
  let parentDepth = 0;
  for (let p: number = parentId; p !== 0; p = (w.rec(p) as Rec).parent) {
    parentDepth++;
    if (p === id)
      throw new DomError("cycle", `cannot move ${label(r)} into ${p === parentId ? "itself" : `its own descendant ${label(parent)}`}`);
  }
  if (after === id) throw new DomError("bad-anchor", `cannot move ${label(r)} after itself`);
  slotAfter(w, parent, after, "mv");
  if (r.parent === parentId && r.prev === (after ?? 0)) return; // already there
  // DOM-34: a move to the same depth or higher cannot exceed the limit (O(depth) to know); a move
  // deeper measures the subtree, stopping at the first element that would be too deep.
  if (parentDepth + 1 > depthOf(w, id)) {
    const room = MAX_DEPTH - parentDepth;
    const height = subtreeHeight(w, id, room);
    if (height > room) throw tooDeep(`moving ${label(r)} under ${label(parent)}, its deepest descendant`, parentDepth + height);
  }
  unlink(w, r);
  // Re-read the anchor: unlinking may have changed its `next`.
  const next = after === null ? (w.rec(parentId) as Rec).first : (w.rec(after) as Rec).next;
  const m = w.edit(id);
  m.parent = parentId;
  m.prev = after ?? 0;
  m.next = next;
  link(w, id, parentId, after, next);
}

function setText(w: TreeWriter, id: NodeId, value: string, append: boolean): void {
  const r = need(w, id, append ? "append target" : "text target");
  if (r.first !== 0) throw new DomError("mixed-content", `${label(r)} has child elements, so it cannot also have text`);
  const text = append ? r.text + value : value;
  if (text === r.text) return;
  w.edit(id).text = text;
}

/** A canonical attribute object (sorted keys, null prototype, frozen) from a spec's attrs. */
export function makeAttrs(attrs: Readonly<Record<string, string>> | undefined): Attrs {
  if (attrs === undefined) return NO_ATTRS;
  const keys = Object.keys(attrs);
  if (keys.length === 0) return NO_ATTRS;
  keys.sort(compareNames);
  const out = Object.create(null) as Record<string, string>;
  for (const k of keys) out[k] = attrs[k] as string;
  return Object.freeze(out);
}

function withAttr(attrs: Attrs, name: string, value: string | null): Attrs {
  const out = Object.create(null) as Record<string, string>;
  let placed = value === null;
  for (const k of Object.keys(attrs)) {
    if (!placed && compareNames(name, k) < 0) {
      out[name] = value as string;
      placed = true;
    }
    if (k !== name) out[k] = attrs[k] as string;
    else if (value !== null) {
      out[k] = value;
      placed = true;
    }
  }
  if (!placed) out[name] = value as string;
  return Object.keys(out).length === 0 ? NO_ATTRS : Object.freeze(out);
}

/** Code-unit order, the canonical order of attribute names. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
