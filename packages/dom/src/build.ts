/**
 * Making trees from nothing, and reading a subtree back as a node spec (DOM-3).
 */
import { applyPatch } from "./apply.ts";
import { dirFromSlots } from "./dir.ts";
import { DomError } from "./errors.ts";
import type { NodeId } from "./ids.ts";
import { checkName } from "./names.ts";
import { checkSpec, type NodeSpec, type Op } from "./ops.ts";
import { makeTree, NO_ATTRS, type Rec, type Tree } from "./tree.ts";
import type { RecReader } from "./writer.ts";

/** A tree holding one element, the root (id 1, fixed). */
export function emptyTree(rootTag = "session"): Tree {
  checkName(rootTag, "tag");
  const root: Rec = Object.freeze({
    id: 1 as NodeId,
    tag: rootTag,
    attrs: NO_ATTRS,
    text: "",
    parent: 0,
    prev: 0,
    next: 0,
    first: 0,
    last: 0,
  });
  const page: Rec[] = [];
  page[1] = root; // index = id & PAGE_MASK; id 0 is never used
  return makeTree(1, 1, [1], 1, dirFromSlots([Object.freeze(page)]));
}

/**
 * A tree made of `spec`, every element of which is fixed: it can gain children and attributes but
 * can never be removed or moved (the session skeleton `<session><meta/><body/></session>`).
 * Ids are minted in document order from 1.
 */
export function skeletonTree(spec: NodeSpec): Tree {
  checkSpec(spec);
  if (spec.id !== undefined) throw new DomError("bad-op", "a skeleton spec carries no ids; they are minted from 1");
  let tree = emptyTree(spec.tag);
  const ops: Op[] = [];
  for (const [k, v] of Object.entries(spec.attrs ?? {})) ops.push(["set", tree.rootId, k, v]);
  if (spec.text !== undefined && spec.text !== "") ops.push(["text", tree.rootId, spec.text]);
  // Each child subtree mints a contiguous id range, so the next anchor is known in advance.
  let after: NodeId | null = null;
  let nextId = tree.hwm + 1;
  for (const child of spec.children ?? []) {
    ops.push(["ins", tree.rootId, after, child]);
    after = nextId as NodeId;
    nextId += specSize(child);
  }
  tree = applyPatch(tree, ops);
  const fixed: number[] = [];
  for (let id = 1; id <= tree.hwm; id++) fixed.push(id);
  return makeTree(tree.hwm, tree.rootId, fixed, tree.size, tree.dir);
}

/** Number of elements in a spec. */
export function specSize(spec: NodeSpec): number {
  let n = 0;
  const stack: NodeSpec[] = [spec];
  while (stack.length > 0) {
    const s = stack.pop() as NodeSpec;
    n++;
    if (s.children !== undefined) for (const c of s.children) stack.push(c);
  }
  return n;
}

/**
 * The subtree rooted at `id` as a node spec (canonical: no empty `attrs`, `text` or `children`).
 * With `withIds`, every node carries its id: the restore form that brings the subtree back as it was.
 */
export function specOf(reader: RecReader, id: number, withIds = false): NodeSpec {
  type Mutable = { -readonly [K in keyof NodeSpec]: NodeSpec[K] };
  const make = (r: Rec): Mutable => {
    const s: Mutable = { tag: r.tag };
    if (withIds) s.id = r.id;
    if (Object.keys(r.attrs).length > 0) s.attrs = { ...r.attrs };
    if (r.text !== "") s.text = r.text;
    return s;
  };
  const rootRec = reader.rec(id);
  if (rootRec === undefined) throw new DomError("unknown-node", `element ${id} does not exist in this tree`);
  const root = make(rootRec);
  const stack: Array<[Rec, Mutable]> = [[rootRec, root]];
  while (stack.length > 0) {
    const [r, s] = stack.pop() as [Rec, Mutable];
    if (r.first === 0) continue;
    const kids: Mutable[] = [];
    for (let c = r.first; c !== 0; ) {
      const cr = reader.rec(c) as Rec;
      const k = make(cr);
      kids.push(k);
      stack.push([cr, k]);
      c = cr.next;
    }
    s.children = kids;
  }
  return root;
}
