/**
 * What names and strings a tree may hold (DOM-5, DOM-6). Both are checked when an op is applied,
 * so a tree can always be written as XML 1.0 and read back exactly.
 */
import { DomError } from "./errors.ts";

/** The attribute that carries node ids in canonical XML; no element may have it as an attribute. */
export const ID_ATTR = "_id";

/** Longest tag or attribute name accepted. */
export const MAX_NAME_LENGTH = 128;

// ASCII XML names without colons (a "." must be escaped in CSS selectors: `n\\.s`).
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
// Names that pollute prototypes when used as keys, and names XML reserves.
const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Names already found valid, per kind: tags and attribute names repeat on every op, page and
 * event, so each distinct name is checked once per process (bounded; a name is a string, so an
 * entry can never become invalid).
 */
const VALID_TAGS = new Set<string>();
const VALID_ATTRS = new Set<string>();
const KNOWN_NAMES = 4096;

/** Why `name` cannot be a tag or attribute name, or `undefined` when it can. */
export function nameProblem(name: unknown, kind: "tag" | "attribute"): string | undefined {
  const known = kind === "tag" ? VALID_TAGS : VALID_ATTRS;
  if (typeof name === "string" && known.has(name)) return undefined;
  const problem = checkedName(name, kind);
  if (problem === undefined && known.size < KNOWN_NAMES) known.add(name as string);
  return problem;
}

function checkedName(name: unknown, kind: "tag" | "attribute"): string | undefined {
  if (typeof name !== "string") return `${kind} name must be a string, got ${describe(name)}`;
  if (name.length === 0) return `${kind} name is empty`;
  if (name.length > MAX_NAME_LENGTH) return `${kind} name is ${name.length} characters long (limit ${MAX_NAME_LENGTH})`;
  if (!NAME.test(name))
    return `${kind} name ${JSON.stringify(name)} is not allowed: use letters, digits, "_", "-", "." and start with a letter or "_"`;
  if (FORBIDDEN.has(name)) return `${kind} name ${JSON.stringify(name)} is reserved (it would reach object prototypes)`;
  if (/^xml/i.test(name)) return `${kind} name ${JSON.stringify(name)} is reserved by XML (names may not start with "xml")`;
  if (kind === "attribute" && name === ID_ATTR) return `attribute name "${ID_ATTR}" is reserved for node ids; ids are minted by the tree`;
  return undefined;
}

/** Throws `bad-name` unless `name` is a valid tag or attribute name. */
export function checkName(name: unknown, kind: "tag" | "attribute"): asserts name is string {
  const problem = nameProblem(name, kind);
  if (problem !== undefined) throw new DomError("bad-name", problem);
}

// Characters XML 1.0 cannot carry: C0 controls other than tab, LF and CR; U+FFFE and U+FFFF; and
// lone surrogates (which UTF-8 cannot encode).
const INVALID_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const INVALID_CHAR_G = new RegExp(INVALID_CHAR.source, "g");

// One character class covering every character INVALID_CHAR can match (surrogates, paired or not):
// a string without any is valid after one fast scan; only one with surrogates needs the pairing check.
const SUSPECT_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** Index of the first character XML 1.0 cannot carry, or -1. */
export function invalidCharIndex(s: string): number {
  if (!SUSPECT_CHAR.test(s)) return -1;
  const m = INVALID_CHAR.exec(s);
  return m === null ? -1 : m.index;
}

/** Throws `bad-text` unless `value` is a string every character of which XML 1.0 can carry. */
export function checkText(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string") throw new DomError("bad-text", `${what} must be a string, got ${describe(value)}`);
  const at = invalidCharIndex(value);
  if (at >= 0) {
    const code = value.charCodeAt(at).toString(16).toUpperCase().padStart(4, "0");
    throw new DomError(
      "bad-text",
      `${what} has character U+${code} at offset ${at}, which XML cannot carry; pass it through sanitizeText() first`,
    );
  }
}

/**
 * Makes any string storable: C0 control characters become their visible Unicode control pictures
 * (ESC → "␛"), lone surrogates and U+FFFE/U+FFFF become U+FFFD. Tool and model output goes through
 * this before it reaches a tree. Returns the input unchanged (same string) when nothing needed fixing.
 */
export function sanitizeText(s: string): string {
  if (invalidCharIndex(s) < 0) return s;
  return s.replace(INVALID_CHAR_G, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : "\uFFFD";
  });
}

/** A short description of an unexpected value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length > 40 ? `"${value.slice(0, 40)}…"` : JSON.stringify(value);
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}
