/**
 * Text from a session is data from elsewhere (a model, a tool, an imported bundle): before it
 * reaches a terminal it goes through {@link terminalSafe}, the one function every human output of
 * the CLI uses (CLI-26). `--json` documents stay exact: {@link jsonText} only writes the same
 * characters as JSON escapes, which decode to the same string.
 */

/**
 * What a terminal would interpret instead of showing: C0 controls but tab and line feed (ESC starts
 * every ANSI, OSC 52 clipboard and screen-clearing sequence; CR overwrites a line), DEL, C1
 * controls (0x9b is an 8-bit CSI), bidirectional embeddings, overrides and isolates (U+061C,
 * U+200E/F, U+202A–E, U+2066–9: text that displays in another order than it reads), the Unicode
 * line and paragraph separators, interlinear annotation marks, and unpaired surrogates.
 */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function shown(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code); // ␛, ␍, ␇ …
  if (code === 0x7f) return "␡";
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * `s` made safe to print: every character of {@link UNSAFE} is shown as a visible symbol or escape
 * instead of being interpreted; CRLF becomes LF; line feeds and tabs stay. Idempotent on its output.
 */
export function terminalSafe(s: string): string {
  return s.replace(/\r\n/g, "\n").replace(UNSAFE, shown);
}

/** True when `s` would print as it is. */
export function isTerminalSafe(s: string): boolean {
  UNSAFE.lastIndex = 0;
  const unsafe = UNSAFE.test(s);
  UNSAFE.lastIndex = 0;
  return !unsafe;
}

/**
 * JSON text of `value` that is also safe on a terminal: what `JSON.stringify` leaves raw among the
 * characters of {@link UNSAFE} (DEL, C1, bidi controls, separators) is written as `\uXXXX`
 * escapes, so the document decodes to exactly the same value.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** One line of text for a listing: line breaks and tabs shown as symbols, long text cut. */
export function oneLine(s: string, max = 80): string {
  const flat = terminalSafe(s.replace(/\r?\n/g, "⏎").replace(/\t/g, "→"));
  if (flat.length <= max) return flat;
  // never cut a surrogate pair in two
  const end = /[\ud800-\udbff]/.test(flat[max - 2] ?? "") ? max - 2 : max - 1;
  return `${flat.slice(0, end)}…`;
}
