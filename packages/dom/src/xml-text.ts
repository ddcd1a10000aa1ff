/**
 * Character classes of XML 1.0 (fifth edition) and positions in a document, for the XML reader.
 * Everything here works on UTF-16 code units in one pass, without regular expressions that could
 * backtrack.
 */
import { DomError, type DomErrorCode } from "./errors.ts";

/** XML white space (production [3] S): space, tab, LF, CR. Nothing else is white space in XML. */
export function isXmlSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** True when code point `cp` is a character XML 1.0 can carry (production [2] Char). */
export function isXmlChar(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/**
 * NameStartChar (production [4]) for a UTF-16 code unit. Surrogates count as name characters:
 * astral name characters (#x10000–#xEFFFF) arrive as pairs, and lone surrogates were refused
 * before any name is read.
 */
export function isNameStartChar(c: number): boolean {
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    c === 0x200c ||
    c === 0x200d ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xdfff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd)
  );
}

/** NameChar (production [4a]) for a UTF-16 code unit. */
export function isNameChar(c: number): boolean {
  if (c < 0x80) return isNameStartChar(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
  return isNameStartChar(c) || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || c === 0x203f || c === 0x2040;
}

/**
 * End of the name-like run starting at `i`: name characters, a leading digit, "-" or "." included
 * (so `<1a>` reads as the name "1a" and is refused as a name, not as garbage). `i` itself when no
 * name starts there.
 */
export function scanName(xml: string, i: number): number {
  let j = i;
  while (j < xml.length && isNameChar(xml.charCodeAt(j))) j++;
  return j;
}

/** Index of the first character at or after `i` that is not XML white space. */
export function skipSpace(xml: string, i: number): number {
  let j = i;
  while (j < xml.length && isXmlSpace(xml.charCodeAt(j))) j++;
  return j;
}

/** A character as it can be shown in a message: `"x"`, or `U+00A0` for invisible ones. */
export function showChar(xml: string, i: number): string {
  if (i >= xml.length) return "the end of the document";
  const c = xml.codePointAt(i) as number;
  if (c > 0x20 && c < 0x7f) return JSON.stringify(String.fromCodePoint(c));
  return `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Line and column of string offsets, computed on demand (only error paths need them). */
export class Positions {
  private lineStarts: number[] | undefined;
  constructor(private readonly text: string) {}

  /** 1-based line and column (in UTF-16 code units) of `offset`. LF, CR and CRLF end a line. */
  at(offset: number): { line: number; column: number } {
    if (this.lineStarts === undefined) {
      const starts = [0];
      const t = this.text;
      for (let i = 0; i < t.length; i++) {
        const c = t.charCodeAt(i);
        if (c === 0x0a || (c === 0x0d && t.charCodeAt(i + 1) !== 0x0a)) starts.push(i + 1);
      }
      this.lineStarts = starts;
    }
    const starts = this.lineStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (starts[lo] as number) + 1 };
  }

  /** A `DomError` whose message ends with `(line L, column C)` of `offset`. */
  error(code: DomErrorCode, msg: string, offset: number): DomError {
    const { line, column } = this.at(offset);
    return new DomError(code, `${msg} (line ${line}, column ${column})`, { line, column });
  }
}
