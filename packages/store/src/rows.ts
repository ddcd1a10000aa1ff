/**
 * Rows to values: sessions, branches, event metadata, leases, as the store returns them
 * (types.ts), for every backend. The row shapes a backend's queries return, and pure functions
 * over them. Values are converted with `Number()` where a damaged store could hold another type
 * (SQLite columns are not typed), and a row that names what does not exist is a `corrupt` error naming it (ST-25).
 */
import { StoreError } from "./errors.ts";
import type { BranchInfo, BranchOrigin, EventId, EventMeta, LeaseInfo, SessionId, SessionInfo } from "./types.ts";

export interface SessionRow {
  readonly id: string;
  readonly title: string | null;
  readonly created: number;
  readonly metadata: string;
}
/** A branch with its head resolved: `head` when pinned, else its segment's tip (`tip_id`, `tip_depth`). */
export interface BranchRow {
  readonly name: string;
  readonly segment: number;
  readonly head: number | null;
  readonly created: number;
  readonly origin: string;
  readonly origin_event: number | null;
  readonly tip_id: number | null;
  readonly tip_depth: number | null;
  /** The depth of `head` (null when `head` names no event: damage, ST-25). */
  readonly head_depth: number | null;
}
/** An event without its payload (`prior` absent in listings: the covering index has none). */
export interface MetaRow {
  readonly id: number;
  readonly segment: number;
  readonly depth: number;
  readonly prior?: number | null;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  readonly ts: number;
  /** null in a legacy file (schema < 3). */
  readonly digest: Buffer | null;
}
export interface LeaseRow {
  readonly token: number;
  readonly owner: string | null;
  readonly acquired: number | null;
  readonly renewed: number | null;
}

/** The key of a branch in the store's per-branch caches. */
export function tipKey(session: SessionId, branch: string): string {
  return `${session}\u0000${branch}`;
}

export function sessionOf(row: SessionRow): SessionInfo {
  let metadata: Record<string, unknown>;
  try {
    metadata = JSON.parse(row.metadata);
  } catch {
    throw new StoreError("corrupt", `session ${row.id} has unreadable metadata; run \`strata verify\` and restore the file from a copy`);
  }
  return { id: row.id as SessionId, title: row.title ?? null, created: Number(row.created), metadata };
}

/** Hex of a stored digest (a 32-byte blob; anything else is shown as it is, for verify to report). */
export function hexOf(digest: unknown): string {
  return Buffer.isBuffer(digest) ? digest.toString("hex") : String(digest);
}

export function metaOf(row: MetaRow, session: SessionId, digest: string): EventMeta {
  return {
    id: Number(row.id) as EventId,
    session,
    prior: row.prior === undefined || row.prior === null ? null : (Number(row.prior) as EventId),
    depth: Number(row.depth),
    kind: row.kind,
    label: row.label ?? null,
    by: row.by ?? null,
    ts: Number(row.ts),
    digest,
  };
}

/**
 * A branch row as BranchInfo. A head that names no event (a pinned head whose event is gone, a
 * segment with no events) is damage: a `corrupt` error naming the session, branch and event.
 */
export function branchOf(session: SessionId, row: BranchRow): BranchInfo {
  let head: EventId;
  let headDepth: number;
  const name = row.name;
  if (row.head === null) {
    if (row.tip_id === null)
      throw new StoreError(
        "corrupt",
        `branch "${name}" of session ${session} follows segment ${row.segment}, which has no events: the database is damaged; run \`strata verify\` to list the damage`,
      );
    head = Number(row.tip_id) as EventId;
    headDepth = Number(row.tip_depth);
  } else {
    if (row.head_depth === null)
      throw new StoreError(
        "corrupt",
        `branch "${name}" of session ${session} points at event ${row.head}, which does not exist: the database is damaged; run \`strata verify\` to list the damage, and restore the file from a backup copy`,
      );
    head = Number(row.head) as EventId;
    headDepth = Number(row.head_depth);
  }
  return {
    session,
    name,
    head,
    headDepth,
    created: Number(row.created),
    origin: row.origin as BranchOrigin,
    pinned: row.head !== null,
    originEvent: row.origin_event === null ? null : (Number(row.origin_event) as EventId),
  };
}

/** The holder of a lease row, or undefined when the row is released (or absent). */
export function leaseOf(session: SessionId, branch: string, row: LeaseRow | undefined): LeaseInfo | undefined {
  if (row === undefined || row.owner === null) return undefined;
  return {
    session,
    branch,
    token: Number(row.token),
    owner: row.owner,
    acquired: Number(row.acquired),
    renewed: Number(row.renewed),
  };
}

/**
 * Listing reads the covering index, which has no `prior`: on a chain, an event's prior is the
 * event before it, so only the first one needs a lookup (`priorOf`).
 */
export function withPriors<T extends EventMeta>(list: T[], priorOf: (id: EventId) => EventId | null, reverse = false): T[] {
  const n = list.length;
  if (n === 0) return list;
  const out = list.map((e, i) => {
    const j = reverse ? i + 1 : i - 1;
    if (j >= 0 && j < n) return { ...e, prior: (list[j] as T).id };
    return e;
  });
  const edge = reverse ? n - 1 : 0;
  const first = out[edge] as T;
  if (first.prior === null && first.depth > 1) out[edge] = { ...first, prior: priorOf(first.id) };
  return out;
}
