/**
 * Reading events and chains on PostgreSQL (ST-7): an event's place (segment, depth), the spans of
 * its chain from the segment ancestry, and a chain read as one statement — one range read of
 * `events_chain` for a chain of one span, a lateral range read per span otherwise; blob-backed
 * payloads are fetched in one batch after. The places of events this process read or wrote are
 * remembered (an event never moves), so a fork's or a resume's reads skip the lookup's round trip.
 */
import type { EventId, EventMeta, SessionId, StoredEvent } from "@strata/store";
import { chainSpans, damaged, notFound, type Segment, type Span } from "@strata/store/backend";
import type { PgConnection } from "./connection.ts";
import { DATA_COLS, META_COLS, metaOf, payloadOf, type Row } from "./rows.ts";

/** Where an event is: its segment and depth, its digest and its session. */
export interface Place {
  readonly segment: number;
  readonly depth: number;
  readonly digest: Buffer;
  readonly session: SessionId;
}

/** Event places remembered at most (then forgotten all at once and read again as needed). */
const MAX_PLACES = 100_000;

export class PgChains {
  readonly #db: PgConnection;
  readonly #s: string;
  readonly #getBlobs: (hashes: readonly string[]) => Promise<Map<string, Buffer>>;
  /** Segment ancestry: immutable once committed; ids are never reused, so a rolled-back one is only unreachable. */
  readonly #segments = new Map<number, Segment>();
  /**
   * Where events are, as this process read or wrote them: an event never moves, so a chain or
   * snapshot read from a remembered place skips the lookup's round trip. The event may have been
   * removed (or its append rolled back) since: such a read also asks that the event still exists,
   * and when it finds nothing the place is looked up again (`not-found` if it is gone).
   */
  readonly #places = new Map<number, Place>();

  /** `s`: the schema, quoted; `getBlobs`: the backend's blob read (for blob-backed payloads). */
  constructor(db: PgConnection, s: string, getBlobs: (hashes: readonly string[]) => Promise<Map<string, Buffer>>) {
    this.#db = db;
    this.#s = s;
    this.#getBlobs = getBlobs;
  }

  /** The remembered place of event `id`, if any (a read from it must check that the event still exists). */
  known(id: EventId): Place | undefined {
    return this.#places.get(id);
  }

  /** Forgets every remembered place (after a removal in this process). */
  forget(): void {
    this.#places.clear();
  }

  async event(id: EventId): Promise<StoredEvent | undefined> {
    return (await this.events([id]))[0];
  }

