/**
 * The checks that look at a decoded bundle as a whole (EN-32): branch names, the history's shape
 * (each prior an earlier event, one genesis, no duplicate and no orphan events — so no cycle can
 * exist), the digest chain, every payload decoded and replayed in memory to each head's XML, and
 * every blob an event refers to (EN-33) present. Nothing is written; the result is remembered for
 * the bundle object, so `importBundle` does not check a decoded bundle twice.
 */
import { attrsWritten, type NodeId, type Op, type Tree, toXml } from "@strata/dom";
import { type EventId, eventDigest } from "@strata/store";
import { BLOB_REF_ATTRS, isBlobRef, isSha256, specHashes } from "./blob-refs.ts";
import { at, BUNDLE_FORMAT, type Bundle, BundleError, type BundleEvent, bad, shown } from "./bundle.ts";
import { type DecodedEvent, decodeEvent, foldEvent, GENESIS_KIND } from "./events.ts";

/** What the checks found out about a valid bundle. */
export interface BundleFacts {
  /** Blobs of the bundle some event's attribute names (stored on import); every blob reference (EN-33) is among them. */
  readonly referenced: ReadonlySet<string>;
  /** Blobs of the bundle no attribute names (not stored on import), sorted. */
  readonly unreferenced: readonly string[];
  /** The highest node id any head's tree has minted. */
  readonly hwm: number;
}

const checked = new WeakMap<Bundle, BundleFacts>();

/** The facts of a bundle `decodeBundle` returned, or undefined for any other object. */
export function factsOf(bundle: Bundle): BundleFacts | undefined {
  return checked.get(bundle);
}

/** Runs every whole-bundle check on a decoded bundle; throws `BundleError` at the first problem. */
export function checkBundle(bundle: Bundle, progress?: (message: string) => void): BundleFacts {
  checkBranches(bundle);
  const index = checkHistory(bundle);
  if (bundle.format === BUNDLE_FORMAT) checkDigests(bundle.events, index);
  const facts = replay(bundle, index, progress);
  checked.set(bundle, facts);
  return facts;
}

/**
 * The heads' XML of a bundle that has none yet (an export that did not materialize its heads):
 * the same checks as `checkBundle`, with each head's replayed tree taken as its XML instead of
 * compared with it.
 */
export function replayHeads(bundle: Omit<Bundle, "heads">, progress?: (message: string) => void): Record<string, string> {
  const whole = { ...bundle, heads: {} } as Bundle;
  checkBranches(whole);
  const index = checkHistory(whole);
  if (whole.format === BUNDLE_FORMAT) checkDigests(whole.events, index);
  const heads: Record<string, string> = {};
  replay(whole, index, progress, heads);
  return heads;
}

function checkBranches(bundle: Bundle): void {
  const seen = new Map<string, number>();
  bundle.branches.forEach((b, i) => {
    const first = seen.get(b.name);
    if (first !== undefined) bad(at(at("branches", i), "name"), `${shown(b.name)} is also the name of branches[${first}]`);
    seen.set(b.name, i);
  });
  // `@1` exports of one branch had no main (the import leaves main at the genesis event).
  if (!seen.has("main") && bundle.format === BUNDLE_FORMAT) bad("branches", 'there is no branch named "main"; a session always has one');
}

/**
 * Checks that the events form a history: ids unique, the first event the only genesis and the only
 * one without a prior, every prior an earlier event of the bundle (so priors cannot form a cycle),
 * every head an event of the bundle and every event on some head's chain. Returns id → index.
 */
