/**
 * CSS selectors over a tree version (DOM-24 … DOM-27), through css-select with an adapter whose
 * node handles are this version's records. Every call compiles against a fresh adapter, so results
 * can never come from another version (css-select caches live inside the compiled query).
 * Positional pseudo-classes are replaced by versions that index each sibling list once per query,
 * so `:nth-child` under a parent with 20,000 children stays linear.
 */
import { compile, is as cssIs, selectOne as cssSelectOne, type Options, selectAll } from "css-select";
import { parse, type Selector } from "css-what";
import nthCheck from "nth-check";
import { DomError } from "./errors.ts";
import { ensureIndex, INDEX_MIN_SIZE, indexOf, type TagIndex } from "./tagindex.ts";
import { type Element, type Rec, type Tree, textContent, viewOf } from "./tree.ts";

type Adapter = NonNullable<Options<Rec, Rec>["adapter"]>;
type QueryOptions = Options<Rec, Rec>;

export interface SelectOptions {
  /** Search only the descendants of this element (default: the whole tree, root included). */
  readonly within?: number;
}

const EMPTY: readonly Rec[] = Object.freeze([]);

/** Every element matching `selector`, in document order. Throws `bad-selector` on a bad selector. */
export function select(tree: Tree, selector: string, options: SelectOptions = {}): Element[] {
  const q = new Query(tree);
  const found = run(selector, (tokens) => {
    const ids = indexed(tree, tokens, q, options, "all");
    return ids === undefined ? selectAll<Rec, Rec>(tokens, q.context(options), q.options) : ids.map((id) => tree.rec(id) as Rec);
  });
  return found.map((r) => viewOf(tree, r));
}

/** The first element matching `selector` in document order, or `undefined`. */
export function selectOne(tree: Tree, selector: string, options: SelectOptions = {}): Element | undefined {
  const q = new Query(tree);
  const found = run(selector, (tokens) => {
    const hit = indexed(tree, tokens, q, options, "one");
    if (hit === undefined) return cssSelectOne<Rec, Rec>(tokens, q.context(options), q.options);
    return hit.length === 0 ? null : (tree.rec(hit[0] as number) as Rec);
  });
  return found === null ? undefined : viewOf(tree, found);
}

const COMBINATORS = new Set(["descendant", "child", "parent", "sibling", "adjacent", "column-combinator"]);

/**
 * The tag every element matching this alternative must have (undefined: none named), and the
 * `[name=value]` conditions on it that a plain property read can check before the full test.
 */
function subject(group: readonly Selector[]): { tag: string | undefined; equals: [string, string][] } {
  let tag: string | undefined;
  const equals: [string, string][] = [];
  for (let i = group.length - 1; i >= 0; i--) {
    const t = group[i] as Selector;
    if (COMBINATORS.has(t.type)) break;
    if (t.type === "tag") tag = t.name;
    else if (t.type === "attribute" && t.action === "equals" && t.ignoreCase !== true && t.ignoreCase !== "quirks" && t.namespace == null)
      equals.push([t.name, t.value]);
  }
  return { tag, equals };
}

/**
 * The indexed path (DOM-33): when every alternative of the selector names its subject's tag and
 * the tree is large, test only the elements of those tags (in document order, from the tag
 * index) with the compiled selector. Returns undefined to fall back to a traversal.
 */
