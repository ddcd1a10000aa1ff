/**
 * `json(x, indent=n)` (TP-16): the same text as `JSON.stringify` of the value's plain data
 * (elements become `{id, tag, attrs, text}`, undefined and functions `null`), written piece by
 * piece so that its length is checked as it grows (TP-23). A list that holds itself many times
 * over (`{% set l = [l, l] %}` repeated) would expand exponentially; here the writer stops at the
 * string-length limit, having done work proportional to that limit and no more.
 */
import type { Budget } from "./budget.ts";
import { LimitError } from "./errors.ts";
import { Builtin, type Rec, TElement, type Value } from "./values.ts";

/** `indent` is clamped to 10, as `JSON.stringify` does; 0 writes compact JSON. */
export function toJson(v: Value, indent: number, budget: Budget): string {
  const cap = budget.limits.stringLength;
  const gap = " ".repeat(Math.min(10, indent));
  const parts: string[] = [];
  let length = 0;
  const overflow = (): never => {
    throw new LimitError(
      "string-length",
      `json() would be more than ${cap} characters long (limit ${cap}); select fewer values or use truncate() first`,
    );
  };
  // Pieces are joined into flat chunks every few thousand: millions of tiny pieces (or a chain
  // of concatenations) would cost many times the memory of the text they make.
  const chunks: string[] = [];
  const push = (s: string): void => {
    length += s.length;
    if (length > cap) overflow();
    parts.push(s);
    if (parts.length >= 4096) {
      chunks.push(parts.join(""));
      parts.length = 0;
    }
  };
  const string = (s: string): void => {
    // The JSON text of a string is at least two characters longer than the string: check first,
    // so a string far past the limit is never escaped.
    if (length + s.length + 2 > cap) overflow();
    push(JSON.stringify(s));
  };
  const write = (x: Value, level: number): void => {
    if (x === undefined || x === null || x instanceof Builtin) push("null");
    else if (typeof x === "string") string(x);
    else if (typeof x !== "object") push(JSON.stringify(x) ?? "null");
    else if (x instanceof TElement) {
      const text = x.el.textContent();
      budget.charge(text.length);
      const fields: [string, Value][] = [
        ["id", x.el.id],
        ["tag", x.el.tag],
        ["attrs", x.attrs()],
        ["text", text],
      ];
      entries(fields, level);
    } else if (Array.isArray(x)) {
      const items = x as readonly Value[];
      if (items.length === 0) push("[]");
      else {
        push("[");
        items.forEach((item, i) => {
          if (i > 0) push(",");
          newline(level + 1);
          write(item, level + 1);
        });
        newline(level);
        push("]");
      }
    } else {
      const rec = x as Rec;
      entries(
        Object.keys(rec).map((k) => [k, rec[k]]),
        level,
      );
    }
  };
  const entries = (pairs: readonly (readonly [string, Value])[], level: number): void => {
    if (pairs.length === 0) {
      push("{}");
      return;
    }
    push("{");
    pairs.forEach(([k, value], i) => {
      if (i > 0) push(",");
      newline(level + 1);
      string(k);
      push(gap === "" ? ":" : ": ");
      write(value, level + 1);
    });
    newline(level);
    push("}");
  };
  const newline = (level: number): void => {
    if (gap !== "") push(`\n${gap.repeat(level)}`);
  };
  write(v, 0);
  budget.string(length, "json()");
  chunks.push(parts.join(""));
  return chunks.join("");
}
