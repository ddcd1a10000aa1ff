/**
 * `verify` (ST-17): checks what the store can judge alone — SQLite integrity, chain links, depths,
 * segment ancestry, branch heads, event digests, blob hashes, snapshot page references — and asks
 * the engine's hooks about event payloads and snapshot contents. Read-only, inside the one read
 * transaction the store opens around it; returns every finding rather than stopping at the
 * first. On a damaged file each check that cannot be read becomes an `integrity` finding and the
 * other checks go on: verify reports damage, it does not throw it.
 */
import type Database from "better-sqlite3";
import { messageOf, StoreError } from "../errors.ts";
import { sha256 } from "../hash.ts";
import type { Store, VerifyHooks } from "../store.ts";
import type { EventId, SessionId, SnapshotRecord, StoredEvent, VerifyFinding, VerifyReport } from "../types.ts";
import {
  blobFinding,
  branchFindings,
  cycleFindings,
  digestFinding,
  eventHookFinding,
  forkFinding,
  linkFindings,
  missingPayloadFinding,
  segmentFindings,
  snapshotFinding,
  snapshotPlaceFinding,
  snapshotReadFinding,
} from "../verify-rules.ts";
import { shapeDamage } from "./integrity.ts";

/**
 * A row as verify reads it: anything (verify reads files that may be damaged, so it checks every
 * value it uses instead of trusting the schema's types).
 */
type Row = Record<string, unknown>;

/** What verify reads through the store itself (the rest it reads in SQL). */
export type VerifiedStore = Pick<Store, "path" | "eventMeta" | "nearestSnapshot" | "hasBlob">;

/**
 * Verifies `only` (or every session). `legacy`: the file predates digests (schema < 3, opened
 * read-only as it is), so there are none to check.
 */
