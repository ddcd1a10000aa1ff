/**
 * The replay proof (EN-31): re-materialize a branch from genesis with no snapshot and compare its
 * canonical records with every snapshot on the chain and with the head as `Session.open` builds it
 * (snapshot + tail). Reports the first event where they differ. Pages are compared only where the
 * replay or the stored snapshot changed since the previous comparison, so the cost follows the log.
 */
import { encodePage, LazyPage, type Page, type Tree } from "@strata/dom";
import type { EventId, SessionId, SnapshotRecord, Store } from "@strata/store";
import { EngineError } from "./errors.ts";
import { materialize, materializeVersion } from "./materialize.ts";
import { loadSnapshot } from "./snapshots.ts";
import { TextIndex, TextResolver } from "./texts.ts";

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

export function replayVerify(
  store: Store,
  session: SessionId,
  options: { branch?: string; progress?: (done: number, total: number) => void } = {},
): ReplayReport {
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
  const replayed = materialize(store, b.head, {
    fromGenesis: true,
    onEvent: (tree, event, done) => {
      if (done % 5000 === 0) options.progress?.(done, total);
      if (mismatch !== undefined) return;
      const snap = snapshotsOnChain.get(event);
      if (snap === undefined) return;
      compared++;
      const stored = loadSnapshot(store, snap, new TextIndex(), new TextResolver(store));
      const reason = compareTrees(tree, stored, previous);
      if (reason !== undefined) mismatch = { event, reason };
      previous = { replay: pagesOf(tree), stored: refsOf(stored) };
    },
  });
  if (mismatch === undefined) {
    // The head as a reopen builds it: nearest snapshot plus the tail.
    const opened = materializeVersion(store, b.head).tree;
    const reason = compareTrees(replayed, opened, undefined);
    if (reason !== undefined) mismatch = { event: b.head, reason: `the head built from snapshot + tail differs: ${reason}` };
  }
  options.progress?.(total, total);
  return { ok: mismatch === undefined, branch, head: b.head, events: total, snapshots: compared, mismatch };
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
