/**
 * Removing whole sessions (ST-35) and collecting the blobs nothing reaches (ST-36) in a SQLite
 * file, decision 0040. Both run inside the caller's IMMEDIATE write transaction (the backend's),
 * so another process's append, snapshot or blob write waits for them or comes before them.
 */
import type Database from "better-sqlite3";
import { notFound } from "../checks.ts";
import { refuseDriven } from "../errors.ts";
import { Reach } from "../reach.ts";
import { type LeaseRow, leaseOf, type SessionRow, sessionOf } from "../rows.ts";
import type { CollectOptions, CollectReport, LeaseInfo, RemovedSession, RemoveOptions, SessionId } from "../types.ts";
import { SEARCH_TEXT_VERSION, SEARCH_VERSION, WATERMARK_VERSION } from "./schema.ts";

/** The session id of the placeholder segment that keeps the highest segment id taken (see {@link removeSessionRows}). */
const PLACEHOLDER = "";

/** Blobs read per statement while tracing, and deleted per statement while sweeping. */
const BATCH = 500;

/** The meta key a collection bumps: a writer reusing directory chunks from memory checks it first (ST-36). */
export const GC_GENERATION = "gc_generation";

/** The held leases of one session, or of every session. */
function heldLeases(db: Database.Database, session: SessionId | undefined): LeaseInfo[] {
  const rows = (
    session === undefined
      ? db.prepare("SELECT session, branch, token, owner, acquired, renewed FROM leases WHERE owner IS NOT NULL").all()
      : db
          .prepare("SELECT session, branch, token, owner, acquired, renewed FROM leases WHERE session = ? AND owner IS NOT NULL")
          .all(session)
  ) as (LeaseRow & { session: string; branch: string })[];
  return rows.map((r) => leaseOf(r.session as SessionId, r.branch, r) as LeaseInfo);
}

/**
 * Removes (or counts) session `id`'s rows, inside the caller's write transaction. Segment ids are
 * cached by every process as immutable (segments.ts): when the session held the highest one, a
 * placeholder segment of no session keeps that id taken, so it is never handed out again.
 */
export function removeSessionRows(db: Database.Database, version: number, id: SessionId, options: RemoveOptions): RemovedSession {
  const row = db.prepare("SELECT id, title, created, metadata FROM sessions WHERE id = ?").get(id) as SessionRow | undefined;
  if (row === undefined) notFound(`session ${id}`);
  const session = sessionOf(row as SessionRow);
  refuseDriven(heldLeases(db, id), options.live, `removing session ${id}`);
  const count = (sql: string) => Number(db.prepare(sql).pluck().get(id));
  const segs = "SELECT id FROM segments WHERE session = ?";
  const removed: RemovedSession = {
    session,
    branches: count("SELECT count(*) FROM branches WHERE session = ?"),
    events: count(`SELECT count(*) FROM events WHERE segment IN (${segs})`),
    snapshots: count(`SELECT count(*) FROM snapshots WHERE segment IN (${segs})`),
  };
  if (options.dryRun === true) return removed;
  if (version >= SEARCH_VERSION) {
    db.prepare(`DELETE FROM search WHERE rowid IN (SELECT id FROM events WHERE segment IN (${segs}))`).run(id);
    db.prepare("DELETE FROM search_pending WHERE session = ?").run(id);
    if (version >= SEARCH_TEXT_VERSION)
      db.prepare(`DELETE FROM search_text WHERE id IN (SELECT id FROM events WHERE segment IN (${segs}))`).run(id);
  }
  db.prepare(`DELETE FROM snapshots WHERE segment IN (${segs})`).run(id);
  db.prepare(`DELETE FROM events WHERE segment IN (${segs})`).run(id);
  // SQLite hands the ids of the newest events removed to the next ones appended: a watermark above
  // the newest event left would count those as indexed (SE-10).
  if (version >= WATERMARK_VERSION)
    db.prepare(
      "UPDATE meta SET value = CAST(MIN(CAST(value AS INTEGER), (SELECT COALESCE(MAX(id), 0) FROM events)) AS TEXT) WHERE key LIKE 'search_upto:%'",
    ).run();
  db.prepare("DELETE FROM branches WHERE session = ?").run(id);
  db.prepare("DELETE FROM leases WHERE session = ?").run(id);
  const top = Number(db.prepare("SELECT COALESCE(MAX(id), 0) FROM segments").pluck().get());
  db.prepare("DELETE FROM segments WHERE session = ?").run(id);
  const left = Number(db.prepare("SELECT COALESCE(MAX(id), 0) FROM segments").pluck().get());
  if (left < top) {
    db.prepare("DELETE FROM segments WHERE session = ?").run(PLACEHOLDER);
    db.prepare("INSERT INTO segments (id, session, parent, fork_depth) VALUES (?, ?, NULL, 0)").run(top, PLACEHOLDER);
  }
  db.prepare("DELETE FROM sessions WHERE id = ?").run(id);
  return removed;
}

