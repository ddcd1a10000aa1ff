/**
 * Parsing CSS selectors (DOM-24, DOM-27, decision 0019): the Selectors Level 4 subset strata
 * supports, read by hand in one pass (CSS Syntax §4 for identifiers, strings and escapes, §6 for
 * An+B), into the small tree `selector-match.ts` evaluates. Every error is a `bad-selector` naming
 * the column. Nesting and size are bounded (so matching never recurses deeply): pseudo-class
 * arguments nest at most {@link MAX_SELECTOR_NESTING} deep and a selector has at most
 * {@link MAX_COMPOUNDS} compound selectors in all.
 *
 * Supported: type and `*`; `#id`, `.class`; `[a]`, `[a=v]`, `~=`, `|=`, `^=`, `$=`, `*=`, and
 * strata's `[a!=v]` (DOM-25), each with an `i` flag; combinators (descendant, `>`, `+`, `~`), and a
 * leading one relative to `:scope`; `:not()`, `:is()`, `:where()`, `:matches()`, `:has()` (not
 * nested in another `:has()`, as in Selectors 4); `:root`, `:scope`, `:empty`,
 * `:first-/last-/only-child`, `:first-/last-/only-of-type`, `:nth-child()`, `:nth-last-child()`
 * (with `of S`), `:nth-of-type()`, `:nth-last-of-type()`; `:contains()` and `:icontains()` (text
 * content, from css-select). Refused: namespaces, pseudo-elements, comments, every other
 * pseudo-class.
 */
import { DomError } from "./errors.ts";

export type Combinator = " " | ">" | "+" | "~";
export type AttrOp = "exists" | "=" | "~=" | "|=" | "^=" | "$=" | "*=" | "!=";
export type Positional = "child" | "last-child" | "of-type" | "last-of-type";

export type Condition =
  | { readonly kind: "attr"; readonly name: string; readonly op: AttrOp; readonly value: string; readonly ignoreCase: boolean }
  | { readonly kind: "is" | "not"; readonly list: readonly Complex[] }
  | { readonly kind: "has"; readonly list: readonly Relative[] }
  | {
      readonly kind: "nth";
      readonly of: Positional;
      readonly a: number;
      readonly b: number;
      readonly filter: readonly Complex[] | undefined;
    }
  | { readonly kind: "contains"; readonly text: string; readonly ignoreCase: boolean }
  | { readonly kind: "root" | "scope" | "empty" | "first-child" | "last-child" | "only-child" | "only-of-type" };

/** A compound selector: an optional type (undefined: any) and conditions, all of which must hold. */
export interface Compound {
  readonly tag: string | undefined;
  readonly conditions: readonly Condition[];
}

/** Compounds joined left to right: `combinators[i]` joins `compounds[i]` and `compounds[i + 1]`. */
export interface Complex {
  readonly compounds: readonly Compound[];
  readonly combinators: readonly Combinator[];
}

/** A relative selector of `:has()`: the combinator that leads from the anchor, then a complex selector. */
export interface Relative {
  readonly leading: Combinator;
  readonly complex: Complex;
}

/** How deep pseudo-class arguments may nest (`:is(:not(:is(…)))`). */
export const MAX_SELECTOR_NESTING = 32;
/** Compound selectors in one whole selector. */
export const MAX_COMPOUNDS = 256;

const SCOPE: Compound = Object.freeze({ tag: undefined, conditions: Object.freeze([{ kind: "scope" }] as const) });

/**
 * Parses a selector list. A complex selector may start with a combinator (`> item`): it is then
 * relative to `:scope` (`:scope > item`). Throws `bad-selector` with the column of the problem.
 */
