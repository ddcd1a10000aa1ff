/**
 * Matching parsed selectors against one tree version (DOM-24 … DOM-27, decision 0019). A
 * `Matcher` compiles selectors into tests over records and holds the caches of one query (sibling
 * indexes, memo tables), so nothing outlives the query (DOM-26).
 *
 * Complex selectors match right to left. The branching combinators (descendant, `~`) are memoized
 * per compound and element ("some ancestor, or earlier sibling, matches the part to the left"),
 * so a selector costs O(compounds × elements) however many ancestors it could try: `a a a a b` on
 * a deep chain is no worse than `a b`. `:has()` searches only where its relative selector can
 * reach (children, descendants, following siblings). Positional pseudo-classes count along the
 * sibling links for narrow parents and index a sibling list once per query for wide ones, so they
 * stay linear under 20,000 children. Recursion is bounded by the parser's limits
 * (`MAX_COMPOUNDS`, `MAX_SELECTOR_NESTING`), never by the tree.
 */
import type { AttrOp, Combinator, Complex, Compound, Condition, Positional, Relative } from "./selector-parse.ts";
import { type Rec, type Tree, textContent } from "./tree.ts";

export type Test = (r: Rec) => boolean;

interface SiblingIndex {
  readonly position: Map<number, number>;
  readonly typePosition: Map<number, number>;
  readonly typeCount: Map<string, number>;
  readonly list: readonly Rec[];
}

/** Narrow parents are counted along `prev`/`next`; past this many steps, the parent is indexed. */
const WALK = 32;
/** Ancestors (or earlier siblings) tried directly before the memoized walk takes over. */
const NEAR = 32;
const ASCII_UPPER = /[A-Z]/g;
const lowerAscii = (s: string): string => s.replace(ASCII_UPPER, (c) => c.toLowerCase());
const CSS_SPACE = /[ \t\n\r\f]+/;

export class Matcher {
  readonly #siblings = new Map<number, SiblingIndex>();

  /** `scope` is the element `:scope` names (the root when the query has no `within`). */
  constructor(
    readonly tree: Tree,
    readonly scope: number,
  ) {}

