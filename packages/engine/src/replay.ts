/**
 * The replay proof (EN-31): re-materialize a branch from genesis with no snapshot and compare its
 * canonical records with every snapshot on the chain and with the head as `Session.open` builds it
 * (snapshot + tail). Reports the first event where they differ. Pages are compared only where the
 * replay or the stored snapshot changed since the previous comparison, so the cost follows the log.
 * Over the asynchronous port (PostgreSQL) the replay keeps its state at each snapshot on the chain
 * and compares them after the fold, in the same order, each stored snapshot fetched whole
 * (decision 0038). The proof is written once, as steps, for both ports.
 */
import { encodePage, LazyPage, type Page, type Tree } from "@strata/dom";
import { drive, type EventId, type EventMeta, isAsyncStore, type SessionId, type SnapshotRecord, value } from "@strata/store";
import { EngineError } from "./errors.ts";
import { materializeSteps } from "./materialize.ts";
import type { Answer, Port } from "./port.ts";
import { loadSnapshotSteps, loadTreeSteps } from "./snapshots.ts";
import { TextIndex, TextResolver } from "./texts.ts";
import { compareLive } from "./verify.ts";

export interface ReplayReport {
  readonly ok: boolean;
  readonly branch: string;
  readonly head: EventId;
  /** Events replayed from genesis. */
  readonly events: number;
  /** Snapshots on the chain compared with the replay. */
  readonly snapshots: number;
  /** The first disagreement, if any. */
  readonly mismatch?: { readonly event: EventId; readonly reason: string };
}

export interface ReplayOptions {
  readonly branch?: string;
  readonly progress?: (done: number, total: number) => void;
}

/** The replay proof of `session`'s branch (see the module's comment); a promise of it over the asynchronous port. */
export function replayVerify<P extends Port>(store: P, session: SessionId, options: ReplayOptions = {}): Answer<P, ReplayReport> {
  return drive(replaySteps(store, session, options)) as Answer<P, ReplayReport>;
}

/** A state of the replay where the chain has a snapshot, and that snapshot. */
interface AtSnapshot {
  readonly snap: SnapshotRecord;
  readonly tree: Tree;
  readonly live: ReadonlySet<number>;
}

/** What the last comparison compared: its pages are not compared again where neither side changed. */
type Compared = { replay: Map<number, Page>; stored: Map<number, string> } | undefined;

/**
 * The proof as steps, on either port. Over SQLite each snapshot is compared when the fold reaches
 * it; over the asynchronous port (where a stored snapshot is fetched, which a fold cannot wait for)
 * the fold keeps its state at each snapshot and they are compared after it, in the same order.
 */
function* replaySteps(store: Port, session: SessionId, options: ReplayOptions): Generator<unknown, ReplayReport, unknown> {
  const branch = options.branch ?? "main";
  const b = yield* value(store.branch(session, branch));
  if (b === undefined) throw new EngineError("not-found", `session ${session} has no branch "${branch}"`);
  const snapshotsOnChain = new Map<number, SnapshotRecord>();
  // The snapshots of this chain: walk back from the head through nearest snapshots.
  for (let e: EventId | null = b.head; e !== null; ) {
    const s: SnapshotRecord | undefined = yield* value(store.nearestSnapshot(e));
    if (s === undefined) break;
    snapshotsOnChain.set(s.event, s);
    e = (yield* value(store.eventMeta(s.event)))?.prior ?? null;
  }
  const inline = !isAsyncStore(store);
  let mismatch: { event: EventId; reason: string } | undefined;
  let compared = 0;
  let previous: Compared;
  const later: AtSnapshot[] = [];
  const compare = function* (at: AtSnapshot): Generator<unknown, void, unknown> {
    compared++;
    const r = yield* snapshotSteps(store, at, previous);
    previous = r.compared;
    if (r.reason !== undefined) mismatch = { event: at.snap.event, reason: r.reason };
  };
  const total = b.headDepth;
  let depth = 0;
  let replayed: { tree: Tree; live: ReadonlySet<number> } | undefined;
  try {
    const v = yield* materializeSteps(store, b.head, {
      fromGenesis: true,
      onEvent: (tree, event, done, live) => {
        depth = done;
        if (done % 5000 === 0) options.progress?.(done, total);
        if (mismatch !== undefined) return;
        const snap = snapshotsOnChain.get(event);
        if (snap === undefined) return;
        // Over SQLite the steps run at once: nothing is kept but the last comparison's pages.
        if (inline) drive(compare({ snap, tree, live }));
        else later.push({ snap, tree, live: new Set(live) });
      },
    });
    replayed = { tree: v.tree, live: v.live };
  } catch (e) {
    // An event that does not decode or apply (or cannot be read) is the first place replay fails.
    const event = (yield* firstUnreadableSteps(store, b.head, depth)) ?? (yield* value(store.atDepth(b.head, depth + 1)))?.id ?? b.head;
    if (mismatch === undefined || mismatch.event > event)
      mismatch = { event, reason: `replay from genesis fails here: ${(e as Error)?.message ?? String(e)}` };
  }
  for (const at of later) {
    if (mismatch !== undefined) break;
    yield* compare(at);
  }
  if (mismatch === undefined && replayed !== undefined) {
    // The head as a reopen builds it: nearest snapshot plus the tail.
    try {
      const opened = yield* materializeSteps(store, b.head);
      if (!inline) yield* loadTreeSteps(opened.tree);
      let reason = compareTrees(replayed.tree, opened.tree, undefined);
      if (reason === undefined) {
        const l = compareLive(opened.live, replayed.live);
        if (l !== undefined) reason = `its lifecycle set differs: ${l}`;
      }
      if (reason !== undefined) mismatch = { event: b.head, reason: `the head built from snapshot + tail differs: ${reason}` };
    } catch (e) {
      mismatch = { event: b.head, reason: `the head cannot be built from snapshot + tail: ${(e as Error)?.message ?? String(e)}` };
    }
  }
  options.progress?.(total, total);
  return { ok: mismatch === undefined, branch, head: b.head, events: total, snapshots: compared, mismatch };
}

