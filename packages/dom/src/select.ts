/**
 * CSS selectors over a tree version (DOM-24 … DOM-27, DOM-37): strata's own parser
 * (`selector-parse.ts`) and matcher (`selector-match.ts`), checked differentially against
 * Chromium's `querySelectorAll` (decision 0019). Every call compiles against a fresh matcher, so
 * results can never come from another version (DOM-26). Queries whose every alternative names its
 * subject's tag use the tree's tag index on large trees (DOM-33).
 */
import { DomError } from "./errors.ts";
import { Matcher, type Test } from "./selector-match.ts";
import { type Complex, parseSelector } from "./selector-parse.ts";
import { ensureIndex, INDEX_MIN_SIZE, indexOf, type TagIndex } from "./tagindex.ts";
import { type Element, type Rec, type Tree, viewOf } from "./tree.ts";

export interface SelectOptions {
  /**
   * Search only the descendants of this element (default: the whole tree, root included), which
   * `:scope` then names; as with `element.querySelectorAll`, the rest of the selector may still
   * match ancestors outside it.
   */
  readonly within?: number;
}

/** Every element matching `selector`, in document order. Throws `bad-selector` on a bad selector. */
export function select(tree: Tree, selector: string, options: SelectOptions = {}): Element[] {
  return query(tree, selector, options, "all").map((r) => viewOf(tree, r));
}

/** The first element matching `selector` in document order, or `undefined`. */
export function selectOne(tree: Tree, selector: string, options: SelectOptions = {}): Element | undefined {
  const found = query(tree, selector, options, "one")[0];
  return found === undefined ? undefined : viewOf(tree, found);
}

/** Number of elements matching `selector`. */
export function count(tree: Tree, selector: string, options: SelectOptions = {}): number {
  return query(tree, selector, options, "all").length;
}

/** True when element `id` matches `selector`. */
export function matches(tree: Tree, id: number, selector: string): boolean {
  const r = tree.rec(id);
  if (r === undefined) throw new DomError("unknown-node", `element ${id} does not exist in this tree`);
  return new Matcher(tree, tree.rootId).list(parse(selector))(r);
}

function parse(selector: string): Complex[] {
  if (typeof selector !== "string") throw new DomError("bad-selector", `a selector must be a string, got ${typeof selector}`);
  if (selector.trim() === "") throw new DomError("bad-selector", "the selector is empty; use * to match every element");
  return parseSelector(selector);
}

function query(tree: Tree, selector: string, options: SelectOptions, mode: "all" | "one"): Rec[] {
  const list = parse(selector);
  let start: Rec;
  if (options.within === undefined) start = tree.rec(tree.rootId) as Rec;
  else {
    const r = tree.rec(options.within);
    if (r === undefined) throw new DomError("unknown-node", `element ${options.within} does not exist in this tree`);
    start = r;
  }
  const test = new Matcher(tree, start.id).list(list);
  const ids = options.within === undefined ? indexed(tree, list, test, mode) : undefined;
  if (ids !== undefined) return ids.map((id) => tree.rec(id) as Rec);
  // Document order: the root itself (whole-tree queries only), then its descendants, iteratively.
  const out: Rec[] = [];
  if (options.within === undefined && test(start)) {
    out.push(start);
    if (mode === "one") return out;
  }
  const stack: number[] = start.first === 0 ? [] : [start.first];
  while (stack.length > 0) {
    const r = tree.rec(stack.pop() as number) as Rec;
    if (test(r)) {
      out.push(r);
      if (mode === "one") return out;
    }
    if (r.next !== 0) stack.push(r.next);
    if (r.first !== 0) stack.push(r.first);
  }
  return out;
}

/**
 * The tag every element matching this complex selector must have (undefined: none named), and the
 * `[name=value]` conditions on it that a plain property read can check before the full test.
 */
function subject(c: Complex): { tag: string | undefined; equals: [string, string][]; alone: boolean } {
  const last = c.compounds[c.compounds.length - 1] as Complex["compounds"][number];
  const equals: [string, string][] = [];
  for (const cond of last.conditions) if (cond.kind === "attr" && cond.op === "=" && !cond.ignoreCase) equals.push([cond.name, cond.value]);
  return { tag: last.tag, equals, alone: c.compounds.length === 1 && last.conditions.length === equals.length };
}

/**
 * The indexed path (DOM-33): when every alternative of the selector names its subject's tag and
 * the tree is large, test only the elements of those tags (in document order, from the tag index)
 * with the compiled selector. Returns undefined to fall back to a traversal.
 */
function indexed(tree: Tree, list: readonly Complex[], test: Test, mode: "all" | "one"): readonly number[] | undefined {
  let index = indexOf(tree);
  if (index === undefined) {
    if (tree.size < INDEX_MIN_SIZE) return undefined;
    index = ensureIndex(tree);
  }
  const tags = new Set<string>();
  const subjects = list.map(subject);
  for (const s of subjects) {
    if (s.tag === undefined) return undefined;
    tags.add(s.tag);
  }
  // With one alternative, its [name=value] conditions are a cheap first filter; when they and the
  // tag are all it says, the index's list is the answer and no element needs testing.
  const only = subjects.length === 1 ? (subjects[0] as ReturnType<typeof subject>) : undefined;
  const equals = only?.equals ?? [];
  let ids: readonly number[];
  const first = equals[0];
  if (tags.size === 1 && first !== undefined) ids = index.withAttr(tree, [...tags][0] as string, first[0], first[1]);
  else if (tags.size === 1) ids = index.ids([...tags][0] as string);
  else {
    const all = [...tags].flatMap((t) => index.ids(t));
    const label = (id: number) => (index as TagIndex).label(id) as number;
    ids = all.sort((a, b) => label(a) - label(b));
  }
  if (only?.alone === true && equals.length <= 1) return mode === "one" ? ids.slice(0, 1) : ids;
  const out: number[] = [];
  outer: for (const id of ids) {
    const r = tree.rec(id) as Rec;
    for (const [name, value] of equals) if (r.attrs[name] !== value) continue outer;
    if (test(r)) {
      out.push(id);
      if (mode === "one") break;
    }
  }
  return out;
}
