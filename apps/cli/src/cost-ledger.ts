/**
 * The usage of every branch of a session with each event counted once (CLI-45). Events form a
 * tree by their priors; a branch is the chain from genesis to its head. Branches are taken in
 * order — the session's first branch, then by creation — and each one reads only the part of its
 * chain no branch before it reached: the events after the deepest event already read (its
 * `forkedAt`, found by a binary search over depths with `atDepth`: what was read is a union of
 * chains, so on any chain it is a prefix). Those are its own events; everything up to `forkedAt`
 * it inherits, and that sum is known from the line that read `forkedAt` (its inheritance plus a
 * prefix of its own). So every payload is read once, on either port, whatever the branches share,
 * and the session's distinct total is the sum of the branches' own parts.
 */
import type { Port } from "@strata/engine";
import { EngineError } from "@strata/engine";
import type { BranchInfo, EventId, SessionId } from "@strata/store";
import { CliError } from "./errors.ts";
import { addModels, type ByModel, copyModels, UsageFold } from "./usage.ts";

/** One branch's usage: what it inherits from its fork point and what its own events add. */
export interface BranchUsage {
  readonly branch: BranchInfo;
  /** The last event of its chain that a branch before it holds; null for the first branch. */
  readonly forkedAt: EventId | null;
  readonly inherited: ByModel;
  readonly own: ByModel;
}

export interface Ledger {
  /** In reading order: the first branch, then by creation. */
  readonly branches: readonly BranchUsage[];
  /** Every event of the session once. */
  readonly distinct: ByModel;
  /** Events read (each once). */
  readonly eventCount: number;
}

/** Events one `chain` read brings (bounded memory on a long session). */
const PAGE = 5000;

interface Seen {
  readonly line: number;
  readonly depth: number;
  /** The tree's high-water mark after the event: the next event's first minted id is one above. */
  readonly hwm: number;
}

interface Line {
  readonly inherited: ByModel;
  readonly own: ByModel;
  /** Depths of the line's events that changed its usage, ascending, and its own sum after each. */
  readonly depths: number[];
  readonly sums: ByModel[];
}

/** The branches in reading order: the session's first line, then by creation (then name). */
function readingOrder(branches: readonly BranchInfo[]): BranchInfo[] {
  const rank = (b: BranchInfo): number => (b.origin === "genesis" ? 0 : 1);
  return [...branches].sort((a, b) => rank(a) - rank(b) || a.created - b.created || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Reads the usage of every branch of `session` (see the module's comment). */
export async function ledgerOf(store: Port, session: SessionId): Promise<Ledger> {
  const branches = readingOrder(await store.branches(session));
  const seen = new Map<number, Seen>();
  const lines: Line[] = [];
  const fold = new UsageFold();
  const out: BranchUsage[] = [];
  const distinct: ByModel = new Map();
  for (const branch of branches) {
    const shared = await sharedDepth(store, branch, seen);
    const base = shared.depth === 0 ? undefined : (seen.get(shared.event as number) as Seen);
    const line: Line = {
      inherited: base === undefined ? new Map() : sumAt(lines, base),
      own: new Map(),
      depths: [],
      sums: [],
    };
    const index = lines.push(line) - 1;
    let after = shared.depth;
    let hwm = base?.hwm;
    while (after < branch.headDepth) {
      const page = await store.chain(branch.head, after, PAGE);
      if (page.length === 0) throw damaged(store, session, `the chain of branch "${branch.name}" ends at depth ${after}`);
      for (const e of page) {
        if (e.depth !== after + 1)
          throw damaged(store, session, `the chain of branch "${branch.name}" skips from depth ${after} to ${e.depth}`);
        let folded: ReturnType<UsageFold["event"]>;
        try {
          folded = fold.event(e, hwm);
        } catch (err) {
          if (err instanceof EngineError) throw damaged(store, session, err.message);
          throw err;
        }
        hwm = folded.hwm;
        seen.set(e.id, { line: index, depth: e.depth, hwm });
        if (folded.delta !== undefined) {
          addModels(line.own, folded.delta);
          line.depths.push(e.depth);
          line.sums.push(copyModels(line.own));
        }
        after = e.depth;
      }
    }
    addModels(distinct, line.own);
    out.push({ branch, forkedAt: shared.depth === 0 ? null : (shared.event as EventId), inherited: line.inherited, own: line.own });
  }
  return { branches: out, distinct, eventCount: seen.size };
}

/** The usage of the chain that ends at an event already read: its line's inheritance plus its line's own sum up to it. */
function sumAt(lines: readonly Line[], at: Seen): ByModel {
  const line = lines[at.line] as Line;
  const total = copyModels(line.inherited);
  // The last change at or before the event's depth.
  let lo = 0;
  let hi = line.depths.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((line.depths[mid] as number) <= at.depth) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0) addModels(total, line.sums[lo - 1] as ByModel);
  return total;
}

/**
 * The deepest event of `branch`'s chain that was read already, and its depth (0: none). Its fork
 * point answers in two lookups when it is the one; otherwise a binary search, O(log depth) lookups.
 */
async function sharedDepth(
  store: Port,
  branch: BranchInfo,
  seen: ReadonlyMap<number, Seen>,
): Promise<{ depth: number; event: EventId | undefined }> {
  if (seen.size === 0) return { depth: 0, event: undefined };
  if (seen.has(branch.head)) return { depth: branch.headDepth, event: branch.head };
  const at = async (depth: number): Promise<EventId> => {
    const e = await store.atDepth(branch.head, depth);
    if (e === undefined) throw damaged(store, branch.session, `branch "${branch.name}" has no event at depth ${depth}`);
    return e.id;
  };
  const origin = branch.originEvent === null ? undefined : seen.get(branch.originEvent);
  if (origin !== undefined && origin.depth < branch.headDepth && (await at(origin.depth)) === branch.originEvent) {
    if (!seen.has(await at(origin.depth + 1))) return { depth: origin.depth, event: branch.originEvent as EventId };
  }
  // Depth `lo` was read (genesis is every branch's), depth `hi` not (the head was not).
  let lo = 1;
  let loEvent = await at(1);
  if (!seen.has(loEvent)) throw damaged(store, branch.session, `branch "${branch.name}" does not start at the session's genesis event`);
  let hi = branch.headDepth;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const e = await at(mid);
    if (seen.has(e)) {
      lo = mid;
      loEvent = e;
    } else hi = mid;
  }
  return { depth: lo, event: loEvent };
}

function damaged(store: Port, session: SessionId, what: string): CliError {
  return new CliError(`the database ${store.path} is damaged: session ${session}: ${what}; \`strata verify\` lists the damage`);
}
