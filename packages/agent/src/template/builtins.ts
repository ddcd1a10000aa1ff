/**
 * The built-in functions and filters (TP-16): the only functions a template can call. Each one
 * checks its arguments (a `CallError` names what is wrong) and charges the render's budget for
 * what it creates before creating it (TP-23), so no argument — a width of a billion, a list of a
 * hundred thousand long strings, a selector matching every element — makes one allocate past the
 * limits.
 */
import { count as domCount, type Element, escapeText, select, selectOne, type Tree } from "@strata/dom";
import { type Budget, ENTRY_UNITS } from "./budget.ts";
import { toJson } from "./json.ts";
import { Builtin, isRec, kindOf, TElement, truthy, type Value } from "./values.ts";

/** An error inside a built-in function, reported with the call's position. */
export class CallError extends Error {}

/** What the built-ins need from the render they belong to. */
export interface BuiltinEnv {
  readonly tree: Tree;
  readonly budget: Budget;
  /** Counts one selector query; throws a `LimitError` past the limit. */
  readonly query: () => void;
}

type Fn = (args: readonly Value[], kw: Readonly<Record<string, Value>>) => Value;

export function makeBuiltins(env: BuiltinEnv): Map<string, Builtin> {
  const { tree, budget } = env;
  const wrap = (els: readonly Element[], what: string): readonly TElement[] => {
    budget.list(els.length, what);
    return budget.nest(Object.freeze(els.map((el) => new TElement(el, tree))), []);
  };
  const str = (v: Value, what: string): string => {
    if (typeof v !== "string") throw new CallError(`${what} must be a string, got ${kindOf(v)}`);
    return v;
  };
  const int = (v: Value, what: string): number => {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new CallError(`${what} must be a whole number ≥ 0, got ${kindOf(v)}`);
    return v;
  };
  const el = (v: Value, what: string): TElement => {
    if (!(v instanceof TElement)) throw new CallError(`${what} must be an element, got ${kindOf(v)}`);
    return v;
  };
  /** The text of a value; an element's text is built from its descendants, so it is charged. */
  const textOf = (v: Value): string => {
    if (v instanceof TElement) {
      const text = v.el.textContent();
      budget.charge(text.length);
      return text;
    }
    if (typeof v === "string") return v;
    if (v === null || v === undefined) return "";
    if (typeof v === "number" || typeof v === "boolean") return String(v);
    throw new CallError(`needs text or an element, got ${kindOf(v)}`);
  };
  /**
   * A string transformed into one at least as long and at most a few times longer (`upper`,
   * `lower`, `escape_xml`): refused before the work when the input is already too long, checked
   * and charged after.
   */
  const grown = (input: string, what: string, transform: (s: string) => string): string => {
    if (input.length > budget.limits.stringLength) budget.string(input.length, what);
    const out = transform(input);
    if (out !== input) budget.string(out.length, what);
    return out;
  };
  /** A new string no longer than its input (`trim`, `truncate`): charged, never over the limit. */
  const made = (out: string, what: string): string => {
    budget.string(out.length, what);
    return out;
  };

  const fns: Record<string, Fn> = {
    select: ([sel]) => {
      env.query();
      return wrap(select(tree, str(sel, "the selector")), "select()");
    },
    selectOne: ([sel]) => {
      env.query();
      const e = selectOne(tree, str(sel, "the selector"));
      budget.charge(ENTRY_UNITS);
      return e === undefined ? null : new TElement(e, tree);
    },
    count: ([x]) => {
      if (Array.isArray(x)) return x.length;
      env.query();
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
      const s = str(sep ?? kw.sep ?? "", "the separator");
      const items = list as readonly Value[];
      budget.charge(items.length * 8);
      const texts = items.map(textOf);
      let total = Math.max(0, texts.length - 1) * s.length;
      for (const t of texts) total += t.length;
      budget.string(total, "join()");
      return texts.join(s);
    },
    json: ([x], kw) => {
      const indent = kw.indent ?? null;
      return toJson(x, indent === null ? 0 : int(indent, "indent"), budget);
    },
    escape_xml: ([x]) => grown(textOf(x), "escape_xml()", (s) => escapeText(s).replace(/"/g, "&quot;").replace(/'/g, "&apos;")),
    trim: ([x]) => {
      const s = textOf(x);
      const out = s.trim();
      return out === s ? s : made(out, "trim()");
    },
    upper: ([x]) => grown(textOf(x), "upper()", (s) => s.toUpperCase()),
    lower: ([x]) => grown(textOf(x), "lower()", (s) => s.toLowerCase()),
    indent: ([x, width], kw) => {
      const n = int(width ?? kw.width ?? 2, "the width");
      const first = truthy(kw.first ?? false);
      const s = textOf(x);
      // Count the lines that get the padding without splitting, so the result's exact length is
      // known (and refused) before anything is built: a width of a billion costs nothing.
      let padded = 0;
      for (let start = 0, i = 0; start <= s.length; i++) {
        const nl = s.indexOf("\n", start);
        const end = nl < 0 ? s.length : nl;
        if (end > start && (i > 0 || first)) padded++;
        if (nl < 0) break;
        start = nl + 1;
      }
      if (padded === 0) return s;
      budget.string(s.length + n * padded, "indent()");
      const pad = " ".repeat(n);
      return s
        .split("\n")
        .map((line, i) => (line === "" || (i === 0 && !first) ? line : pad + line))
        .join("\n");
    },
    default: ([x, d]) => (x === undefined || x === null ? (d ?? null) : x),
    truncate: ([x, n], kw) => {
      const s = textOf(x);
      const max = int(n ?? kw.length ?? 255, "the length");
      const end = str(kw.end ?? "…", "end");
      return s.length <= max ? s : made(s.slice(0, Math.max(0, max - end.length)) + end, "truncate()");
    },
    first: ([x]) => (Array.isArray(x) ? x[0] : typeof x === "string" ? x[0] : undefined),
    last: ([x]) => (Array.isArray(x) ? x[x.length - 1] : typeof x === "string" ? x[x.length - 1] : undefined),
    range: ([a, b]) => {
      const from = b === undefined ? 0 : int(a, "start");
      const to = int(b === undefined ? a : b, "end");
      const length = Math.max(0, to - from);
      budget.list(length, "range()");
      return budget.nest(Object.freeze(Array.from({ length }, (_, i) => from + i)), []);
    },
    string: ([x]) => textOf(x),
  };
  const out = new Map<string, Builtin>();
  for (const [name, f] of Object.entries(fns)) out.set(name, new Builtin(name, f));
  return out;
}
