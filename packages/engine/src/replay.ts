/**
 * The replay proof (EN-31): re-materialize a branch from genesis with no snapshot and compare its
 * canonical records with every snapshot on the chain and with the head as `Session.open` builds it
 * (snapshot + tail). Reports the first event where they differ. Pages are compared only where the
 * replay or the stored snapshot changed since the previous comparison, so the cost follows the log.
 * Over the asynchronous port (PostgreSQL) the replay keeps its state at each snapshot on the chain
 * and compares them after the fold, each stored snapshot fetched whole (decision 0038).
 */
import { encodePage, LazyPage, type Page, type Tree } from "@strata/dom";
import { type AsyncStore, drive, type EventId, isAsyncStore, type SessionId, type SnapshotRecord, type Store } from "@strata/store";
import { EngineError } from "./errors.ts";
import { materializeVersion } from "./materialize.ts";
import type { Answer, Port } from "./port.ts";
import { loadSnapshotSteps, loadSnapshotVersion, loadTree } from "./snapshots.ts";
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
  if (isAsyncStore(store)) return replayVerifyAsync(store, session, options) as Answer<P, ReplayReport>;
  return replayVerifySync(store as Store, session, options) as Answer<P, ReplayReport>;
}

function replayVerifySync(store: Store, session: SessionId, options: ReplayOptions): ReplayReport {
  const branch = options.branch ?? "main";
  const b = store.branch(session, branch);
  if (b === undefined) throw new EngineError("not-found", `session ${session} has no branch "${branch}"`);
  const snapshotsOnChain = new Map<number, SnapshotRecord>();
  // The snapshots of this chain: walk back from the head through nearest snapshots.
  for (let e: EventId | null = b.head; e !== null; ) {
    const s = store.nearestSnapshot(e);
    if (s === undefined) break;
    snapshotsOnChain.set(s.event, s);
    e = store.eventMeta(s.event)?.prior ?? null;
  }
  let mismatch: { event: EventId; reason: string } | undefined;
  let compared = 0;
  let previous: { replay: Map<number, Page>; stored: Map<number, string> } | undefined;
  const total = b.headDepth;
  let depth = 0;
  let replayed: { tree: Tree; live: ReadonlySet<number> } | undefined;
  try {
    const v = materializeVersion(store, b.head, {
      fromGenesis: true,
      onEvent: (tree, event, done, live) => {
        depth = done;
        if (done % 5000 === 0) options.progress?.(done, total);
        if (mismatch !== undefined) return;
        const snap = snapshotsOnChain.get(event);
        if (snap === undefined) return;
        compared++;
        try {
          const stored = loadSnapshotVersion(store, snap, new TextIndex(), new TextResolver(store));
          let reason = compareTrees(tree, stored.tree, previous);
          if (reason === undefined && stored.live !== undefined) {
            const l = compareLive(stored.live, live);
            if (l !== undefined) reason = `its lifecycle set (header "live") differs: ${l}`;
          }
          if (reason !== undefined) mismatch = { event, reason };
          previous = { replay: pagesOf(tree), stored: refsOf(stored.tree) };
        } catch (e) {
          mismatch = { event, reason: `the stored snapshot cannot be read: ${(e as Error)?.message ?? String(e)}` };
        }
      },
    });
    replayed = { tree: v.tree, live: v.live };
  } catch (e) {
    // An event that does not decode or apply (or cannot be read) is the first place replay fails.
    const event = firstUnreadable(store, b.head, depth) ?? ((store.atDepth(b.head, depth + 1)?.id ?? b.head) as EventId);
    if (mismatch === undefined || mismatch.event > event)
      mismatch = { event, reason: `replay from genesis fails here: ${(e as Error)?.message ?? String(e)}` };
  }
  if (mismatch === undefined && replayed !== undefined) {
    // The head as a reopen builds it: nearest snapshot plus the tail.
    try {
      const opened = materializeVersion(store, b.head);
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

async function replayVerifyAsync(store: AsyncStore, session: SessionId, options: ReplayOptions): Promise<ReplayReport> {
  const branch = options.branch ?? "main";
  const b = await store.branch(session, branch);
  if (b === undefined) throw new EngineError("not-found", `session ${session} has no branch "${branch}"`);
  const snapshotsOnChain = new Map<number, SnapshotRecord>();
  for (let e: EventId | null = b.head; e !== null; ) {
    const s = await store.nearestSnapshot(e);
    if (s === undefined) break;
    snapshotsOnChain.set(s.event, s);
    e = (await store.eventMeta(s.event))?.prior ?? null;
  }
  const total = b.headDepth;
  let depth = 0;
  let mismatch: { event: EventId; reason: string } | undefined;
  // The replay's state at each snapshot on the chain (persistent trees: they share what did not change).
  const at: { snap: SnapshotRecord; tree: Tree; live: ReadonlySet<number> }[] = [];
  let replayed: { tree: Tree; live: ReadonlySet<number> } | undefined;
  try {
    const v = await materializeVersion(store, b.head, {
      fromGenesis: true,
      onEvent: (tree, event, done, live) => {
        depth = done;
        if (done % 5000 === 0) options.progress?.(done, total);
        const snap = snapshotsOnChain.get(event);
        if (snap !== undefined) at.push({ snap, tree, live: new Set(live) });
      },
    });
    replayed = { tree: v.tree, live: v.live };
  } catch (e) {
    const event = (await firstUnreadableAsync(store, b.head, depth)) ?? (await store.atDepth(b.head, depth + 1))?.id ?? b.head;
    mismatch = { event, reason: `replay from genesis fails here: ${(e as Error)?.message ?? String(e)}` };
  }
  for (const { snap, tree, live } of at) {
    if (mismatch !== undefined && mismatch.event <= snap.event) break;
    try {
      const stored = await drive(loadSnapshotSteps(store, snap, new TextIndex(), new TextResolver(store)));
      await loadTree(stored.tree);
      let reason = compareTrees(tree, stored.tree, undefined);
      if (reason === undefined && stored.live !== undefined) {
        const l = compareLive(stored.live, live);
        if (l !== undefined) reason = `its lifecycle set (header "live") differs: ${l}`;
      }
      if (reason !== undefined) mismatch = { event: snap.event, reason };
    } catch (e) {
      mismatch = { event: snap.event, reason: `the stored snapshot cannot be read: ${(e as Error)?.message ?? String(e)}` };
    }
    if (mismatch !== undefined) break;
  }
  if (mismatch === undefined && replayed !== undefined) {
    try {
      const opened = await materializeVersion(store, b.head);
      await loadTree(opened.tree);
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
  return { ok: mismatch === undefined, branch, head: b.head, events: total, snapshots: at.length, mismatch };
}

async function firstUnreadableAsync(store: AsyncStore, head: EventId, depth: number): Promise<EventId | undefined> {
  try {
    for (const m of await store.chainMeta(head, depth, 2000))
      try {
        await store.event(m.id);
      } catch {
        return m.id;
      }
  } catch {
    // the index itself cannot be read: report where replay stopped
  }
  return undefined;
}

/** The first event after `depth` on `head`'s chain whose payload cannot be read (replay reads them in batches). */
function firstUnreadable(store: Store, head: EventId, depth: number): EventId | undefined {
  try {
    for (const m of store.chainMeta(head, depth, 2000))
      try {
        store.event(m.id);
      } catch {
        return m.id;
      }
  } catch {
    // the index itself cannot be read: report where replay stopped
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
