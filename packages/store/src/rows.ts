/**
 * Rows to values: sessions, event metadata, leases, as the store returns them (types.ts). Pure
 * functions over rows the statements (statements.ts) read.
 */
import { StoreError } from "./errors.ts";
import type { EventId, EventMeta, LeaseInfo, SessionId, SessionInfo } from "./types.ts";

export type Row = Record<string, unknown>;

/** The key of a branch in the store's per-branch caches. */
export function tipKey(session: SessionId, branch: string): string {
  return `${session}\u0000${branch}`;
}

export function sessionOf(row: Row): SessionInfo {
  let metadata: Record<string, unknown>;
  try {
    metadata = JSON.parse(row.metadata as string);
  } catch {
    throw new StoreError("corrupt", `session ${row.id} has unreadable metadata; run \`strata verify\` and restore the file from a copy`);
  }
  return { id: row.id as SessionId, title: (row.title as string | null) ?? null, created: Number(row.created), metadata };
}

/** Hex of a stored digest (a 32-byte blob; anything else is shown as it is, for verify to report). */
export function hexOf(digest: unknown): string {
  return Buffer.isBuffer(digest) ? digest.toString("hex") : String(digest);
}

export function metaOf(row: Row, session: SessionId, digest: string): EventMeta {
  return {
    id: Number(row.id) as EventId,
    session,
    prior: row.prior === undefined || row.prior === null ? null : (Number(row.prior) as EventId),
    depth: Number(row.depth),
    kind: row.kind as string,
    label: (row.label as string | null) ?? null,
    by: (row.by as string | null) ?? null,
    ts: Number(row.ts),
    digest,
  };
}

/** The holder of a lease row, or undefined when the row is released (or absent). */
export function leaseOf(session: SessionId, branch: string, row: Row | undefined): LeaseInfo | undefined {
  if (row === undefined || row.owner === null) return undefined;
  return {
    session,
    branch,
    token: Number(row.token),
    owner: row.owner as string,
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
