/**
 * Rendering (TP-15 … TP-23): a pure function of the template, the tree and the variables — no
 * clock, no randomness, no I/O, no environment — so the same inputs give the same bytes anywhere.
 * Work and memory are bounded (`budget.ts`): output, loop iterations, calls, selector queries,
 * evaluation steps, the size of every value built, the nesting of values and the memory
 * allocated in all. Every failure is a `TemplateError` with a code; nothing else escapes.
 */
import { DomError, type Tree } from "@strata/dom";
import { Budget, ENTRY_UNITS, ITEM_UNITS, type Limits, mergeLimits } from "./budget.ts";
import { CallError, makeBuiltins } from "./builtins.ts";
import { brief, LimitError, type Pos, TemplateError, type TemplateLimit } from "./errors.ts";
import type { Expr } from "./expr.ts";
import { type Compiled, compile, type Node } from "./parse.ts";
import { Builtin, fromHost, isRec, kindOf, member, type Rec, record, TElement, truthy, type Value } from "./values.ts";

export { DEFAULT_LIMITS, type Limits } from "./budget.ts";

export interface RenderOptions {
  /** Name used in error messages (default "template"). */
  readonly name?: string;
  /** Variables: plain data only (strings, numbers, booleans, null, lists, plain objects). */
  readonly vars?: Readonly<Record<string, unknown>>;
  /** Bounds of this render; each one left out is the default (`DEFAULT_LIMITS`). */
  readonly limits?: Partial<Limits>;
}

/** Compiled templates, most recent last, bounded by the characters of source they hold. */
const cache = new Map<string, Compiled>();
let cachedChars = 0;
const CACHE_CHARS = 4_000_000;
const CACHE_ENTRIES = 64;

