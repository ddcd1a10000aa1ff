/**
 * The two processing instructions a strata document may have before its root (DOM-18): the XML
 * declaration `<?xml version="1.0" encoding="…" standalone="…"?>`, checked against productions
 * [23]–[32] and [80]–[81] of XML 1.0, and the `<?strata hwm="…" fixed="…"?>` header. Both are read
 * as pseudo-attributes in one linear pass (no regular expression, so no backtracking).
 */
import type { DomError } from "./errors.ts";
import { isXmlSpace, type Positions, scanName, showChar, skipSpace } from "./xml-text.ts";

export interface XmlDecl {
  readonly version: string;
  readonly encoding: string | undefined;
  readonly standalone: "yes" | "no" | undefined;
  /** Offset just past the closing `?>`. */
  readonly end: number;
}

export interface StrataHeader {
  readonly attrs: Readonly<Record<string, string>>;
  /** Where the header starts (errors about its values point here). */
  readonly offset: number;
  /** Offset just past the closing `?>`. */
  readonly end: number;
}

interface PseudoAttr {
  readonly name: string;
  readonly value: string;
  /** Offset of the name. */
  readonly at: number;
  /** Offset of the value's first character. */
  readonly valueAt: number;
}

/** True when the document starts with an XML declaration (`<?xml` then white space or `?>`). */
export function startsWithXmlDecl(xml: string, at = 0): boolean {
  if (!xml.startsWith("<?xml", at)) return false;
  const c = xml.charCodeAt(at + 5);
  return isXmlSpace(c) || c === 0x3f;
}

/**
 * Reads the XML declaration at offset 0 (the caller checked {@link startsWithXmlDecl}). Refuses,
 * with a position: a missing or misspelt `version` (names are case-sensitive), pseudo-attributes
 * out of order, repeated or unknown, a version other than `1.x`, an encoding name that is not
 * `[A-Za-z][A-Za-z0-9._-]*`, `standalone` other than `yes`/`no`. strata reads XML 1.0 only, so
 * `1.1` (and any other `1.x`) is refused as unsupported.
 */
export function readXmlDecl(xml: string, pos: Positions): XmlDecl {
  const fail = (msg: string, at: number): DomError => pos.error("bad-xml", `XML declaration: ${msg}`, at);
  const end = xml.indexOf("?>", 5);
  if (end < 0) throw fail('it is not closed with "?>"', 0);
  const order = ["version", "encoding", "standalone"];
  let expected = 0;
  // Names are checked as they are read, so `<?xml foo?>` is "unknown", not "foo has no value".
  const known = (name: string, at: number): void => {
    const k = order.indexOf(name);
    if (k < 0) {
      const lower = order.indexOf(name.toLowerCase());
      throw fail(
        lower >= 0
          ? `"${name}" must be written "${order[lower]}" (names are case-sensitive)`
          : `unknown pseudo-attribute "${name}"; it takes version, encoding and standalone, as in <?xml version="1.0" encoding="UTF-8"?>`,
        at,
      );
    }
    if (k < expected) throw fail(`"${name}" is out of place; the order is version, encoding, standalone, each at most once`, at);
    expected = k + 1;
  };
  const seen: Record<string, PseudoAttr> = {};
  const attrs = readPseudoAttrs(xml, 5, end, pos, "the XML declaration", known);
  for (const a of attrs) seen[a.name] = a;
  const version = seen.version;
  if (version === undefined) throw fail('version is missing; it starts <?xml version="1.0"', attrs[0]?.at ?? 5);
  if (!/^1\.[0-9]+$/.test(version.value)) throw fail(`version "${version.value}" is not an XML version (1.0)`, version.valueAt);
  if (version.value !== "1.0")
    throw fail(`XML ${version.value} is not supported; strata reads XML 1.0 (write version="1.0")`, version.valueAt);
  const encoding = seen.encoding;
  if (encoding !== undefined && !isEncName(encoding.value))
    throw fail(`"${encoding.value}" is not an encoding name (letters, digits, ".", "_", "-", starting with a letter)`, encoding.valueAt);
  const standalone = seen.standalone;
  if (standalone !== undefined && standalone.value !== "yes" && standalone.value !== "no")
    throw fail(`standalone must be "yes" or "no" (lower case), not "${standalone.value}"`, standalone.valueAt);
  return {
    version: version.value,
    encoding: encoding?.value,
    standalone: standalone?.value as "yes" | "no" | undefined,
    end: end + 2,
  };
}

