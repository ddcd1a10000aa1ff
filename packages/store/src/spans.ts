/**
 * The spans of a chain (ST-7), for every backend: a chain is a list of (segment, depth range)
 * pieces, found by walking from the head's segment to its parents. Every walk is bounded (ST-25):
 * each step goes to a strictly smaller depth, so damaged data — a cycle of parents, a parent of
 * another session, a fork depth past the child's events — is a `corrupt` error naming the
 * segment, never a loop.
 */
import { StoreError } from "./errors.ts";
import type { SessionId } from "./types.ts";

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

export const damaged = (what: string): never => {
  throw new StoreError("corrupt", `the database is damaged: ${what}; run \`strata verify\` to list the damage`);
};

/**
 * The chain ending at depth `depth` of segment `start`, newest span first, cut at `afterDepth`;
 * `segment(id)` gives a segment the walk reaches (its ancestry, already read).
 */
export function chainSpans(start: Segment, depth: number, afterDepth: number, segment: (id: number) => Segment): Span[] {
  const out: Span[] = [];
  let seg = start;
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
    const parent = segment(seg.parent);
    if (parent.session !== seg.session)
      damaged(`segment ${seg.id} of session ${seg.session} has parent ${parent.id} of session ${parent.session}`);
    seg = parent;
  }
  return out;
}
