/**
 * Importing a bundle (EN-32, decisions 0012 and 0020): a bundle checked by `decodeBundle` — before
 * anything is written — becomes a new session in one transaction: the blobs its events refer to,
 * its events branch by branch (new ids, same content), snapshots every K events as a journal
 * writes them, the id counter moved past every imported node id (L5); then every head is checked
 * against the bundle's XML and digest and replayed from genesis (EN-31). Any failure rolls the
 * whole import back: the database is left as it was.
 */
import { type Tree, toXml } from "@strata/dom";
import { type AsyncStore, type BranchInfo, drive, type EventId, type EventInput, type SessionId, type Store, value } from "@strata/store";
import type { Bundle, BundleEvent, BundleFormat } from "./bundle.ts";
import { BundleError } from "./bundle.ts";
import { type BundleFacts, factsOf } from "./bundle-check.ts";
import { type DecodeBundleOptions, decodeBundle } from "./bundle-decode.ts";
import { EngineError } from "./errors.ts";
import { searchTextOfPayload } from "./events.ts";
import { DEFAULT_SNAPSHOT_EVERY, ID_BLOCK } from "./journal.ts";
import { materializeVersion } from "./materialize.ts";
import { replayVerify } from "./replay.ts";
import { SnapshotWriter } from "./snapshots.ts";
import { TextIndex } from "./texts.ts";

export interface ImportBundleOptions extends DecodeBundleOptions {
  /** Write a snapshot every this many events of each chain (default: the journal's, 128). */
  readonly snapshotEvery?: number;
}

/** What an import did (key names as in the CLI's JSON vocabulary). */
export interface ImportReport {
  /** The new session. */
  readonly session: SessionId;
  /** The session id the bundle was exported from (kept in the new session's metadata too). */
  readonly importedFrom: string;
  readonly format: BundleFormat;
  readonly branchCount: number;
  readonly eventCount: number;
  /** Blobs stored: those some attribute names (every blob reference, EN-33, among them). */
  readonly blobCount: number;
  /** Blobs of the bundle that no attribute names, sorted: dropped (not stored). */
  readonly dropped: readonly string[];
  readonly snapshotCount: number;
  /** True when the bundle carried digests (`@2`) and every imported head's stored digest equals the bundle's. */
  readonly digests: boolean;
}

/**
 * Imports `bundle` as a new session. A bundle `decodeBundle` returned is not checked again; any
 * other object is decoded first. Throws `BundleError`: the decoder's codes for an invalid bundle
 * (nothing written), `import-check` if the imported session does not verify (rolled back).
 */
export function importBundle(store: Store, bundle: Bundle, options: ImportBundleOptions = {}): ImportReport {
  const every = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
  if (!Number.isSafeInteger(every) || every < 1)
    throw new EngineError("bad-input", `importBundle: snapshotEvery must be a whole number ≥ 1, got ${String(every)}`);
  let facts = factsOf(bundle);
  if (facts === undefined) {
    bundle = decodeBundle(bundle, options);
    facts = factsOf(bundle) as BundleFacts;
  }
  const checked = facts;
  return store.transaction(() => write(store, bundle, checked, options));
}

function input(e: BundleEvent): EventInput {
  const search = searchTextOfPayload(e.kind, e.data);
  return {
    kind: e.kind,
    label: e.label,
    by: e.by,
    ts: e.ts,
    data: e.data,
    ...(search === undefined ? {} : { search, searchDerived: true }),
  };
}

function write(store: Store, bundle: Bundle, facts: BundleFacts, options: ImportBundleOptions): ImportReport {
  const progress = options.progress;
  const { session, mapped } = drive(writeLog(store, bundle, facts, progress)) as WrittenLog;
  const snapshots = writeSnapshots(store, session, options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY, progress);
  const digests = verify(store, session, bundle, mapped, progress);
  return reportOf(session, bundle, facts, snapshots, digests);
}

/** What `writeLog` wrote: the new session, and the bundle's event ids mapped to the stored ones. */
export interface WrittenLog {
  readonly session: SessionId;
  readonly mapped: ReadonlyMap<number, EventId>;
}

/** The report of an import. */
export function reportOf(session: SessionId, bundle: Bundle, facts: BundleFacts, snapshotCount: number, digests: boolean): ImportReport {
  return {
    session,
    importedFrom: bundle.session.id,
    format: bundle.format,
    branchCount: bundle.branches.length,
    eventCount: bundle.events.length,
    blobCount: facts.referenced.size,
    dropped: facts.unreferenced,
    snapshotCount,
    digests,
  };
}

/**
 * The log of a checked bundle written as a new session — its blobs, its events branch by branch
 * (new ids, same content, so the same digests), the id counter moved past every imported node id,
 * every head pinned — as store calls (`yield* value(…)`), so the one body runs over a `Store`
 * (driven synchronously, inside its transaction) and over an `AsyncStore` (decision 0035). Call it
 * inside the caller's transaction.
 */