function checkHistory(bundle: Bundle): Map<number, number> {
  const { events } = bundle;
  const all = new Map<number, number>();
  events.forEach((e, i) => {
    const first = all.get(e.id);
    if (first !== undefined) bad(at(at("events", i), "id"), `${e.id} is also the id of events[${first}]; an event appears once`);
    all.set(e.id, i);
  });
  const index = new Map<number, number>();
  events.forEach((e, i) => {
    const path = at("events", i);
    if (i === 0) {
      if (e.kind !== GENESIS_KIND)
        bad(at(path, "kind"), `the first event is the session's genesis (${GENESIS_KIND}), not ${shown(e.kind)}`);
      if (e.prior !== null) bad(at(path, "prior"), `the genesis event has no prior, got ${e.prior}`);
    } else if (e.kind === GENESIS_KIND) bad(at(path, "kind"), `only the first event is a genesis (${GENESIS_KIND})`);
    else if (e.prior === null) bad(at(path, "prior"), "null, but only the first event (the genesis) has no prior");
    else if (!index.has(e.prior)) {
      const where = all.get(e.prior);
      bad(
        at(path, "prior"),
        e.prior === e.id
          ? `${e.prior} is the event itself; an event follows an earlier one`
          : where === undefined
            ? `${e.prior} is not the id of an event in the bundle`
            : `${e.prior} is events[${where}], which comes later; every event follows an earlier one (priors cannot form a cycle)`,
      );
    }
    index.set(e.id, i);
  });
  const reached = new Uint8Array(events.length);
  bundle.branches.forEach((b, i) => {
    const head = index.get(b.head);
    if (head === undefined) bad(at(at("branches", i), "head"), `${b.head} is not the id of an event in the bundle`);
    for (let k: number | undefined = head; k !== undefined && reached[k] === 0; ) {
      reached[k] = 1;
      const prior: number | null = (events[k] as BundleEvent).prior;
      k = prior === null ? undefined : index.get(prior);
    }
  });
  const orphan = reached.indexOf(0);
  if (orphan >= 0)
    bad(
      at("events", orphan),
      `event ${(events[orphan] as BundleEvent).id} is on no branch's history (no head reaches it); a bundle carries only the events its branches reach`,
    );
  return index;
}

/** `@2`: every event's digest is the digest of its content after its prior's (the first mismatch names the event). */
function checkDigests(events: readonly BundleEvent[], index: ReadonlyMap<number, number>): void {
  events.forEach((e, i) => {
    const prior = e.prior === null ? null : ((events[index.get(e.prior) as number] as BundleEvent).digest as string);
    const expected = eventDigest(prior, e);
    if (expected !== e.digest)
      throw new BundleError(
        "digest-mismatch",
        `does not match event ${e.id}'s content and its prior's digest (expected ${expected.slice(0, 16)}…): the event was altered after export`,
        at(at("events", i), "digest"),
      );
  });
}

/** Events folded as one patch at most (a failing run is folded again event by event to name the event). */
const RUN = 2000;

/**
 * Decodes every payload and folds the events in memory, each onto its prior's tree, comparing each
 * head with the bundle's XML and collecting the blobs the events refer to. A tree is kept only
 * while a later event still needs it; a run of events that follow one another with no branch off
 * them is folded as one patch (each page copied once per run, not once per event).
 */
