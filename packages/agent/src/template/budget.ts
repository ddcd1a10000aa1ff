/**
 * The bounds of one render (TP-22, TP-23). A template is data from anyone who hands over a
 * session, so everything it can make grow is counted before it grows: output, loop iterations,
 * calls, selector queries, evaluation steps, the length of every string and list it builds, the
 * nesting of the lists it builds, and the memory it allocates in all. A bound reached is a
 * `LimitError`, which the evaluator reports as a `TemplateError` with code `limit` at the
 * expression being evaluated — never a `RangeError` or an out-of-memory crash.
 *
 * Allocation is counted in units of about a byte: one per character of a string built, eight
 * per item of a list built and sixteen per entry of a record built. Every operation that creates
 * a value charges what it creates (`~`, `+`, list literals, `range`, `select`, `children`,
 * `join`, `indent`, `json`, `upper`, `text` …) before or as it creates it; values handed in as
 * variables and strings of the template itself are not created by the render and cost nothing
 * to use. Since nothing is freed from the count, the count also bounds the live memory.
 */
import { LimitError } from "./errors.ts";
import { isRec, TElement, type Value } from "./values.ts";

export interface Limits {
  /** Characters of output (default 1,000,000). */
  readonly output: number;
  /** Loop iterations in all (default 100,000). */
  readonly iterations: number;
  /** Function and filter calls in all (default 100,000). */
  readonly calls: number;
  /** Selector queries (select, selectOne, count with a selector) in all (default 1,000). */
  readonly queries: number;
  /** Steps of work in all: one per expression evaluated, and one per list item scanned by
   * `in` or 64 characters of strings compared (default 10,000,000). */
  readonly steps: number;
  /** Characters of any one string the render builds (default 4,000,000). */
  readonly stringLength: number;
  /** Items of any one list the render builds or selects (default 100,000). */
  readonly listLength: number;
  /** Units allocated by the render in all, about a byte each (default 64,000,000). */
  readonly allocation: number;
  /** Nesting of lists and records a value may have (default 64). */
  readonly depth: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({
  output: 1_000_000,
  iterations: 100_000,
  calls: 100_000,
  queries: 1_000,
  steps: 10_000_000,
  stringLength: 4_000_000,
  listLength: 100_000,
  allocation: 64_000_000,
  depth: 64,
});

/** Units charged per list item and per record entry (a pointer, and a key with its value). */
export const ITEM_UNITS = 8;
export const ENTRY_UNITS = 16;

/** Checks that every limit is a whole number ≥ 0 (or Infinity); returns the merged limits. */
export function mergeLimits(partial: Partial<Limits> | undefined): Limits {
  const out = { ...DEFAULT_LIMITS, ...partial };
  for (const [k, v] of Object.entries(out))
    if (typeof v !== "number" || Number.isNaN(v) || v < 0 || (!Number.isInteger(v) && v !== Number.POSITIVE_INFINITY))
      throw new TypeError(`template limit ${k} must be a whole number ≥ 0, got ${String(v)}`);
  return out;
}

export class Budget {
  #allocated = 0;
  #steps = 0;
  /** Nesting depth of every list and record the render made or measured. */
  readonly #depths = new WeakMap<object, number>();

  constructor(readonly limits: Limits) {}

  /** Units allocated so far. */
  get allocated(): number {
    return this.#allocated;
  }

  /** Counts `units` of allocation; fails when the render's total would pass the limit. */
  charge(units: number): void {
    this.#allocated += units;
    if (this.#allocated > this.limits.allocation)
      throw new LimitError(
        "allocation",
        `the template allocated more than ${this.limits.allocation} units of memory (about a byte each); build fewer or smaller values`,
      );
  }

  /** Counts one evaluation step. */
  step(): void {
    this.work(1);
  }

  /** Counts work worth `steps` evaluation steps (a scan of a long list or string). */
  work(steps: number): void {
    this.#steps += steps;
    if (this.#steps > this.limits.steps)
      throw new LimitError("steps", `the template did more than ${this.limits.steps} steps of work; loop over less`);
  }

  /** Before a string of `length` characters is built: checks its length and charges it. */
  string(length: number, what: string): void {
    if (length > this.limits.stringLength)
      throw new LimitError(
        "string-length",
        `${what} would be ${length} characters long (limit ${this.limits.stringLength}); use truncate() or work on less text`,
      );
    this.charge(length);
  }

  /** Before a list of `length` items is built: checks its length and charges it. */
  list(length: number, what: string): void {
    if (length > this.limits.listLength)
      throw new LimitError(
        "list-length",
        `${what} would have ${length} items (limit ${this.limits.listLength}); use count() to count, or a narrower selector`,
      );
    this.charge(length * ITEM_UNITS);
  }

  /** Records the nesting of a new list or record holding `items`; fails past the depth limit. */
  nest<T extends readonly Value[] | object>(container: T, items: Iterable<Value>): T {
    let inner = 0;
    for (const v of items) inner = Math.max(inner, this.depthOf(v));
    const depth = inner + 1;
    if (depth > this.limits.depth)
      throw new LimitError("depth", `a value would nest ${depth} lists or records deep (limit ${this.limits.depth})`);
    this.#depths.set(container, depth);
    return container;
  }

  /** Records the nesting of `a + b`, the items of both lists in one: that of the deeper. */
  concatenated<T extends readonly Value[]>(sum: T, a: readonly Value[], b: readonly Value[]): T {
    this.#depths.set(sum, Math.max(1, this.depthOf(a), this.depthOf(b)));
    return sum;
  }

  /** How many lists and records deep `v` is (0 for a string, number, element …). */
  depthOf(v: Value): number {
    if (v === null || typeof v !== "object" || v instanceof TElement || !(Array.isArray(v) || isRec(v))) return 0;
    const known = this.#depths.get(v);
    if (known !== undefined) return known;
    // Values the render did not make (variables, already bounded by fromHost) are measured once.
    let inner = 0;
    for (const x of Array.isArray(v) ? (v as readonly Value[]) : Object.values(v)) inner = Math.max(inner, this.depthOf(x));
    this.#depths.set(v, inner + 1);
    return inner + 1;
  }
}