function indexed(tree: Tree, tokens: Selector[][], q: Query, options: SelectOptions, mode: "all" | "one"): readonly number[] | undefined {
  if (options.within !== undefined) return undefined;
  let index = indexOf(tree);
  if (index === undefined) {
    if (tree.size < INDEX_MIN_SIZE) return undefined;
    index = ensureIndex(tree);
  }
  const tags = new Set<string>();
  const subjects = tokens.map(subject);
  for (const s of subjects) {
    if (s.tag === undefined) return undefined;
    tags.add(s.tag);
  }
  // With one alternative, its [name=value] conditions are a cheap first filter; when they and the
  // tag are all it says, the index's list is the answer and no element needs testing.
  const equals = subjects.length === 1 ? (subjects[0] as { equals: [string, string][] }).equals : [];
  const exact = tokens.length === 1 && (tokens[0] as Selector[]).length === 1 + equals.length;
  const test = compile<Rec, Rec>(tokens, q.options);
  let ids: readonly number[];
  const first = equals[0];
  if (tags.size === 1 && first !== undefined) ids = index.withAttr(tree, [...tags][0] as string, first[0], first[1]);
  else if (tags.size === 1) ids = index.ids([...tags][0] as string);
  else {
    const all = [...tags].flatMap((t) => index.ids(t));
    const label = (id: number) => (index as TagIndex).label(id) as number;
    ids = all.sort((a, b) => label(a) - label(b));
  }
  if (exact && equals.length <= 1) return mode === "one" ? ids.slice(0, 1) : ids;
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

/** True when element `id` matches `selector`. */
export function matches(tree: Tree, id: number, selector: string): boolean {
  const r = tree.rec(id);
  if (r === undefined) throw new DomError("unknown-node", `element ${id} does not exist in this tree`);
  const q = new Query(tree);
  return run(selector, (tokens) => cssIs<Rec, Rec>(r, tokens, q.options));
}

/** Number of elements matching `selector`. */
export function count(tree: Tree, selector: string, options: SelectOptions = {}): number {
  const q = new Query(tree);
  return run(selector, (tokens) => indexed(tree, tokens, q, options, "all") ?? selectAll<Rec, Rec>(tokens, q.context(options), q.options))
    .length;
}

function run<T>(selector: string, f: (tokens: Selector[][]) => T): T {
  if (typeof selector !== "string") throw new DomError("bad-selector", `a selector must be a string, got ${typeof selector}`);
  if (selector.trim() === "") throw new DomError("bad-selector", "the selector is empty; use * to match every element");
  try {
    return f(prepare(selector));
  } catch (e) {
    if (e instanceof DomError) throw e;
    const message = (e as Error).message ?? String(e);
    const rest = /^(?:Unmatched selector: |Expected name, found )(.*)$/s.exec(message)?.[1];
    const column = rest !== undefined && selector.endsWith(rest) ? selector.length - rest.length + 1 : undefined;
    throw new DomError(
      "bad-selector",
      `invalid selector ${JSON.stringify(selector)}: ${message}${column !== undefined ? ` (column ${column})` : ""}`,
      column !== undefined ? { line: 1, column } : {},
    );
  }
}

const NTH = new Set(["nth-child", "nth-last-child", "nth-of-type", "nth-last-of-type"]);

/**
 * Parses once and fixes up what css-select would otherwise get wrong or check lazily:
 * - `[a!=""]` becomes `:not([a=""])`, so it also matches elements without `a` (DOM-25);
 * - every `:nth-*()` formula and `of S` selector is checked now, so a bad one fails on every tree,
 *   not only on trees where an element reaches it (DOM-27).
 */
function prepare(selector: string): Selector[][] {
  const tokens = parse(selector);
  const fix = (groups: Selector[][]): void => {
    for (const group of groups)
      for (let i = 0; i < group.length; i++) {
        const t = group[i] as Selector;
        if (t.type === "attribute" && t.action === "not" && t.value === "") {
          group[i] = { type: "pseudo" as Selector["type"], name: "not", data: [[{ ...t, action: "equals" }]] } as Selector;
        } else if (t.type === "pseudo") {
          if (Array.isArray(t.data)) fix(t.data);
          else if (NTH.has(t.name)) {
            const of = /^(.+?)\s+of\s+(.+)$/is.exec(t.data ?? "");
            nthCheck((of?.[1] ?? t.data ?? "").trim());
            if (of !== null) fix(parse((of[2] as string).trim()));
          }
        }
      }
  };
  fix(tokens);
  return tokens;
}

interface SiblingIndex {
  readonly position: Map<Rec, number>;
  readonly typePosition: Map<Rec, number>;
  readonly typeCount: Map<string, number>;
  readonly list: readonly Rec[];
}

/** The adapter and per-query caches for one version. */
class Query {
  readonly options: QueryOptions;
  private readonly siblings = new Map<number, SiblingIndex>();
  private readonly nth = new Map<string, (i: number) => boolean>();
  private readonly ofLists = new Map<string, { readonly positions: Map<Rec, number>; readonly total: number }>();
  private readonly ofQueries = new Map<string, (el: Rec) => boolean>();

  constructor(private readonly tree: Tree) {
    const adapter: Adapter = {
      isTag: (n: Rec): n is Rec => true,
      getName: (e) => e.tag,
      getAttributeValue: (e, a) => (Object.hasOwn(e.attrs, a) ? e.attrs[a] : undefined),
      hasAttrib: (e, a) => Object.hasOwn(e.attrs, a),
      getChildren: (n) => (n.first === 0 ? (EMPTY as Rec[]) : this.children(n)),
      getParent: (e) => (e.parent === 0 ? null : (tree.rec(e.parent) as Rec)),
      getSiblings: (n) => (n.parent === 0 ? [n] : (this.index(n).list as Rec[])),
      prevElementSibling: (n) => (n.prev === 0 ? null : (tree.rec(n.prev) as Rec)),
      getText: (n) => textContent(tree, n),
      removeSubsets: (nodes) => removeSubsets(tree, nodes),
      equals: (a, b) => a === b,
    };
    this.options = { adapter, xmlMode: true, pseudos: this.pseudos() };
  }

  /** Where to search: the root itself included, or (`within`) the descendants of one element, which `:scope` names. */
  context(options: SelectOptions): Rec | Rec[] {
    if (options.within === undefined) return [this.tree.rec(this.tree.rootId) as Rec];
    const r = this.tree.rec(options.within);
    if (r === undefined) throw new DomError("unknown-node", `element ${options.within} does not exist in this tree`);
    return r;
  }

  private children(r: Rec): Rec[] {
    const out: Rec[] = [];
    for (let c = r.first; c !== 0; ) {
      const cr = this.tree.rec(c) as Rec;
      out.push(cr);
      c = cr.next;
    }
    return out;
  }

  /** Position data for the siblings of `n`, built once per parent per query. */
  private index(n: Rec): SiblingIndex {
    let idx = this.siblings.get(n.parent);
    if (idx === undefined) {
      const list = n.parent === 0 ? [n] : this.children(this.tree.rec(n.parent) as Rec);
      const position = new Map<Rec, number>();
      const typePosition = new Map<Rec, number>();
      const typeCount = new Map<string, number>();
      for (let i = 0; i < list.length; i++) {
        const r = list[i] as Rec;
        position.set(r, i);
        const k = typeCount.get(r.tag) ?? 0;
        typePosition.set(r, k);
        typeCount.set(r.tag, k + 1);
      }
      idx = { position, typePosition, typeCount, list };
      this.siblings.set(n.parent, idx);
    }
    return idx;
  }

  private check(formula: string): (i: number) => boolean {
    let f = this.nth.get(formula);
    if (f === undefined) {
      f = nthCheck(formula);
      this.nth.set(formula, f);
    }
    return f;
  }

  /** Position of `n` among its siblings that match `selector` (`:nth-child(An+B of S)`), or -1. */
  private ofPosition(n: Rec, selector: string, fromEnd: boolean): number {
    const key = `${n.parent}\u0000${selector}`;
    let entry = this.ofLists.get(key);
    if (entry === undefined) {
      let test = this.ofQueries.get(selector);
      if (test === undefined) {
        test = compile<Rec, Rec>(prepare(selector), this.options);
        this.ofQueries.set(selector, test);
      }
      const positions = new Map<Rec, number>();
      for (const s of this.index(n).list) if (test(s)) positions.set(s, positions.size);
      entry = { positions, total: positions.size };
      this.ofLists.set(key, entry);
    }
    const p = entry.positions.get(n);
    if (p === undefined) return -1;
    return fromEnd ? entry.total - 1 - p : p;
  }

  private pseudos(): Record<string, (el: Rec, data?: string | null) => boolean> {
    // Narrow parents: count along the sibling links (cheap, no allocation). Wide parents (or ones
    // already indexed): the per-parent index built once per query keeps everything linear.
    const WALK = 32;
    const walk = (el: Rec, dir: "prev" | "next", sameTag: boolean): number => {
      let n = 0;
      for (let s = el[dir], steps = 0; s !== 0; steps++) {
        if (steps >= WALK) return -1;
        const r = this.tree.rec(s) as Rec;
        if (!sameTag || r.tag === el.tag) n++;
        s = r[dir];
      }
      return n;
    };
    const counted = (el: Rec, sameTag: boolean): { before: number; after: number } | undefined => {
      if (this.siblings.has(el.parent)) return undefined;
      const before = walk(el, "prev", sameTag);
      if (before < 0) return undefined;
      const after = walk(el, "next", sameTag);
      return after < 0 ? undefined : { before, after };
    };
    const pos = (el: Rec) => counted(el, false)?.before ?? (this.index(el).position.get(el) as number);
    const len = (el: Rec) => {
      const c = counted(el, false);
      return c === undefined ? this.index(el).list.length : c.before + c.after + 1;
    };
    const tpos = (el: Rec) => counted(el, true)?.before ?? (this.index(el).typePosition.get(el) as number);
    const tlen = (el: Rec) => {
      const c = counted(el, true);
      return c === undefined ? (this.index(el).typeCount.get(el.tag) as number) : c.before + c.after + 1;
    };
    const nth = (fromEnd: boolean) => (el: Rec, data?: string | null) => {
      const formula = data ?? "";
      const of = /^(.+?)\s+of\s+(.+)$/is.exec(formula);
      if (of !== null) {
        const p = this.ofPosition(el, (of[2] as string).trim(), fromEnd);
        return p >= 0 && this.check((of[1] as string).trim())(p);
      }
      return this.check(formula)(fromEnd ? len(el) - 1 - pos(el) : pos(el));
    };
    const nthType = (fromEnd: boolean) => (el: Rec, data?: string | null) =>
      this.check(data ?? "")(fromEnd ? tlen(el) - 1 - tpos(el) : tpos(el));
    return {
      "first-child": (el) => el.prev === 0,
      "last-child": (el) => el.next === 0,
      "only-child": (el) => el.prev === 0 && el.next === 0,
      "first-of-type": (el) => tpos(el) === 0,
      "last-of-type": (el) => tpos(el) === tlen(el) - 1,
      "only-of-type": (el) => tlen(el) === 1,
      "nth-child": nth(false),
      "nth-last-child": nth(true),
      "nth-of-type": nthType(false),
      "nth-last-of-type": nthType(true),
    };
  }
}

function removeSubsets(tree: Tree, nodes: Rec[]): Rec[] {
  const set = new Set(nodes);
  const out: Rec[] = [];
  for (const n of set) {
    let covered = false;
    for (let p = n.parent; p !== 0 && !covered; p = (tree.rec(p) as Rec).parent) covered = set.has(tree.rec(p) as Rec);
    if (!covered) out.push(n);
  }
  return out;
}
