/**
 * The bundle decoder (EN-32): every field of a parsed bundle checked for its type, range and size,
 * and copied into a fresh, frozen `Bundle`. Each rejection is a `BundleError` naming the path in
 * the bundle (`events[17].ts`) and what is wrong. `decodeBundle` then runs the checks that look at
 * the bundle as a whole (bundle-check.ts): references, history, blobs, digests and replay.
 */
import { createHash } from "node:crypto";
import { BRANCH_NAME } from "@strata/store";
import {
  at,
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V1,
  BUNDLE_LIMITS,
  type Bundle,
  type BundleBranch,
  BundleError,
  type BundleEvent,
  type BundleFormat,
  type BundleLimits,
  bad,
  MAX_TS,
  MIN_TS,
  shown,
} from "./bundle.ts";
import { checkBundle } from "./bundle-check.ts";
import { GENESIS_KIND, PATCH_KIND } from "./events.ts";

export interface DecodeBundleOptions {
  /** Tighter (or looser) sizes than {@link BUNDLE_LIMITS}. */
  readonly limits?: Partial<BundleLimits>;
  /** Called as the checks progress (they replay every event). */
  readonly progress?: (message: string) => void;
}

const HINT = "make one with `strata export SESSION > FILE` (or exportBundle)";
/** A bundle format of a later strata (this one reads @1 and @2). */
const NEWER_FORMAT = /^strata-bundle@(?:[3-9]|[1-9][0-9]+)$/;

/**
 * Parses and decodes bundle text (see {@link decodeBundle}); text that is not JSON is a
 * `bad-bundle` error saying where the JSON breaks.
 */
export function parseBundle(text: string, options: DecodeBundleOptions = {}): Bundle {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BundleError("bad-bundle", `it is not JSON (${(e as Error).message})`);
  }
  return decodeBundle(value, options);
}

/**
 * Checks every field of `value` (a parsed bundle) and the bundle as a whole — each prior is an
 * earlier event of the bundle, every event is on a branch's history, exactly one `main`, every head
 * and blob a reference names is there and hashes right, the digest chain holds (`@2`), every payload
 * decodes and the events replay to the heads' XML — and returns a frozen copy that
 * `importBundle` takes without checking again. Throws `BundleError` at the first problem, naming
 * its path. Writes nothing anywhere.
 */
export function decodeBundle(value: unknown, options: DecodeBundleOptions = {}): Bundle {
  const limits: BundleLimits = { ...BUNDLE_LIMITS, ...options.limits };
  const bundle = shape(value, limits);
  checkBundle(bundle, options.progress);
  return bundle;
}

function shape(value: unknown, limits: BundleLimits): Bundle {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new BundleError("bad-bundle", `it is ${shown(value)}, not a JSON object; ${HINT}`);
  const format = (value as { format?: unknown }).format;
  if (format !== BUNDLE_FORMAT && format !== BUNDLE_FORMAT_V1)
    bad(
      "format",
      format === undefined
        ? `missing: this is not a strata bundle; ${HINT}`
        : `is ${shown(format)}; this strata reads "${BUNDLE_FORMAT}" and "${BUNDLE_FORMAT_V1}"${NEWER_FORMAT.test(String(format)) ? "; a newer strata wrote it: upgrade strata to import it" : ""}`,
    );
  const top = fields(value, "", ["format", "session", "branches", "events", "blobs", "heads"]);
  const branches = list(top.branches, "branches", limits.branches, "branch", (v, p) => branch(v, p));
  return Object.freeze({
    format,
    session: session(top.session, limits),
    branches,
    events: list(top.events, "events", limits.events, "event", (v, p) => event(v, p, format, limits)),
    blobs: blobs(top.blobs, limits),
    heads: heads(top.heads, branches, limits),
  });
}

/** `v` as an object with exactly the `required` fields, plus any of `optional`. */
function fields(v: unknown, path: string, required: readonly string[], optional: readonly string[] = []): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(path, `expected a JSON object, got ${shown(v)}`);
  const o = v as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (!required.includes(key) && !optional.includes(key))
      bad(at(path, key), `is not a field here (the fields are ${[...required, ...optional].join(", ")})`);
  for (const key of required) if (!Object.hasOwn(o, key)) bad(at(path, key), "missing");
  return o;
}

