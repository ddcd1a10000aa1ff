/**
 * What `verify` (ST-17) judges, for every backend: each function takes what a backend read — a
 * segment, an event row, a branch, a snapshot — and returns the finding it makes, or none. A
 * backend reads its own data its own way (SQLite in one read transaction of a file, PostgreSQL in
 * one REPEATABLE READ transaction) and reports through these, so both report the same damage in
 * the same words.
 */
import { isTimestamp, show } from "./checks.ts";
import { digestBytes } from "./digest.ts";
import { messageOf } from "./errors.ts";
import type { VerifyHooks } from "./store.ts";
import type { EventId, SessionId, SnapshotRecord, StoredEvent, VerifyFinding } from "./types.ts";

/** Each segment's parents must lead to the root without a cycle (ST-25): one finding per cycle, bounded by the segment count. */
export function cycleFindings(parentOf: ReadonlyMap<number, number | null>, session: SessionId): VerifyFinding[] {
  const out: VerifyFinding[] = [];
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
    out.push({
      code: "bad-segment",
      session,
      message: `segments ${cycle.join(" → ")} form a cycle of parents: their chains have no beginning`,
    });
  }
  return out;
}

/** A segment's own place: its parent a segment of the session, a root starting at depth 0. */
export function segmentFindings(
  id: number,
  parent: number | null,
  forkDepth: number,
  segments: ReadonlySet<number>,
  session: SessionId,
): VerifyFinding[] {
  const out: VerifyFinding[] = [];
  if (parent !== null && !segments.has(parent))
    out.push({ code: "bad-segment", session, message: `segment ${id} has parent ${parent}, which is not a segment of the session` });
  if (parent === null && forkDepth !== 0)
    out.push({ code: "bad-segment", session, message: `root segment ${id} starts at depth ${forkDepth}, not 0` });
  return out;
}

/** The event a segment forks from must exist. */
export function forkFinding(id: number, parent: number, forkDepth: number, session: SessionId): VerifyFinding {
  return {
    code: "bad-segment",
    session,
    message: `segment ${id} forks from depth ${forkDepth} of segment ${parent}, which has no such event`,
  };
}

/** An event's depth must follow the one before it in its segment; its prior must be that event. */
export function linkFindings(
  eid: number,
  depth: number,
  expected: number,
  prior: number | null,
  prev: number | null,
  segment: number,
  session: SessionId,
): VerifyFinding[] {
  const out: VerifyFinding[] = [];
  const event = eid as EventId;
  if (depth < expected)
    out.push({ code: "duplicate-depth", session, event, message: `event ${eid} repeats depth ${depth} of segment ${segment}` });
  else if (depth > expected)
    out.push({
      code: "chain-gap",
      session,
      event,
      message: `segment ${segment} jumps from depth ${expected - 1} to ${depth} at event ${eid}`,
    });
  if (prior !== prev)
    out.push({
      code: "dangling-prior",
      session,
      event,
      message: `event ${eid} has prior ${prior ?? "none"}, but the event before it on its chain is ${prev ?? "none"}`,
    });
  return out;
}

/** A blob-backed payload whose blob is missing. */
export function missingPayloadFinding(eid: number, hash: string, session: SessionId): VerifyFinding {
  return {
    code: "missing-blob",
    session,
    event: eid as EventId,
    message: `event ${eid} stores its payload in blob ${hash}, which is missing`,
  };
}

/**
 * The stored digest must be the digest of the row's content chained to the stored digest before it
 * (ST-21); a timestamp outside 1970 … 9999 is reported instead. `prior` null: the genesis event.
 */
export function digestFinding(
  row: { readonly kind: unknown; readonly label: unknown; readonly by: unknown; readonly ts: unknown; readonly digest: unknown },
  eid: number,
  data: unknown,
  prior: unknown,
  session: SessionId,
): VerifyFinding | undefined {
  const event = eid as EventId;
  if (!isTimestamp(row.ts))
    return {
      code: "bad-event",
      session,
      event,
      message: `event ${eid} has timestamp ${String(row.ts)}, outside 1970 … 9999 (whole milliseconds)`,
    };
  const stored = row.digest;
  if (!Buffer.isBuffer(stored) || stored.length !== 32)
    return {
      code: "bad-digest",
      session,
      event,
      message: `event ${eid} has no valid digest (a 32-byte sha256 is stored with every event)`,
    };
  if (prior !== null && (!Buffer.isBuffer(prior) || prior.length !== 32)) return undefined; // reported on the event before
  const text = (v: unknown) => typeof v === "string";
  const fields = text(row.kind) && (row.label === null || text(row.label)) && (row.by === null || text(row.by)) && text(data);
  if (
    fields &&
    digestBytes(
      prior as Buffer | null,
      row.kind as string,
      row.label as string | null,
      row.by as string | null,
      row.ts,
      data as string,
    ).equals(stored)
  )
    return undefined;
  return {
    code: "bad-digest",
    session,
    event,
    message: `event ${eid}'s digest does not match its content (kind, label, by, ts, data) and the digest before it: the event or the one before it was changed after it was written`,
  };
}

