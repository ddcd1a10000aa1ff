/**
 * Rendering (TP-15 … TP-22): a pure function of the template, the tree and the variables — no
 * clock, no randomness, no I/O, no environment — so the same inputs give the same bytes anywhere.
 * Work is bounded: output size, loop iterations, function calls and selector queries.
 */
import { DomError, count as domCount, escapeText, select, selectOne, type Tree } from "@strata/dom";
import { type Pos, TemplateError } from "./errors.ts";
import type { Expr } from "./expr.ts";
import { type Compiled, compile, type Node } from "./parse.ts";
import { Builtin, fromHost, isRec, kindOf, member, type Rec, record, TElement, toJsonData, truthy, type Value } from "./values.ts";

export interface RenderOptions {
  /** Name used in error messages (default "template"). */
  readonly name?: string;
  /** Variables: plain data only (strings, numbers, booleans, null, lists, plain objects). */
  readonly vars?: Readonly<Record<string, unknown>>;
  readonly limits?: Partial<Limits>;
}

export interface Limits {
  /** Characters of output (default 1,000,000). */
  readonly output: number;
  /** Loop iterations in all (default 100,000). */
  readonly iterations: number;
  /** Function and filter calls in all (default 100,000). */
  readonly calls: number;
  /** Selector queries (select, selectOne, count with a selector) in all (default 1,000). */
  readonly queries: number;
}

export const DEFAULT_LIMITS: Limits = Object.freeze({ output: 1_000_000, iterations: 100_000, calls: 100_000, queries: 1_000 });

const cache = new Map<string, Compiled>();

/** Compiles (with a small cache keyed by name and source) and renders. */
export function renderTemplate(source: string, tree: Tree, options: RenderOptions = {}): string {
  const name = options.name ?? "template";
  const key = `${name}\u0000${source}`;
  let compiled = cache.get(key);
  if (compiled === undefined) {
    compiled = compile(source, name);
    cache.set(key, compiled);
    if (cache.size > 64) cache.delete(cache.keys().next().value as string);
  }
  return new Renderer(compiled, tree, options).run();
}

