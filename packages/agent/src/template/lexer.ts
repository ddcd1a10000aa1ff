/**
 * Splits a template into text and tags (TP-1 … TP-4): `{{ expr }}`, `{% stmt %}`, `{# comment #}`,
 * each optionally with `-` to trim the white space beside it, and `{% raw %}…{% endraw %}` copied as
 * text. Positions are kept for errors.
 */
import { type Pos, TemplateError } from "./errors.ts";

export type Chunk =
  | { readonly kind: "text"; readonly text: string; readonly pos: Pos }
  | { readonly kind: "output" | "tag"; readonly source: string; readonly pos: Pos; readonly bodyPos: Pos };

/** Line and column of every offset, computed once per template. */
export class Lines {
  readonly #starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) this.#starts.push(i + 1);
  }
  at(offset: number): Pos {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.#starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (this.#starts[lo] as number) + 1 };
  }
}

const OPEN = /\{[{%#]/g;
const ENDRAW = /\{%-?\s*endraw\s*-?%\}/g;

export function lex(source: string, name: string): Chunk[] {
  const lines = new Lines(source);
  const out: Chunk[] = [];
  let i = 0;
  let trimNext = false;
  const text = (from: number, to: number, trimEnd: boolean) => {
    let t = source.slice(from, to);
    // trimStart/trimEnd strip the same white space as \s, in linear time (a /\s+$/ regex
    // backtracks quadratically over a long run of spaces that does not end the text).
    if (trimNext) t = t.trimStart();
    if (trimEnd) t = t.trimEnd();
    trimNext = false;
    if (t !== "") out.push({ kind: "text", text: t, pos: lines.at(from) });
  };
  while (i < source.length) {
    OPEN.lastIndex = i;
    const m = OPEN.exec(source);
    if (m === null) break;
    const at = m.index;
    const kind = source[at + 1] as "{" | "%" | "#";
    const close = kind === "{" ? "}}" : kind === "%" ? "%}" : "#}";
    const end = source.indexOf(close, at + 2);
    const pos = lines.at(at);
    if (end < 0)
      throw new TemplateError(`"${source.slice(at, at + 2)}" is not closed; expected "${close}"`, name, pos.line, pos.column, "syntax");
    let bodyStart = at + 2;
    let bodyEnd = end;
    const trimBefore = source[bodyStart] === "-";
    if (trimBefore) bodyStart++;
    const trimAfter = bodyEnd - 1 >= bodyStart && source[bodyEnd - 1] === "-";
    if (trimAfter) bodyEnd--;
    text(i, at, trimBefore);
    const body = source.slice(bodyStart, bodyEnd);
    i = end + 2;
    trimNext = trimAfter;
    if (kind === "#") continue;
    if (kind === "%" && body.trim() === "raw") {
      ENDRAW.lastIndex = i;
      const e = ENDRAW.exec(source);
      if (e === null) throw new TemplateError('{% raw %} is not closed; expected "{% endraw %}"', name, pos.line, pos.column, "syntax");
      text(i, e.index, false);
      i = e.index + e[0].length;
      continue;
    }
    out.push({ kind: kind === "{" ? "output" : "tag", source: body, pos, bodyPos: lines.at(bodyStart) });
  }
  text(i, source.length, false);
  return out;
}
