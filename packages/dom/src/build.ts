/**
 * Making trees from nothing: an empty tree and the fixed skeleton of a session (DOM-3).
 */
import { applyPatch } from "./apply.ts";
import { dirFromSlots } from "./dir.ts";
import type { InsertChange } from "./effect.ts";
import { DomError } from "./errors.ts";
import type { NodeId } from "./ids.ts";
import { checkName } from "./names.ts";
import type { Op } from "./ops.ts";
import { checkSpec, type NodeSpec } from "./spec.ts";
import { makeTree, NO_ATTRS, type Rec, type Tree } from "./tree.ts";

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
  tree = applyPatch(tree, ops);
  // Each child goes after the one before; the effect says which id that one got.
  let after: NodeId | null = null;
  for (const child of spec.children ?? [])
    tree = applyPatch(tree, [["ins", tree.rootId, after, child]], {
      onEffect: (e) => {
        after = (e.changes[0] as InsertChange).root;
      },
    });
  const fixed: number[] = [];
  for (let id = 1; id <= tree.hwm; id++) fixed.push(id);
  return makeTree(tree.hwm, tree.rootId, fixed, tree.size, tree.dir);
}
