/**
 * Applying ops (DOM-7 … DOM-14). `applyPatch` is the one fold used for live writes and for replay:
 * it validates each op against the state the previous ops produced and either returns the new
 * version or throws, leaving the input untouched. Asked to, it also reports what the patch did
 * (DOM-39): each op kind's `apply` records its changes as it makes them.
 */
import { EffectLog, type PatchEffect } from "./effect.ts";
import { atOp, DomError, type DomResult } from "./errors.ts";
import { type Op, opDef } from "./op/registry.ts";
import { checkOp } from "./ops.ts";
import type { Tree } from "./tree.ts";
import { TreeWriter } from "./writer.ts";

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
  /**
   * Called once, when the patch has applied, with what it did (DOM-39). Without it nothing is
   * recorded; a patch that fails calls nothing.
   */
  readonly onEffect?: (effect: PatchEffect) => void;
}

/**
 * Applies `ops` in order, all or nothing. Returns the new version (the same `Tree` when nothing
 * changed). Throws a `DomError` whose `opIndex` names the first failing op; `tree` is unchanged.
 */
export function applyPatch(tree: Tree, ops: readonly Op[], options: ApplyOptions = {}): Tree {
  if (!Array.isArray(ops)) throw new DomError("bad-op", "a patch must be an array of ops");
  const w = new TreeWriter(tree);
  const onEffect = options.onEffect;
  if (onEffect === undefined) {
    for (let i = 0; i < ops.length; i++) applyOpAt(w, ops[i], i, options, undefined);
    return w.finish();
  }
  const fx = new EffectLog(tree.hwm);
  for (let i = 0; i < ops.length; i++) {
    fx.op = i;
    applyOpAt(w, ops[i], i, options, fx);
  }
  const after = w.finish();
  onEffect(fx.finish(after.hwm));
  return after;
}

/** {@link applyPatch}, returning the new version together with what the patch did (DOM-39). */
export function applyWithEffect(
  tree: Tree,
  ops: readonly Op[],
  options: Omit<ApplyOptions, "onEffect"> = {},
): { tree: Tree; effect: PatchEffect } {
  let effect: PatchEffect | undefined;
  const after = applyPatch(tree, ops, { ...options, onEffect: (e) => (effect = e) });
  return { tree: after, effect: effect as PatchEffect };
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
export function applyOpAt(w: TreeWriter, op: unknown, i: number, options: ApplyOptions, fx: EffectLog | undefined): void {
  try {
    const checked = options.trusted === true ? (op as Op) : checkOp(op);
    opDef(checked).apply(w, checked, options, fx);
  } catch (e) {
    if (e instanceof DomError) throw atOp(e, i);
    throw e;
  }
}
