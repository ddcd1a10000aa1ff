/**
 * From the bytes of a document to its text (DOM-18, XML 1.0 §4.3.3 and appendix F). The encoding
 * comes from the byte-order mark or the first bytes, then from the encoding declaration; strata
 * reads UTF-8, UTF-16 (with a byte-order mark, or without one when declared `UTF-16LE`/`UTF-16BE`),
 * ISO-8859-1 and US-ASCII, and refuses every other encoding, and every declaration that
 * contradicts the bytes, with a message saying what was found.
 */
import { DomError } from "./errors.ts";
import { readXmlDecl, startsWithXmlDecl } from "./xml-decl.ts";
import { Positions } from "./xml-text.ts";

/** How the text was obtained: decoded from bytes in one of these encodings, or given as a string. */
export type InputEncoding = "string" | "utf-8" | "utf-8-bom" | "utf-16-bom" | "utf-16le" | "utf-16be" | "iso-8859-1" | "us-ascii";

export interface DecodedInput {
  /** The document, without its byte-order mark. */
  readonly text: string;
  readonly encoding: InputEncoding;
}

const LATIN1 = new Set(["iso-8859-1", "iso_8859-1", "latin1", "l1", "iso-ir-100", "cp819", "ibm819", "csisolatin1"]);
const ASCII = new Set([
  "us-ascii",
  "ascii",
  "iso646-us",
  "ansi_x3.4-1968",
  "ansi_x3.4-1986",
  "us",
  "iso-ir-6",
  "cp367",
  "ibm367",
  "csascii",
]);
const UTF16 = new Set(["utf-16", "utf-16le", "utf-16be", "ucs-2", "iso-10646-ucs-2", "csunicode"]);
const SUPPORTED = "strata reads UTF-8, UTF-16, ISO-8859-1 and US-ASCII; convert the document to UTF-8";

/** The text of `input` and how it was decoded. Throws `bad-xml` for bytes it cannot decode. */
export function decodeInput(input: string | Uint8Array): DecodedInput {
  if (typeof input === "string") return { text: input.charCodeAt(0) === 0xfeff ? input.slice(1) : input, encoding: "string" };
  const b = input;
  const at = (i: number): number => (i < b.length ? (b[i] as number) : -1);
  if (at(0) === 0xef && at(1) === 0xbb && at(2) === 0xbf) return { text: utf8(b, 3), encoding: "utf-8-bom" };
  const four = b.length >= 4 ? ((at(0) << 24) | (at(1) << 16) | (at(2) << 8) | at(3)) >>> 0 : -1;
  if (
    four === 0x0000003c ||
    four === 0x3c000000 ||
    four === 0x00003c00 ||
    four === 0x003c0000 ||
    (at(0) === 0xff && at(1) === 0xfe && at(2) === 0 && at(3) === 0)
  )
    throw new DomError("bad-xml", `the document is in UCS-4 (UTF-32); ${SUPPORTED}`);
  if (four === 0x4c6fa794) throw new DomError("bad-xml", `the document is in EBCDIC; ${SUPPORTED}`);
  if (at(0) === 0xfe && at(1) === 0xff) return { text: utf16(b, 2, "utf-16be"), encoding: "utf-16-bom" };
  if (at(0) === 0xff && at(1) === 0xfe) return { text: utf16(b, 2, "utf-16le"), encoding: "utf-16-bom" };
  if (four === 0x003c003f) return { text: utf16(b, 0, "utf-16be"), encoding: "utf-16be" };
  if (four === 0x3c003f00) return { text: utf16(b, 0, "utf-16le"), encoding: "utf-16le" };
  // UTF-16 text without a byte-order mark or declaration (NUL bytes never occur in UTF-8 XML).
  if (b.length >= 4 && at(0) !== 0 && at(1) === 0 && at(2) !== 0 && at(3) === 0) throw unmarkedUtf16("LE");
  if (b.length >= 4 && at(0) === 0 && at(1) !== 0 && at(2) === 0 && at(3) !== 0) throw unmarkedUtf16("BE");
  // An ASCII-compatible encoding: the declaration (ASCII by definition) names which one.
  const declared = sniffEncoding(b);
  if (declared === undefined || declared === "utf-8") return { text: utf8(b, 0), encoding: "utf-8" };
  if (LATIN1.has(declared)) return { text: latin1(b), encoding: "iso-8859-1" };
  if (ASCII.has(declared)) return { text: ascii(b), encoding: "us-ascii" };
  if (UTF16.has(declared) || declared.startsWith("utf-32") || declared.startsWith("ucs-4"))
    throw new DomError(
      "bad-xml",
      `the encoding declaration says ${JSON.stringify(declared)}, but the document starts with neither a byte-order mark nor the bytes of "<?" in that encoding: the declaration contradicts the bytes (line 1)`,
      { line: 1 },
    );
  throw new DomError("bad-xml", `encoding ${JSON.stringify(declared)} is not supported; ${SUPPORTED} (line 1)`, { line: 1 });
}