function compiled(source: string, name: string): Compiled {
  const key = `${name}\u0000${source}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const c = compile(source, name);
  cache.set(key, c);
  cachedChars += key.length;
  // A parsed template is many times its source; keeping few and small ones bounds the memory a
  // stream of distinct hostile templates can pin.
  while (cache.size > CACHE_ENTRIES || (cachedChars > CACHE_CHARS && cache.size > 1)) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
    cachedChars -= oldest.length;
  }
  return c;
}

/** Compiles (with a small cache keyed by name and source) and renders. Throws only `TemplateError`. */
export function renderTemplate(source: string, tree: Tree, options: RenderOptions = {}): string {
  const name = options.name ?? "template";
  return guard(name, () => new Renderer(compiled(source, name), tree, options).run());
}

/** Checks a template's syntax without rendering it; throws `TemplateError`. */
export function checkTemplate(source: string, name = "template"): void {
  guard(name, () => compile(source, name));
}

/**
 * The last line of defence of "nothing but TemplateError escapes": every bound is checked before
 * the engine's own limits are reached, so this never fires in the tests (they assert it); if a
 * path was missed, the caller still gets a recorded template failure rather than a crash.
 */
function guard<T>(name: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof TemplateError) throw e;
    if (e instanceof RangeError) {
      const limit: TemplateLimit = /call stack/i.test(e.message) ? "depth" : /array/i.test(e.message) ? "list-length" : "string-length";
      throw new TemplateError(`the template reached an engine bound (${e.message})`, name, 1, 1, "limit", limit);
    }
    throw e;
  }
}

class Scope {
  readonly #vars = new Map<string, Value>();
  constructor(private readonly parent: Scope | undefined) {}
  get(name: string): Value | typeof MISSING {
    if (this.#vars.has(name)) return this.#vars.get(name);
    return this.parent === undefined ? MISSING : this.parent.get(name);
  }
  set(name: string, v: Value): void {
    this.#vars.set(name, v);
  }
}
const MISSING = Symbol("missing");

class Renderer {
  #out = "";
  #iterations = 0;
  #calls = 0;
  #queries = 0;
  readonly #limits: Limits;
  readonly #budget: Budget;
  readonly #builtins: Map<string, Builtin>;
  readonly #root: Scope;

  constructor(
    private readonly t: Compiled,
    tree: Tree,
    options: RenderOptions,
  ) {
    try {
      this.#limits = mergeLimits(options.limits);
    } catch (e) {
      throw new TemplateError((e as Error).message, t.name, 1, 1, "options");
    }
    this.#budget = new Budget(this.#limits);
    this.#builtins = makeBuiltins({
      tree,
      budget: this.#budget,
      query: () => {
        if (++this.#queries > this.#limits.queries) throw new LimitError("queries", `more than ${this.#limits.queries} selector queries`);
      },
    });
    this.#root = new Scope(undefined);
    for (const [k, v] of Object.entries(options.vars ?? {})) {
      let value: Value;
      try {
        value = fromHost(v, (units) => this.#budget.charge(units));
      } catch (e) {
        if (e instanceof LimitError) throw new TemplateError(`variable ${k}: ${e.message}`, t.name, 1, 1, "limit", e.limit);
        throw new TemplateError(`variable ${brief(k)}: ${(e as Error).message}`, t.name, 1, 1, "options");
      }
      this.#root.set(k, value);
    }
  }

  run(): string {
    this.#nodes(this.t.nodes, this.#root);
    return this.#out;
  }

  #fail(msg: string, pos: Pos): never {
    throw new TemplateError(msg, this.t.name, pos.line, pos.column, "render");
  }

  #limit(limit: TemplateLimit, msg: string, pos: Pos): never {
    throw new TemplateError(msg, this.t.name, pos.line, pos.column, "limit", limit);
  }

  /** Runs `f`, reporting a bound reached inside it at `pos`. */
  #at<T>(pos: Pos, f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof LimitError) this.#limit(e.limit, e.message, pos);
      throw e;
    }
  }

  #emit(s: string, pos: Pos): void {
    if (this.#out.length + s.length > this.#limits.output)
      this.#limit("output", `the output would exceed ${this.#limits.output} characters`, pos);
    this.#out += s;
  }

  #nodes(nodes: readonly Node[], scope: Scope): void {
    for (const n of nodes) {
      switch (n.t) {
        case "text":
          this.#emit(n.text, n.pos);
          break;
        case "output":
          this.#emit(this.#print(this.#eval(n.expr, scope), n.expr.pos), n.pos);
          break;
        case "set": {
          const v = this.#eval(n.expr, scope);
          this.#at(n.pos, () => this.#budget.charge(ENTRY_UNITS));
          scope.set(n.name, v);
          break;
        }
        case "if": {
          const branch = n.branches.find((b) => truthy(this.#eval(b.test, scope)));
          this.#nodes(branch?.body ?? n.otherwise, scope);
          break;
        }
        case "for": {
          const items = this.#at(n.iterable.pos, () => this.#iterable(this.#eval(n.iterable, scope), n.iterable.pos));
          if (items.length === 0) {
            this.#nodes(n.otherwise, scope);
            break;
          }
          for (let i = 0; i < items.length; i++) {
            if (++this.#iterations > this.#limits.iterations)
              this.#limit("iterations", `loops ran more than ${this.#limits.iterations} iterations`, n.pos);
            // The iteration's scope and its loop record.
            this.#at(n.pos, () => this.#budget.charge(8 * ENTRY_UNITS));
            const inner = new Scope(scope);
            const item = items[i] as Value;
            if (n.names.length === 1) inner.set(n.names[0] as string, item);
            else {
              inner.set(n.names[0] as string, member(item, 0));
              inner.set(n.names[1] as string, member(item, 1));
            }
            inner.set(
              "loop",
              record({
                index: i + 1,
                index0: i,
                first: i === 0,
                last: i === items.length - 1,
                length: items.length,
                revindex: items.length - i,
              }),
            );
            this.#nodes(n.body, inner);
          }
          break;
        }
      }
    }
  }

  /** The items a `for` walks: a list, a record's pairs, a string's characters (TP-11). */
  #iterable(v: Value, pos: Pos): readonly Value[] {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v;
    if (isRec(v)) {
      const keys = Object.keys(v);
      this.#budget.list(keys.length, "the pairs of the record");
      this.#budget.charge(keys.length * 2 * ITEM_UNITS);
      return keys.map((k) => this.#budget.nest(Object.freeze([k, v[k]]) as readonly Value[], [v[k]]));
    }
    if (typeof v === "string") {
      // A string has at least half as many characters as UTF-16 code units.
      this.#budget.list(Math.ceil(v.length / 2), "the characters of the string");
      const chars = [...v];
      this.#budget.list(chars.length, "the characters of the string");
      return chars;
    }
    return this.#fail(`cannot loop over ${kindOf(v)}`, pos);
  }

  /** Text of a value for output (TP-19): undefined is an error, never the word "undefined". */
  #print(v: Value, pos: Pos): string {
    if (v === undefined) this.#fail("this value is undefined (a missing variable, member or element); use default() to give it one", pos);
    if (v === null) return "";
    if (typeof v === "string") return v;
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e9) / 1e9);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (Array.isArray(v)) this.#fail("cannot print a list; use join(), or loop over it", pos);
    if (v instanceof TElement) this.#fail(`cannot print ${kindOf(v)}; use text(el), attr(el, name) or el.text`, pos);
    return this.#fail(`cannot print ${kindOf(v)}; use json()`, pos);
  }

  #eval(e: Expr, scope: Scope): Value {
    try {
      this.#budget.step();
      return this.#evalNode(e, scope);
    } catch (x) {
      if (x instanceof LimitError) this.#limit(x.limit, x.message, e.pos);
      throw x;
    }
  }

  #evalNode(e: Expr, scope: Scope): Value {
    switch (e.t) {
      case "lit":
        return e.value;
      case "name": {
        const v = scope.get(e.name);
        if (v !== MISSING) return v as Value;
        return this.#builtins.get(e.name);
      }
      case "list": {
        this.#budget.list(e.items.length, "the list");
        const items = e.items.map((x) => this.#eval(x, scope));
        return this.#budget.nest(Object.freeze(items), items);
      }
      case "member": {
        const obj = this.#eval(e.object, scope);
        const key = typeof e.key === "string" ? e.key : this.#eval(e.key, scope);
        if (typeof key !== "string" && typeof key !== "number") return undefined;
        const v = member(obj, typeof e.key === "string" && /^[0-9]+$/.test(e.key) ? Number(e.key) : key);
        if (obj instanceof TElement) this.#chargeMember(v);
        return v;
      }
      case "call": {
        const fn = this.#eval(e.callee, scope);
        if (!(fn instanceof Builtin)) this.#fail(`${brief(describeCallee(e.callee))} is ${kindOf(fn)}, not a function`, e.pos);
        return this.#invoke(
          fn,
          e.args.map((a) => this.#eval(a, scope)),
          e.kwargs,
          scope,
          e.pos,
        );
      }
      case "filter": {
        const fn = this.#builtins.get(e.name);
        if (fn === undefined) this.#fail(`unknown filter "${brief(e.name)}"; filters: ${[...this.#builtins.keys()].join(", ")}`, e.pos);
        return this.#invoke(fn, [this.#eval(e.value, scope), ...e.args.map((a) => this.#eval(a, scope))], e.kwargs, scope, e.pos);
      }
      case "unary": {
        const v = this.#eval(e.arg, scope);
        if (e.op === "not") return !truthy(v);
        if (typeof v !== "number") this.#fail(`cannot negate ${kindOf(v)}`, e.pos);
        return -v;
      }
      case "cond":
        return truthy(this.#eval(e.test, scope))
          ? this.#eval(e.yes, scope)
          : e.otherwise === undefined
            ? null
            : this.#eval(e.otherwise, scope);
      case "binary":
        return this.#binary(e, scope);
    }
  }

  /** An element's `children` and `attrs` are new values each time they are read. */
  #chargeMember(v: Value): void {
    if (Array.isArray(v)) {
      this.#budget.list(v.length, "the children");
      this.#budget.nest(v, []);
    } else if (isRec(v)) this.#budget.charge(Object.keys(v).length * ENTRY_UNITS);
    else if (v instanceof TElement) this.#budget.charge(ENTRY_UNITS);
  }

  #binary(e: Extract<Expr, { t: "binary" }>, scope: Scope): Value {
    if (e.op === "and") {
      const l = this.#eval(e.left, scope);
      return truthy(l) ? this.#eval(e.right, scope) : l;
    }
    if (e.op === "or") {
      const l = this.#eval(e.left, scope);
      return truthy(l) ? l : this.#eval(e.right, scope);
    }
    const l = this.#eval(e.left, scope);
    const r = this.#eval(e.right, scope);
    // Comparing strings and looking through lists cost time in proportion to their length: counted
    // as steps, so a loop cannot repeat a long comparison without bound.
    if (typeof l === "string" && typeof r === "string") this.#budget.work(Math.min(l.length, r.length) / 64);
    if (e.op === "in") this.#budget.work(Array.isArray(r) ? r.length : typeof r === "string" ? r.length / 64 : 0);
    switch (e.op) {
      case "==":
        return same(l, r);
      case "!=":
        return !same(l, r);
      case "<":
      case ">":
      case "<=":
      case ">=": {
        if (!((typeof l === "number" && typeof r === "number") || (typeof l === "string" && typeof r === "string")))
          this.#fail(`cannot compare ${kindOf(l)} with ${kindOf(r)}`, e.pos);
        const a = l as number | string;
        const b = r as number | string;
        return e.op === "<" ? a < b : e.op === ">" ? a > b : e.op === "<=" ? a <= b : a >= b;
      }
      case "in":
        if (typeof r === "string") {
          if (typeof l !== "string") this.#fail(`"in" a string needs a string, got ${kindOf(l)}`, e.pos);
          return r.includes(l);
        }
        if (Array.isArray(r)) return r.some((x) => same(x, l));
        if (isRec(r)) return typeof l === "string" && Object.hasOwn(r, l);
        if (r === undefined || r === null) return false;
        return this.#fail(`cannot look for a value in ${kindOf(r)}`, e.pos);
      case "~": {
        const a = this.#print(l, e.left.pos);
        const b = this.#print(r, e.right.pos);
        this.#budget.string(a.length + b.length, "the joined string (~)");
        return a + b;
      }
      case "+":
        if (typeof l === "number" && typeof r === "number") return l + r;
        if (typeof l === "string" && typeof r === "string") {
          this.#budget.string(l.length + r.length, "the sum of the strings (+)");
          return l + r;
        }
        if (Array.isArray(l) && Array.isArray(r)) {
          this.#budget.list(l.length + r.length, "the sum of the lists (+)");
          return this.#budget.concatenated(Object.freeze([...l, ...r]), l, r);
        }
        return this.#fail(`cannot add ${kindOf(l)} and ${kindOf(r)}`, e.pos);
      case "-":
      case "*":
      case "/":
      case "//":
      case "%": {
        if (typeof l !== "number" || typeof r !== "number")
          return this.#fail(`"${e.op}" needs numbers, got ${kindOf(l)} and ${kindOf(r)}`, e.pos);
        if ((e.op === "/" || e.op === "//" || e.op === "%") && r === 0) return this.#fail("division by zero", e.pos);
        if (e.op === "-") return l - r;
        if (e.op === "*") return l * r;
        if (e.op === "/") return l / r;
        if (e.op === "//") return Math.floor(l / r);
        return l % r;
      }
      default:
        return this.#fail(`unknown operator ${e.op}`, e.pos);
    }
  }

  #invoke(fn: Builtin, args: readonly Value[], kwargs: readonly [string, Expr][], scope: Scope, pos: Pos): Value {
    if (++this.#calls > this.#limits.calls) this.#limit("calls", `more than ${this.#limits.calls} function calls`, pos);
    const kw: Record<string, Value> = Object.create(null);
    for (const [k, x] of kwargs) kw[k] = this.#eval(x, scope);
    try {
      return fn.call(args, kw);
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      if (e instanceof LimitError) this.#limit(e.limit, e.message, pos);
      if (e instanceof CallError || e instanceof DomError) this.#fail(`${fn.name}(): ${brief(e.message, 400)}`, pos);
      throw e;
    }
  }
}

function same(a: Value, b: Value): boolean {
  if (a instanceof TElement && b instanceof TElement) return a.el.id === b.el.id;
  if (a === undefined) return b === undefined || b === null;
  if (b === undefined) return a === null;
  return a === b;
}

function describeCallee(e: Expr): string {
  if (e.t === "name") return e.name;
  if (e.t === "member") return `${describeCallee(e.object)}.${typeof e.key === "string" ? e.key : "[…]"}`;
  return "this";
}

export type { Rec };