export function parseSelector(selector: string): Complex[] {
  return new Parser(selector).top();
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c;
const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
/** CSS name-start code point (ASCII letter, `_`, or non-ASCII). */
const isNameStart = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c >= 0x80;
const isNameChar = (c: number): boolean => isNameStart(c) || isDigit(c) || c === 0x2d;

const SIMPLE_PSEUDOS = new Set([
  "root",
  "scope",
  "empty",
  "first-child",
  "last-child",
  "only-child",
  "first-of-type",
  "last-of-type",
  "only-of-type",
]);
const FUNCTIONAL_PSEUDOS = new Set([
  "not",
  "is",
  "where",
  "matches",
  "has",
  "nth-child",
  "nth-last-child",
  "nth-of-type",
  "nth-last-of-type",
  "contains",
  "icontains",
]);

class Parser {
  private i = 0;
  private compounds = 0;

  constructor(private readonly s: string) {}

  private fail(msg: string, at = this.i): DomError {
    return new DomError("bad-selector", `invalid selector ${JSON.stringify(this.s)}: ${msg} (column ${at + 1})`, {
      line: 1,
      column: at + 1,
    });
  }

  private peek(k = 0): number {
    return this.s.charCodeAt(this.i + k);
  }

  private skipSpace(): boolean {
    const start = this.i;
    while (this.i < this.s.length && isSpace(this.peek())) this.i++;
    if (this.s.startsWith("/*", this.i)) throw this.fail("comments are not supported in selectors");
    return this.i > start;
  }

  private shown(at = this.i): string {
    return at >= this.s.length ? "the end of the selector" : JSON.stringify(this.s[at]);
  }

  top(): Complex[] {
    const list = this.list(0, true, false);
    if (this.i < this.s.length) throw this.fail(`unexpected ${this.shown()}`);
    return list;
  }

  /** A comma-separated list of complex selectors, up to the end or a `)`. */
  private list(depth: number, relativeToScope: boolean, inHas: boolean): Complex[] {
    const out: Complex[] = [];
    for (;;) {
      this.skipSpace();
      out.push(this.complex(depth, relativeToScope, inHas));
      this.skipSpace();
      if (this.peek() !== 0x2c /* , */) return out;
      this.i++;
    }
  }

  /** A combinator at the current position, if any (after optional white space). */
  private combinator(): Combinator | undefined {
    const c = this.peek();
    if (c === 0x3e) return ">";
    if (c === 0x2b) return "+";
    if (c === 0x7e) return "~";
    return undefined;
  }

  private complex(depth: number, relativeToScope: boolean, inHas: boolean): Complex {
    const compounds: Compound[] = [];
    const combinators: Combinator[] = [];
    const leading = this.combinator();
    if (leading !== undefined) {
      if (!relativeToScope) throw this.fail(`a selector here cannot start with the combinator "${leading}"`);
      this.i++;
      this.skipSpace();
      compounds.push(SCOPE);
      combinators.push(leading);
    }
    compounds.push(this.compound(depth, inHas));
    for (;;) {
      const spaced = this.skipSpace();
      const c = this.combinator();
      if (c !== undefined) {
        this.i++;
        this.skipSpace();
        combinators.push(c);
      } else if (spaced && this.i < this.s.length && this.peek() !== 0x2c && this.peek() !== 0x29 /* ) */) combinators.push(" ");
      else return { compounds, combinators };
      compounds.push(this.compound(depth, inHas));
    }
  }

  /** The relative selectors of `:has()`, each led by a combinator (descendant when none is written). */
  private relativeList(depth: number): Relative[] {
    const out: Relative[] = [];
    for (;;) {
      this.skipSpace();
      const written = this.combinator();
      if (written !== undefined) {
        this.i++;
        this.skipSpace();
      }
      out.push({ leading: written ?? " ", complex: this.complex(depth, false, true) });
      this.skipSpace();
      if (this.peek() !== 0x2c) return out;
      this.i++;
    }
  }

  private compound(depth: number, inHas: boolean): Compound {
    if (++this.compounds > MAX_COMPOUNDS) throw this.fail(`a selector may have at most ${MAX_COMPOUNDS} compound selectors`);
    const start = this.i;
    let tag: string | undefined;
    const conditions: Condition[] = [];
    if (this.peek() === 0x2a /* * */) this.i++;
    else if (this.startsIdent()) tag = this.ident();
    if (this.peek() === 0x7c /* | */) throw this.fail("namespaced selectors are not supported");
    for (;;) {
      const c = this.peek();
      if (c === 0x23 /* # */) {
        this.i++;
        if (!this.startsIdent()) throw this.fail("expected an id (a name) after #");
        conditions.push({ kind: "attr", name: "id", op: "=", value: this.ident(), ignoreCase: false });
      } else if (c === 0x2e /* . */) {
        this.i++;
        if (!this.startsIdent()) throw this.fail("expected a class name after .");
        conditions.push({ kind: "attr", name: "class", op: "~=", value: this.ident(), ignoreCase: false });
      } else if (c === 0x5b /* [ */) conditions.push(this.attribute());
      else if (c === 0x3a /* : */) conditions.push(this.pseudo(depth, inHas));
      else break;
    }
    if (this.i === start)
      throw this.fail(this.i >= this.s.length ? "a selector is missing at the end" : `expected a selector, found ${this.shown()}`);
    return { tag, conditions };
  }

  private attribute(): Condition {
    const open = this.i;
    this.i++;
    this.skipSpace();
    if (this.peek() === 0x7c || (this.peek() === 0x2a && this.peek(1) === 0x7c)) throw this.fail("namespaced selectors are not supported");
    if (!this.startsIdent()) throw this.fail(`expected an attribute name after "[", found ${this.shown()}`);
    const name = this.ident();
    if (this.peek() === 0x7c && this.peek(1) !== 0x3d) throw this.fail("namespaced selectors are not supported");
    this.skipSpace();
    if (this.peek() === 0x5d /* ] */) {
      this.i++;
      return { kind: "attr", name, op: "exists", value: "", ignoreCase: false };
    }
    const c = this.peek();
    let op: AttrOp;
    if (c === 0x3d) op = "=";
    else {
      const two = this.s.slice(this.i, this.i + 2);
      if (two !== "~=" && two !== "|=" && two !== "^=" && two !== "$=" && two !== "*=" && two !== "!=")
        throw this.fail(`expected "]" or an operator (=, ~=, |=, ^=, $=, *=, !=) in the attribute selector, found ${this.shown()}`);
      op = two;
      this.i++;
    }
    this.i++;
    this.skipSpace();
    const q = this.peek();
    let value: string;
    if (q === 0x22 || q === 0x27) value = this.string();
    else if (this.startsIdent()) value = this.ident();
    else
      throw this.fail(
        `expected a value after ${op}: a name, or a quoted string such as [${name}${op === "=" ? "" : op.slice(0, 1)}="1"], found ${this.shown()}`,
      );
    this.skipSpace();
    let ignoreCase = false;
    if (this.startsIdent()) {
      const at = this.i;
      const flag = this.ident();
      if (flag.toLowerCase() !== "i")
        throw this.fail(`unknown attribute flag ${JSON.stringify(flag)}; only i (ignore case) is supported`, at);
      ignoreCase = true;
      this.skipSpace();
    }
    if (this.peek() !== 0x5d) throw this.fail(`the attribute selector opened at column ${open + 1} is not closed with "]"`);
    this.i++;
    return { kind: "attr", name, op, value, ignoreCase };
  }

  private pseudo(depth: number, inHas: boolean): Condition {
    const at = this.i;
    this.i++;
    if (this.peek() === 0x3a) throw this.fail("pseudo-elements are not supported", at);
    if (!this.startsIdent()) throw this.fail(`expected a pseudo-class name after ":", found ${this.shown()}`);
    const name = this.ident().toLowerCase();
    const functional = this.peek() === 0x28; /* ( */
    if (!functional) {
      if (SIMPLE_PSEUDOS.has(name)) {
        if (name === "first-of-type") return { kind: "nth", of: "of-type", a: 0, b: 1, filter: undefined };
        if (name === "last-of-type") return { kind: "nth", of: "last-of-type", a: 0, b: 1, filter: undefined };
        return { kind: name } as Condition;
      }
      if (FUNCTIONAL_PSEUDOS.has(name)) throw this.fail(`:${name} takes an argument in parentheses`, at);
      throw this.fail(`unknown or unsupported pseudo-class :${name}`, at);
    }
    if (SIMPLE_PSEUDOS.has(name)) throw this.fail(`:${name} takes no arguments`, at);
    if (!FUNCTIONAL_PSEUDOS.has(name)) throw this.fail(`unknown or unsupported pseudo-class :${name}()`, at);
    if (depth + 1 > MAX_SELECTOR_NESTING) throw this.fail(`pseudo-classes nest more than ${MAX_SELECTOR_NESTING} deep`, at);
    this.i++;
    this.skipSpace();
    let result: Condition;
    switch (name) {
      case "not":
      case "is":
      case "where":
      case "matches":
        result = { kind: name === "not" ? "not" : "is", list: this.list(depth + 1, false, inHas) };
        break;
      case "has":
        if (inHas) throw this.fail(":has() cannot be nested inside :has()", at);
        result = { kind: "has", list: this.relativeList(depth + 1) };
        break;
      case "contains":
      case "icontains":
        result = { kind: "contains", text: this.containsArgument(), ignoreCase: name === "icontains" };
        break;
      default: {
        const of = name.slice(4) as Positional;
        const [a, b] = this.anPlusB();
        let filter: Complex[] | undefined;
        const spaced = this.skipSpace();
        if (spaced && (of === "child" || of === "last-child") && /^of(?![\w-])/i.test(this.s.slice(this.i, this.i + 3))) {
          this.i += 2;
          if (!this.skipSpace()) throw this.fail('expected white space after "of"');
          filter = this.list(depth + 1, false, inHas);
        }
        result = { kind: "nth", of, a, b, filter };
      }
    }
    this.skipSpace();
    if (this.peek() !== 0x29) throw this.fail(`expected ")" to close :${name}(, found ${this.shown()}`);
    this.i++;
    return result;
  }

  /** `:contains(text)`: a quoted string, or the raw text up to `)`. */
  private containsArgument(): string {
    if (this.peek() === 0x22 || this.peek() === 0x27) return this.string();
    const end = this.s.indexOf(")", this.i);
    if (end < 0) throw this.fail('expected ")" to close :contains(');
    const text = this.s.slice(this.i, end).trim();
    this.i = end;
    return text;
  }

  /** An+B (CSS Syntax §6): `odd`, `even`, an integer, or `An`, `An+B`, `An - B`, `-n+B`, … */
  private anPlusB(): [number, number] {
    const s = this.s;
    const at = this.i;
    const bad = (): DomError =>
      this.fail(`${JSON.stringify(s.slice(at, Math.max(this.i, at + 1)))} is not an An+B formula like odd, even, 3, 2n+1 or -n+3`, at);
    const word = /^(odd|even)(?![\w-])/i.exec(s.slice(at, at + 5));
    if (word !== null) {
      const w = (word[1] as string).toLowerCase();
      this.i += w.length;
      return w === "odd" ? [2, 1] : [2, 0];
    }
    let sign = 1;
    if (this.peek() === 0x2b || this.peek() === 0x2d) {
      sign = this.peek() === 0x2d ? -1 : 1;
      this.i++;
    }
    const digitsAt = this.i;
    while (isDigit(this.peek())) this.i++;
    const digits = s.slice(digitsAt, this.i);
    if (this.peek() !== 0x6e && this.peek() !== 0x4e /* n N */) {
      if (digits === "") throw bad();
      if (this.startsIdent() || this.peek() === 0x2e) throw bad();
      return [0, sign * clamp(digits)];
    }
    this.i++;
    const a = sign * (digits === "" ? 1 : clamp(digits));
    // After "n": nothing, or (white space) a sign (white space) digits; "n-1" is one token.
    const save = this.i;
    this.skipSpace();
    const c = this.peek();
    if (c !== 0x2b && c !== 0x2d) {
      this.i = save;
      if (this.startsIdent() || isDigit(this.peek())) throw bad();
      return [a, 0];
    }
    this.i++;
    this.skipSpace();
    const bAt = this.i;
    while (isDigit(this.peek())) this.i++;
    if (this.i === bAt) throw bad();
    if (this.startsIdent()) throw bad();
    return [a, (c === 0x2d ? -1 : 1) * clamp(s.slice(bAt, this.i))];
  }

  /** True when an identifier starts here (CSS Syntax §4.3.9). */
  private startsIdent(): boolean {
    const c = this.peek();
    if (isNameStart(c)) return true;
    if (c === 0x5c /* \ */) return this.validEscape(0);
    if (c === 0x2d) {
      const d = this.peek(1);
      return isNameStart(d) || d === 0x2d || (d === 0x5c && this.validEscape(1));
    }
    return false;
  }

  private validEscape(k: number): boolean {
    return (
      this.peek(k) === 0x5c &&
      this.i + k + 1 < this.s.length &&
      this.peek(k + 1) !== 0x0a &&
      this.peek(k + 1) !== 0x0d &&
      this.peek(k + 1) !== 0x0c
    );
  }

  /** An identifier (the caller checked {@link startsIdent}). */
  private ident(): string {
    return this.name();
  }

  /** Name code points and escapes, as many as there are. */
  private name(): string {
    let out = "";
    for (;;) {
      const c = this.peek();
      if (this.i < this.s.length && isNameChar(c)) {
        const cp = this.s.codePointAt(this.i) as number;
        out += String.fromCodePoint(cp);
        this.i += cp > 0xffff ? 2 : 1;
      } else if (c === 0x5c && this.validEscape(0)) out += this.escape();
      else return out;
    }
  }

  /** A backslash escape (CSS Syntax §4.3.7): up to six hex digits and one white space, or any code point. */
  private escape(): string {
    this.i++;
    const start = this.i;
    while (this.i - start < 6 && isHex(this.peek())) this.i++;
    if (this.i === start) {
      const cp = this.s.codePointAt(this.i) as number;
      this.i += cp > 0xffff ? 2 : 1;
      return String.fromCodePoint(cp);
    }
    const cp = Number.parseInt(this.s.slice(start, this.i), 16);
    if (this.peek() === 0x0d && this.peek(1) === 0x0a) this.i += 2;
    else if (isSpace(this.peek())) this.i++;
    return cp === 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ? "\uFFFD" : String.fromCodePoint(cp);
  }

  /** A quoted string (CSS Syntax §4.3.5): escapes decoded, an escaped newline skipped. */
  private string(): string {
    const open = this.i;
    const q = this.peek();
    this.i++;
    let out = "";
    for (;;) {
      if (this.i >= this.s.length) throw this.fail("the quoted string is not closed", open);
      const c = this.peek();
      if (c === q) {
        this.i++;
        return out;
      }
      if (c === 0x0a || c === 0x0d || c === 0x0c) throw this.fail("a quoted string cannot hold a raw line break; write \\a", this.i);
      if (c === 0x5c) {
        const d = this.peek(1);
        if (this.i + 1 >= this.s.length) this.i++;
        else if (d === 0x0a || d === 0x0c) this.i += 2;
        else if (d === 0x0d) this.i += this.peek(2) === 0x0a ? 3 : 2;
        else out += this.escape();
      } else {
        out += this.s[this.i];
        this.i++;
      }
    }
  }
}

/** An integer of An+B, clamped far beyond any sibling count. */
function clamp(digits: string): number {
  return digits.length > 9 ? 1e9 : Number(digits);
}
