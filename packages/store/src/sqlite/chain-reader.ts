/**
 * Reading a chain (ST-7): one range read per span of the chain, whatever the file holds besides.
 * The span's first and last rows come from the index; if the ids between them are (nearly) all
 * the span's own — a line appended alone, the usual case and the long-resume path — the span is
 * read as a rowid range, otherwise through the (segment, depth) index, so the cost is the span's
 * own rows however many other sessions' or lines' rows are interleaved with it.
 */
import type { EventId, EventMeta, SessionId, StoredEvent } from "../types.ts";
import type { Span } from "./segments.ts";
import type { DepthRange, IdRange, MetaRow, Statements } from "./statements.ts";

/**
 * A span's events are read as a rowid range when the ids between its first and last event hold
 * at most this many rows per event of the span (other sessions' rows interleaved); otherwise
 * through the (segment, depth) index (ST-7).
 */
const ROWID_SPREAD = 2;

/** What rows become: the store's own mappings (blob-backed payloads, legacy digests). */
export interface RowMapping {
  blobText(hash: Buffer, event: number): string;
  meta(row: MetaRow, session: SessionId): EventMeta;
  digest(raw: unknown, id: EventId): string;
}

/** One span's read: a rowid range, or (segment, depth) bounds. */
type SpanRead = [contiguous: true, args: IdRange] | [contiguous: false, args: DepthRange];

export class ChainReader {
  constructor(
    private readonly st: Statements,
    private readonly spans: (head: EventId, depth: number, afterDepth: number) => Span[],
    private readonly map: RowMapping,
  ) {}

  /** The payloads of `head`'s chain after `afterDepth`, oldest first, at most `limit`. */
  data(head: EventId, meta: EventMeta, afterDepth: number, limit: number): string[] {
    const out: string[] = [];
    this.#read(meta, afterDepth, limit, (contiguous, args) => {
      const found = contiguous ? this.st.chainDataRange.all(...args) : this.st.chainDataDepths.all(...args);
      if (found.includes(null)) {
        // blob-backed payloads read as null (an inline payload may be ""): their refs come in the same order
        const refs = contiguous ? this.st.chainBlobsRange.all(...args) : this.st.chainBlobsDepths.all(...args);
        let k = 0;
        for (let i = 0; i < found.length; i++) if (found[i] === null) found[i] = this.map.blobText(refs[k++] as Buffer, head);
      }
      for (const d of found) out.push(d as string);
      return found.length;
    });
    return out;
  }

  /** The events (with payloads) of `meta`'s chain after `afterDepth`, oldest first, at most `limit`. */
  events(meta: EventMeta, afterDepth: number, limit: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    this.#read(meta, afterDepth, limit, (contiguous, args) => {
      const found = contiguous ? this.st.chainRange.all(...args) : this.st.chainDepths.all(...args);
      // Indexed reads of the raw rows (no destructuring: this loop is the long-resume path).
      for (const r of found) {
        const blob = r[8];
        out.push({
          id: r[0] as EventId,
          session: meta.session,
          prior: (r[2] as EventId | null) ?? null,
          depth: r[1],
          kind: r[3],
          label: r[4] ?? null,
          by: r[5] ?? null,
          ts: r[6],
          digest: this.map.digest(r[7], r[0] as EventId),
          data: blob === null ? r[9] : this.map.blobText(blob, r[0]),
        });
      }
      return found.length;
    });
    return out;
  }

  /** Metadata of `meta`'s chain from the covering index (no payloads), without priors past the first (see withPriors). */
  metas(meta: EventMeta, afterDepth: number, limit: number, reverse: boolean): EventMeta[] {
    limit = Math.min(limit, Number.MAX_SAFE_INTEGER);
    const spans = this.spans(meta.id, meta.depth, afterDepth);
    const out: EventMeta[] = [];
    const st = reverse ? this.st.listRangeDesc : this.st.listRange;
    for (const span of reverse ? spans : spans.reverse()) {
      if (out.length >= limit) break;
      for (const r of st.all(span.segment, Math.max(span.from, afterDepth), span.to, limit - out.length))
        out.push(this.map.meta(r, meta.session));
    }
    return out;
  }

  /**
   * One range read per span after `afterDepth`, at most `limit` rows: `read` gets a rowid range
   * `[lo, hi, segment, room]` or `(segment, depth)` bounds `[segment, from, to, room]` and
   * returns how many rows it read.
   */
  #read(meta: EventMeta, afterDepth: number, limit: number, read: (...range: SpanRead) => number): void {
    let left = Math.min(limit, Number.MAX_SAFE_INTEGER);
    for (const span of this.spans(meta.id, meta.depth, afterDepth).reverse()) {
      if (left <= 0) break;
      const from = Math.max(span.from, afterDepth);
      const to = Math.min(span.to, from + left);
      const lo = this.st.firstAfter.get(span.segment, from);
      const hi = this.st.lastUpTo.get(span.segment, to);
      if (lo === undefined || hi === undefined || hi[1] < lo[1]) continue;
      const contiguous = hi[0] - lo[0] + 1 <= ROWID_SPREAD * (hi[1] - lo[1] + 1);
      left -= contiguous ? read(true, [lo[0], hi[0], span.segment, left]) : read(false, [span.segment, from, to, left]);
    }
  }
}