/** Checks a template's syntax without rendering it; throws TemplateError. */
export function checkTemplate(source: string, name = "template"): void {
  compile(source, name);
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
  readonly #builtins: Map<string, Builtin>;
  readonly #root: Scope;

  constructor(
    private readonly t: Compiled,
    private readonly tree: Tree,
    options: RenderOptions,
  ) {
    this.#limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#builtins = this.#makeBuiltins();
    this.#root = new Scope(undefined);
    for (const [k, v] of Object.entries(options.vars ?? {})) {
      let value: Value;
      try {
        value = fromHost(v);
      } catch (e) {
        throw new TemplateError(`variable ${k}: ${(e as Error).message}`, t.name, 1, 1);
      }
      this.#root.set(k, value);
    }
  }

  run(): string {
    this.#nodes(this.t.nodes, this.#root);
    return this.#out;
  }

  #fail(msg: string, pos: Pos): never {
    throw new TemplateError(msg, this.t.name, pos.line, pos.column);
  }

  #emit(s: string, pos: Pos): void {
    if (this.#out.length + s.length > this.#limits.output) this.#fail(`the output would exceed ${this.#limits.output} characters`, pos);
    this.#out += s;
  }

  #nodes(nodes: readonly Node[], scope: Scope): void {
    for (const n of nodes) {
      switch (n.t) {
        case "text":
          this.#emit(n.text, { line: 1, column: 1 });
          break;
        case "output":
          this.#emit(this.#print(this.#eval(n.expr, scope), n.expr.pos), n.pos);
          break;
        case "set":
          scope.set(n.name, this.#eval(n.expr, scope));
          break;
        case "if": {
          const branch = n.branches.find((b) => truthy(this.#eval(b.test, scope)));
          this.#nodes(branch?.body ?? n.otherwise, scope);
          break;
        }
        case "for": {
          const items = this.#iterable(this.#eval(n.iterable, scope), n.iterable.pos);
          if (items.length === 0) {
            this.#nodes(n.otherwise, scope);
            break;
          }
          for (let i = 0; i < items.length; i++) {
            if (++this.#iterations > this.#limits.iterations)
              this.#fail(`loops ran more than ${this.#limits.iterations} iterations`, n.pos);
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

  #iterable(v: Value, pos: Pos): readonly Value[] {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v;
    if (isRec(v)) return Object.keys(v).map((k) => Object.freeze([k, v[k]]) as readonly Value[]);
    if (typeof v === "string") return [...v];
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
    switch (e.t) {
      case "lit":
        return e.value;
      case "name": {
        const v = scope.get(e.name);
        if (v !== MISSING) return v as Value;
        return this.#builtins.get(e.name);
      }
      case "list":
        return Object.freeze(e.items.map((x) => this.#eval(x, scope)));
      case "member": {
        const obj = this.#eval(e.object, scope);
        const key = typeof e.key === "string" ? e.key : this.#eval(e.key, scope);
        if (typeof key !== "string" && typeof key !== "number") return undefined;
        return member(obj, typeof e.key === "string" && /^[0-9]+$/.test(e.key) ? Number(e.key) : key);
      }
      case "call": {
        const fn = this.#eval(e.callee, scope);
        if (!(fn instanceof Builtin)) this.#fail(`${describeCallee(e.callee)} is ${kindOf(fn)}, not a function`, e.pos);
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
        if (fn === undefined) this.#fail(`unknown filter "${e.name}"; filters: ${[...this.#builtins.keys()].join(", ")}`, e.pos);
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
      case "~":
        return this.#print(l, e.left.pos) + this.#print(r, e.right.pos);
      case "+":
        if (typeof l === "number" && typeof r === "number") return l + r;
        if (typeof l === "string" && typeof r === "string") return l + r;
        if (Array.isArray(l) && Array.isArray(r)) return Object.freeze([...l, ...r]);
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
    if (++this.#calls > this.#limits.calls) this.#fail(`more than ${this.#limits.calls} function calls`, pos);
    const kw: Record<string, Value> = Object.create(null);
    for (const [k, x] of kwargs) kw[k] = this.#eval(x, scope);
    try {
      return fn.call(args, kw);
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      if (e instanceof CallError || e instanceof DomError) this.#fail(`${fn.name}(): ${e.message}`, pos);
      throw e;
    }
  }

  #query(): void {
    if (++this.#queries > this.#limits.queries) throw new CallError(`more than ${this.#limits.queries} selector queries`);
  }

  #makeBuiltins(): Map<string, Builtin> {
    const tree = this.tree;
    const wrap = (els: readonly import("@strata/dom").Element[]) => Object.freeze(els.map((el) => new TElement(el, tree)));
    const str = (v: Value, what: string): string => {
      if (typeof v !== "string") throw new CallError(`${what} must be a string, got ${kindOf(v)}`);
      return v;
    };
    const int = (v: Value, what: string): number => {
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
        throw new CallError(`${what} must be a whole number ≥ 0, got ${kindOf(v)}`);
      return v;
    };
    const el = (v: Value, what: string): TElement => {
      if (!(v instanceof TElement)) throw new CallError(`${what} must be an element, got ${kindOf(v)}`);
      return v;
    };
    const textOf = (v: Value): string => {
      if (v instanceof TElement) return v.el.textContent();
      if (typeof v === "string") return v;
      if (v === null || v === undefined) return "";
      if (typeof v === "number" || typeof v === "boolean") return String(v);
      throw new CallError(`needs text or an element, got ${kindOf(v)}`);
    };
    const fns: Record<string, (args: readonly Value[], kw: Readonly<Record<string, Value>>) => Value> = {
      select: ([sel]) => {
        this.#query();
        return wrap(select(tree, str(sel, "the selector")));
      },
      selectOne: ([sel]) => {
        this.#query();
        const e = selectOne(tree, str(sel, "the selector"));
        return e === undefined ? null : new TElement(e, tree);
      },
      count: ([x]) => {
        if (Array.isArray(x)) return x.length;
        this.#query();
        return domCount(tree, str(x, "count's argument (a selector or a list)"));
      },
      text: ([x]) => textOf(x),
      attr: ([x, name]) => el(x, "attr's first argument").el.attr(str(name, "the attribute name")) ?? null,
      len: ([x]) => {
        if (typeof x === "string" || Array.isArray(x)) return x.length;
        if (isRec(x)) return Object.keys(x).length;
        throw new CallError(`len() needs a list, a string or a record, got ${kindOf(x)}`);
      },
      join: ([list, sep], kw) => {
        if (!Array.isArray(list)) throw new CallError(`join() needs a list, got ${kindOf(list)}`);
        const s = sep ?? kw.sep ?? "";
        return list.map(textOf).join(str(s, "the separator"));
      },
      json: ([x], kw) => {
        const indent = kw.indent ?? null;
        return JSON.stringify(toJsonData(x), null, indent === null ? undefined : int(indent, "indent")) ?? "null";
      },
      escape_xml: ([x]) => escapeText(textOf(x)).replace(/"/g, "&quot;").replace(/'/g, "&apos;"),
      trim: ([x]) => textOf(x).trim(),
      upper: ([x]) => textOf(x).toUpperCase(),
      lower: ([x]) => textOf(x).toLowerCase(),
      indent: ([x, width], kw) => {
        const n = int(width ?? kw.width ?? 2, "the width");
        const first = truthy(kw.first ?? false);
        const pad = " ".repeat(n);
        return textOf(x)
          .split("\n")
          .map((line, i) => (line === "" || (i === 0 && !first) ? line : pad + line))
          .join("\n");
      },
      default: ([x, d]) => (x === undefined || x === null ? (d ?? null) : x),
      truncate: ([x, n], kw) => {
        const s = textOf(x);
        const max = int(n ?? kw.length ?? 255, "the length");
        const end = str(kw.end ?? "…", "end");
        return s.length <= max ? s : s.slice(0, Math.max(0, max - end.length)) + end;
      },
      first: ([x]) => (Array.isArray(x) ? x[0] : typeof x === "string" ? x[0] : undefined),
      last: ([x]) => (Array.isArray(x) ? x[x.length - 1] : typeof x === "string" ? x[x.length - 1] : undefined),
      range: ([a, b]) => {
        const from = b === undefined ? 0 : int(a, "start");
        const to = int(b === undefined ? a : b, "end");
        if (to - from > this.#limits.iterations) throw new CallError(`range() of more than ${this.#limits.iterations} numbers`);
        return Object.freeze(Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i));
      },
      string: ([x]) => textOf(x),
    };
    const out = new Map<string, Builtin>();
    for (const [name, f] of Object.entries(fns)) out.set(name, new Builtin(name, f));
    return out;
  }
}

/** An error inside a built-in function, reported with the call's position. */
class CallError extends Error {}

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
