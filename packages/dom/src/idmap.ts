/**
 * Re-authoring ops under another numbering of ids (DOM-40; ProseMirror's `StepMap`). The engine
 * validates a patch where the caller wrote it and, when its line of history needs a new id range
 * (EN-17), moves every id the patch mints into that range: `shiftMinted`.
 */
import type { NodeId } from "./ids.ts";
import type { IdMap } from "./op/kind.ts";
import { type Op, opDef } from "./op/registry.ts";

/** `op` with every id it names (targets, parents, anchors, restore-form spec ids, the `hwm` value) passed through `map`. */
export function mapIds<O extends Op>(op: O, map: IdMap): O {
  return opDef(op).mapIds(op, map);
}

/**
 * `ops` with every id above `hwmBefore` — an id the same patch mints, when the patch is applied to
 * a tree whose mark is `hwmBefore` — moved up by `delta`. Applied to that tree after
 * `["set", 0, "hwm", String(hwmBefore + delta)]`, the result builds the same tree as `ops`, every
 * minted id `delta` higher (for patches that mint above the mark: without the restore forms).
 */
export function shiftMinted(ops: readonly Op[], hwmBefore: number, delta: number): Op[] {
  if (delta === 0) return [...ops];
  const map: IdMap = (id) => (id > hwmBefore ? ((id + delta) as NodeId) : id);
  return ops.map((op) => mapIds(op, map));
}
