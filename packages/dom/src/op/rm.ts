/** `["rm", id]` (DOM-10): removes an element (not fixed) and its subtree. */
import type { NodeId } from "../ids.ts";
import { specOf } from "../spec.ts";
import type { Rec } from "../tree.ts";
import { checkId, type OpDef } from "./kind.ts";
import { checkMovable, need, positionOf, unlink } from "./place.ts";

/** Remove an element and its subtree. */
export type RmOp = readonly ["rm", id: NodeId];

export const rm: OpDef<RmOp> = {
  kind: "rm",
  args: 1,
  check(op) {
    checkId(op[1], "rm id");
  },
  copy: (op) => ["rm", op[1]],
  apply(w, op, _options, fx) {
    const id = op[1];
    const r = need(w, id, "rm target");
    checkMovable(w, r, "removed");
    const at = fx === undefined ? undefined : positionOf(r);
    unlink(w, r);
    // Remove the whole subtree in pre-order, iteratively (trees may be deep).
    const ids: NodeId[] | undefined = fx === undefined ? undefined : [];
    const stack = [id as number];
    while (stack.length > 0) {
      const x = stack.pop() as number;
      const xr = w.rec(x) as Rec;
      for (let c = xr.last; c !== 0; c = (w.rec(c) as Rec).prev) stack.push(c);
      ids?.push(x as NodeId);
      w.remove(x);
    }
    if (fx !== undefined) fx.remove(id, at as NonNullable<typeof at>, ids as NodeId[]);
  },
  invert(w, op) {
    const r = w.rec(op[1]);
    if (r === undefined) return [];
    return [["ins", r.parent as NodeId, (r.prev === 0 ? null : r.prev) as NodeId, specOf(w, r.id, true)]];
  },
  mapIds: (op, map) => ["rm", map(op[1])],
  movesMark: () => false,
  minted: (_op, hwm) => hwm,
  attrsWritten() {},
  textsWritten() {},
  describe: (op, _quote, tree) => `-#${op[1]}${tree?.get(op[1]) ? ` <${tree.get(op[1])?.tag}>` : ""}`,
};
