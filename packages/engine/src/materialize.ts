/**
 * State at any event (EN-4 … EN-6): the nearest snapshot on the event's chain, then at most the
 * events after it, folded with the same `foldEvent` the live session uses (L1, L2).
 */
import type { Op, PatchEffect, Tree } from "@strata/dom";
import { type AsyncStore, type EventId, type EventMeta, type Store, type StoredEvent, value } from "@strata/store";
import { EngineError } from "./errors.ts";
import { type DecodedEvent, decodeEvent, foldEvent } from "./events.ts";
import { scanLifecycle, updateLifecycle } from "./lifecycle.ts";
import { settle } from "./loading.ts";
import { type Answer, answer, type Port } from "./port.ts";
import { loadSnapshotSteps } from "./snapshots.ts";
import { TextIndex, TextResolver } from "./texts.ts";

export interface MaterializeOptions {
  /** Ignore snapshots and replay from genesis (what `replayVerify` compares against). */
  readonly fromGenesis?: boolean;
  /** Start from this tree, the state at `depth` on the event's chain, instead of a snapshot. */
  readonly from?: { readonly tree: Tree; readonly depth: number; readonly live?: ReadonlySet<number> };
  /** Source index to fill (a live session passes its own so later snapshots reuse references). */
  readonly texts?: TextIndex;
  /** Called after each folded event (progress, or checks at each step), with the version's lifecycle set. */
  readonly onEvent?: (tree: Tree, event: EventId, done: number, live: ReadonlySet<number>) => void;
}

/** Events read per query while replaying (bounds memory on long chains). */
const BATCH = 2000;

/**
 * The tree as it was right after `event`. Throws `EngineError` if the event does not exist. Over
 * the asynchronous port it answers a promise (decision 0036).
 */
export function materialize<P extends Port>(store: P, event: EventId, options: MaterializeOptions = {}): Answer<P, Tree> {
  return answer(
    store,
    (function* () {
      return (yield* materializeSteps(store, event, options)).tree;
    })(),
  );
}

/**
 * The tree right after `event` with its lifecycle set (lifecycle.ts), found without reading the
 * whole tree, and the depth of the state it started from (the snapshot's, or 0 from genesis).
 */
export function materializeVersion<P extends Port>(
  store: P,
  event: EventId,
  options: MaterializeOptions = {},
): Answer<P, { tree: Tree; live: Set<number>; snapshotDepth: number }> {
  return answer(store, materializeSteps(store, event, options));
}

/**
 * {@link materializeVersion} on either port, as steps (steps.ts): over the asynchronous port the
 * snapshot's pages and texts are fetched before the tree is handed out (snapshots.ts).
 */
export function* materializeSteps(
  store: Store | AsyncStore,
  event: EventId,
  options: MaterializeOptions = {},
  /** The event's metadata when the caller has read it already (one round trip fewer over the network). */
  known?: EventMeta,
): Generator<unknown, { tree: Tree; live: Set<number>; snapshotDepth: number; meta: EventMeta }, unknown> {
  const meta = known?.id === event ? known : yield* value(store.eventMeta(event));
  if (meta === undefined) throw new EngineError("not-found", `event ${event} does not exist in this store`);
  const texts = options.texts ?? new TextIndex();
  let tree: Tree | undefined;
  let live: Set<number> | undefined;
  let depth = 0;
  if (options.from !== undefined) {
    tree = options.from.tree;
    depth = options.from.depth;
    live = options.from.live === undefined ? undefined : new Set(options.from.live);
  } else if (!options.fromGenesis) {
    const snapshot = yield* value(store.nearestSnapshot(event));
    if (snapshot !== undefined) {
      ({ tree, live } = yield* loadSnapshotSteps(store, snapshot, texts, new TextResolver(store)));
      depth = snapshot.depth;
    }
  }
  // Over the asynchronous port the tree's pages and texts are fetched as the fold reaches them (settle, loading.ts).
  if (tree !== undefined && live === undefined) {
    const start = tree;
    live = yield* settle(() => scanLifecycle(start));
  }
  const snapshotDepth = depth;
  let done = 0;
  const one = function* (e: StoredEvent, decoded: DecodedEvent): Generator<unknown, void, unknown> {
    let effect: PatchEffect | undefined;
    const base = tree;
    tree = yield* settle(() => foldEvent(base, decoded, e.id, (fx) => (effect = fx)));
    const after = tree;
    if (effect !== undefined) {
      texts.recordPatch(e.id, effect, after);
      const fx = effect;
      const before = live as Set<number>;
      live = yield* settle(() => updateLifecycle(before, after, fx));
    } else live = yield* settle(() => scanLifecycle(after));
    options.onEvent?.(after, e.id, ++done, live as Set<number>);
    depth = e.depth;
  };
  while (depth < meta.depth) {
    const batch = yield* value(store.chain(event, depth, BATCH));
    if (batch.length === 0) break;
    const decoded = batch.map((e) => decodeEvent(e));
    const base = tree;
    if (base === undefined || options.onEvent !== undefined || decoded.some((d) => d.kind !== "patch")) {
      for (let i = 0; i < batch.length; i++) yield* one(batch[i] as StoredEvent, decoded[i] as DecodedEvent);
      continue;
    }
    // No one looks at the versions in between: fold the batch as one patch (each page and
    // directory path is copied once, not once per event). Equal to folding event by event, since
    // ops apply in order either way; if it fails, fold event by event to name the event.
    const events = batch.map((e, i) => ({ id: e.id, ops: (decoded[i] as { ops: readonly Op[] }).ops }));
    const ops: Op[] = [];
    for (const e of events) for (const op of e.ops) ops.push(op);
    let after: Tree;
    let effect: PatchEffect | undefined;
    try {
      const last = (batch[batch.length - 1] as StoredEvent).id;
      after = yield* settle(() => foldEvent(base, { kind: "patch", ops, checked: true }, last, (fx) => (effect = fx)));
    } catch {
      for (let i = 0; i < batch.length; i++) yield* one(batch[i] as StoredEvent, decoded[i] as DecodedEvent);
      continue;
    }
    texts.recordEvents(events, effect as PatchEffect, after);
    const before = live as Set<number>;
    const folded = after;
    live = yield* settle(() => updateLifecycle(before, folded, effect as PatchEffect));
    tree = after;
    done += batch.length;
    depth = (batch[batch.length - 1] as StoredEvent).depth;
  }
  if (tree === undefined) throw new EngineError("bad-event", `the chain of event ${event} has no genesis event`);
  const end = tree;
  return { tree: end, live: live ?? (yield* settle(() => scanLifecycle(end))), snapshotDepth, meta };
}
