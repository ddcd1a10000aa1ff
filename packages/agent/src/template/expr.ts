/**
 * Template expressions (TP-5 … TP-9): a small Jinja-like language, parsed into a tree the
 * evaluator walks. Literals, names, `.member` and `[index]`, calls of built-in functions,
 * `value | filter(args)`, `not`/`and`/`or`, comparisons, `in`/`not in`, arithmetic, `~` (string
 * concatenation), `a if cond else b`, and list literals. Nothing else: no assignment, no lambdas,
 * no access to anything the evaluator does not hand out.
 */
import { brief, type Pos } from "./errors.ts";

export type Expr =
  | { readonly t: "lit"; readonly value: string | number | boolean | null; readonly pos: Pos }
  | { readonly t: "name"; readonly name: string; readonly pos: Pos }
  | { readonly t: "member"; readonly object: Expr; readonly key: Expr | string; readonly pos: Pos }
  | {
      readonly t: "call";
      readonly callee: Expr;
      readonly args: readonly Expr[];
      readonly kwargs: readonly [string, Expr][];
      readonly pos: Pos;
    }
  | {
      readonly t: "filter";
      readonly value: Expr;
      readonly name: string;
      readonly args: readonly Expr[];
      readonly kwargs: readonly [string, Expr][];
      readonly pos: Pos;
    }
  | { readonly t: "unary"; readonly op: "not" | "-"; readonly arg: Expr; readonly pos: Pos }
  | { readonly t: "binary"; readonly op: string; readonly left: Expr; readonly right: Expr; readonly pos: Pos }
  | { readonly t: "cond"; readonly test: Expr; readonly yes: Expr; readonly otherwise: Expr | undefined; readonly pos: Pos }
  | { readonly t: "list"; readonly items: readonly Expr[]; readonly pos: Pos };

interface Token {
  readonly k: "num" | "str" | "name" | "op" | "end";
  readonly v: string;
  readonly value?: number | string;
  readonly pos: Pos;
}

/** Thrown by the parser with a position; the template layer adds the template's name. */
export class ExprError extends Error {
  constructor(
    message: string,
    readonly pos: Pos,
    /** True when a nesting bound (TP-23), not the syntax, was the problem. */
    readonly limit = false,
  ) {
    super(message);
  }
}

const OPS = ["==", "!=", "<=", ">=", "//", "(", ")", "[", "]", ",", ".", "|", ":", "~", "+", "-", "*", "/", "%", "<", ">", "="];
const KEYWORDS = new Set(["and", "or", "not", "in", "if", "else", "is", "true", "false", "none", "null", "True", "False", "None"]);
/** Parentheses, brackets, calls, `not`, unary minus and `else` chains nest at most this deep. */
const MAX_DEPTH = 64;
/**
 * The expression tree is at most this deep, chains included (`a + a + …`, `x | f | f …`,
 * `a.b.c…`): the evaluator recurses over it, so a deeper one would overflow the stack.
 */
export const MAX_EXPR_DEPTH = 256;

function tokenize(src: string, base: Pos): Token[] {
  const out: Token[] = [];
  let line = base.line;
  let col = base.column;
  let i = 0;
  const advance = (n: number) => {
    for (let k = 0; k < n; k++) {
      if (src[i] === "\n") {
        line++;
        col = 1;
      } else col++;
      i++;
    }
  };
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) {
      advance(1);
      continue;
    }
    const pos = { line, column: col };
    if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?/.exec(src.slice(i)) as RegExpExecArray;
      out.push({ k: "num", v: m[0], value: Number(m[0]), pos });
      advance(m[0].length);
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i)) as RegExpExecArray;
      out.push({ k: "name", v: m[0], pos });
      advance(m[0].length);
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = "";
      while (j < src.length && src[j] !== c) {
        if (src[j] === "\\" && j + 1 < src.length) {
          const e = src[j + 1] as string;
          s += e === "n" ? "\n" : e === "t" ? "\t" : e === "r" ? "\r" : e;
          j += 2;
        } else s += src[j++];
      }
      if (j >= src.length) throw new ExprError("a string is not closed", pos);
      out.push({ k: "str", v: src.slice(i, j + 1), value: s, pos });
      advance(j + 1 - i);
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (op === undefined) throw new ExprError(`unexpected character ${JSON.stringify(c)}`, pos);
    out.push({ k: "op", v: op, pos });
    advance(op.length);
  }
  out.push({ k: "end", v: "", pos: { line, column: col } });
  return out;
}

/** Parses one expression (the whole of `src`). */
export function parseExpr(src: string, base: Pos): Expr {
  const p = new Parser(tokenize(src, base));
  const e = p.expression();
  p.expectEnd();
  return e;
}