  #rec(id: number): Rec {
    return this.tree.rec(id) as Rec;
  }

  /** A test for a selector list: an element matches when one of its complex selectors does. */
  list(list: readonly Complex[]): Test {
    const tests = list.map((c) => this.complex(c, undefined).test);
    if (tests.length === 1) return tests[0] as Test;
    return (r) => {
      for (const t of tests) if (t(r)) return true;
      return false;
    };
  }

  /**
   * A complex selector, matched right to left. With `anchor`, the first compound is the `:has()`
   * anchor (the element whose id `anchor.id` holds), and `reset` clears the memo tables that
   * depend on it. Walks up the tree stop at `anchor.ceiling`: what a relative selector matches
   * lies below it, so a deep tree is not climbed to its root for every anchor.
   */
  complex(c: Complex, anchor: { id: number; ceiling: number } | undefined): { test: Test; reset(): void } {
    const n = c.compounds.length;
    const tests: Test[] = c.compounds.map((comp, k) =>
      k === 0 && anchor !== undefined ? (r: Rec) => r.id === anchor.id : this.compound(comp),
    );
    const combinators = c.combinators;
    // tables[j]: element id → "it, or an element before it along the combinator's link, matches
    // compounds 0…j" (only for j on the left of a descendant or `~` combinator).
    const tables: (Map<number, boolean> | undefined)[] = combinators.map((comb) => (comb === " " || comb === "~" ? new Map() : undefined));
    const along = (j: number, start: number, link: "parent" | "prev"): boolean => {
      if (j === 0) {
        // The leftmost compound needs no recursion: try the nearest few ancestors (or earlier
        // siblings) directly, which answers shallow trees without touching the memo table.
        const first = tests[0] as Test;
        let x = start;
        for (let steps = 0; x !== 0 && steps < NEAR; steps++) {
          if (x === anchor?.ceiling && x !== anchor.id) return false;
          const r = this.#rec(x);
          if (first(r)) return true;
          if (x === anchor?.ceiling) return false;
          x = r[link];
        }
        if (x === 0) return false;
        start = x;
      }
      const table = tables[j] as Map<number, boolean>;
      const chain: number[] = [];
      let result = false;
      for (let x = start; x !== 0; x = this.#rec(x)[link]) {
        const known = table.get(x);
        if (known !== undefined) {
          result = known;
          break;
        }
        if (x === anchor?.ceiling) {
          // Nothing at or above the ceiling matches a relative selector, except the anchor itself as its first compound.
          if (j === 0 && x === anchor.id) chain.push(x);
          break;
        }
        chain.push(x);
      }
      for (let i = chain.length - 1; i >= 0; i--) {
        const id = chain[i] as number;
        if (!result) result = at(j, this.#rec(id));
        table.set(id, result);
      }
      return result;
    };
    const at = (k: number, r: Rec): boolean => {
      if (!(tests[k] as Test)(r)) return false;
      if (k === 0) return true;
      const comb = combinators[k - 1] as Combinator;
      switch (comb) {
        case ">":
          return r.parent !== 0 && at(k - 1, this.#rec(r.parent));
        case "+":
          return r.prev !== 0 && at(k - 1, this.#rec(r.prev));
        case " ":
          return r.parent !== 0 && along(k - 1, r.parent, "parent");
        case "~":
          return r.prev !== 0 && along(k - 1, r.prev, "prev");
        default: {
          const unknown: never = comb;
          throw new Error(`unknown combinator ${String(unknown)}`);
        }
      }
    };
    return {
      test: n === 1 ? (tests[0] as Test) : (r) => at(n - 1, r),
      reset: () => {
        for (const t of tables) t?.clear();
      },
    };
  }

  compound(c: Compound): Test {
    const tag = c.tag;
    const tests = c.conditions.map((cond) => this.condition(cond));
    if (tests.length === 0) return tag === undefined ? () => true : (r) => r.tag === tag;
    if (tests.length === 1) {
      const t = tests[0] as Test;
      return tag === undefined ? t : (r) => r.tag === tag && t(r);
    }
    return (r) => {
      if (tag !== undefined && r.tag !== tag) return false;
      for (const t of tests) if (!t(r)) return false;
      return true;
    };
  }

  condition(c: Condition): Test {
    switch (c.kind) {
      case "attr":
        return attributeTest(c.name, c.op, c.value, c.ignoreCase);
      case "is":
        return this.list(c.list);
      case "not": {
        const t = this.list(c.list);
        return (r) => !t(r);
      }
      case "has":
        return this.has(c.list);
      case "nth":
        return this.nth(c.of, c.a, c.b, c.filter);
      case "contains": {
        const text = c.ignoreCase ? c.text.toLowerCase() : c.text;
        return c.ignoreCase
          ? (r) => textContent(this.tree, r).toLowerCase().includes(text)
          : (r) => textContent(this.tree, r).includes(text);
      }
      case "root":
        return (r) => r.parent === 0;
      case "scope":
        return (r) => r.id === this.scope;
      case "empty":
        return (r) => r.first === 0 && r.text === "";
      case "first-child":
        return (r) => r.prev === 0;
      case "last-child":
        return (r) => r.next === 0;
      case "only-child":
        return (r) => r.prev === 0 && r.next === 0;
      case "only-of-type":
        return (r) => this.#typeLength(r) === 1;
      default: {
        const unknown: never = c;
        throw new Error(`unknown condition ${JSON.stringify(unknown)}`);
      }
    }
  }

  /**
   * `:has(rel, …)`: some element the relative selector reaches from the anchor matches it. The
   * search covers only where the leading combinator and the rest can lead; results are cached per
   * element for the query.
   */
  has(list: readonly Relative[]): Test {
    const parts = list.map((rel) => {
      const anchor = { id: 0, ceiling: 0 };
      const complex: Complex = {
        compounds: [{ tag: undefined, conditions: [] }, ...rel.complex.compounds],
        combinators: [rel.leading, ...rel.complex.combinators],
      };
      const { test, reset } = this.complex(complex, anchor);
      // Whether the match may lie below the first element the leading combinator reaches.
      const descends = rel.complex.combinators.some((c) => c === " " || c === ">");
      return { anchor, test, reset, leading: rel.leading, descends };
    });
    const cache = new Map<number, boolean>();
    return (r) => {
      const known = cache.get(r.id);
      if (known !== undefined) return known;
      let found = false;
      for (const p of parts) {
        p.anchor.id = r.id;
        // Below the anchor (descendant, child), or below its parent (following siblings).
        p.anchor.ceiling = p.leading === " " || p.leading === ">" ? r.id : r.parent;
        p.reset();
        if (p.leading === " " || p.leading === ">") {
          if (p.leading === ">" && !p.descends) {
            for (let c = r.first; c !== 0 && !found; ) {
              const cr = this.#rec(c);
              found = p.test(cr);
              c = cr.next;
            }
          } else found = this.#anyBelow(r.first, true, p.test);
        } else {
          for (let s = r.next; s !== 0 && !found; ) {
            const sr = this.#rec(s);
            found = p.test(sr) || (p.descends && this.#anyBelow(sr.first, true, p.test));
            s = sr.next;
          }
        }
        if (found) break;
      }
      cache.set(r.id, found);
      return found;
    };
  }

  /** True when `test` holds for the element `first`, its following siblings, or their descendants (iterative). */
  #anyBelow(first: number, siblings: boolean, test: Test): boolean {
    if (first === 0) return false;
    const stack = [first];
    while (stack.length > 0) {
      const r = this.#rec(stack.pop() as number);
      if (test(r)) return true;
      if (siblings && r.next !== 0) stack.push(r.next);
      if (r.first !== 0) stack.push(r.first);
    }
    return false;
  }

  /** `:nth-child(An+B [of S])` and friends (1-based index i matches when i = An + B for some n ≥ 0). */
  nth(of: Positional, a: number, b: number, filter: readonly Complex[] | undefined): Test {
    const matchesIndex = (i: number): boolean => (a === 0 ? i === b : (i - b) / a >= 0 && (i - b) % a === 0);
    if (filter !== undefined) {
      const test = this.list(filter);
      const lists = new Map<number, { positions: Map<number, number>; total: number }>();
      return (r) => {
        if (!test(r)) return false;
        let entry = lists.get(r.parent);
        if (entry === undefined) {
          const positions = new Map<number, number>();
          for (const s of this.#index(r).list) if (test(s)) positions.set(s.id, positions.size);
          entry = { positions, total: positions.size };
          lists.set(r.parent, entry);
        }
        const p = entry.positions.get(r.id) as number;
        return matchesIndex(of === "last-child" ? entry.total - p : p + 1);
      };
    }
    switch (of) {
      case "child":
        return (r) => matchesIndex(this.#position(r, false) + 1);
      case "last-child":
        return (r) => matchesIndex(this.#length(r, false) - this.#position(r, false));
      case "of-type":
        return (r) => matchesIndex(this.#position(r, true) + 1);
      case "last-of-type":
        return (r) => matchesIndex(this.#length(r, true) - this.#position(r, true));
      default: {
        const unknown: never = of;
        throw new Error(`unknown position ${String(unknown)}`);
      }
    }
  }

  /** Siblings of `r` along `dir` (of its tag when `sameTag`), or -1 past {@link WALK} steps. */
  #walk(r: Rec, dir: "prev" | "next", sameTag: boolean): number {
    let n = 0;
    let steps = 0;
    for (let s = r[dir]; s !== 0; steps++) {
      if (steps >= WALK) return -1;
      const x = this.#rec(s);
      if (!sameTag || x.tag === r.tag) n++;
      s = x[dir];
    }
    return n;
  }

  /** 0-based position of `r` among its siblings (of its tag when `sameTag`). */
  #position(r: Rec, sameTag: boolean): number {
    if (!this.#siblings.has(r.parent)) {
      const before = this.#walk(r, "prev", sameTag);
      if (before >= 0) return before;
    }
    const idx = this.#index(r);
    return (sameTag ? idx.typePosition : idx.position).get(r.id) as number;
  }

  /** Number of siblings of `r`, itself included (of its tag when `sameTag`). */
  #length(r: Rec, sameTag: boolean): number {
    if (!this.#siblings.has(r.parent)) {
      const before = this.#walk(r, "prev", sameTag);
      const after = before < 0 ? -1 : this.#walk(r, "next", sameTag);
      if (after >= 0) return before + after + 1;
    }
    const idx = this.#index(r);
    return sameTag ? (idx.typeCount.get(r.tag) as number) : idx.list.length;
  }

  #typeLength(r: Rec): number {
    return this.#length(r, true);
  }

  /** Position data for the siblings of `r`, built once per parent per query. */
  #index(r: Rec): SiblingIndex {
    let idx = this.#siblings.get(r.parent);
    if (idx === undefined) {
      const list: Rec[] = [];
      if (r.parent === 0) list.push(r);
      else for (let c = this.#rec(r.parent).first; c !== 0; c = (list[list.length - 1] as Rec).next) list.push(this.#rec(c));
      const position = new Map<number, number>();
      const typePosition = new Map<number, number>();
      const typeCount = new Map<string, number>();
      for (let i = 0; i < list.length; i++) {
        const s = list[i] as Rec;
        position.set(s.id, i);
        const k = typeCount.get(s.tag) ?? 0;
        typePosition.set(s.id, k);
        typeCount.set(s.tag, k + 1);
      }
      idx = { position, typePosition, typeCount, list };
      this.#siblings.set(r.parent, idx);
    }
    return idx;
  }
}

/** An attribute condition (Selectors 4 §6; values compared case-sensitively unless `i`, which folds ASCII only). */
function attributeTest(name: string, op: AttrOp, value: string, ignoreCase: boolean): Test {
  const has = (r: Rec): boolean => Object.hasOwn(r.attrs, name);
  if (op === "exists") return has;
  const want = ignoreCase ? lowerAscii(value) : value;
  const get = ignoreCase
    ? (r: Rec): string | undefined => (has(r) ? lowerAscii(r.attrs[name] as string) : undefined)
    : (r: Rec): string | undefined => (has(r) ? r.attrs[name] : undefined);
  switch (op) {
    case "=":
      return (r) => get(r) === want;
    case "!=":
      // DOM-25: also matches elements without the attribute.
      return (r) => get(r) !== want;
    case "~=":
      // A list item never contains white space, and an empty one names nothing.
      if (want === "" || CSS_SPACE.test(want)) return () => false;
      return (r) => get(r)?.split(CSS_SPACE).includes(want) === true;
    case "|=":
      return (r) => {
        const v = get(r);
        return v !== undefined && (v === want || v.startsWith(`${want}-`));
      };
    case "^=":
      if (want === "") return () => false;
      return (r) => get(r)?.startsWith(want) === true;
    case "$=":
      if (want === "") return () => false;
      return (r) => get(r)?.endsWith(want) === true;
    case "*=":
      if (want === "") return () => false;
      return (r) => get(r)?.includes(want) === true;
    default: {
      const unknown: never = op;
      throw new Error(`unknown attribute operator ${String(unknown)}`);
    }
  }
}