/** EncName, production [81]: `[A-Za-z] ([A-Za-z0-9._] | '-')*`. */
function isEncName(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (i === 0 ? !letter : !(letter || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x5f || c === 0x2d)) return false;
  }
  return true;
}

/** True when a `<?strata` header starts at `at` (the target is exactly `strata`). */
export function startsWithStrataHeader(xml: string, at: number): boolean {
  if (!xml.startsWith("<?strata", at)) return false;
  const c = xml.charCodeAt(at + 8);
  return isXmlSpace(c) || c === 0x3f;
}

/** Reads `<?strata hwm="…" fixed="…"?>` at `at`: those two pseudo-attributes, each at most once. */
export function readStrataHeader(xml: string, at: number, pos: Positions): StrataHeader {
  const end = xml.indexOf("?>", at + 8);
  if (end < 0) throw pos.error("bad-xml", '<?strata?> header is not closed with "?>"', at);
  const attrs: Record<string, string> = {};
  const known = (name: string, nameAt: number): void => {
    if (name !== "hwm" && name !== "fixed")
      throw pos.error("bad-xml", `<?strata?> takes hwm and fixed, not ${JSON.stringify(name)}`, nameAt);
    if (Object.hasOwn(attrs, name)) throw pos.error("bad-xml", `<?strata?> gives ${name} twice`, nameAt);
  };
  for (const a of readPseudoAttrs(xml, at + 8, end, pos, "the <?strata?> header", known)) attrs[a.name] = a.value;
  return { attrs, offset: at, end: end + 2 };
}

/**
 * Pseudo-attributes `(S Name S? = S? ("…" | '…'))* S?` between `from` and `end` (the `?>`).
 * Each must be preceded by white space; values are literal (no references). `known` vets each name
 * as soon as it is read (it throws for names the instruction does not take).
 */
function readPseudoAttrs(
  xml: string,
  from: number,
  end: number,
  pos: Positions,
  what: string,
  known: (name: string, at: number) => void,
): PseudoAttr[] {
  const out: PseudoAttr[] = [];
  let k = from;
  for (;;) {
    const s = skipSpace(xml, k);
    if (s >= end) return out;
    if (s === k) throw pos.error("bad-xml", `${what}: expected white space before ${showChar(xml, s)}`, s);
    const ne = scanName(xml, s);
    if (ne === s) throw pos.error("bad-xml", `${what}: unexpected ${showChar(xml, s)}; expected a name like version="1.0"`, s);
    const name = xml.slice(s, ne);
    known(name, s);
    let e = skipSpace(xml, ne);
    if (e >= end || xml.charCodeAt(e) !== 0x3d /* = */) throw pos.error("bad-xml", `${what}: ${name} has no value; write ${name}="…"`, ne);
    e = skipSpace(xml, e + 1);
    const q = xml.charCodeAt(e);
    if (e >= end || (q !== 0x22 && q !== 0x27)) throw pos.error("bad-xml", `${what}: the value of ${name} must be in quotes`, e);
    const close = xml.indexOf(q === 0x22 ? '"' : "'", e + 1);
    if (close < 0 || close >= end) throw pos.error("bad-xml", `${what}: the value of ${name} is not closed`, e);
    out.push({ name, value: xml.slice(e + 1, close), at: s, valueAt: e + 1 });
    k = close + 1;
  }
}
