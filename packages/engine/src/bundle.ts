/**
 * Session bundles (EN-32, decisions 0012 and 0020): one JSON document that carries a session — its
 * events, its branches, every blob its events refer to and each branch head as canonical XML — from
 * one database to another. This module holds the format's vocabulary: its types, its limits, its
 * errors (what refers to a blob is `blob-refs.ts`). `bundle-export.ts` writes bundles,
 * `bundle-decode.ts` and `bundle-check.ts` validate them, `bundle-import.ts` brings them in.
 */

/** The first format: events without digests. Still imported (verified by replay). */
export const BUNDLE_FORMAT_V1 = "strata-bundle@1";
/** The current format: every event carries its digest (the store's hash chain), so a bundle proves its history. */
export const BUNDLE_FORMAT = "strata-bundle@2";
export type BundleFormat = typeof BUNDLE_FORMAT_V1 | typeof BUNDLE_FORMAT;

export interface BundleEvent {
  /** The event's id in the database it was exported from (imports give events new ids). */
  readonly id: number;
  /** The event it follows; `null` only for the genesis event, the first of the bundle. */
  readonly prior: number | null;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  /** Milliseconds since the epoch, a whole number from 1970 to 9999. */
  readonly ts: number;
  readonly data: string;
  /** `strata-bundle@2`: sha256 over the prior's digest and this event's content (`eventDigest`). */
  readonly digest?: string;
}

export interface BundleBranch {
  readonly name: string;
  /** The id of the bundle event the branch points at. */
  readonly head: number;
  readonly origin: "genesis" | "fork" | "rewind";
  /** The branch's next append starts a new line of history (after a fork or rewind). */
  readonly pinned?: boolean;
}

export interface Bundle {
  readonly format: BundleFormat;
  readonly session: {
    readonly id: string;
    readonly title: string | null;
    readonly created: number;
    readonly metadata: Readonly<Record<string, unknown>>;
  };
  readonly branches: readonly BundleBranch[];
  /** Every event on some branch's history, each after its prior. */
  readonly events: readonly BundleEvent[];
  /** hash → base64 of the blob's bytes. */
  readonly blobs: Readonly<Record<string, string>>;
  /** branch name → canonical XML of its head (with ids): for reading, and checked on import. */
  readonly heads: Readonly<Record<string, string>>;
}

/** Sizes a bundle may not exceed (each rejection names the limit). */
export interface BundleLimits {
  readonly events: number;
  readonly branches: number;
  readonly blobs: number;
  /** Bytes of one blob. */
  readonly blobBytes: number;
  /** Characters of one event's payload. */
  readonly dataChars: number;
  /** Characters of the session title. */
  readonly titleChars: number;
  /** Characters of an event's label or `by`. */
  readonly labelChars: number;
  /** Characters of the session metadata as JSON, and how deeply it may nest. */
  readonly metadataChars: number;
  readonly metadataDepth: number;
  /** Characters of one head's XML. */
  readonly headChars: number;
}

export const BUNDLE_LIMITS: BundleLimits = Object.freeze({
  events: 10_000_000,
  branches: 10_000,
  blobs: 1_000_000,
  blobBytes: 128 * 1024 * 1024,
  dataChars: 64 * 1024 * 1024,
  titleChars: 65_536,
  labelChars: 1_024,
  metadataChars: 1024 * 1024,
  metadataDepth: 32,
  headChars: 256 * 1024 * 1024,
});

/** Timestamps a bundle may carry: whole milliseconds from 1970-01-01 to 9999-12-31 (what a date can print). */
export const MIN_TS = 0;
export const MAX_TS = 253_402_300_799_999;

export type BundleErrorCode =
  /** The document is not a valid bundle: a field has the wrong type, range or size, or refers to nothing. */
  | "bad-bundle"
  /** An event's digest does not match its content and its prior's digest: the bundle was altered. */
  | "digest-mismatch"
  /** The events do not replay (an op does not apply) or replay to a tree other than the bundle's head XML. */
  | "replay-mismatch"
  /** Export: no such session or branch. */
  | "not-found"
  /** Export: the session refers to a blob its database does not have (run `strata verify`). */
  | "source-damaged"
  /** Import: the imported session does not verify in the database (nothing was imported). */
  | "import-check";

/** A bundle that cannot be exported or imported. `path` names the place in the bundle (`events[17].prior`). */
export class BundleError extends Error {
  override readonly name = "BundleError";
  constructor(
    readonly code: BundleErrorCode,
    message: string,
    readonly path?: string,
  ) {
    super(printable(path === undefined ? message : `${path}: ${message}`));
  }
}

/** Throws a `bad-bundle` error at `path`. */
export function bad(path: string, what: string): never {
  throw new BundleError("bad-bundle", what, path);
}

// Control characters (C0, DEL, C1), line and paragraph separators and bidi controls: a message
// quoting a hostile bundle must not drive the terminal it is printed on.
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `s` with every character that could act on a terminal written as `\uXXXX`. */
export function printable(s: string): string {
  return s.replace(UNPRINTABLE, (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`);
}

/** A value as a message quotes it: short, typed, and printable. */
export function shown(v: unknown): string {
  if (typeof v === "string") return printable(JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v));
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return `a ${typeof v === "object" ? "JSON object" : typeof v}`;
}

/** The path of `key` inside `path`: `events[3]`, `session.title`, `blobs["6feb…"]`. */
export function at(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return path === "" ? key : `${path}.${key}`;
  return `${path}[${printable(JSON.stringify(key.length > 100 ? `${key.slice(0, 100)}…` : key))}]`;
}
