/**
 * `["ins", parent, after|null, node]` (DOM-9): inserts a subtree, minting its ids in pre-order
 * from the high-water mark (DOM-2), or — the restore form — taking the ids the spec carries.
 */
import type { ApplyOptions } from "../apply.ts";
import { makeAttrs } from "../attrs.ts";
import { depthOf, MAX_DEPTH, tooDeep } from "../depth.ts";
import { DomError } from "../errors.ts";
import { MAX_NODE_ID, type NodeId } from "../ids.ts";
import { checkSpec, copySpec, type NodeSpec, specSize } from "../spec.ts";
import type { TreeWriter } from "../writer.ts";
import { checkAnchor, checkId, mapAnchor, type OpDef } from "./kind.ts";
import { checkCanHoldChildren, label, link, need, slotAfter } from "./place.ts";

/** Insert a subtree under `parent` after sibling `after` (null: as first child). */
export type InsOp = readonly ["ins", parent: NodeId, after: NodeId | null, node: NodeSpec];

interface Entry {
  readonly spec: NodeSpec;
  readonly id: number;
  readonly parentIndex: number;
  readonly kids: number[];
}

export const ins: OpDef<InsOp> = {
  kind: "ins",
  args: 3,
  check(op) {
    checkId(op[1], "ins parent");
    checkAnchor(op[2], "ins after");
    checkSpec(op[3]);
  },
  copy: (op) => ["ins", op[1], op[2], copySpec(op[3])],
  apply(w, op, options, fx) {
    const [, parentId, after, spec] = op;
    const { root, count } = insert(w, op, options);
    fx?.insert(root, { parent: parentId, after }, spec, spec.id === undefined, count);
  },
  // The inserted root is the first id minted (or the spec's own id in restore form).
  invert: (w, op) => [["rm", (op[3].id ?? w.hwm + 1) as NodeId]],
  mapIds: (op, map) => ["ins", map(op[1]), mapAnchor(op[2], map), op[3].id === undefined ? op[3] : copySpec(op[3], map)],
  movesMark: () => true,
  minted(op, hwm, visit) {
    // As insert() mints: pre-order, a node before its children, children left to right; a
    // restore-form spec names its own ids and raises the mark to the highest.
    let mark = hwm;
    const stack: [NodeSpec, NodeId][] = [[op[3], op[1]]];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      const [s, parent] = top;
      const id = (s.id === undefined ? ++mark : s.id) as NodeId;
      if (id > mark) mark = id;
      visit?.(id, s, parent);
      if (s.children !== undefined) for (let i = s.children.length - 1; i >= 0; i--) stack.push([s.children[i] as NodeSpec, id]);
    }
    return mark;
  },
  attrsWritten(op, visit) {
    const stack: NodeSpec[] = [op[3]];
    for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
      if (s.attrs !== undefined) for (const [name, value] of Object.entries(s.attrs)) visit(s.tag, name, value, undefined);
      if (s.children !== undefined) for (const c of s.children) stack.push(c);
    }
  },
  textsWritten(op, visit) {
    // Pre-order, so the texts come in document order.
    const stack: NodeSpec[] = [op[3]];
    for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
      if (s.text !== undefined && s.text !== "") visit(s.text);
      if (s.children !== undefined) for (let i = s.children.length - 1; i >= 0; i--) stack.push(s.children[i] as NodeSpec);
    }
  },
  describe: (op) => `+<${op[3].tag}>${op[3].children?.length ? `(+${specSize(op[3]) - 1})` : ""} in #${op[1]}`,
};

function insert(w: TreeWriter, op: InsOp, options: ApplyOptions): { root: NodeId; count: number } {
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
  return { root: rootId as NodeId, count: entries.length };
}
