/**
 * Rows of the PostgreSQL schema as the store's values: the column lists the reads select, the
 * branch row with its head, and the mappings from rows to events and payloads.
 */
import type { EventId, EventMeta, SessionId } from "@strata/store";
import { StoreError } from "@strata/store";
import type { QueryResultRow } from "pg";

export type Row = QueryResultRow;

export const tipKey = (session: SessionId, branch: string) => `${session}\u0000${branch}`;

/** An event's metadata columns (all in `events_chain`: a listing is an index-only read). */
export const META_COLS = "id, depth, prior, kind, label, by, ts, digest";
/** An event's payload columns: inline data, or the hash of the blob that holds it. */
export const DATA_COLS = "blob, data";

/** The columns of a branch row with its head (branchOf's BranchRow); `b` is the branch. */
export const branchCols = (
  s: string,
) => `b.name, b.segment, b.head, b.created, b.origin, b.origin_event, t.id AS tip_id, t.depth AS tip_depth,
  (SELECT depth FROM ${s}.events WHERE id = b.head) AS head_depth
  FROM ${s}.branches b LEFT JOIN LATERAL (SELECT id, depth FROM ${s}.events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1) t ON true`;

/** An event row's metadata (`digest` is bytea). */
export function metaOf(r: Row, session: SessionId): EventMeta {
  return {
    id: Number(r.id) as EventId,
    session,
    prior: r.prior === null ? null : (Number(r.prior) as EventId),
    depth: Number(r.depth),
    kind: r.kind,
    label: r.label ?? null,
    by: r.by ?? null,
    ts: Number(r.ts),
    digest: (r.digest as Buffer).toString("hex"),
  };
}

/** A row's payload: inline, or the joined blob's bytes (`bdata`); a missing blob is damage. */
export function payloadOf(r: Row): string {
  if (r.blob === null) return r.data;
  if (r.bdata === null || r.bdata === undefined)
    throw new StoreError(
      "corrupt",
      `event ${r.id ?? ""} refers to missing blob ${(r.blob as Buffer).toString("hex")}; run \`strata verify\``,
    );
  return (r.bdata as Buffer).toString("utf8");
}