function list<T>(v: unknown, path: string, max: number, what: string, item: (v: unknown, path: string) => T): readonly T[] {
  if (!Array.isArray(v)) bad(path, `expected an array, got ${shown(v)}`);
  if (v.length === 0) bad(path, `has no ${what}s; a bundle has at least one`);
  if (v.length > max) bad(path, `has ${v.length} ${what}s; a bundle holds at most ${max}`);
  const out: T[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = item(v[i], at(path, i));
  return Object.freeze(out);
}

// A lone surrogate is not text: the database stores U+FFFD instead, so the imported copy would differ.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function string(v: unknown, path: string, max: number): string {
  if (typeof v !== "string") bad(path, `expected a string, got ${shown(v)}`);
  if (v.length > max) bad(path, `is ${v.length} characters long; at most ${max} are allowed`);
  const lone = LONE_SURROGATE.exec(v);
  if (lone !== null) bad(path, `has a lone UTF-16 surrogate at character ${lone.index}, which is not text (a database would store U+FFFD)`);
  return v;
}

function nullableString(v: unknown, path: string, max: number): string | null {
  return v === null ? null : string(v, path, max);
}

function eventRef(v: unknown, path: string): number {
  if (!Number.isSafeInteger(v) || (v as number) <= 0) bad(path, `expected an event id (a whole number ≥ 1), got ${shown(v)}`);
  return v as number;
}

function timestamp(v: unknown, path: string): number {
  if (!Number.isSafeInteger(v) || (v as number) < MIN_TS || (v as number) > MAX_TS)
    bad(path, `expected whole milliseconds since 1970-01-01, up to the year 9999 (${MAX_TS}), got ${shown(v)}`);
  return v as number;
}

const SESSION_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function session(v: unknown, limits: BundleLimits): Bundle["session"] {
  const s = fields(v, "session", ["id", "title", "created", "metadata"]);
  if (typeof s.id !== "string" || !SESSION_ID.test(s.id))
    bad("session.id", `expected a session id (26 characters of Crockford base32), got ${shown(s.id)}`);
  return Object.freeze({
    id: s.id,
    title: nullableString(s.title, "session.title", limits.titleChars),
    created: timestamp(s.created, "session.created"),
    metadata: metadata(s.metadata, limits),
  });
}

/** Plain JSON data, nested at most `metadataDepth` deep, with no `__proto__` key anywhere. */
function metadata(v: unknown, limits: BundleLimits): Readonly<Record<string, unknown>> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad("session.metadata", `expected a JSON object, got ${shown(v)}`);
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: v, path: "session.metadata", depth: 1 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path, depth } = item;
    if (value === null || typeof value === "string" || typeof value === "boolean") continue;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) bad(path, `expected a finite number, got ${shown(value)}`);
      continue;
    }
    if (typeof value !== "object") bad(path, `expected JSON data, got ${shown(value)}`);
    if (depth > limits.metadataDepth) bad(path, `nests deeper than ${limits.metadataDepth} levels`);
    if (Array.isArray(value)) value.forEach((x, i) => void stack.push({ value: x, path: at(path, i), depth: depth + 1 }));
    else
      for (const [key, x] of Object.entries(value)) {
        if (key === "__proto__") bad(at(path, key), "is not allowed as a key (it would set an object's prototype)");
        stack.push({ value: x, path: at(path, key), depth: depth + 1 });
      }
  }
  const json = JSON.stringify(v);
  if (json.length > limits.metadataChars) bad("session.metadata", `is ${json.length} characters of JSON; at most ${limits.metadataChars}`);
  return Object.freeze(JSON.parse(json) as Record<string, unknown>);
}

const ORIGINS: readonly BundleBranch["origin"][] = ["genesis", "fork", "rewind"];

