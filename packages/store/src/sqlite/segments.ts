/**
 * Segments and the spans of a chain (ST-7). A segment's ancestry is read once (one recursive
 * query) and cached: segments never change once committed. The walk itself is `chainSpans`
 * (spans.ts), bounded on damaged files (ST-25).
 */
import { chainSpans, damaged, type Segment, type Span } from "../spans.ts";
import type { EventId, SessionId } from "../types.ts";
import type { Statements } from "./statements.ts";

export class Segments {
  readonly #cache = new Map<number, Segment>();

  constructor(
    private readonly st: Statements,
    /** Adds a cache entry undoably (a rolled-back transaction takes it back: ST-12). */
    private readonly remember: <K, V>(map: Map<K, V>, key: K, value: V) => void,
  ) {}

  segment(id: number): Segment {
    let s = this.#cache.get(id);
    if (s === undefined) {
      // Fetch the whole ancestry in one query (UNION: it ends on a cycle too).
      for (const r of this.st.segmentAncestry.all(id)) {
        const seg: Segment = {
          id: Number(r.id),
          session: r.session as SessionId,
          parent: r.parent === null ? null : Number(r.parent),
          forkDepth: Number(r.fork_depth),
        };
        this.remember(this.#cache, seg.id, seg);
      }
      s = this.#cache.get(id) ?? damaged(`segment ${id} is named by an event or branch but does not exist`);
    }
    return s;
  }

  /** The segment of an event; undefined when the event does not exist. */
  segmentOfEvent(id: EventId): number | undefined {
    const segment = this.st.eventSegment.get(id);
    return segment === undefined ? undefined : Number(segment);
  }

  /** The chain ending at (`segment`, `depth`), newest span first, cut at `afterDepth` (ST-7). */
  spans(segment: number, depth: number, afterDepth: number): Span[] {
    return chainSpans(this.segment(segment), depth, afterDepth, (id) => this.segment(id));
  }
}

export type { Segment, Span };