/** Parses `src` as a statement: a keyword, then expressions the caller reads with the parser. */
export function statementParser(src: string, base: Pos): Parser {
  return new Parser(tokenize(src, base));
}

export class Parser {
  #i = 0;
  #depth = 0;
  /** Height of every node built, to refuse trees the evaluator could not walk. */
  readonly #heights = new WeakMap<Expr, number>();
  constructor(private readonly tokens: readonly Token[]) {}

  /** Registers a new node's height (one more than its tallest child); fails past the limit. */
  #mk<T extends Expr>(e: T): T {
    let tallest = 0;
    // Leaves (names, strings, constants) are not registered: their height is 1.
    for (const c of children(e)) tallest = Math.max(tallest, this.#heights.get(c) ?? 1);
    if (tallest + 1 > MAX_EXPR_DEPTH)
      throw new ExprError(`the expression nests deeper than ${MAX_EXPR_DEPTH} levels; split it with {% set %}`, e.pos, true);
    this.#heights.set(e, tallest + 1);
    return e;
  }

  /** Runs a step of the parser that recurses, bounding how deep it may go. */
  #nested<T>(f: () => T): T {
    if (++this.#depth > MAX_DEPTH) {
      this.#depth--;
      throw new ExprError(`expressions nest deeper than ${MAX_DEPTH} levels`, this.peek().pos, true);
    }
    try {
      return f();
    } finally {
      this.#depth--;
    }
  }

  peek(): Token {
    return this.tokens[this.#i] as Token;
  }
  next(): Token {
    return this.tokens[this.#i++] as Token;
  }
  at(v: string): boolean {
    const t = this.peek();
    return (t.k === "op" || t.k === "name") && t.v === v;
  }
  accept(v: string): boolean {
    if (!this.at(v)) return false;
    this.#i++;
    return true;
  }
  expect(v: string, what = `"${v}"`): Token {
    const t = this.peek();
    if (!this.at(v)) throw new ExprError(`expected ${what}, found ${describe(t)}`, t.pos);
    return this.next();
  }
  expectName(what: string): string {
    const t = this.peek();
    if (t.k !== "name" || KEYWORDS.has(t.v)) throw new ExprError(`expected ${what}, found ${describe(t)}`, t.pos);
    this.#i++;
    return t.v;
  }
  expectEnd(): void {
    const t = this.peek();
    if (t.k !== "end") throw new ExprError(`unexpected ${describe(t)} after the expression`, t.pos);
  }

  expression(): Expr {
    return this.#nested(() => this.#conditional());
  }

  #conditional(): Expr {
    const e = this.#or();
    if (this.at("if")) {
      const pos = this.next().pos;
      const test = this.#or();
      const otherwise = this.accept("else") ? this.#nested(() => this.#conditional()) : undefined;
      return this.#mk({ t: "cond", test, yes: e, otherwise, pos });
    }
    return e;
  }
  #or(): Expr {
    let e = this.#and();
    while (this.at("or")) {
      const pos = this.next().pos;
      e = this.#mk({ t: "binary", op: "or", left: e, right: this.#and(), pos });
    }
    return e;
  }
  #and(): Expr {
    let e = this.#not();
    while (this.at("and")) {
      const pos = this.next().pos;
      e = this.#mk({ t: "binary", op: "and", left: e, right: this.#not(), pos });
    }
    return e;
  }
  #not(): Expr {
    if (this.at("not")) {
      const pos = this.next().pos;
      return this.#mk({ t: "unary", op: "not", arg: this.#nested(() => this.#not()), pos });
    }
    return this.#comparison();
  }
  #comparison(): Expr {
    let e = this.#concat();
    for (;;) {
      const t = this.peek();
      if (t.k === "op" && ["==", "!=", "<", ">", "<=", ">="].includes(t.v)) {
        this.next();
        e = this.#mk({ t: "binary", op: t.v, left: e, right: this.#concat(), pos: t.pos });
      } else if (this.at("in")) {
        this.next();
        e = this.#mk({ t: "binary", op: "in", left: e, right: this.#concat(), pos: t.pos });
      } else if (this.at("not") && this.tokens[this.#i + 1]?.v === "in") {
        this.next();
        this.next();
        e = this.#mk({
          t: "unary",
          op: "not",
          arg: this.#mk({ t: "binary", op: "in", left: e, right: this.#concat(), pos: t.pos }),
          pos: t.pos,
        });
      } else return e;
    }
  }
  #concat(): Expr {
    let e = this.#additive();
    while (this.at("~")) {
      const pos = this.next().pos;
      e = this.#mk({ t: "binary", op: "~", left: e, right: this.#additive(), pos });
    }
    return e;
  }
  #additive(): Expr {
    let e = this.#multiplicative();
    while (this.at("+") || this.at("-")) {
      const t = this.next();
      e = this.#mk({ t: "binary", op: t.v, left: e, right: this.#multiplicative(), pos: t.pos });
    }
    return e;
  }
  #multiplicative(): Expr {
    let e = this.#unary();
    while (this.at("*") || this.at("/") || this.at("%") || this.at("//")) {
      const t = this.next();
      e = this.#mk({ t: "binary", op: t.v, left: e, right: this.#unary(), pos: t.pos });
    }
    return e;
  }
  #unary(): Expr {
    if (this.at("-")) {
      const pos = this.next().pos;
      return this.#mk({ t: "unary", op: "-", arg: this.#nested(() => this.#unary()), pos });
    }
    return this.#filtered();
  }
  #filtered(): Expr {
    let e = this.#postfix();
    while (this.at("|")) {
      const pos = this.next().pos;
      const name = this.expectName("a filter name after |");
      const { args, kwargs } = this.at("(") ? this.#arguments() : { args: [], kwargs: [] };
      e = this.#mk({ t: "filter", value: e, name, args, kwargs, pos });
    }
    return e;
  }
  #postfix(): Expr {
    let e = this.#primary();
    for (;;) {
      if (this.at(".")) {
        const pos = this.next().pos;
        const t = this.next();
        if (t.k !== "name" && t.k !== "num") throw new ExprError(`expected a member name after ".", found ${describe(t)}`, t.pos);
        e = this.#mk({ t: "member", object: e, key: t.v, pos });
      } else if (this.at("[")) {
        const pos = this.next().pos;
        const key = this.expression();
        this.expect("]");
        e = this.#mk({ t: "member", object: e, key, pos });
      } else if (this.at("(")) {
        const pos = this.peek().pos;
        const { args, kwargs } = this.#arguments();
        e = this.#mk({ t: "call", callee: e, args, kwargs, pos });
      } else return e;
    }
  }
  #arguments(): { args: Expr[]; kwargs: [string, Expr][] } {
    this.expect("(");
    const args: Expr[] = [];
    const kwargs: [string, Expr][] = [];
    if (!this.at(")"))
      do {
        const t = this.peek();
        if (t.k === "name" && this.tokens[this.#i + 1]?.v === "=" && this.tokens[this.#i + 2]?.v !== "=") {
          this.next();
          this.next();
          kwargs.push([t.v, this.expression()]);
        } else {
          if (kwargs.length > 0) throw new ExprError("positional arguments must come before keyword arguments", t.pos);
          args.push(this.expression());
        }
      } while (this.accept(","));
    this.expect(")", '")" to close the call');
    return { args, kwargs };
  }
  #primary(): Expr {
    const t = this.next();
    switch (t.k) {
      case "num":
        return this.#mk({ t: "lit", value: t.value as number, pos: t.pos });
      case "str":
        return { t: "lit", value: t.value as string, pos: t.pos };
      case "name":
        if (t.v === "true" || t.v === "True") return { t: "lit", value: true, pos: t.pos };
        if (t.v === "false" || t.v === "False") return { t: "lit", value: false, pos: t.pos };
        if (t.v === "none" || t.v === "None" || t.v === "null") return { t: "lit", value: null, pos: t.pos };
        if (KEYWORDS.has(t.v)) throw new ExprError(`unexpected keyword "${t.v}"`, t.pos);
        return { t: "name", name: t.v, pos: t.pos };
      case "op":
        if (t.v === "(") {
          const e = this.expression();
          this.expect(")", '")"');
          return e;
        }
        if (t.v === "[") {
          const items: Expr[] = [];
          if (!this.at("]"))
            do items.push(this.expression());
            while (this.accept(","));
          this.expect("]", '"]" to close the list');
          return this.#mk({ t: "list", items, pos: t.pos });
        }
        break;
      default:
        break;
    }
    throw new ExprError(`expected a value, found ${describe(t)}`, t.pos);
  }
}

function describe(t: Token): string {
  if (t.k === "end") return "the end of the expression";
  if (t.k === "str") return `the string ${brief(t.v)}`;
  return `"${brief(t.v)}"`;
}

/** The sub-expressions of a node. */
function children(e: Expr): readonly Expr[] {
  switch (e.t) {
    case "lit":
    case "name":
      return [];
    case "member":
      return typeof e.key === "string" ? [e.object] : [e.object, e.key];
    case "call":
      return [e.callee, ...e.args, ...e.kwargs.map(([, x]) => x)];
    case "filter":
      return [e.value, ...e.args, ...e.kwargs.map(([, x]) => x)];
    case "unary":
      return [e.arg];
    case "binary":
      return [e.left, e.right];
    case "cond":
      return e.otherwise === undefined ? [e.test, e.yes] : [e.test, e.yes, e.otherwise];
    case "list":
      return e.items;
    default: {
      const never: never = e;
      return never;
    }
  }
}