function branch(v: unknown, path: string): BundleBranch {
  const b = fields(v, path, ["name", "head", "origin"], ["pinned"]);
  if (typeof b.name !== "string" || !BRANCH_NAME.test(b.name))
    bad(at(path, "name"), `${shown(b.name)} is not a branch name (letters, digits, ".", "_", "/", "-"; at most 100; no "@" or "~")`);
  if (!ORIGINS.includes(b.origin as BundleBranch["origin"]))
    bad(at(path, "origin"), `expected one of ${ORIGINS.join(", ")}, got ${shown(b.origin)}`);
  if (b.pinned !== undefined && typeof b.pinned !== "boolean") bad(at(path, "pinned"), `expected true or false, got ${shown(b.pinned)}`);
  const head = eventRef(b.head, at(path, "head"));
  const origin = b.origin as BundleBranch["origin"];
  return Object.freeze(b.pinned === undefined ? { name: b.name, head, origin } : { name: b.name, head, origin, pinned: b.pinned });
}

const HASH = /^[0-9a-f]{64}$/;

function event(v: unknown, path: string, format: BundleFormat, limits: BundleLimits): BundleEvent {
  const e =
    format === BUNDLE_FORMAT
      ? fields(v, path, ["id", "prior", "kind", "label", "by", "ts", "data", "digest"])
      : fields(v, path, ["id", "prior", "kind", "label", "by", "ts", "data"]);
  if (e.kind !== GENESIS_KIND && e.kind !== PATCH_KIND)
    bad(
      at(path, "kind"),
      `${shown(e.kind)} is not an event kind this strata knows (${GENESIS_KIND}, ${PATCH_KIND}); if a newer strata wrote it, upgrade strata to import it`,
    );
  const out: BundleEvent = {
    id: eventRef(e.id, at(path, "id")),
    prior: e.prior === null ? null : eventRef(e.prior, at(path, "prior")),
    kind: e.kind,
    label: nullableString(e.label, at(path, "label"), limits.labelChars),
    by: nullableString(e.by, at(path, "by"), limits.labelChars),
    ts: timestamp(e.ts, at(path, "ts")),
    data: string(e.data, at(path, "data"), limits.dataChars),
  };
  if (format !== BUNDLE_FORMAT) return Object.freeze(out);
  if (typeof e.digest !== "string" || !HASH.test(e.digest))
    bad(at(path, "digest"), `expected a sha256 digest (64 lowercase hex characters), got ${shown(e.digest)}`);
  return Object.freeze({ ...out, digest: e.digest });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function blobs(v: unknown, limits: BundleLimits): Readonly<Record<string, string>> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad("blobs", `expected a JSON object (hash → base64), got ${shown(v)}`);
  const entries = Object.entries(v);
  if (entries.length > limits.blobs) bad("blobs", `has ${entries.length} blobs; a bundle holds at most ${limits.blobs}`);
  const out: Record<string, string> = Object.create(null);
  const maxChars = Math.ceil(limits.blobBytes / 3) * 4;
  for (const [hash, b64] of entries) {
    const path = at("blobs", hash);
    if (!HASH.test(hash)) bad(path, "is not a blob hash (64 lowercase hex characters)");
    if (typeof b64 !== "string") bad(path, `expected the blob's bytes in base64, got ${shown(b64)}`);
    if (b64.length > maxChars) bad(path, `is more than ${limits.blobBytes} bytes; a bundle's blobs are at most that`);
    const bytes = Buffer.from(b64, "base64");
    // Node decodes base64 leniently (it skips what it cannot read): only the canonical text is accepted.
    if (b64.length % 4 !== 0 || !BASE64.test(b64) || bytes.toString("base64") !== b64) bad(path, "is not canonical base64");
    const actual = createHash("sha256").update(bytes).digest("hex");
    if (actual !== hash) bad(path, `the bytes hash to ${actual.slice(0, 16)}…, not to their key: the blob is damaged`);
    out[hash] = b64;
  }
  return Object.freeze(out);
}

function heads(v: unknown, branches: readonly BundleBranch[], limits: BundleLimits): Readonly<Record<string, string>> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad("heads", `expected a JSON object (branch → XML), got ${shown(v)}`);
  const names = new Set(branches.map((b) => b.name));
  const out: Record<string, string> = Object.create(null);
  for (const [name, xml] of Object.entries(v)) {
    if (!names.has(name)) bad(at("heads", name), "names no branch of the bundle");
    out[name] = string(xml, at("heads", name), limits.headChars);
  }
  for (const b of branches)
    if (!Object.hasOwn(out, b.name)) bad(at("heads", b.name), `missing: every branch's head XML is part of the bundle`);
  return Object.freeze(out);
}
