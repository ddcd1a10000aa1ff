/**
 * The one depth limit of a session tree (DOM-34, decision 0019). Every way a tree can grow deeper
 * checks it before anything changes: `ins` (the spec alone in `checkSpec`, and the spec under its
 * parent when applied), `mv` (the moved subtree under its new parent), `parseXml` and
 * `fromSnapshot`. Because no tree is ever deeper, code that walks a tree or encodes a spec as
 * nested JSON (`JSON.stringify` recurses) stays far from the call-stack limit. Everything here is
 * iterative.
 */
import { DomError } from "./errors.ts";
import type { NodeSpec } from "./spec.ts";
import type { Rec } from "./tree.ts";

/**
 * The deepest a tree may be: the number of elements on the path from the root to any element,
 * both included (a tree holding only its root has depth 1). Session trees are a few levels deep;
 * 1,000 leaves room for any real document and keeps a spec's JSON (two nesting levels per
 * element) well inside every JSON encoder's recursion limit.
 */
export const MAX_DEPTH = 1000;

interface Reader {
  rec(id: number): Rec | undefined;
}

/** Levels of a node spec: 1 for a node without children. Iterative; O(nodes). */
export function specDepth(spec: NodeSpec): number {
  let max = 0;
  const stack: Array<[NodeSpec, number]> = [[spec, 1]];
  while (stack.length > 0) {
    const [s, d] = stack.pop() as [NodeSpec, number];
    if (d > max) max = d;
    const kids = s.children;
    if (kids !== undefined) for (let i = 0; i < kids.length; i++) stack.push([kids[i] as NodeSpec, d + 1]);
  }
  return max;
}

/**
 * Depth of element `id`: 1 for the root, one more per level below. O(depth): it follows the
 * parent links. Throws `unknown-node` when the element does not exist.
 */
export function depthOf(tree: Reader, id: number): number {
  let r = tree.rec(id);
  if (r === undefined) throw new DomError("unknown-node", `element ${id} does not exist in this tree`);
  let d = 1;
  while (r.parent !== 0) {
    r = tree.rec(r.parent) as Rec;
    d++;
  }
  return d;
}

/**
 * Levels of the subtree at `id` (1 for a leaf), counting at most to `limit + 1`: the walk stops
 * as soon as it finds a level beyond `limit`, so "is it taller than `limit`?" costs no more than
 * reaching the first element that is. O(subtree) otherwise; iterative.
 */
export function subtreeHeight(tree: Reader, id: number, limit = Number.POSITIVE_INFINITY): number {
  const root = tree.rec(id);
  if (root === undefined) throw new DomError("unknown-node", `element ${id} does not exist in this tree`);
  let max = 1;
  const stack: Array<[number, number]> = [];
  if (root.first !== 0) stack.push([root.first, 2]);
  while (stack.length > 0) {
    const [c, d] = stack.pop() as [number, number];
    if (d > max) {
      max = d;
      if (max > limit) return max;
    }
    const r = tree.rec(c) as Rec;
    if (r.next !== 0) stack.push([r.next, d]);
    if (r.first !== 0) stack.push([r.first, d + 1]);
  }
  return max;
}

/** The `too-large` error for an element that would sit at `depth` (DOM-34). */
export function tooDeep(what: string, depth: number): DomError {
  return new DomError(
    "too-large",
    `${what} would be ${depth} levels deep; a tree is at most ${MAX_DEPTH} levels deep (MAX_DEPTH). Flatten the structure`,
  );
}