/**
 * Checks the declared encoding (after the text was decoded) against how the bytes were read:
 * a byte-order mark says UTF-8 or UTF-16, and UTF-16 without one must say which byte order.
 * Strings carry no bytes, so any encoding name is accepted for them.
 */
export function checkDeclaredEncoding(encoding: InputEncoding, declared: string | undefined, pos: Positions, at: number): void {
  const d = declared?.toLowerCase();
  const contradiction = (found: string): DomError =>
    pos.error(
      "bad-xml",
      `the document is ${found}, but its encoding declaration says ${JSON.stringify(declared)}: the declaration contradicts the bytes`,
      at,
    );
  switch (encoding) {
    case "string":
    case "utf-8":
    case "iso-8859-1":
    case "us-ascii":
      return; // chosen from the declaration itself
    case "utf-8-bom":
      if (d !== undefined && d !== "utf-8") throw contradiction("UTF-8 (it starts with a UTF-8 byte-order mark)");
      return;
    case "utf-16-bom":
      if (d !== undefined && d !== "utf-16") throw contradiction("UTF-16 (it starts with a UTF-16 byte-order mark)");
      return;
    case "utf-16le":
    case "utf-16be":
      if (d !== encoding)
        throw pos.error(
          "bad-xml",
          `the document is ${encoding.toUpperCase()} without a byte-order mark, so its declaration must say encoding="${encoding.toUpperCase()}"${declared === undefined ? "" : `, not ${JSON.stringify(declared)}`}; or start it with a byte-order mark`,
          at,
        );
      return;
    default: {
      const unknown: never = encoding;
      throw new DomError("bad-xml", `unknown input encoding ${String(unknown)}`);
    }
  }
}

function unmarkedUtf16(order: "LE" | "BE"): DomError {
  return new DomError(
    "bad-xml",
    `the document looks like UTF-16${order} without a byte-order mark or an encoding declaration; start it with a byte-order mark, or with <?xml version="1.0" encoding="UTF-16${order}"?> (line 1)`,
    { line: 1 },
  );
}

/** The declared encoding of ASCII-compatible bytes, lower-cased, or undefined without a declaration. */
function sniffEncoding(b: Uint8Array): string | undefined {
  // The declaration is ASCII and short; read at most the first KiB as Latin-1 to find it.
  const head = latin1(b.subarray(0, Math.min(b.length, 1024)));
  if (!startsWithXmlDecl(head)) return undefined;
  return readXmlDecl(head, new Positions(head)).encoding?.toLowerCase();
}

function utf8(b: Uint8Array, from: number): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(b.subarray(from));
  } catch {
    const bad = firstInvalidUtf8(b, from);
    const before = new TextDecoder("utf-8", { ignoreBOM: true }).decode(b.subarray(from, bad));
    const { line, column } = new Positions(before).at(before.length);
    throw new DomError(
      "bad-xml",
      `XML input is not valid UTF-8: byte 0x${(b[bad] ?? 0).toString(16).toUpperCase().padStart(2, "0")} at offset ${bad} (line ${line}, column ${column}); declare the encoding it is in, or convert it to UTF-8`,
      { line, column },
    );
  }
}

function utf16(b: Uint8Array, from: number, label: "utf-16le" | "utf-16be"): string {
  if ((b.length - from) % 2 !== 0)
    throw new DomError("bad-xml", `XML input is not valid ${label.toUpperCase()}: it has an odd number of bytes`);
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(b.subarray(from));
  } catch {
    throw new DomError("bad-xml", `XML input is not valid ${label.toUpperCase()}: it holds an unpaired surrogate`);
  }
}

/** ISO-8859-1: every byte is the code point of the same value. */
function latin1(b: Uint8Array): string {
  let out = "";
  for (let i = 0; i < b.length; i += 8192) out += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  return out;
}

function ascii(b: Uint8Array): string {
  for (let i = 0; i < b.length; i++)
    if ((b[i] as number) >= 0x80) {
      const { line, column } = new Positions(latin1(b.subarray(0, i))).at(i);
      throw new DomError(
        "bad-xml",
        `byte 0x${(b[i] as number).toString(16).toUpperCase()} at offset ${i} is not US-ASCII, which the declaration names (line ${line}, column ${column}); declare the encoding it is in`,
        { line, column },
      );
    }
  return latin1(b);
}

/** Offset of the first byte that does not continue a well-formed UTF-8 sequence (RFC 3629). */
function firstInvalidUtf8(b: Uint8Array, from: number): number {
  let i = from;
  while (i < b.length) {
    const c = b[i] as number;
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c < 0x80) n = 0;
    else if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f; // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return i;
}