/** What the engine's hook says of an event's payload (a hook that throws is a finding too); the event is named once. */
export function eventHookFinding(
  hook: VerifyHooks["checkEvent"],
  event: StoredEvent,
  reason: (e: unknown) => string = messageOf,
): VerifyFinding | undefined {
  if (hook === undefined) return undefined;
  let problem: string | undefined;
  try {
    problem = answerOf(hook(event));
  } catch (x) {
    problem = `could not be checked: ${reason(x)}`;
  }
  if (problem === undefined) return undefined;
  const eid = event.id;
  // A hook's message may name the event itself (the engine's decoder does): say it once.
  return {
    code: "bad-event",
    session: event.session,
    event: eid,
    message: problem.startsWith(`event ${eid}:`) ? problem : `event ${eid}: ${problem}`,
  };
}

/** A branch's head: its segment of the session, and the event it names (or, following its segment, that the segment has events). */
export function branchFindings(
  b: { readonly name: string; readonly segment: number; readonly head: number | null },
  segments: ReadonlySet<number>,
  segmentOfEvent: (id: number) => number | undefined,
  segmentHasEvents: boolean,
  session: SessionId,
): VerifyFinding[] {
  const out: VerifyFinding[] = [];
  const { name, segment, head } = b;
  if (!segments.has(segment))
    out.push({ code: "bad-head", session, message: `branch "${name}" names segment ${segment}, not of this session` });
  if (head === null) {
    if (!segmentHasEvents)
      out.push({ code: "bad-head", session, message: `branch "${name}" follows segment ${segment}, which has no events` });
    return out;
  }
  const at = segmentOfEvent(head);
  if (at === undefined)
    out.push({ code: "bad-head", session, message: `branch "${name}" points at event ${head}, which is not an event of the session` });
  else if (at !== segment)
    out.push({ code: "bad-head", session, message: `branch "${name}" points at event ${head} but names segment ${segment}` });
  return out;
}

/** A snapshot row that is not where its event is on the chain. */
export function snapshotPlaceFinding(ev: EventId, session: SessionId): VerifyFinding {
  return { code: "bad-snapshot", session, event: ev, message: `snapshot at event ${ev} does not match the event's place on its chain` };
}

/** A snapshot that cannot be read. */
export function snapshotReadFinding(
  ev: EventId,
  e: unknown,
  session: SessionId,
  reason: (e: unknown) => string = messageOf,
): VerifyFinding {
  return { code: "bad-snapshot", session, event: ev, message: `snapshot at event ${ev} cannot be read: ${reason(e)}` };
}

/** A snapshot whose pages are missing, or that the engine's hook finds different from the replay of its chain. */
export function snapshotFinding(
  record: SnapshotRecord,
  missing: readonly string[],
  hook: VerifyHooks["checkSnapshot"],
  session: SessionId,
  reason: (e: unknown) => string = messageOf,
): VerifyFinding | undefined {
  const ev = record.event;
  if (missing.length > 0)
    return {
      code: "missing-blob",
      session,
      event: ev,
      message: `snapshot at event ${ev} refers to ${missing.length} missing page(s), e.g. ${missing[0]}`,
    };
  let problem: string | undefined;
  try {
    problem = answerOf(hook?.(record, session));
  } catch (x) {
    problem = `could not be checked: ${reason(x)}`;
  }
  return problem === undefined
    ? undefined
    : { code: "snapshot-mismatch", session, event: ev, message: `snapshot at event ${ev}: ${problem}` };
}

/** A blob whose bytes do not hash to its address. */
export function blobFinding(hash: string): VerifyFinding {
  return { code: "bad-blob", message: `blob ${hash} does not hash to its address` };
}

/** A hook's answer as a finding's message: undefined (fine), its text, or what it returned instead of text. */
export function answerOf(answer: unknown): string | undefined {
  if (answer === undefined || typeof answer === "string") return answer;
  return `could not be checked: the hook returned ${show(answer)}, not a message or undefined`;
}
