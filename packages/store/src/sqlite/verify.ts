/**
 * `verify` (ST-17): checks what the store can judge alone — SQLite integrity, chain links, depths,
 * segment ancestry, branch heads, event digests, blob hashes, snapshot page references — and asks
 * the engine's hooks about event payloads and snapshot contents. Read-only, inside the one read
 * transaction the store opens around it; returns every finding rather than stopping at the
 * first. On a damaged file each check that cannot be read becomes an `integrity` finding and the
 * other checks go on: verify reports damage, it does not throw it.
 */
import type Database from "better-sqlite3";
import { isTimestamp, show } from "../checks.ts";
import { digestBytes } from "../digest.ts";
import { messageOf, StoreError } from "../errors.ts";
import { sha256 } from "../hash.ts";
import type { Store, VerifyHooks } from "../store.ts";
import type { EventId, SessionId, SnapshotRecord, StoredEvent, VerifyFinding, VerifyReport } from "../types.ts";
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
    for (const line of db.pragma("quick_check") as Row[]) {
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
    checkAncestry(segments);
    for (const seg of segments) guard(`reading segment ${seg.id} of session ${session}`, session, () => verifySegment(seg));

    /** Each segment's parents must lead to the root without a cycle (ST-25): bounded by the segment count. */
    function checkAncestry(all: Row[]): void {
      const parentOf = new Map(all.map((g) => [Number(g.id), g.parent === null ? null : Number(g.parent)]));
      const reported = new Set<number>();
      for (const start of parentOf.keys()) {
        const path: number[] = [];
        let at: number | null | undefined = start;
        while (at !== null && at !== undefined && path.length <= parentOf.size) {
          path.push(at);
          at = parentOf.get(at);
        }
        if (path.length > parentOf.size) {
          const cycle = path.slice(path.indexOf(path[path.length - 1] as number));
          const key = Math.min(...cycle);
          if (reported.has(key)) continue;
          reported.add(key);
          add({
            code: "bad-segment",
            session,
            message: `segments ${cycle.join(" → ")} form a cycle of parents: their chains have no beginning`,
          });
        }
      }
    }

    function verifySegment(seg: Row): void {
      const id = Number(seg.id);
      const parent = seg.parent === null ? null : Number(seg.parent);
      const forkDepth = Number(seg.fork_depth);
      if (parent !== null && !segIds.has(parent))
        add({ code: "bad-segment", session, message: `segment ${id} has parent ${parent}, which is not a segment of the session` });
      if (parent === null && forkDepth !== 0)
        add({ code: "bad-segment", session, message: `root segment ${id} starts at depth ${forkDepth}, not 0` });
      let expected = forkDepth + 1;
      let prev: number | null = null;
      /** The stored digest of the event before this one on its chain (null at genesis). */
      let prevDigest: Buffer | null = null;
      if (parent !== null) {
        const fork = db
          .prepare(`SELECT id, ${legacy ? "NULL AS digest" : "digest"} FROM events WHERE segment = ? AND depth = ?`)
          .get(parent, forkDepth) as Row | undefined;
        if (fork === undefined)
          add({
            code: "bad-segment",
            session,
            message: `segment ${id} forks from depth ${forkDepth} of segment ${parent}, which has no such event`,
          });
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
        if (depth < expected)
          add({ code: "duplicate-depth", session, event: eid as EventId, message: `event ${eid} repeats depth ${depth} of segment ${id}` });
        else if (depth > expected)
          add({
            code: "chain-gap",
            session,
            event: eid as EventId,
            message: `segment ${id} jumps from depth ${expected - 1} to ${depth} at event ${eid}`,
          });
        const prior = e.prior === null ? null : Number(e.prior);
        if (prior !== prev)
          add({
            code: "dangling-prior",
            session,
            event: eid as EventId,
            message: `event ${eid} has prior ${prior ?? "none"}, but the event before it on its chain is ${prev ?? "none"}`,
          });
        let data: unknown = e.data;
        if (e.blob !== null) {
          const hash = (e.blob as Buffer).toString("hex");
          const bytes = db.prepare("SELECT data FROM blobs WHERE hash = ?").pluck().get(e.blob) as Buffer | undefined;
          if (bytes === undefined) {
            data = undefined;
            add({
              code: "missing-blob",
              session,
              event: eid as EventId,
              message: `event ${eid} stores its payload in blob ${hash}, which is missing`,
            });
          } else data = bytes.toString("utf8");
        }
        if (!legacy && data !== undefined) checkDigest(e, eid, data, prevDigest);
        // The engine judges payloads; one it cannot be given (missing above) or that makes it
        // throw is reported here, and the walk goes on.
        if (hooks.checkEvent !== undefined && data !== undefined) {
          let problem: string | undefined;
          try {
            // A legacy file's rows have no digest: the store computes it from the chain.
            const digest = Buffer.isBuffer(e.digest) ? e.digest.toString("hex") : (store.eventMeta(eid as EventId)?.digest ?? "");
            problem = answerOf(hooks.checkEvent(storedOf(e, session, data as string, digest)));
          } catch (x) {
            problem = `could not be checked: ${reason(x)}`;
          }
          // A hook's message may name the event itself (the engine's decoder does): say it once.
          if (problem !== undefined)
            add({
              code: "bad-event",
              session,
              event: eid as EventId,
              message: problem.startsWith(`event ${eid}:`) ? problem : `event ${eid}: ${problem}`,
            });
        }
        expected = depth + 1;
        prev = eid;
        prevDigest = e.digest as Buffer | null;
        if (eventCount % 5000 === 0) hooks.progress?.(eventCount, totalEvents);
      }
    }
    /** The stored digest must be the digest of the row's content chained to the stored digest before it (ST-21). */
    function checkDigest(e: Row, eid: number, data: unknown, prior: Buffer | null): void {
      const event = eid as EventId;
      if (!isTimestamp(e.ts)) {
        add({
          code: "bad-event",
          session,
          event,
          message: `event ${eid} has timestamp ${String(e.ts)}, outside 1970 … 9999 (whole milliseconds)`,
        });
        return;
      }
      const stored = e.digest;
      if (!Buffer.isBuffer(stored) || stored.length !== 32) {
        add({
          code: "bad-digest",
          session,
          event,
          message: `event ${eid} has no valid digest (a 32-byte sha256 is stored with every event)`,
        });
        return;
      }
      if (prior !== null && (!Buffer.isBuffer(prior) || prior.length !== 32)) return; // reported on the event before
      const text = (v: unknown) => typeof v === "string";
      const fields = text(e.kind) && (e.label === null || text(e.label)) && (e.by === null || text(e.by)) && text(data);
      if (
        !fields ||
        !digestBytes(prior, e.kind as string, e.label as string | null, e.by as string | null, e.ts, data as string).equals(stored)
      )
        add({
          code: "bad-digest",
          session,
          event,
          message: `event ${eid}'s digest does not match its content (kind, label, by, ts, data) and the digest before it: the event or the one before it was changed after it was written`,
        });
    }

    guard(`checking the branches of session ${session}`, session, () => verifyBranches());
    guard(`checking the snapshots of session ${session}`, session, () => verifySnapshots());

    function verifyBranches(): void {
      for (const b of db.prepare("SELECT name, segment, head FROM branches WHERE session = ?").all(session) as Row[]) {
        const name = b.name as string;
        if (!segIds.has(Number(b.segment)))
          add({ code: "bad-head", session, message: `branch "${name}" names segment ${b.segment}, not of this session` });
        if (b.head === null) {
          if (db.prepare("SELECT 1 FROM events WHERE segment = ?").get(b.segment) === undefined)
            add({ code: "bad-head", session, message: `branch "${name}" follows segment ${b.segment}, which has no events` });
        } else if (!depthOf.has(Number(b.head)))
          add({ code: "bad-head", session, message: `branch "${name}" points at event ${b.head}, which is not an event of the session` });
        else if (segmentOf.get(Number(b.head)) !== Number(b.segment))
          add({ code: "bad-head", session, message: `branch "${name}" points at event ${b.head} but names segment ${b.segment}` });
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
          add({
            code: "bad-snapshot",
            session,
            event: ev,
            message: `snapshot at event ${ev} does not match the event's place on its chain`,
          });
          continue;
        }
        let record: SnapshotRecord | undefined;
        try {
          record = store.nearestSnapshot(ev);
        } catch (e) {
          add({ code: "bad-snapshot", session, event: ev, message: `snapshot at event ${ev} cannot be read: ${reason(e)}` });
          continue;
        }
        if (record === undefined || record.event !== ev) continue;
        const missing = record.pages.filter((p): p is string => p !== null && !store.hasBlob(p));
        if (missing.length > 0) {
          add({
            code: "missing-blob",
            session,
            event: ev,
            message: `snapshot at event ${ev} refers to ${missing.length} missing page(s), e.g. ${missing[0]}`,
          });
          continue;
        }
        let problem: string | undefined;
        try {
          problem = answerOf(hooks.checkSnapshot?.(record, session));
        } catch (x) {
          problem = `could not be checked: ${reason(x)}`;
        }
        if (problem !== undefined) add({ code: "snapshot-mismatch", session, event: ev, message: `snapshot at event ${ev}: ${problem}` });
      }
    }
  }

  // Every blob's bytes must hash to its address.
  let blobCount = 0;
  guard("checking the blob table", undefined, () => {
    for (const b of db.prepare("SELECT hash, data FROM blobs").iterate() as Iterable<Row>) {
      blobCount++;
      const hash = (b.hash as Buffer).toString("hex");
      if (!sha256(b.data as Buffer).equals(b.hash as Buffer))
        add({ code: "bad-blob", message: `blob ${hash} does not hash to its address` });
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

/** A hook's answer as a finding's message: undefined (fine), its text, or what it returned instead of text. */
function answerOf(answer: unknown): string | undefined {
  if (answer === undefined || typeof answer === "string") return answer;
  return `could not be checked: the hook returned ${show(answer)}, not a message or undefined`;
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