function replay(
  bundle: Bundle,
  index: ReadonlyMap<number, number>,
  progress?: (message: string) => void,
  /** Given: each head's XML is written here instead of compared with the bundle's. */
  fill?: Record<string, string>,
): BundleFacts {
  const { events } = bundle;
  const children = new Uint32Array(events.length);
  for (const e of events) if (e.prior !== null) (children[index.get(e.prior) as number] as number)++;
  const headsAt = new Map<number, string[]>();
  for (const b of bundle.branches) headsAt.set(index.get(b.head) as number, [...(headsAt.get(index.get(b.head) as number) ?? []), b.name]);
  // Every sha256 an attribute holds (a blob the bundle carries for it is kept) and, of those, the
  // blob references (EN-33), which the bundle must carry: hash → the first event that names it.
  const mentioned = new Set<string>();
  const required = new Map<string, number>();
  const trees = new Map<number, Tree>();
  let hwm = 0;
  // The run being collected: events after `base`, each the prior of the next.
  let run: { base: Tree; items: { i: number; ops: readonly Op[] }[] } | undefined;
  /** Folds the run; keeps the tree of its last event if a later event or a head needs it. */
  const flush = (): void => {
    if (run === undefined) return;
    const { base, items } = run;
    run = undefined;
    const last = items[items.length - 1] as { i: number; ops: readonly Op[] };
    let tree: Tree;
    try {
      const ops = items.length === 1 ? last.ops : items.flatMap((x) => x.ops);
      tree = foldEvent(base, { kind: "patch", ops, checked: true }, (events[last.i] as BundleEvent).id);
    } catch (err) {
      tree = base;
      for (const x of items) tree = fold(tree, x.i, { kind: "patch", ops: x.ops, checked: true });
      // Folding the run's events one by one names the failing one; should they all apply on their own, the run is still refused.
      throw new BundleError("replay-mismatch", (err as Error).message, at(at("events", last.i), "data"));
    }
    settle(last.i, tree);
  };
  const fold = (tree: Tree | undefined, i: number, decoded: DecodedEvent): Tree => {
    try {
      return foldEvent(tree, decoded, (events[i] as BundleEvent).id);
    } catch (err) {
      throw new BundleError("replay-mismatch", (err as Error).message, at(at("events", i), "data"));
    }
  };
  const settle = (i: number, tree: Tree): void => {
    if ((children[i] as number) > 0) trees.set(i, tree);
    for (const name of headsAt.get(i) ?? []) {
      hwm = Math.max(hwm, tree.hwm);
      if (fill !== undefined) fill[name] = toXml(tree);
      else compareHead(name, toXml(tree), bundle.heads[name] as string);
    }
  };
  /** The tree of event `p` for an event that follows it (the last follower releases it). */
  const take = (p: number): Tree => {
    const base = trees.get(p) as Tree;
    if (--(children[p] as number) === 0) trees.delete(p);
    return base;
  };
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as BundleEvent;
    let decoded: DecodedEvent;
    try {
      decoded = decodeEvent({ id: e.id as EventId, kind: e.kind, data: e.data });
    } catch (err) {
      bad(at(at("events", i), "data"), (err as Error).message);
    }
    const found = (hash: string, ref: boolean): void => {
      mentioned.add(hash);
      if (ref && !required.has(hash)) required.set(hash, i);
    };
    if (decoded.kind === "genesis") {
      specHashes(decoded.skeleton, found);
      settle(i, fold(undefined, i, decoded));
      continue;
    }
    // Values the dom says the ops write. Whether a `set` value names a blob depends on its
    // element's tag, which is in the tree: those are decided once the event is folded.
    const sets: [id: NodeId, attr: string, value: string][] = [];
    for (const op of decoded.ops)
      attrsWritten(op, (tag, attr, value, id) => {
        if (!isSha256(value)) return;
        if (tag !== undefined) found(value, isBlobRef(tag, attr, value));
        else {
          mentioned.add(value);
          if (BLOB_REF_ATTRS.has(attr) && id !== undefined) sets.push([id, attr, value]);
        }
      });
    const p = index.get(e.prior as number) as number;
    if (sets.length > 0) {
      // Folded on its own, so the element is found before (or, if the event inserted it, after) it.
      flush();
      const before = take(p);
      const after = fold(before, i, decoded);
      for (const [id, attr, value] of sets) {
        const tag = before.rec(id)?.tag ?? after.rec(id)?.tag;
        if (tag !== undefined && isBlobRef(tag, attr, value)) found(value, true);
      }
      settle(i, after);
    } else {
      const last = run?.items[run.items.length - 1]?.i;
      if (run === undefined || last !== p || run.items.length >= RUN) {
        flush();
        run = { base: take(p), items: [] };
      } else (children[p] as number)--;
      run.items.push({ i, ops: decoded.ops });
      // Its tree is needed as it is (a head, or more than one event follows it): fold now.
      if (headsAt.has(i) || (children[i] as number) !== 1) flush();
    }
    if (i % 10_000 === 9_999) progress?.(`checking: ${i + 1}/${events.length} events`);
  }
  flush();
  for (const [hash, i] of required)
    if (!Object.hasOwn(bundle.blobs, hash))
      bad(at(at("events", i), "data"), `refers to blob ${hash} (EN-33), which the bundle's blobs do not carry`);
  const stored = new Set<string>();
  const unreferenced: string[] = [];
  for (const h of Object.keys(bundle.blobs)) mentioned.has(h) ? stored.add(h) : unreferenced.push(h);
  return { referenced: stored, unreferenced: unreferenced.sort(), hwm };
}

function compareHead(name: string, replayed: string, given: string): void {
  if (replayed === given) return;
  let k = 0;
  while (k < replayed.length && k < given.length && replayed.charCodeAt(k) === given.charCodeAt(k)) k++;
  const near = (s: string) => shown(s.slice(Math.max(0, k - 20), k + 20));
  throw new BundleError(
    "replay-mismatch",
    `differs from the replay of branch ${name}'s events at character ${k} (the bundle has ${near(given)}, the replay ${near(replayed)}): the head or its events were altered`,
    at("heads", name),
  );
}
