/**
 * Segments and the spans of a chain (ST-7). A segment's ancestry is read once (one recursive
 * query) and cached: segments never change once committed. Every walk over parents is bounded
 * (ST-25): on a chain each step goes to a strictly smaller depth, so a damaged file — a cycle of
 * parents, a parent of another session, a fork depth past the child's events — is a `corrupt`
 * error naming the segment, never a loop.
 */
import { StoreError } from "../errors.ts";
import type { EventId, SessionId } from "../types.ts";
import type { Statements } from "./statements.ts";

export interface Segment {
  readonly id: number;
  readonly session: SessionId;
  readonly parent: number | null;
  readonly forkDepth: number;
}

/** One piece of a chain: depths in (`from`, `to`] of `segment`. */
export interface Span {
  readonly segment: number;
  readonly from: number;
  readonly to: number;
}

const damaged = (what: string): never => {
  throw new StoreError("corrupt", `the database is damaged: ${what}; run \`strata verify\` to list the damage`);
};

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
    const out: Span[] = [];
    let seg = this.segment(segment);
    let to = depth;
    while (to > afterDepth) {
      if (seg.forkDepth >= to)
        damaged(
          out.length === 0
            ? `an event at depth ${to} lies in segment ${seg.id}, which starts after depth ${seg.forkDepth}`
            : `segment ${out[out.length - 1]?.segment} forks at depth ${to} from segment ${seg.id}, which starts after depth ${seg.forkDepth} (its parents may form a cycle)`,
        );
      out.push({ segment: seg.id, from: seg.forkDepth, to });
      to = seg.forkDepth;
      if (seg.parent === null) {
        if (to !== 0) damaged(`root segment ${seg.id} starts after depth ${to}, not at the beginning of its chain`);
        break;
      }
      const parent = this.segment(seg.parent);
      if (parent.session !== seg.session)
        damaged(`segment ${seg.id} of session ${seg.session} has parent ${parent.id} of session ${parent.session}`);
      seg = parent;
    }
    return out;
  }
}