export function* writeLog(
  store: Store | AsyncStore,
  bundle: Bundle,
  facts: BundleFacts,
  progress?: (message: string) => void,
): Generator<unknown, WrittenLog, unknown> {
  for (const hash of facts.referenced) yield* value(store.putBlob(Buffer.from(bundle.blobs[hash] as string, "base64")));
  const byId = new Map(bundle.events.map((e) => [e.id, e]));
  const genesis = bundle.events[0] as BundleEvent;
  const { session, genesis: g } = yield* value(
    store.createSession({
      title: bundle.session.title,
      metadata: { ...bundle.session.metadata, importedFrom: bundle.session.id },
      genesis: input(genesis),
    }),
  );
  const mapped = new Map<number, EventId>([[genesis.id, g.id]]);
  // main first (it exists already), then the others in the order their heads were written. Each
  // branch appends the part of its chain no earlier branch has brought in.
  const order = [...bundle.branches].sort((a, b) => (a.name === "main" ? -1 : b.name === "main" ? 1 : a.head - b.head));
  let done = 1;
  for (const br of order) {
    const chain: BundleEvent[] = [];
    for (let e = byId.get(br.head); e !== undefined && !mapped.has(e.id); e = e.prior === null ? undefined : byId.get(e.prior))
      chain.push(e);
    chain.reverse();
    const base = mapped.get(chain.length === 0 ? br.head : (chain[0]?.prior as number)) as EventId;
    let info: BranchInfo;
    if (br.name === "main") {
      info = (yield* value(store.branch(session.id, "main"))) as BranchInfo;
      if (info.head !== base) info = (yield* value(store.moveHead(session.id, "main", base))).branch;
    } else info = yield* value(store.fork(session.id, base, br.name));
    if (chain.length > 0) {
      const metas = yield* value(store.append(session.id, br.name, info.head, chain.map(input)));
      chain.forEach((e, i) => void mapped.set(e.id, (metas[i] as { id: EventId }).id));
    }
    done += chain.length;
    progress?.(`import: ${done}/${bundle.events.length} events`);
  }
  // Ids minted on any imported line must never be minted again here (L5): the counter moves past
  // every imported id, and every branch starts a new line at its next append, so the journal
  // takes a fresh range for it instead of continuing where the imported line stopped.
  yield* value(store.reserve(session.id, Math.ceil((facts.hwm + 1) / ID_BLOCK) + 1));
  for (const br of bundle.branches) yield* value(store.moveHead(session.id, br.name, mapped.get(br.head) as EventId, { pin: true }));
  // An `@1` bundle of one branch has no main: main stays at the genesis event, on a new line too.
  if (!bundle.branches.some((b) => b.name === "main")) yield* value(store.moveHead(session.id, "main", g.id, { pin: true }));
  return { session: session.id, mapped };
}

/**
 * Snapshots every `every` events of each branch's chain (shared history once), so an imported
 * session opens from a nearby snapshot as the original did. Returns how many were written.
 */
function writeSnapshots(store: Store, session: SessionId, every: number, progress?: (message: string) => void): number {
  const written = new Set<number>();
  for (const b of store.branches(session)) {
    if (b.headDepth < every) continue;
    progress?.(`import: snapshots of ${b.name}`);
    const texts = new TextIndex();
    const writer = new SnapshotWriter(store, texts);
    let from: { tree: Tree; depth: number; live: ReadonlySet<number> } | undefined;
    for (let depth = every; depth <= b.headDepth; depth += every) {
      const at = store.atDepth(b.head, depth);
      if (at === undefined) break;
      if (written.has(at.id)) {
        from = undefined; // an earlier branch's snapshot: the next one starts from it
        continue;
      }
      const v = materializeVersion(store, at.id, from === undefined ? { texts } : { from, texts });
      writer.write(at.id, v.tree, v.live);
      written.add(at.id);
      from = { tree: v.tree, depth, live: v.live };
    }
  }
  return written.size;
}

/** Each head: the bundle's XML, the bundle's digest (`@2`), and a replay from genesis equal to its snapshots. */
function verify(
  store: Store,
  session: SessionId,
  bundle: Bundle,
  mapped: ReadonlyMap<number, EventId>,
  progress?: (m: string) => void,
): boolean {
  const fail = (branch: string, what: string): never => {
    throw new BundleError("import-check", `import check failed on branch ${branch}: ${what} (nothing was imported)`);
  };
  let digests = true;
  const byId = new Map(bundle.events.map((e) => [e.id, e]));
  for (const br of bundle.branches) {
    progress?.(`import: verifying ${br.name}`);
    const head = mapped.get(br.head) as EventId;
    if (toXml(materializeVersion(store, head).tree) !== bundle.heads[br.name])
      fail(br.name, "the stored head differs from the bundle's XML");
    const stored = (store.eventMeta(head) as { digest?: unknown } | undefined)?.digest;
    const given = byId.get(br.head)?.digest;
    if (given === undefined || stored === undefined) digests = false;
    else if (stored !== given)
      fail(br.name, `the stored head's digest ${String(stored).slice(0, 16)}… is not the bundle's ${given.slice(0, 16)}…`);
    const r = replayVerify(store, session, { branch: br.name });
    if (!r.ok) fail(br.name, r.mismatch?.reason ?? "replay mismatch");
  }
  return digests;
}