/** Why the stored snapshot differs from the replay's state there (or undefined), and what was compared. */
function* snapshotSteps(
  store: Port,
  at: AtSnapshot,
  previous: Compared,
): Generator<unknown, { reason?: string; compared: Compared }, unknown> {
  try {
    const stored = yield* loadSnapshotSteps(store, at.snap, new TextIndex(), new TextResolver(store));
    if (isAsyncStore(store)) yield* loadTreeSteps(stored.tree);
    let reason = compareTrees(at.tree, stored.tree, previous);
    if (reason === undefined && stored.live !== undefined) {
      const l = compareLive(stored.live, at.live);
      if (l !== undefined) reason = `its lifecycle set (header "live") differs: ${l}`;
    }
    return { ...(reason === undefined ? {} : { reason }), compared: { replay: pagesOf(at.tree), stored: refsOf(stored.tree) } };
  } catch (e) {
    return { reason: `the stored snapshot cannot be read: ${(e as Error)?.message ?? String(e)}`, compared: previous };
  }
}

/** The first event after `depth` on `head`'s chain whose payload cannot be read (replay reads them in batches). */
function* firstUnreadableSteps(store: Port, head: EventId, depth: number): Generator<unknown, EventId | undefined, unknown> {
  let metas: EventMeta[];
  try {
    metas = yield* value(store.chainMeta(head, depth, 2000));
  } catch {
    return undefined; // the index itself cannot be read: report where replay stopped
  }
  for (const m of metas)
    try {
      yield* value(store.event(m.id));
    } catch {
      return m.id;
    }
  return undefined;
}

function pagesOf(tree: Tree): Map<number, Page> {
  const out = new Map<number, Page>();
  for (const [i, slot] of tree.slotEntries()) if (!(slot instanceof LazyPage)) out.set(i, slot);
  return out;
}

function refsOf(tree: Tree): Map<number, string> {
  const out = new Map<number, string>();
  for (const [i, slot] of tree.slotEntries()) if (slot instanceof LazyPage) out.set(i, slot.ref);
  return out;
}

/** Why two versions differ, comparing only pages that changed since `previous` (both sides). */
function compareTrees(
  replay: Tree,
  stored: Tree,
  previous: { replay: Map<number, Page>; stored: Map<number, string> } | undefined,
): string | undefined {
  if (
    replay.hwm !== stored.hwm ||
    replay.size !== stored.size ||
    replay.rootId !== stored.rootId ||
    replay.fixed.join() !== stored.fixed.join()
  )
    return `header differs (hwm ${replay.hwm} vs ${stored.hwm}, size ${replay.size} vs ${stored.size})`;
  const a = new Map(replay.slotEntries());
  const b = new Map(stored.slotEntries());
  for (const i of new Set([...a.keys(), ...b.keys()])) {
    const sa = a.get(i);
    const sb = b.get(i);
    if (sa === undefined || sb === undefined) return `page ${i} exists on one side only`;
    const unchanged =
      previous !== undefined && previous.replay.get(i) === sa && sb instanceof LazyPage && previous.stored.get(i) === sb.ref;
    if (unchanged) continue;
    const pa = sa instanceof LazyPage ? sa.page : sa;
    const pb = sb instanceof LazyPage ? sb.page : sb;
    if (encodePage(pa) !== encodePage(pb)) return `page ${i} differs`;
  }
  return undefined;
}
