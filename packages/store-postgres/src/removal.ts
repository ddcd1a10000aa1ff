/**
 * Removing whole sessions (ST-35) and collecting the blobs nothing reaches (ST-36) in a
 * PostgreSQL store, decision 0040: the same rules as SQLite's (packages/store/src/sqlite/removal.ts),
 * each in one transaction of the caller's (the backend's `write`/`read`). A collection first locks
 * the store's `schema_version` row (every snapshot writer that reuses chunks from memory reads it
 * FOR SHARE, so it waits for the collection and then sees its new generation), then takes the
 * tables it reads in SHARE ROW EXCLUSIVE mode: appends, snapshots, blob and lease writes wait
 * until it commits; reads go on.
 */
import type { CollectOptions, CollectReport, LeaseInfo, RemovedSession, RemoveOptions, SessionId } from "@strata/store";
import { leaseOf, notFound, Reach, refuseDriven, sessionOf } from "@strata/store/backend";
import type { PgConnection } from "./connection.ts";

/** Rows read per statement (events, snapshots), blobs fetched per statement while tracing, deleted per statement. */
const ROWS = 2000;
const BLOBS = 200;

/** The meta key a collection bumps (see the module's comment). */
export const GC_GENERATION = "gc_generation";

async function heldLeases(db: PgConnection, s: string, session: SessionId | undefined, lock = " FOR UPDATE"): Promise<LeaseInfo[]> {
  const rows = await db.q(
    `SELECT session, branch, token, owner, acquired, renewed FROM ${s}.leases WHERE owner IS NOT NULL${session === undefined ? "" : " AND session = $1"}${lock}`,
    session === undefined ? [] : [session],
  );
  return rows.map((r) => leaseOf(r.session as SessionId, r.branch as string, r as never) as LeaseInfo);
}

/** Removes (or counts) session `id`'s rows; to be called inside a write transaction. */
export async function removeSessionRows(db: PgConnection, s: string, id: SessionId, options: RemoveOptions): Promise<RemovedSession> {
  const lock = options.dryRun === true ? "" : " FOR UPDATE";
  const row = await db.one(`SELECT id, title, created, metadata FROM ${s}.sessions WHERE id = $1${lock}`, [id]);
  if (row === undefined) notFound(`session ${id}`);
  const session = sessionOf(row as never);
  refuseDriven(await heldLeases(db, s, id, lock), options.live, `removing session ${id}`);
  const segs = `SELECT id FROM ${s}.segments WHERE session = $1`;
  const counts = await db.one(
    `SELECT (SELECT count(*) FROM ${s}.branches WHERE session = $1) AS branches,
            (SELECT count(*) FROM ${s}.events WHERE segment IN (${segs})) AS events,
            (SELECT count(*) FROM ${s}.snapshots WHERE segment IN (${segs})) AS snapshots`,
    [id],
  );
  const removed: RemovedSession = {
    session,
    branches: Number(counts?.branches),
    events: Number(counts?.events),
    snapshots: Number(counts?.snapshots),
  };
  if (options.dryRun === true) return removed;
  // The session's branch rows first, FOR UPDATE: an append in flight holds its branch row (FOR KEY
  // SHARE, appends.ts) until it commits, so this waits for it, and an append that comes after
  // finds no branch — no event is left behind in a segment of no session.
  // The segments likewise: a fork holds its segment row while it writes its branch row (backend.ts).
  await db.q(`SELECT 1 FROM ${s}.segments WHERE session = $1 FOR UPDATE`, [id]);
  await db.q(`SELECT 1 FROM ${s}.branches WHERE session = $1 FOR UPDATE`, [id]);
  // The search index is columns of `events`: it goes with them.
  await db.q(`DELETE FROM ${s}.snapshots WHERE segment IN (${segs})`, [id]);
  await db.q(`DELETE FROM ${s}.events WHERE segment IN (${segs})`, [id]);
  await db.q(`DELETE FROM ${s}.branches WHERE session = $1`, [id]);
  await db.q(`DELETE FROM ${s}.leases WHERE session = $1`, [id]);
  // Segment ids come from a sequence: never handed out again.
  await db.q(`DELETE FROM ${s}.segments WHERE session = $1`, [id]);
  await db.q(`DELETE FROM ${s}.sessions WHERE id = $1`, [id]);
  return removed;
}