/**
 * Marks every blob reachable from the file's events and snapshots and deletes (or, dry, counts)
 * the others, inside the caller's transaction — a write transaction unless `dryRun`.
 */
export function collectGarbageRows(db: Database.Database, options: CollectOptions): CollectReport {
  const dryRun = options.dryRun === true;
  if (!dryRun) {
    const held = heldLeases(db, undefined);
    refuseDriven(held, options.live, "collecting garbage");
    // Every holder left was judged gone: its lease is released here, in the collection's
    // transaction, so a holder that was only stalled cannot append after it (its fenced append
    // meets a released lease: LeaseLost) and name a blob the sweep deleted.
    const release = db.prepare(
      "UPDATE leases SET owner = NULL, acquired = NULL, renewed = NULL WHERE session = ? AND branch = ? AND token = ?",
    );
    for (const h of held) release.run(h.session, h.branch, h.token);
  }
  const reach = new Reach(options.refs);
  for (const [blob, data] of db.prepare("SELECT blob, data FROM events").raw().iterate() as Iterable<[Buffer | null, string]>) {
    reach.text(data);
    if (blob !== null) reach.blob(blob.toString("hex"));
  }
  for (const [event, header, pages] of db.prepare("SELECT event, header, pages FROM snapshots").raw().iterate() as Iterable<
    [number, string, Buffer]
  >) {
    reach.text(header);
    reach.directory(pages, `the snapshot at event ${event}`);
  }
  const one = db.prepare("SELECT data FROM blobs WHERE hash = ?").pluck();
  for (let next = reach.next(BATCH); next.length > 0; next = reach.next(BATCH))
    for (const h of next) reach.read(h, one.get(Buffer.from(h, "hex")) as Buffer | undefined);
  const doomed: Buffer[] = [];
  let bytes = 0;
  let keptBlobs = 0;
  let keptBytes = 0;
  for (const [hash, size] of db.prepare("SELECT hash, size FROM blobs").raw().iterate() as Iterable<[Buffer, number]>) {
    if (reach.reached.has(hash.toString("hex"))) {
      keptBlobs++;
      keptBytes += Number(size);
    } else {
      doomed.push(hash);
      bytes += Number(size);
    }
  }
  if (!dryRun) {
    const del = db.prepare("DELETE FROM blobs WHERE hash = ?");
    for (const h of doomed) del.run(h);
    db.prepare(
      `INSERT INTO meta (key, value) VALUES ('${GC_GENERATION}', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)`,
    ).run();
  }
  return { dryRun, blobs: doomed.length, bytes, keptBlobs, keptBytes };
}

/** The file's collection generation (0 before the first collection). */
export function gcGeneration(db: Database.Database): number {
  return Number(db.prepare(`SELECT value FROM meta WHERE key = '${GC_GENERATION}'`).pluck().get() ?? 0);
}
