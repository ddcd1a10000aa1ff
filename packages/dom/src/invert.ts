/**
 * Inverting a patch (DOM-14). Each op's inverse needs only the state just before it; the inverse
 * of a patch is the inverses in reverse order. Applying `invertPatch(t, p)` to `applyPatch(t, p)`
 * gives back `t` exactly: same ids, same bytes, same high-water mark. Inverses use the restore forms
 * (explicit ids to bring a removed subtree back, `["set", 0, "hwm", n]` to un-mint ids).
 */
import { applyOpAt } from "./apply.ts";
import { specOf } from "./build.ts";
import { atOp, DomError } from "./errors.ts";
import type { NodeId } from "./ids.ts";
import { checkOp, type Op } from "./ops.ts";
import type { Rec, Tree } from "./tree.ts";
import { TreeWriter } from "./writer.ts";

/**
 * The patch that undoes `ops` applied to `before`. Throws the same `DomError` `applyPatch` would if
 * `ops` does not apply to `before`.
 */
export function invertPatch(before: Tree, ops: readonly Op[]): Op[] {
  const w = new TreeWriter(before);
  const inverses: Op[][] = [];
  for (let i = 0; i < ops.length; i++) {
    let inverse: Op[];
    try {
      inverse = inverseOf(w, checkOp(ops[i]));
    } catch (e) {
      if (e instanceof DomError) throw atOp(e, i);
      throw e;
    }
    applyOpAt(w, ops[i], i, {});
    inverses.push(inverse);
  }
  // Un-minting is collapsed into one final op: intermediate high-water marks are never needed,
  // since removing and restoring elements does not depend on the mark.
  const out: Op[] = [];
  for (let i = inverses.length - 1; i >= 0; i--) for (const op of inverses[i] as Op[]) if (!isHwmOp(op)) out.push(op);
  // Restore-form inserts inside the inverse may raise the mark, so end on it whenever the patch
  // could have moved it.
  if (w.hwm !== before.hwm || ops.some((op) => op[0] === "ins" || isHwmOp(op))) out.push(["set", 0, "hwm", String(before.hwm)]);
  return out;
}

function isHwmOp(op: Op): boolean {
  return op[0] === "set" && op[1] === 0;
}

/** The ops undoing `op`, computed from the state `w` holds just before `op` is applied. */
function inverseOf(w: TreeWriter, op: Op): Op[] {
  switch (op[0]) {
    case "ins": {
      // The inserted root is the first id minted (or the spec's own id in restore form).
      const rootId = op[3].id ?? w.hwm + 1;
      return [["rm", rootId as NodeId]];
    }
    case "rm": {
      const r = w.rec(op[1]);
      if (r === undefined) return []; // applyOpAt reports the error
      return [["ins", r.parent as NodeId, (r.prev === 0 ? null : r.prev) as NodeId, specOf(w, r.id, true)]];
    }
    case "set": {
      if (op[1] === 0) return [];
      const r = w.rec(op[1]);
      if (r === undefined) return [];
      return [["set", op[1], op[2], Object.hasOwn(r.attrs, op[2]) ? (r.attrs[op[2]] as string) : null]];
    }
    case "mv": {
      const r = w.rec(op[1]);
      if (r === undefined) return [];
      return [["mv", op[1], r.parent as NodeId, (r.prev === 0 ? null : r.prev) as NodeId]];
    }
    case "text":
    case "append": {
      const r: Rec | undefined = w.rec(op[1]);
      if (r === undefined) return [];
      return [["text", op[1], r.text]];
    }
  }
}
