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
import {
  blobFinding,
  branchFindings,
  cycleFindings,
  digestFinding,
  eventHookFinding,
  forkFinding,
  linkFindings,
  messageOf,
  missingPayloadFinding,
  segmentFindings,
  snapshotFinding,
  snapshotPlaceFinding,
  snapshotReadFinding,
} from "@strata/store/backend";
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
    for (const f of cycleFindings(new Map(segments.map((g) => [Number(g.id), g.parent === null ? null : Number(g.parent)])), session))
      add(f);
    for (const seg of segments) await guard(`reading segment ${seg.id} of session ${session}`, session, () => verifySegment(seg));

    async function verifySegment(seg: Row): Promise<void> {
      const id = Number(seg.id);
      const parent = seg.parent === null ? null : Number(seg.parent);
      const forkDepth = Number(seg.fork_depth);
      for (const f of segmentFindings(id, parent, forkDepth, segIds, session)) add(f);
      let expected = forkDepth + 1;
      let prev: number | null = null;
      let prevDigest: Buffer | null = null;
      if (parent !== null) {
        const fork = (await q(`SELECT id, digest FROM ${s}.events WHERE segment = $1 AND depth = $2`, [parent, forkDepth]))[0];
        if (fork === undefined) add(forkFinding(id, parent, forkDepth, session));
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
          const prior = e.prior === null ? null : Number(e.prior);
          for (const f of linkFindings(eid, depth, expected, prior, prev, id, session)) add(f);
          let data: string | undefined = e.data;
          if (e.blob !== null) {
            if (e.bhash === null) {
              data = undefined;
              add(missingPayloadFinding(eid, (e.blob as Buffer).toString("hex"), session));
            } else data = (e.bdata as Buffer).toString("utf8");
          }
          if (data !== undefined) {
            const f = digestFinding(
              { kind: e.kind, label: e.label, by: e.by, ts: Number(e.ts), digest: e.digest },
              eid,
              data,
              prevDigest,
              session,
            );
            if (f !== undefined) add(f);
            const h = eventHookFinding(hooks.checkEvent, {
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
            });
            if (h !== undefined) add(h);
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

    await guard(`checking the branches of session ${session}`, session, async () => {
      for (const b of await q(
        `SELECT name, segment, head, (SELECT 1 FROM ${s}.events WHERE segment = br.segment LIMIT 1) AS any FROM ${s}.branches br WHERE session = $1`,
        [session],
      ))
        for (const f of branchFindings(
          { name: b.name as string, segment: Number(b.segment), head: b.head === null ? null : Number(b.head) },
          segIds,
          (e) => placeOf.get(e)?.[0],
          b.any !== null,
          session,
        ))
          add(f);
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
          add(snapshotPlaceFinding(ev, session));
          continue;
        }
        let record: SnapshotRecord | undefined;
        try {
          record = await host.nearestSnapshot(ev);
        } catch (e) {
          add(snapshotReadFinding(ev, e, session));
          continue;
        }
        if (record === undefined || record.event !== ev) continue;
        const refs = record.pages.filter((p): p is string => p !== null);
        const found = await host.hasBlobs(refs);
        const f = snapshotFinding(
          record,
          refs.filter((p) => !found.has(p)),
          hooks.checkSnapshot,
          session,
        );
        if (f !== undefined) add(f);
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
        if (!sha256(b.data as Buffer).equals(b.hash as Buffer)) add(blobFinding((b.hash as Buffer).toString("hex")));
      }
      if (rows.length < 500) break;
      after = rows[rows.length - 1]?.hash as Buffer;
    }
  });
  hooks.progress?.(totalEvents, totalEvents);
  return { ok: findings.length === 0, sessions: sessions.length, events: eventCount, snapshots: snapshotCount, blobs: blobCount, findings };
}
