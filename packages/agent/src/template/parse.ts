/**
 * Template structure (TP-10 … TP-14): text, `{{ output }}`, `{% if %}/{% elif %}/{% else %}/
 * {% endif %}`, `{% for x in … %}…{% else %}…{% endfor %}` (also `for a, b in …` over pairs), and
 * `{% set name = … %}`. Unknown or misplaced tags are errors with the position and what was
 * expected.
 */
import { brief, type Pos, TemplateError } from "./errors.ts";
import { type Expr, ExprError, parseExpr, statementParser } from "./expr.ts";
import { type Chunk, lex } from "./lexer.ts";

export type Node =
  | { readonly t: "text"; readonly text: string; readonly pos: Pos }
  | { readonly t: "output"; readonly expr: Expr; readonly pos: Pos }
  | {
      readonly t: "if";
      readonly branches: readonly { readonly test: Expr; readonly body: readonly Node[] }[];
      readonly otherwise: readonly Node[];
    }
  | {
      readonly t: "for";
      readonly names: readonly string[];
      readonly iterable: Expr;
      readonly body: readonly Node[];
      readonly otherwise: readonly Node[];
      readonly pos: Pos;
    }
  | { readonly t: "set"; readonly name: string; readonly expr: Expr; readonly pos: Pos };

export interface Compiled {
  readonly name: string;
  readonly nodes: readonly Node[];
}

/** Largest template accepted, in characters. */
export const MAX_TEMPLATE = 1_000_000;
const MAX_NESTING = 100;

export function compile(source: string, name: string): Compiled {
  if (typeof source !== "string") throw new TemplateError("a template must be a string", name, 1, 1, "syntax");
  if (source.length > MAX_TEMPLATE)
    throw new TemplateError(
      `the template is ${source.length} characters long (limit ${MAX_TEMPLATE})`,
      name,
      1,
      1,
      "limit",
      "template-size",
    );
  const chunks = lex(source, name);
  let i = 0;
  const fail = (msg: string, pos: Pos): never => {
    throw new TemplateError(msg, name, pos.line, pos.column, "syntax");
  };
  const exprFail = (e: ExprError): never => {
    throw new TemplateError(e.message, name, e.pos.line, e.pos.column, e.limit ? "limit" : "syntax", e.limit ? "depth" : undefined);
  };
  const expr = (src: string, pos: Pos): Expr => {
    if (src.trim() === "") fail("expected an expression", pos);
    try {
      return parseExpr(src, pos);
    } catch (e) {
      if (e instanceof ExprError) exprFail(e);
      throw e;
    }
  };
  /** Parses nodes until one of `ends` (a tag keyword); returns them and the tag that ended them. */
  const block = (
    ends: readonly string[],
    depth: number,
    opener?: { what: string; pos: Pos },
  ): { nodes: Node[]; end?: { word: string; chunk: Exclude<Chunk, { kind: "text" }> } } => {
    if (depth > MAX_NESTING) {
      const at = opener?.pos ?? { line: 1, column: 1 };
      throw new TemplateError(`blocks nest deeper than ${MAX_NESTING}`, name, at.line, at.column, "limit", "depth");
    }
    const nodes: Node[] = [];
    while (i < chunks.length) {
      const c = chunks[i++] as Chunk;
      if (c.kind === "text") {
        nodes.push({ t: "text", text: c.text, pos: c.pos });
        continue;
      }
      if (c.kind === "output") {
        nodes.push({ t: "output", expr: expr(c.source, c.bodyPos), pos: c.pos });
        continue;
      }
      const word = /^\s*([A-Za-z_]+)/.exec(c.source)?.[1] ?? "";
      if (ends.includes(word)) return { nodes, end: { word, chunk: c } };
      const rest = c.source.slice(c.source.indexOf(word) + word.length);
      const restPos = { line: c.bodyPos.line, column: c.bodyPos.column + c.source.indexOf(word) + word.length };
      switch (word) {
        case "if": {
          const branches: { test: Expr; body: Node[] }[] = [];
          let test = expr(rest, restPos);
          let otherwise: Node[] = [];
          for (;;) {
            const inner = block(["elif", "else", "endif"], depth + 1, { what: "{% if %}", pos: c.pos });
            branches.push({ test, body: inner.nodes });
            if (inner.end === undefined) return fail('{% if %} is not closed; expected "{% endif %}"', c.pos);
            if (inner.end.word === "elif") {
              const e = inner.end.chunk;
              const off = e.source.indexOf("elif") + 4;
              test = expr(e.source.slice(off), { line: e.bodyPos.line, column: e.bodyPos.column + off });
              continue;
            }
            if (inner.end.word === "else") {
              const last = block(["endif"], depth + 1, { what: "{% if %}", pos: c.pos });
              if (last.end === undefined) return fail('{% if %} is not closed; expected "{% endif %}"', c.pos);
              otherwise = last.nodes;
            }
            break;
          }
          nodes.push({ t: "if", branches, otherwise });
          break;
        }
        case "for": {
          let names: string[];
          let iterable: Expr;
          try {
            // Tokenizing is inside the try: a bad character in the loop header is a syntax error.
            const p = statementParser(rest, restPos);
            names = [p.expectName("a loop variable after for")];
            while (p.accept(",")) names.push(p.expectName("a loop variable"));
            p.expect("in", '"in"');
            iterable = p.expression();
            p.expectEnd();
          } catch (e) {
            if (e instanceof ExprError) return exprFail(e);
            throw e;
          }
          if (names.length > 2) fail("a for loop takes one variable, or two over pairs", c.pos);
          const body = block(["else", "endfor"], depth + 1, { what: "{% for %}", pos: c.pos });
          if (body.end === undefined) return fail('{% for %} is not closed; expected "{% endfor %}"', c.pos);
          let otherwise: Node[] = [];
          if (body.end.word === "else") {
            const last = block(["endfor"], depth + 1, { what: "{% for %}", pos: c.pos });
            if (last.end === undefined) return fail('{% for %} is not closed; expected "{% endfor %}"', c.pos);
            otherwise = last.nodes;
          }
          nodes.push({ t: "for", names, iterable, body: body.nodes, otherwise, pos: c.pos });
          break;
        }
        case "set": {
          const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)/.exec(rest);
          if (m === null) return fail("expected {% set name = value %}", restPos);
          const after = m[0].length;
          nodes.push({
            t: "set",
            name: m[1] as string,
            expr: expr(rest.slice(after), { line: restPos.line, column: restPos.column + after }),
            pos: c.pos,
          });
          break;
        }
        default:
          if (["elif", "else", "endif", "endfor", "endraw"].includes(word))
            fail(
              `{% ${word} %} without a matching ${word === "endfor" ? "{% for %}" : word === "endraw" ? "{% raw %}" : "{% if %}"}`,
              c.pos,
            );
          fail(`unknown tag {% ${brief(word || c.source.trim())} %}; expected if, elif, else, endif, for, endfor, set, raw`, c.pos);
      }
    }
    return { nodes };
  };
  const top = block([], 0);
  return { name, nodes: top.nodes };
}