  async eventMeta(id: EventId): Promise<EventMeta | undefined> {
    const s = this.#s;
    const row = await this.#db.one(
      `SELECT e.id, e.segment, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.digest, g.session FROM ${s}.events e JOIN ${s}.segments g ON g.id = e.segment WHERE e.id = $1`,
      [id],
    );
    if (row === undefined) {
      this.#places.delete(id);
      return undefined;
    }
    this.remember(id, {
      segment: Number(row.segment),
      depth: Number(row.depth),
      digest: row.digest as Buffer,
      session: row.session as SessionId,
    });
    return metaOf(row, row.session as SessionId);
  }

  async events(ids: readonly EventId[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const s = this.#s;
    const rows = await this.#db.q(
      `SELECT e.id, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.digest, e.blob, e.data, b.data AS bdata, g.session
       FROM ${s}.events e JOIN ${s}.segments g ON g.id = e.segment LEFT JOIN ${s}.blobs b ON b.hash = e.blob
       WHERE e.id = ANY($1::bigint[])`,
      [[...new Set(ids)]],
    );
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const out: StoredEvent[] = [];
    for (const id of ids) {
      const r = byId.get(id);
      if (r !== undefined) out.push({ ...metaOf(r, r.session as SessionId), data: payloadOf(r) });
    }
    return out;
  }

  async eventData(ids: readonly EventId[]): Promise<Map<EventId, string>> {
    const out = new Map<EventId, string>();
    if (ids.length === 0) return out;
    const s = this.#s;
    const rows = await this.#db.q(
      `SELECT e.id, e.blob, e.data, b.data AS bdata FROM ${s}.events e LEFT JOIN ${s}.blobs b ON b.hash = e.blob WHERE e.id = ANY($1::bigint[])`,
      [[...new Set(ids)]],
    );
    for (const r of rows) out.set(Number(r.id) as EventId, payloadOf(r));
    return out;
  }

  async chainData(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): Promise<string[]> {
    const [, rows] = await this.rows(head, afterDepth, limit, false, DATA_COLS);
    return (await this.withBlobs(rows)).map(payloadOf);
  }

  async chain(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): Promise<StoredEvent[]> {
    const [place, rows] = await this.rows(head, afterDepth, limit, false, `${META_COLS}, ${DATA_COLS}`);
    return (await this.withBlobs(rows)).map((r) => ({ ...metaOf(r, place.session), data: payloadOf(r) }));
  }

  async chainMeta(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER, reverse = false): Promise<EventMeta[]> {
    const [place, rows] = await this.rows(head, afterDepth, limit, reverse, META_COLS);
    return rows.map((r) => metaOf(r, place.session));
  }

  /**
   * The rows of `head`'s chain after `afterDepth` — oldest first (or newest first), at most
   * `limit` — with `columns` of the events (no payload unless asked: a listing is read from the
   * index). A chain of one span is one range read of `events_chain`; a longer one is one statement
   * over all its spans, a lateral range read each.
   */
  async rows(head: EventId, afterDepth: number, limit: number, reverse: boolean, columns: string): Promise<[Place, Row[]]> {
    const known = this.#places.get(head);
    const place = known ?? (await this.placeOf(head)) ?? notFound(`event ${head}`);
    let spans = await this.spans(place.segment, place.depth, afterDepth);
    if (spans.length === 0 || limit <= 0) return [known === undefined ? place : await this.stillThere(head), []];
    if (!reverse) spans = spans.reverse();
    const s = this.#s;
    const dir = reverse ? "DESC" : "ASC";
    const cap = Math.min(limit, Number.MAX_SAFE_INTEGER);
    // From a remembered place, rows only while the head still exists (a removed head's segment may keep rows a live branch reaches).
    const there = known === undefined ? "" : ` AND EXISTS (SELECT 1 FROM ${s}.events WHERE id = $5)`;
    const guard = known === undefined ? [] : [head];
    let rows: Row[];
    if (spans.length === 1) {
      const only = spans[0] as Span;
      rows = await this.#db.q(
        `SELECT ${columns} FROM ${s}.events WHERE segment = $1 AND depth > $2 AND depth <= $3${there} ORDER BY depth ${dir} LIMIT $4`,
        [only.segment, Math.max(only.from, afterDepth), only.to, cap, ...guard],
      );
    } else
      rows = await this.#db.q(
        `SELECT e.* FROM unnest($1::bigint[], $2::int[], $3::int[]) WITH ORDINALITY AS s(seg, lo, hi, ord)
         CROSS JOIN LATERAL (SELECT depth AS at_depth, ${columns} FROM ${s}.events WHERE segment = s.seg AND depth > s.lo AND depth <= s.hi ORDER BY depth ${dir} LIMIT $4) e
         WHERE true${there} ORDER BY s.ord, e.at_depth ${dir} LIMIT $4`,
        [spans.map((x) => x.segment), spans.map((x) => Math.max(x.from, afterDepth)), spans.map((x) => x.to), cap, ...guard],
      );
    if (rows.length === 0 && known !== undefined) await this.stillThere(head);
    return [place, rows];
  }

  /** Rows with their blob-backed payloads filled in (`bdata`), read in one statement when there are any. */
  async withBlobs(rows: Row[]): Promise<Row[]> {
    const hashes = rows.filter((r) => r.blob !== null).map((r) => (r.blob as Buffer).toString("hex"));
    if (hashes.length === 0) return rows;
    const found = await this.#getBlobs(hashes);
    for (const r of rows) if (r.blob !== null) r.bdata = found.get((r.blob as Buffer).toString("hex")) ?? null;
    return rows;
  }

  async firstLabeled(head: EventId, label: string, afterDepth = 0): Promise<EventMeta | undefined> {
    const place = (await this.placeOf(head)) ?? notFound(`event ${head}`);
    const spans = (await this.spans(place.segment, place.depth, afterDepth)).reverse();
    if (spans.length === 0) return undefined;
    const s = this.#s;
    const row = await this.#db.one(
      `SELECT e.id, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.digest FROM unnest($1::bigint[], $2::int[], $3::int[]) WITH ORDINALITY AS s(seg, lo, hi, ord)
       CROSS JOIN LATERAL (SELECT id, depth, prior, kind, label, by, ts, digest FROM ${s}.events WHERE segment = s.seg AND depth > s.lo AND depth <= s.hi AND label = $4 ORDER BY depth LIMIT 1) e
       ORDER BY s.ord LIMIT 1`,
      [spans.map((x) => x.segment), spans.map((x) => Math.max(x.from, afterDepth)), spans.map((x) => x.to), label],
    );
    return row === undefined ? undefined : metaOf(row, place.session);
  }

  async isAncestor(ancestor: EventId, descendant: EventId): Promise<boolean> {
    const a = await this.placeOf(ancestor);
    const d = await this.placeOf(descendant);
    if (a === undefined || d === undefined || a.session !== d.session || a.depth > d.depth) return false;
    return (await this.spans(d.segment, d.depth, 0)).some((s) => s.segment === a.segment && a.depth > s.from && a.depth <= s.to);
  }

  async atDepth(head: EventId, depth: number): Promise<EventMeta | undefined> {
    const h = await this.placeOf(head);
    if (h === undefined || depth < 1 || depth > h.depth) return undefined;
    const span = (await this.spans(h.segment, h.depth, 0)).find((s) => depth > s.from && depth <= s.to);
    if (span === undefined) return undefined;
    const row = await this.#db.one(
      `SELECT id, depth, prior, kind, label, by, ts, digest FROM ${this.#s}.events WHERE segment = $1 AND depth = $2`,
      [span.segment, depth],
    );
    return row === undefined ? undefined : metaOf(row, h.session);
  }

  /** Where event `id` is — its segment, depth and session — or undefined when it does not exist (always asked of the database). */
  async placeOf(id: EventId): Promise<Place | undefined> {
    const s = this.#s;
    const row = await this.#db.one(
      `SELECT e.segment, e.depth, e.digest, g.session FROM ${s}.events e JOIN ${s}.segments g ON g.id = e.segment WHERE e.id = $1`,
      [id],
    );
    if (row === undefined) {
      this.#places.delete(id);
      return undefined;
    }
    const place = {
      segment: Number(row.segment),
      depth: Number(row.depth),
      session: row.session as SessionId,
      digest: row.digest as Buffer,
    };
    this.remember(id, place);
    return place;
  }

  /** The place of event `id`, looked up again after a read from its remembered place found nothing: `not-found` if it is gone. */
  async stillThere(id: EventId): Promise<Place> {
    this.#places.delete(id);
    return (await this.placeOf(id)) ?? notFound(`event ${id}`);
  }

  remember(id: EventId, place: Place): void {
    if (this.#places.size >= MAX_PLACES) this.#places.clear();
    this.#places.set(id, place);
  }

  /** The spans of the chain ending at depth `depth` of `segment`, newest first, after `afterDepth` (ST-7). */
  async spans(segment: number, depth: number, afterDepth: number): Promise<Span[]> {
    if (!this.#segments.has(segment)) {
      // The whole ancestry in one query (UNION: it ends on a cycle too).
      const s = this.#s;
      const rows = await this.#db.q(
        `WITH RECURSIVE a(id) AS (SELECT $1::bigint UNION SELECT g.parent FROM ${s}.segments g JOIN a ON g.id = a.id WHERE g.parent IS NOT NULL)
         SELECT g.id, g.session, g.parent, g.fork_depth FROM ${s}.segments g JOIN a ON g.id = a.id`,
        [segment],
      );
      for (const r of rows)
        this.#segments.set(Number(r.id), {
          id: Number(r.id),
          session: r.session as SessionId,
          parent: r.parent === null ? null : Number(r.parent),
          forkDepth: Number(r.fork_depth),
        });
    }
    const seg = (id: number): Segment =>
      this.#segments.get(id) ?? damaged(`segment ${id} is named by an event or branch but does not exist`);
    return chainSpans(seg(segment), depth, afterDepth, seg);
  }
}
