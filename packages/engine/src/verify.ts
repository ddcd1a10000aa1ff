/**
 * What the engine adds to `store.verify` (EN-16): every event decodes as a known kind, and every
 * snapshot equals the replay of its chain — checked incrementally: the replay starts from the
 * previous snapshot on the chain (itself verified, since snapshots are checked in event order) or
 * from genesis, and only pages whose addresses differ are compared record by record.
 */
import { encodePage, LazyPage, type Page } from "@strata/dom";
import type { SessionId, SnapshotRecord, Store, VerifyHooks, VerifyReport } from "@strata/store";
import { decodeEvent } from "./events.ts";
import { materialize } from "./materialize.ts";
import { loadSnapshot } from "./snapshots.ts";
import { TextIndex, TextResolver } from "./texts.ts";

/** The hooks that let `store.verify` judge payloads and snapshots. */
export function verifyHooks(store: Store, progress?: (done: number, total: number) => void): VerifyHooks {
  const check = (f: () => string | undefined): string | undefined => {
    try {
      return f();
    } catch (e) {
      return (e as Error).message;
    }
  };
  return {
    checkEvent: (event) =>
      check(() => {
        decodeEvent(event);
        return undefined;
      }),
    checkSnapshot: (snapshot) => check(() => compareSnapshot(store, snapshot)),
    progress,
  };
}

/** `store.verify` with the engine's checks. */
export function verifyStore(store: Store, session?: SessionId, progress?: (done: number, total: number) => void): VerifyReport {
  return store.verify(session, verifyHooks(store, progress));
}

/** Why `snapshot` differs from the replay of its chain, or undefined. */
function compareSnapshot(store: Store, snapshot: SnapshotRecord): string | undefined {
  const meta = store.eventMeta(snapshot.event);
  if (meta === undefined) return `event ${snapshot.event} does not exist`;
  const previous = meta.prior === null ? undefined : store.nearestSnapshot(meta.prior);
  const texts = new TextIndex();
  const from =
    previous === undefined ? undefined : { tree: loadSnapshot(store, previous, texts, new TextResolver(store)), depth: previous.depth };
  const replayed = materialize(store, snapshot.event, { fromGenesis: from === undefined, from, texts });
  const stored = loadSnapshot(store, snapshot, new TextIndex(), new TextResolver(store));
  if (
    stored.hwm !== replayed.hwm ||
    stored.size !== replayed.size ||
    stored.rootId !== replayed.rootId ||
    stored.fixed.join() !== replayed.fixed.join()
  )
    return `its header differs from the replay (hwm ${stored.hwm} vs ${replayed.hwm}, size ${stored.size} vs ${replayed.size})`;
  const a = new Map(stored.slotEntries());
  const b = new Map(replayed.slotEntries());
  for (const i of new Set([...a.keys(), ...b.keys()])) {
    const sa = a.get(i);
    const sb = b.get(i);
    // A page the replay never touched is still the previous snapshot's page; equal addresses mean
    // equal stored bytes.
    if (sa instanceof LazyPage && sb instanceof LazyPage && sa.ref === sb.ref) continue;
    if (sa === undefined || sb === undefined) return `page ${i} is ${sa === undefined ? "missing from the snapshot" : "not in the replay"}`;
    if (encodePage(pageOf(sa)) !== encodePage(pageOf(sb))) return `page ${i} differs from the replay of its chain`;
  }
  return undefined;
}

function pageOf(slot: Page | LazyPage): Page {
  return slot instanceof LazyPage ? slot.page : slot;
}
