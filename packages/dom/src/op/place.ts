/**
 * Finding elements and splicing them in and out of a child list, for the op kinds that place
 * elements (`ins`, `rm`, `mv`). Child order is a doubly linked list through the records (tree.ts),
 * so each of these touches a constant number of records.
 */
import type { DiffPosition } from "../diff.ts";
import { DomError } from "../errors.ts";
import type { NodeId } from "../ids.ts";
import type { Rec } from "../tree.ts";
import type { TreeWriter } from "../writer.ts";

/** The record of `id`, or an `unknown-node` error naming the role it was needed for. */
export function need(w: { rec(id: number): Rec | undefined }, id: number, role: string): Rec {
  const r = w.rec(id);
  if (r === undefined) throw new DomError("unknown-node", `${role} ${id} does not exist in this tree`);
  return r;
}

/** How error messages name an element. */
export function label(r: Rec): string {
  return `element ${r.id} <${r.tag}>`;
}

/** Where `r` sits: its parent and preceding sibling. */
export function positionOf(r: Rec): DiffPosition {
  return { parent: r.parent as NodeId, after: r.prev === 0 ? null : (r.prev as NodeId) };
}

/** Where a new child goes: the `next` sibling it will precede, after checking the anchor. */
export function slotAfter(w: TreeWriter, parent: Rec, after: number | null, what: string): number {
  if (after === null) return parent.first;
  const a = w.rec(after);
  if (a === undefined || a.parent !== parent.id)
    throw new DomError(
      "bad-anchor",
      `${what}: anchor ${after} is not a child of ${label(parent)}; use a child's id, or null for the first position`,
    );
  return a.next;
}

/** Throws `mixed-content` when `parent` holds text (DOM-4). */
export function checkCanHoldChildren(parent: Rec): void {
  if (parent.text !== "")
    throw new DomError(
      "mixed-content",
      `${label(parent)} has text, so it cannot also have child elements (clear it with a "text" op first)`,
    );
}

/** Throws `fixed-node` for the root and the skeleton (DOM-3). */
export function checkMovable(w: TreeWriter, r: Rec, verb: string): void {
  if (w.isFixed(r.id) || r.id === w.rootId)
    throw new DomError("fixed-node", `${label(r)} is part of the fixed skeleton and cannot be ${verb}`);
}

/** Splices the (already stored) record `id` between `prev` (or the front) and `next` under `parentId`. */
export function link(w: TreeWriter, id: number, parentId: number, prev: number | null, next: number): void {
  if (prev === null || prev === 0) w.edit(parentId).first = id;
  else w.edit(prev).next = id;
  if (next === 0) w.edit(parentId).last = id;
  else w.edit(next).prev = id;
}

/** Detaches record `r` from its parent and siblings (its own pointers are left to the caller). */
export function unlink(w: TreeWriter, r: Rec): void {
  if (r.prev === 0) w.edit(r.parent).first = r.next;
  else w.edit(r.prev).next = r.next;
  if (r.next === 0) w.edit(r.parent).last = r.prev;
  else w.edit(r.next).prev = r.prev;
}
