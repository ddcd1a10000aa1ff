/**
 * Bundles over the asynchronous port (decision 0035): a session exported from, or imported into, a
 * store behind `AsyncStore` — PostgreSQL — so sessions move between backends with the same bundle
 * files (EN-32) as between SQLite files. The bytes of the log move unchanged: the same events with
 * the same digests, so every tree is the same (L1).
 *
 * - `exportBundleFrom(port, session)` reads the session's branches, events and blobs in batches and
 *   replays the events in memory for the heads' XML (the bundle's own check, bundle-check.ts).
 * - `importBundleInto(port, bundle)` checks the bundle as `importBundle` does (its events replayed
 *   to its heads' XML before anything is written), writes its log in one transaction of the port
 *   with the same body the synchronous import runs (`writeLog`), and — inside that transaction —
 *   reads every branch back and compares it with the bundle: every payload, and every head's
 *   digest. No snapshot is written (the engine writes them when it drives the session).
 */
import type { AsyncStore, EventId, EventMeta, SessionId } from "@strata/store";
import { drive } from "@strata/store";
import { BUNDLE_FORMAT, BUNDLE_FORMAT_V1, type Bundle, type BundleBranch, BundleError, type BundleEvent } from "./bundle.ts";
import { type BundleFacts, factsOf, replayHeads } from "./bundle-check.ts";
import { decodeBundle } from "./bundle-decode.ts";
import { bundleEvent, collectHashes, type ExportBundleOptions } from "./bundle-export.ts";
import { type ImportBundleOptions, type ImportReport, reportOf, writeLog } from "./bundle-import.ts";

/** Payloads read per call. */
const BATCH = 2000;

/** The bundle of `session` in `port` (all branches, or only `options.branch`). Throws `BundleError` (`not-found`, `source-damaged`). */
export async function exportBundleFrom(port: AsyncStore, session: SessionId, options: ExportBundleOptions = {}): Promise<Bundle> {
  const info = await port.getSession(session);
  if (info === undefined) throw new BundleError("not-found", `no session ${session} in ${port.path}`);
  const all = await port.branches(session);
  const branches = options.branch === undefined ? all : all.filter((b) => b.name === options.branch);
  if (branches.length === 0)
    throw new BundleError(
      "not-found",
      `session ${session} has no branch "${options.branch}"; its branches: ${all.map((b) => b.name).join(", ")}`,
    );
  const metas = new Map<number, EventMeta>();
  for (const b of branches) for (const m of await port.chainMeta(b.head)) metas.set(m.id, m);
  const ids = [...metas.keys()].sort((a, b) => a - b) as EventId[];
  const events: BundleEvent[] = [];
  const hashes = new Set<string>();
  for (let i = 0; i < ids.length; i += BATCH) {
    for (const e of await port.events(ids.slice(i, i + BATCH))) {
      events.push(bundleEvent(e));
      collectHashes(e, hashes, port.path);
    }
    options.progress?.(`export: ${Math.min(i + BATCH, ids.length)}/${ids.length} events`);
  }
  if (events.length !== ids.length)
    throw new BundleError("source-damaged", `some events of session ${session} cannot be read; run \`strata verify\``);
  const blobs: Record<string, string> = {};
  for (const [hash, bytes] of await port.getBlobs([...hashes])) blobs[hash] = bytes.toString("base64");
  const exported: BundleBranch[] = branches.map((b) => ({ name: b.name, head: b.head, origin: b.origin, pinned: b.pinned }));
  if (!exported.some((b) => b.name === "main")) exported.unshift({ name: "main", head: ids[0] as number, origin: "genesis" });
  const digests = events.every((e) => typeof e.digest === "string");
  const partial: Omit<Bundle, "heads"> = {
    format: digests ? BUNDLE_FORMAT : BUNDLE_FORMAT_V1,
    session: { id: info.id, title: info.title, created: info.created, metadata: { ...info.metadata } },
    branches: exported,
    events: digests ? events : events.map(({ digest: _, ...e }) => e),
    blobs,
  };
  try {
    options.progress?.("export: replaying the heads");
    const heads = replayHeads(partial, options.progress);
    options.progress?.("export: checking the bundle");
    return decodeBundle({ ...partial, heads });
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    throw new BundleError(
      "source-damaged",
      `session ${session} in ${port.path} does not make a valid bundle (${e.message}); run \`strata verify\``,
    );
  }
}

/**
 * Imports `bundle` into `port` as a new session (see the module's comment). Throws `BundleError`:
 * the decoder's codes for an invalid bundle (nothing written), `import-check` when what was stored
 * does not read back as the bundle (rolled back).
 */
export async function importBundleInto(port: AsyncStore, bundle: Bundle, options: ImportBundleOptions = {}): Promise<ImportReport> {
  let facts = factsOf(bundle);
  if (facts === undefined) {
    bundle = decodeBundle(bundle, options);
    facts = factsOf(bundle) as BundleFacts;
  }
  const checked = facts;
  const progress = options.progress;
  return port.transaction(async () => {
    const { session, mapped } = await drive(writeLog(port, bundle, checked, progress));
    const digests = await readBack(port, bundle, mapped, progress);
    return reportOf(session, bundle, checked, 0, digests);
  });
}

/** Every branch read back as stored equals the bundle's: its chain's payloads, and its head's digest (`@2`). */
async function readBack(
  port: AsyncStore,
  bundle: Bundle,
  mapped: ReadonlyMap<number, EventId>,
  progress?: (message: string) => void,
): Promise<boolean> {
  const byId = new Map(bundle.events.map((e) => [e.id, e]));
  const fail = (branch: string, what: string): never => {
    throw new BundleError("import-check", `import check failed on branch ${branch}: ${what} (nothing was imported)`);
  };
  let digests = true;
  for (const br of bundle.branches) {
    progress?.(`import: verifying ${br.name}`);
    const head = mapped.get(br.head) as EventId;
    const chain: string[] = [];
    for (let e = byId.get(br.head); e !== undefined; e = e.prior === null ? undefined : byId.get(e.prior)) chain.push(e.data);
    chain.reverse();
    const stored = await port.chainData(head);
    if (stored.length !== chain.length || stored.some((d, i) => d !== chain[i]))
      fail(br.name, "the stored events differ from the bundle's");
    const digest = (await port.eventMeta(head))?.digest;
    const given = byId.get(br.head)?.digest;
    if (given === undefined || digest === undefined) digests = false;
    else if (digest !== given) fail(br.name, `the stored head's digest ${digest.slice(0, 16)}… is not the bundle's ${given.slice(0, 16)}…`);
  }
  return digests;
}
