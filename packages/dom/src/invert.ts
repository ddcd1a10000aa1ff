/**
 * Inverting a patch (DOM-14). Each op's inverse needs only the state just before it; the inverse
 * of a patch is the inverses in reverse order. Applying `invertPatch(t, p)` to `applyPatch(t, p)`
 * gives back `t` exactly: same ids, same bytes, same high-water mark. Inverses use the restore forms
 * (explicit ids to bring a removed subtree back, `["set", 0, "hwm", n]` to un-mint ids).
 */
import { applyOpAt } from "./apply.ts";
import { atOp, DomError } from "./errors.ts";
import { type Op, opDef } from "./op/registry.ts";
import { checkOp } from "./ops.ts";
import type { Tree } from "./tree.ts";
import { TreeWriter } from "./writer.ts";

/**
 * The patch that undoes `ops` applied to `before`. Throws the same `DomError` `applyPatch` would if
 * `ops` does not apply to `before`.
 */
export function invertPatch(before: Tree, ops: readonly Op[]): Op[] {
  const w = new TreeWriter(before);
  const inverses: Op[][] = [];
  let movesMark = false;
  for (let i = 0; i < ops.length; i++) {
    let inverse: Op[];
    try {
      const op = checkOp(ops[i]);
      inverse = opDef(op).invert(w, op);
      movesMark ||= opDef(op).movesMark(op);
    } catch (e) {
      if (e instanceof DomError) throw atOp(e, i);
      throw e;
    }
    applyOpAt(w, ops[i], i, {}, undefined);
    inverses.push(inverse);
  }
  // Un-minting is one final op: intermediate high-water marks are never needed, since removing and
  // restoring elements does not depend on the mark (no kind's inverse is an `hwm` op).
  const out: Op[] = [];
  for (let i = inverses.length - 1; i >= 0; i--) for (const op of inverses[i] as Op[]) out.push(op);
  // Restore-form inserts inside the inverse may raise the mark, so end on it whenever the patch
  // could have moved it.
  if (w.hwm !== before.hwm || movesMark) out.push(["set", 0, "hwm", String(before.hwm)]);
  return out;
}
