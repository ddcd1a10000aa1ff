/** `["mv", id, parent, after|null]` (DOM-12): moves an element (not fixed) and its subtree. */
import { depthOf, MAX_DEPTH, subtreeHeight, tooDeep } from "../depth.ts";
import { DomError } from "../errors.ts";
import type { NodeId } from "../ids.ts";
import type { Rec } from "../tree.ts";
import { checkAnchor, checkId, mapAnchor, type OpDef } from "./kind.ts";
import { checkCanHoldChildren, checkMovable, label, link, need, positionOf, slotAfter, unlink } from "./place.ts";

/** Move an element under `parent` after sibling `after` (null: first). */
export type MvOp = readonly ["mv", id: NodeId, parent: NodeId, after: NodeId | null];

export const mv: OpDef<MvOp> = {
  kind: "mv",
  args: 3,
  check(op) {
    checkId(op[1], "mv id");
    checkId(op[2], "mv parent");
    checkAnchor(op[3], "mv after");
  },
  copy: (op) => ["mv", op[1], op[2], op[3]],
  apply(w, op, _options, fx) {
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
    // Read before anything is written: `r` may be this patch's own copy, which the edit below changes.
    const from = fx === undefined ? undefined : positionOf(r);
    if (r.parent === parentId && r.prev === (after ?? 0)) {
      if (from !== undefined) fx?.move(id, from, from); // already there
      return;
    }
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
    if (from !== undefined) fx?.move(id, from, { parent: parentId, after });
  },
  invert(w, op) {
    const r = w.rec(op[1]);
    if (r === undefined) return [];
    return [["mv", op[1], r.parent as NodeId, (r.prev === 0 ? null : r.prev) as NodeId]];
  },
  mapIds: (op, map) => ["mv", map(op[1]), map(op[2]), mapAnchor(op[3], map)],
  movesMark: () => false,
  minted: (_op, hwm) => hwm,
  attrsWritten() {},
  textsWritten() {},
  describe: (op) => `#${op[1]} → #${op[2]}`,
};
