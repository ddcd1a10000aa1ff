/**
 * Writing a bundle (EN-32): a session's events (each with its digest), its branches, the blobs its
 * events' attributes name (every blob reference, EN-33, among them) and each head as canonical XML.
 * The bundle is checked as an import would check it before it is returned: a session whose log is
 * damaged — a payload that does not decode, a referenced blob that is missing — is refused rather
 * than written into a bundle that would not import.
 */
import { toXml } from "@strata/dom";
import type { EventId, EventMeta, SessionId, Store, StoredEvent } from "@strata/store";
import { opsHashes, specHashes } from "./blob-refs.ts";
import { BUNDLE_FORMAT, BUNDLE_FORMAT_V1, type Bundle, type BundleBranch, BundleError, type BundleEvent } from "./bundle.ts";
import { decodeBundle } from "./bundle-decode.ts";
import { decodeEvent } from "./events.ts";
import { materialize } from "./materialize.ts";

export interface ExportBundleOptions {
  /** Export only this branch (and the history it reaches; `main` is then the genesis event); default: every branch. */
  readonly branch?: string;
  /** Called as the export progresses. */
  readonly progress?: (message: string) => void;
}

/** Payloads read per query. */
const BATCH = 2000;

/** The bundle of `session` (all branches, or only `options.branch`). Throws `BundleError` (`not-found`, `source-damaged`). */
export function exportBundle(store: Store, session: SessionId, options: ExportBundleOptions = {}): Bundle {
  const info = store.getSession(session);
  if (info === undefined) throw new BundleError("not-found", `no session ${session} in ${store.path}`);
  const all = store.branches(session);
  const branches = options.branch === undefined ? all : all.filter((b) => b.name === options.branch);
  if (branches.length === 0)
    throw new BundleError(
      "not-found",
      `session ${session} has no branch "${options.branch}"; its branches: ${all.map((b) => b.name).join(", ")}`,
    );
  // The union of the branches' chains, read narrow first so shared history is read once.
  const metas = new Map<number, EventMeta>();
  for (const b of branches) for (const m of store.chainMeta(b.head)) metas.set(m.id, m);
  const ids = [...metas.keys()].sort((a, b) => a - b) as EventId[];
  const events: BundleEvent[] = [];
  const hashes = new Set<string>();
  let digests = true;
  for (let i = 0; i < ids.length; i += BATCH) {
    for (const e of store.events(ids.slice(i, i + BATCH))) {
      events.push(bundleEvent(e));
      digests &&= typeof (e as { digest?: unknown }).digest === "string";
      collectHashes(e, hashes, store.path);
    }
    options.progress?.(`export: ${Math.min(i + BATCH, ids.length)}/${ids.length} events`);
  }
  if (events.length !== ids.length)
    throw new BundleError("source-damaged", `some events of session ${session} cannot be read; run \`strata verify\``);
  // Hashes that are not blobs (a request's own hash) are not carried; a missing blob reference is
  // found by the check below, which knows each attribute's element.
  const blobs: Record<string, string> = {};
  for (const [hash, bytes] of store.getBlobs([...hashes])) blobs[hash] = bytes.toString("base64");
  const exported: BundleBranch[] = branches.map((b) => ({ name: b.name, head: b.head, origin: b.origin, pinned: b.pinned }));
  // A session always has a main: exporting another branch alone, main is the genesis event.
  if (!exported.some((b) => b.name === "main")) exported.unshift({ name: "main", head: ids[0] as number, origin: "genesis" });
  const heads: Record<string, string> = {};
  for (const [i, b] of exported.entries()) {
    options.progress?.(`export: materializing ${b.name} (${i + 1}/${exported.length})`);
    heads[b.name] = toXml(materialize(store, b.head as EventId));
  }
  const bundle: Bundle = {
    format: digests ? BUNDLE_FORMAT : BUNDLE_FORMAT_V1,
    session: { id: info.id, title: info.title, created: info.created, metadata: { ...info.metadata } },
    branches: exported,
    events: digests ? events : events.map(({ digest: _, ...e }) => e),
    blobs,
    heads,
  };
  options.progress?.("export: checking the bundle");
  try {
    return decodeBundle(bundle);
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    throw new BundleError(
      "source-damaged",
      `session ${session} in ${store.path} does not make a valid bundle (${e.message}); run \`strata verify\``,
    );
  }
}

export function bundleEvent(e: StoredEvent): BundleEvent {
  const digest = (e as { digest?: unknown }).digest;
  const out = { id: e.id, prior: e.prior, kind: e.kind, label: e.label, by: e.by, ts: e.ts, data: e.data };
  return typeof digest === "string" ? { ...out, digest } : out;
}

/** Adds every sha256 an attribute of `e` holds to `hashes`. */
export function collectHashes(e: StoredEvent, hashes: Set<string>, where: string): void {
  let decoded: ReturnType<typeof decodeEvent>;
  try {
    decoded = decodeEvent(e);
  } catch (err) {
    throw new BundleError("source-damaged", `${(err as Error).message} (in ${where}); run \`strata verify\``);
  }
  const found = (hash: string) => void hashes.add(hash);
  if (decoded.kind === "patch") opsHashes(decoded.ops, found);
  else specHashes(decoded.skeleton, found);
}