export function verifyStore(
  store: VerifiedStore,
  db: Database.Database,
  only: SessionId | undefined,
  hooks: VerifyHooks,
  legacy = false,
): VerifyReport {
  const findings: VerifyFinding[] = [];
  const add = (f: VerifyFinding) => findings.push(f);
  /** Runs one check; if the file cannot be read there, reports it and goes on (ST-17). */
  const guard = (what: string, session: SessionId | undefined, check: () => void): void => {
    try {
      check();
    } catch (e) {
      add({
        code: "integrity",
        ...(session === undefined ? {} : { session }),
        message: `${what} failed (${reason(e)}): the file is damaged; restore it from a backup copy`,
      });
    }
  };

  if (store.path !== ":memory:")
    guard("checking the file's size and header", undefined, () => {
      const why = shapeDamage(store.path, db);
      if (why !== undefined) add({ code: "integrity", message: `${store.path}: ${why}` });
    });
  guard("SQLite's quick check", undefined, () => {
    // FTS5 checks its index against the structure this connection last read: when another
    // connection wrote since, that cache is stale and the check reports a checksum mismatch of a
    // sound index. Reading the search table first in the same transaction refreshes it.
    const lines = db.transaction(() => {
      if (db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'search'").get() !== undefined)
        db.prepare("SELECT rowid FROM search LIMIT 1").all();
      return db.pragma("quick_check") as Row[];
    })();
    for (const line of lines) {
      const v = String(Object.values(line)[0]);
      if (v !== "ok") add({ code: "integrity", message: `SQLite: ${v}` });
    }
  });

  let sessions: SessionId[] = [];
  guard("reading the list of sessions", only, () => {
    sessions = (only === undefined ? db.prepare("SELECT id FROM sessions ORDER BY id").pluck().all() : [only]) as SessionId[];
    if (only !== undefined && db.prepare("SELECT 1 FROM sessions WHERE id = ?").get(only) === undefined)
      add({ code: "schema", session: only, message: `session ${only} does not exist` });
  });

  let eventCount = 0;
  let snapshotCount = 0;
  let totalEvents = 0;
  guard("counting events", only, () => {
    totalEvents = Number(
      only === undefined
        ? db.prepare("SELECT count(*) FROM events").pluck().get()
        : db.prepare("SELECT count(*) FROM events e JOIN segments s ON s.id = e.segment WHERE s.session = ?").pluck().get(only),
    );
  });

  for (const session of sessions) guard(`checking session ${session}`, session, () => verifySession(session));

  function verifySession(session: SessionId): void {
    const segments = db.prepare("SELECT id, parent, fork_depth, session FROM segments WHERE session = ? ORDER BY id").all(session) as Row[];
    const segIds = new Set(segments.map((s) => Number(s.id)));
    const depthOf = new Map<number, number>(); // event id -> depth, for prior checks
    const segmentOf = new Map<number, number>();
    if (segments.length === 0) add({ code: "bad-segment", session, message: `session ${session} has no segments` });
    for (const f of cycleFindings(new Map(segments.map((g) => [Number(g.id), g.parent === null ? null : Number(g.parent)])), session))
      add(f);
    for (const seg of segments) guard(`reading segment ${seg.id} of session ${session}`, session, () => verifySegment(seg));

    function verifySegment(seg: Row): void {
      const id = Number(seg.id);
      const parent = seg.parent === null ? null : Number(seg.parent);
      const forkDepth = Number(seg.fork_depth);
      for (const f of segmentFindings(id, parent, forkDepth, segIds, session)) add(f);
      let expected = forkDepth + 1;
      let prev: number | null = null;
      /** The stored digest of the event before this one on its chain (null at genesis). */
      let prevDigest: Buffer | null = null;
      if (parent !== null) {
        const fork = db
          .prepare(`SELECT id, ${legacy ? "NULL AS digest" : "digest"} FROM events WHERE segment = ? AND depth = ?`)
          .get(parent, forkDepth) as Row | undefined;
        if (fork === undefined) add(forkFinding(id, parent, forkDepth, session));
        else {
          prev = Number(fork.id);
          prevDigest = fork.digest as Buffer | null;
        }
      }
      const columns = `id, depth, prior, kind, label, by, ts, ${legacy ? "NULL AS digest" : "digest"}, blob, data`;
      for (const e of db.prepare(`SELECT ${columns} FROM events WHERE segment = ? ORDER BY depth, id`).iterate(id) as Iterable<Row>) {
        eventCount++;
        const eid = Number(e.id);
        const depth = Number(e.depth);
        depthOf.set(eid, depth);
        segmentOf.set(eid, id);
        const prior = e.prior === null ? null : Number(e.prior);
        for (const f of linkFindings(eid, depth, expected, prior, prev, id, session)) add(f);
        let data: unknown = e.data;
        if (e.blob !== null) {
          const hash = (e.blob as Buffer).toString("hex");
          const bytes = db.prepare("SELECT data FROM blobs WHERE hash = ?").pluck().get(e.blob) as Buffer | undefined;
          if (bytes === undefined) {
            data = undefined;
            add(missingPayloadFinding(eid, hash, session));
          } else data = bytes.toString("utf8");
        }
        if (!legacy && data !== undefined) {
          const f = digestFinding(e as Parameters<typeof digestFinding>[0], eid, data, prevDigest, session);
          if (f !== undefined) add(f);
        }
        // The engine judges payloads; one it cannot be given (missing above) or that makes it
        // throw is reported here, and the walk goes on.
        if (hooks.checkEvent !== undefined && data !== undefined) {
          let f: VerifyFinding | undefined;
          try {
            // A legacy file's rows have no digest: the store computes it from the chain.
            const digest = Buffer.isBuffer(e.digest) ? e.digest.toString("hex") : (store.eventMeta(eid as EventId)?.digest ?? "");
            f = eventHookFinding(hooks.checkEvent, storedOf(e, session, data as string, digest), reason);
          } catch (x) {
            f = { code: "bad-event", session, event: eid as EventId, message: `event ${eid}: could not be checked: ${reason(x)}` };
          }
          if (f !== undefined) add(f);
        }
        expected = depth + 1;
        prev = eid;
        prevDigest = e.digest as Buffer | null;
        if (eventCount % 5000 === 0) hooks.progress?.(eventCount, totalEvents);
      }
    }

    guard(`checking the branches of session ${session}`, session, () => verifyBranches());
    guard(`checking the snapshots of session ${session}`, session, () => verifySnapshots());

    function verifyBranches(): void {
      const hasEvents = db.prepare("SELECT 1 FROM events WHERE segment = ?");
      for (const b of db.prepare("SELECT name, segment, head FROM branches WHERE session = ?").all(session) as Row[]) {
        const head = b.head === null ? null : Number(b.head);
        const followed = head === null && hasEvents.get(b.segment) !== undefined;
        for (const f of branchFindings(
          { name: b.name as string, segment: Number(b.segment), head },
          segIds,
          (id) => (depthOf.has(id) ? segmentOf.get(id) : undefined),
          followed,
          session,
        ))
          add(f);
      }
    }

    function verifySnapshots(): void {
      for (const s of db
        .prepare(
          "SELECT n.event, n.segment, n.depth FROM snapshots n JOIN segments g ON g.id = n.segment WHERE g.session = ? ORDER BY n.event",
        )
        .all(session) as Row[]) {
        snapshotCount++;
        const ev = Number(s.event) as EventId;
        if (depthOf.get(ev) !== Number(s.depth) || segmentOf.get(ev) !== Number(s.segment)) {
          add(snapshotPlaceFinding(ev, session));
          continue;
        }
        let record: SnapshotRecord | undefined;
        try {
          record = store.nearestSnapshot(ev);
        } catch (e) {
          add(snapshotReadFinding(ev, e, session, reason));
          continue;
        }
        if (record === undefined || record.event !== ev) continue;
        const missing = record.pages.filter((p): p is string => p !== null && !store.hasBlob(p));
        const f = snapshotFinding(record, missing, hooks.checkSnapshot, session, reason);
        if (f !== undefined) add(f);
      }
    }
  }

  // Every blob's bytes must hash to its address.
  let blobCount = 0;
  guard("checking the blob table", undefined, () => {
    for (const b of db.prepare("SELECT hash, data FROM blobs").iterate() as Iterable<Row>) {
      blobCount++;
      const hash = (b.hash as Buffer).toString("hex");
      if (!sha256(b.data as Buffer).equals(b.hash as Buffer)) add(blobFinding(hash));
    }
  });
  hooks.progress?.(totalEvents, totalEvents);
  return { ok: findings.length === 0, sessions: sessions.length, events: eventCount, snapshots: snapshotCount, blobs: blobCount, findings };
}

/** A row of the events walk as the event the hooks are given. */
function storedOf(e: Row, session: SessionId, data: string, digest: string): StoredEvent {
  return {
    id: Number(e.id) as EventId,
    session,
    prior: e.prior === null ? null : (Number(e.prior) as EventId),
    depth: Number(e.depth),
    kind: e.kind as string,
    label: (e.label as string | null) ?? null,
    by: (e.by as string | null) ?? null,
    ts: Number(e.ts),
    digest,
    data,
  };
}

/** Why a read failed, without the advice an error carries for other callers (no "run verify" here). */
function reason(e: unknown): string {
  const cause = e instanceof StoreError ? e.cause : e;
  if (
    cause instanceof Error &&
    typeof (cause as { code?: unknown }).code === "string" &&
    String((cause as { code?: unknown }).code).startsWith("SQLITE_")
  )
    return cause.message;
  return messageOf(e);
}
