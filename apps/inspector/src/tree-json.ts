/**
 * The tree as the web app reads it (IN-4, IN-15): JSON of an element and its subtree, windowed so
 * one response's size and cost are bounded by what a screen can show, whatever the session's
 * length or shape.
 */
import type { Element } from "@strata/dom";
import type { Elided, NodeJson } from "./protocol.ts";

/** How much of a tree one response carries: long texts are cut, long child lists windowed. */
export interface TreeWindow {
  /** Characters of text per element (the full length is given as `textLength`). */
  readonly maxText: number;
  /** A parent with more children than this shows only the first `head` and last `tail`. */
  readonly maxChildren: number;
  readonly head: number;
  readonly tail: number;
  /** Elements one response shows at most (wide and deep trees alike); the rest is elided. */
  readonly maxElements: number;
}

export const FULL: TreeWindow = {
  maxText: Number.POSITIVE_INFINITY,
  maxChildren: Number.POSITIVE_INFINITY,
  head: 0,
  tail: 0,
  maxElements: Number.POSITIVE_INFINITY,
};
export const WINDOW: TreeWindow = { maxText: 2000, maxChildren: 400, head: 20, tail: 200, maxElements: 20_000 };
/** The largest tree `?full=1` serves whole (a larger one is refused: use the windowed view). */
export const FULL_MAX_ELEMENTS = 200_000;

/**
 * JSON of `el` and its subtree. With a window, only the first and last children of a long list
 * are visited (through sibling links, so the pages of the skipped ones are never loaded); the
 * skipped run is `{"elided": {"after": id, "before": id}}`, and a cut text has `textLength`
 * (fetch it whole from /text). Once `maxElements` are shown, the rest of each open list is one
 * elided run to its end. `budget` is shared by the calls that build one response.
 */
export function treeJson(el: Element, w: TreeWindow = FULL, budget: { left: number } = { left: w.maxElements }): NodeJson {
  budget.left--;
  const out: NodeJson = { id: el.id, tag: el.tag, attrs: el.attrs };
  if (el.text !== "") {
    out.text = el.text.length > w.maxText ? el.text.slice(0, w.maxText) : el.text;
    if (el.text.length > w.maxText) out.textLength = el.text.length;
  }
  const head: Element[] = [];
  let c = el.firstChild;
  while (c !== null && head.length <= w.maxChildren) {
    head.push(c);
    c = c.nextSibling;
  }
  if (head.length === 0) return out;
  const children: (NodeJson | Elided)[] = [];
  /** Shows `kids` in order; false once the budget ran out (the rest of the list is then elided). */
  const show = (kids: readonly Element[]): boolean => {
    for (const k of kids) {
      if (budget.left <= 0) {
        const last = children.findLast((x): x is NodeJson => "id" in x);
        children.push({ elided: last === undefined ? { before: 0 } : { after: last.id, before: 0 } } satisfies Elided);
        return false;
      }
      children.push(treeJson(k, w, budget));
    }
    return true;
  };
  out.children = children;
  if (c === null) {
    show(head);
    return out;
  }
  const tail: Element[] = [];
  for (let t = el.lastChild; t !== null && tail.length < w.tail; t = t.prevSibling) tail.unshift(t);
  const shown = head.slice(0, w.head);
  if (!show(shown)) return out;
  children.push({ elided: { after: (shown[shown.length - 1] as Element).id, before: (tail[0] as Element).id } } satisfies Elided);
  show(tail);
  return out;
}
