/**
 * `verify` on PostgreSQL (ST-17): the checks the store can make alone — chain links and depths,
 * segment ancestry, branch heads, event digests and timestamps, blob references and hashes,
 * snapshot places and pages — and the engine's hooks on payloads and snapshots; every finding
 * rather than the first. It runs inside the read transaction the backend opens around it (one
 * snapshot of the database, REPEATABLE READ). The server's own page checks are the server's
 * business (`amcheck`, checksums); a check that cannot be read is an `integrity` finding and the
 * others go on.
 */
import {
  type EventId,
  type SessionId,
  type SnapshotRecord,
  sha256,
  type VerifyFinding,
  type VerifyHooks,
  type VerifyReport,
} from "@strata/store";
import { digestBytes, isTimestamp, messageOf, show } from "@strata/store/backend";
import type { QueryResultRow } from "pg";

type Row = QueryResultRow;

/** What verify reads through: statements in the read transaction, and two reads of the store. */
export interface VerifyHost {
  q(text: string, values?: unknown[]): Promise<Row[]>;
  /** The schema, quoted. */
  readonly s: string;
  nearestSnapshot(event: EventId): Promise<SnapshotRecord | undefined>;
  hasBlobs(hashes: readonly string[]): Promise<Map<string, Buffer>>;
}

/** Events read per statement while walking a segment (the walk holds one batch at a time). */
const BATCH = 2000;