/** Marks and sweeps (or, dry, counts); to be called inside a write transaction (a read one when `dryRun`). */
export async function collectGarbageRows(db: PgConnection, s: string, options: CollectOptions): Promise<CollectReport> {
  const dryRun = options.dryRun === true;
  if (!dryRun) {
    await db.q(`SELECT value FROM ${s}.meta WHERE key = 'schema_version' FOR UPDATE`);
    await db.q(`LOCK TABLE ${s}.blobs, ${s}.snapshots, ${s}.events, ${s}.leases IN SHARE ROW EXCLUSIVE MODE`);
    const held = await heldLeases(db, s, undefined);
    refuseDriven(held, options.live, "collecting garbage");
    // Every holder left was judged gone: released here, in the collection's transaction, so a
    // holder that was only stalled (no renewal for a while) cannot append after it — its fenced
    // append meets a released lease (LeaseLost) — and name a blob the sweep deleted.
    for (const h of held)
      await db.q(`UPDATE ${s}.leases SET owner = NULL, acquired = NULL, renewed = NULL WHERE session = $1 AND branch = $2 AND token = $3`, [
        h.session,
        h.branch,
        h.token,
      ]);
  }
  const reach = new Reach(options.refs);
  for (let after = 0; ; ) {
    const rows = await db.q(`SELECT id, blob, data FROM ${s}.events WHERE id > $1 ORDER BY id LIMIT ${ROWS}`, [after]);
    if (rows.length === 0) break;
    for (const r of rows) {
      reach.text(r.data as string);
      if (r.blob !== null) reach.blob((r.blob as Buffer).toString("hex"));
    }
    after = Number(rows.at(-1)?.id);
  }
  for (let after = 0; ; ) {
    const rows = await db.q(`SELECT event, header, pages FROM ${s}.snapshots WHERE event > $1 ORDER BY event LIMIT ${ROWS}`, [after]);
    if (rows.length === 0) break;
    for (const r of rows) {
      reach.text(r.header as string);
      reach.directory(r.pages, `the snapshot at event ${r.event}`);
    }
    after = Number(rows.at(-1)?.event);
  }
  for (let next = reach.next(BLOBS); next.length > 0; next = reach.next(BLOBS)) {
    const got = new Map<string, Buffer>();
    for (const r of await db.q(`SELECT hash, data FROM ${s}.blobs WHERE hash = ANY($1::bytea[])`, [next.map((h) => Buffer.from(h, "hex"))]))
      got.set((r.hash as Buffer).toString("hex"), r.data as Buffer);
    for (const h of next) reach.read(h, got.get(h));
  }
  const doomed: Buffer[] = [];
  let bytes = 0;
  let keptBlobs = 0;
  let keptBytes = 0;
  for (let after: Buffer = Buffer.alloc(0); ; ) {
    const rows = await db.q(`SELECT hash, size FROM ${s}.blobs WHERE hash > $1 ORDER BY hash LIMIT ${ROWS * 5}`, [after]);
    if (rows.length === 0) break;
    for (const r of rows) {
      const hash = r.hash as Buffer;
      if (reach.reached.has(hash.toString("hex"))) {
        keptBlobs++;
        keptBytes += Number(r.size);
      } else {
        doomed.push(hash);
        bytes += Number(r.size);
      }
    }
    after = rows.at(-1)?.hash as Buffer;
  }
  if (!dryRun) {
    for (let i = 0; i < doomed.length; i += ROWS)
      await db.q(`DELETE FROM ${s}.blobs WHERE hash = ANY($1::bytea[])`, [doomed.slice(i, i + ROWS)]);
    await db.q(
      `INSERT INTO ${s}.meta (key, value) VALUES ('${GC_GENERATION}', '1')
       ON CONFLICT (key) DO UPDATE SET value = (${s}.meta.value::bigint + 1)::text`,
    );
  }
  return { dryRun, blobs: doomed.length, bytes, keptBlobs, keptBytes };
}

/** The store's collection generation, read FOR SHARE of `schema_version` (see the module's comment); inside a write transaction. */
export async function gcGeneration(db: PgConnection, s: string): Promise<number> {
  const rows = await db.q(`SELECT key, value FROM ${s}.meta WHERE key IN ('schema_version', '${GC_GENERATION}') FOR SHARE`);
  return Number(rows.find((r) => r.key === GC_GENERATION)?.value ?? 0);
}
