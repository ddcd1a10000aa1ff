/**
 * The values a template can hold (TP-15 … TP-17). Nothing from the host reaches a template as it
 * is: variables are copied into plain data, elements are wrapped in `TElement` (which exposes
 * `tag`, `attrs`, `text`, `id`, `children`, `parent` and nothing else), functions are `Builtin`s
 * the evaluator calls itself. Member access looks only at own data; strings, numbers and
 * functions have no members at all — so `x.constructor`, `__proto__` chains and `toString` games
 * find nothing.
 */
import { ATTRS_PROTO, type Element, type Tree } from "@strata/dom";

/** A record of data: a null-prototype, frozen object. */
export type Rec = { readonly [key: string]: Value };

export type Value = string | number | boolean | null | undefined | readonly Value[] | Rec | TElement | Builtin;

/** An element of the tree, as a template sees it. */
export class TElement {
  #attrs: Rec | undefined;
  constructor(
    readonly el: Element,
    readonly tree: Tree,
  ) {
    Object.freeze(this);
  }
  member(key: string): Value {
    switch (key) {
      case "tag":
        return this.el.tag;
      case "id":
        return this.el.id;
      case "text":
        return this.el.text;
      case "attrs":
        return this.attrs();
      case "children":
        return this.el.children.map((c) => new TElement(c, this.tree));
      case "parent": {
        const p = this.el.parent;
        return p === null ? null : new TElement(p, this.tree);
      }
      default:
        return undefined;
    }
  }
  attrs(): Rec {
    if (this.#attrs === undefined) this.#attrs = record(this.el.attrs);
    return this.#attrs;
  }
}

/** A function the template may call (only the evaluator can make one). */
export class Builtin {
  constructor(
    readonly name: string,
    readonly call: (args: readonly Value[], kwargs: Readonly<Record<string, Value>>) => Value,
  ) {
    Object.freeze(this);
  }
}

const FORBIDDEN = new Set([
  "__proto__",
  "constructor",
  "prototype",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
]);

/** A frozen null-prototype record of plain values. */
export function record(entries: Readonly<Record<string, Value>>): Rec {
  const out = Object.create(null) as Record<string, Value>;
  for (const k of Object.keys(entries)) if (!FORBIDDEN.has(k)) out[k] = entries[k];
  return Object.freeze(out);
}

export function isRec(v: Value): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof TElement) && !(v instanceof Builtin);
}

/** The member `key` of `v`, or undefined. Never reaches a prototype. */
export function member(v: Value, key: string | number): Value {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return typeof key === "number" && Number.isInteger(key) && key >= 0 ? (v as readonly Value[])[key] : undefined;
  if (v instanceof TElement) return typeof key === "string" ? v.member(key) : undefined;
  if (isRec(v)) {
    const k = String(key);
    return !FORBIDDEN.has(k) && Object.hasOwn(v, k) ? v[k] : undefined;
  }
  return undefined; // strings, numbers, booleans and functions have no members
}

/**
 * Copies host data into template values: strings, finite numbers, booleans, null, arrays and plain
 * objects (prototype Object or null), nothing else. Depth is bounded (32); `charge` is told the
 * units of every list item (8) and record entry (16) copied, so a shared sub-object referenced
 * many times over cannot make the copy unbounded.
 */
export function fromHost(v: unknown, charge: (units: number) => void, depth = 0): Value {
  if (depth > 32) throw new Error("variables nest deeper than 32 levels");
  if (v === null || v === undefined) return v as null | undefined;
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      if (!Number.isFinite(v)) throw new Error("variables may not hold NaN or Infinity");
      return v;
    case "object": {
      if (Array.isArray(v)) {
        charge(8 * v.length);
        return Object.freeze(v.map((x) => fromHost(x, charge, depth + 1)));
      }
      const proto = Object.getPrototypeOf(v);
      // Plain data: an object literal, a null-prototype record, or an element's attributes (whose
      // prototype is an empty object of no prototype: @strata/dom's ATTRS_PROTO).
      if (proto !== Object.prototype && proto !== null && proto !== ATTRS_PROTO)
        throw new Error("variables may hold only plain data (strings, numbers, lists, plain objects)");
      const keys = Object.keys(v);
      charge(16 * keys.length);
      const out = Object.create(null) as Record<string, Value>;
      for (const k of keys) out[k] = fromHost((v as Record<string, unknown>)[k], charge, depth + 1);
      return record(out);
    }
    default:
      throw new Error(`variables may not hold a ${typeof v}`);
  }
}

/** What kind of value `v` is, for error messages. */
export function kindOf(v: Value): string {
  if (v === undefined) return "undefined";
  if (v === null) return "none";
  if (Array.isArray(v)) return "a list";
  if (v instanceof TElement) return `element <${v.el.tag}>`;
  if (v instanceof Builtin) return `function ${v.name}`;
  if (typeof v === "object") return "a record";
  return `a ${typeof v}`;
}

/** Falsy: undefined, none, false, 0, "", and empty lists (TP-18). */
export function truthy(v: Value): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return Boolean(v);
}