export async function verifyPg(host: VerifyHost, only: SessionId | undefined, hooks: VerifyHooks): Promise<VerifyReport> {
  const { q, s } = host;
  const findings: VerifyFinding[] = [];
  const add = (f: VerifyFinding) => findings.push(f);
  const guard = async (what: string, session: SessionId | undefined, check: () => Promise<void>): Promise<void> => {
    try {
      await check();
    } catch (e) {
      add({ code: "integrity", ...(session === undefined ? {} : { session }), message: `${what} failed (${messageOf(e)})` });
    }
  };

  let sessions: SessionId[] = [];
  await guard("reading the list of sessions", only, async () => {
    sessions = (
      only === undefined
        ? await q(`SELECT id FROM ${s}.sessions ORDER BY id`)
        : await q(`SELECT id FROM ${s}.sessions WHERE id = $1`, [only])
    ).map((r) => r.id as SessionId);
    if (only !== undefined && sessions.length === 0) {
      add({ code: "schema", session: only, message: `session ${only} does not exist` });
      sessions = [only];
    }
  });
  let totalEvents = 0;
  await guard("counting events", only, async () => {
    const r =
      only === undefined
        ? await q(`SELECT count(*)::bigint AS n FROM ${s}.events`)
        : await q(`SELECT count(*)::bigint AS n FROM ${s}.events e JOIN ${s}.segments g ON g.id = e.segment WHERE g.session = $1`, [only]);
    totalEvents = Number(r[0]?.n ?? 0);
  });
  let eventCount = 0;
  let snapshotCount = 0;

  for (const session of sessions) await guard(`checking session ${session}`, session, () => verifySession(session));

  async function verifySession(session: SessionId): Promise<void> {
    const segments = await q(`SELECT id, parent, fork_depth FROM ${s}.segments WHERE session = $1 ORDER BY id`, [session]);
    const segIds = new Set(segments.map((g) => Number(g.id)));
    /** event id → [segment, depth], for the heads and snapshots checked after the walk. */
    const placeOf = new Map<number, [number, number]>();
    const exists = (await q(`SELECT 1 FROM ${s}.sessions WHERE id = $1`, [session])).length > 0;
    if (segments.length === 0 && exists) add({ code: "bad-segment", session, message: `session ${session} has no segments` });
    checkAncestry(segments);
    for (const seg of segments) await guard(`reading segment ${seg.id} of session ${session}`, session, () => verifySegment(seg));

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
        if (path.length <= parentOf.size) continue;
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

    async function verifySegment(seg: Row): Promise<void> {
      const id = Number(seg.id);
      const parent = seg.parent === null ? null : Number(seg.parent);
      const forkDepth = Number(seg.fork_depth);
      if (parent !== null && !segIds.has(parent))
        add({ code: "bad-segment", session, message: `segment ${id} has parent ${parent}, which is not a segment of the session` });
      if (parent === null && forkDepth !== 0)
        add({ code: "bad-segment", session, message: `root segment ${id} starts at depth ${forkDepth}, not 0` });
      let expected = forkDepth + 1;
      let prev: number | null = null;
      let prevDigest: Buffer | null = null;
      if (parent !== null) {
        const fork = (await q(`SELECT id, digest FROM ${s}.events WHERE segment = $1 AND depth = $2`, [parent, forkDepth]))[0];
        if (fork === undefined)
          add({
            code: "bad-segment",
            session,
            message: `segment ${id} forks from depth ${forkDepth} of segment ${parent}, which has no such event`,
          });
        else {
          prev = Number(fork.id);
          prevDigest = fork.digest as Buffer;
        }
      }
      for (let after = -1; ; ) {
        const rows = await q(
          `SELECT e.id, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.digest, e.blob, e.data, b.data AS bdata, b.hash AS bhash
           FROM ${s}.events e LEFT JOIN ${s}.blobs b ON b.hash = e.blob WHERE e.segment = $1 AND e.depth > $2 ORDER BY e.depth LIMIT $3`,
          [id, after, BATCH],
        );
        if (rows.length === 0) break;
        for (const e of rows) {
          eventCount++;
          const eid = Number(e.id);
          const depth = Number(e.depth);
          placeOf.set(eid, [id, depth]);
          if (depth > expected)
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
          let data: string | undefined = e.data;
          if (e.blob !== null) {
            if (e.bhash === null) {
              data = undefined;
              add({
                code: "missing-blob",
                session,
                event: eid as EventId,
                message: `event ${eid} stores its payload in blob ${(e.blob as Buffer).toString("hex")}, which is missing`,
              });
            } else data = (e.bdata as Buffer).toString("utf8");
          }
          if (data !== undefined) checkDigest(e, eid, data, prevDigest);
          if (hooks.checkEvent !== undefined && data !== undefined) {
            let problem: string | undefined;
            try {
              problem = answerOf(
                hooks.checkEvent({
                  id: eid as EventId,
                  session,
                  prior: prior as EventId | null,
                  depth,
                  kind: e.kind,
                  label: e.label ?? null,
                  by: e.by ?? null,
                  ts: Number(e.ts),
                  digest: (e.digest as Buffer).toString("hex"),
                  data,
                }),
              );
            } catch (x) {
              problem = `could not be checked: ${messageOf(x)}`;
            }
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
          prevDigest = e.digest as Buffer;
          if (eventCount % 5000 === 0) hooks.progress?.(eventCount, totalEvents);
        }
        after = Number(rows[rows.length - 1]?.depth);
        if (rows.length < BATCH) break;
      }
    }

    function checkDigest(e: Row, eid: number, data: string, prior: Buffer | null): void {
      const event = eid as EventId;
      const ts = Number(e.ts);
      if (!isTimestamp(ts)) {
        add({
          code: "bad-event",
          session,
          event,
          message: `event ${eid} has timestamp ${String(e.ts)}, outside 1970 … 9999 (whole milliseconds)`,
        });
        return;
      }
      const stored = e.digest as Buffer;
      if (stored.length !== 32) {
        add({
          code: "bad-digest",
          session,
          event,
          message: `event ${eid} has no valid digest (a 32-byte sha256 is stored with every event)`,
        });
        return;
      }
      if (prior !== null && prior.length !== 32) return; // reported on the event before
      if (!digestBytes(prior, e.kind, e.label ?? null, e.by ?? null, ts, data).equals(stored))
        add({
          code: "bad-digest",
          session,
          event,
          message: `event ${eid}'s digest does not match its content (kind, label, by, ts, data) and the digest before it: the event or the one before it was changed after it was written`,
        });
    }

    await guard(`checking the branches of session ${session}`, session, async () => {
      for (const b of await q(
        `SELECT name, segment, head, (SELECT 1 FROM ${s}.events WHERE segment = br.segment LIMIT 1) AS any FROM ${s}.branches br WHERE session = $1`,
        [session],
      )) {
        const name = b.name as string;
        if (!segIds.has(Number(b.segment)))
          add({ code: "bad-head", session, message: `branch "${name}" names segment ${b.segment}, not of this session` });
        if (b.head === null) {
          if (b.any === null)
            add({ code: "bad-head", session, message: `branch "${name}" follows segment ${b.segment}, which has no events` });
        } else if (!placeOf.has(Number(b.head)))
          add({ code: "bad-head", session, message: `branch "${name}" points at event ${b.head}, which is not an event of the session` });
        else if (placeOf.get(Number(b.head))?.[0] !== Number(b.segment))
          add({ code: "bad-head", session, message: `branch "${name}" points at event ${b.head} but names segment ${b.segment}` });
      }
    });

    await guard(`checking the snapshots of session ${session}`, session, async () => {
      for (const n of await q(
        `SELECT n.event, n.segment, n.depth FROM ${s}.snapshots n JOIN ${s}.segments g ON g.id = n.segment WHERE g.session = $1 ORDER BY n.event`,
        [session],
      )) {
        snapshotCount++;
        const ev = Number(n.event) as EventId;
        const place = placeOf.get(ev);
        if (place?.[0] !== Number(n.segment) || place[1] !== Number(n.depth)) {
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
          record = await host.nearestSnapshot(ev);
        } catch (e) {
          add({ code: "bad-snapshot", session, event: ev, message: `snapshot at event ${ev} cannot be read: ${messageOf(e)}` });
          continue;
        }
        if (record === undefined || record.event !== ev) continue;
        const refs = record.pages.filter((p): p is string => p !== null);
        const found = await host.hasBlobs(refs);
        const missing = refs.filter((p) => !found.has(p));
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
          problem = `could not be checked: ${messageOf(x)}`;
        }
        if (problem !== undefined) add({ code: "snapshot-mismatch", session, event: ev, message: `snapshot at event ${ev}: ${problem}` });
      }
    });
  }

  // Every blob's bytes must hash to its address (read a batch at a time, in hash order).
  let blobCount = 0;
  await guard("checking the blob table", undefined, async () => {
    for (let after: Buffer = Buffer.alloc(0); ; ) {
      const rows = await q(`SELECT hash, data FROM ${s}.blobs WHERE hash > $1 ORDER BY hash LIMIT 500`, [after]);
      for (const b of rows) {
        blobCount++;
        if (!sha256(b.data as Buffer).equals(b.hash as Buffer))
          add({ code: "bad-blob", message: `blob ${(b.hash as Buffer).toString("hex")} does not hash to its address` });
      }
      if (rows.length < 500) break;
      after = rows[rows.length - 1]?.hash as Buffer;
    }
  });
  hooks.progress?.(totalEvents, totalEvents);
  return { ok: findings.length === 0, sessions: sessions.length, events: eventCount, snapshots: snapshotCount, blobs: blobCount, findings };
}

/** A hook's answer as a finding's message: undefined (fine), its text, or what it returned instead of text. */
function answerOf(answer: unknown): string | undefined {
  if (answer === undefined || typeof answer === "string") return answer;
  return `could not be checked: the hook returned ${show(answer)}, not a message or undefined`;
}
