/**
 * The write path of one line of history (L2, EN-12 … EN-14, EN-17): validate the whole patch against the
 * live tree, append it durably with the expected head (compare-and-swap), then make the already
 * computed result the live tree — the same `foldEvent` replay uses — and write a snapshot every K
 * events of the chain. A commit that fails changes nothing: not the log, not the head, not the tree.
 */
import { advanceIndex, applyPatch, type NodeSpec, type Op, PAGE_SIZE, type PatchEffect, shiftMinted, type Tree } from "@strata/dom";
import {
  type AsyncStore,
  type BranchInfo,
  drive,
  type EventId,
  type EventMeta,
  type SessionId,
  type SessionInfo,
  type Store,
  value,
} from "@strata/store";
import { EngineError } from "./errors.ts";
import { DEFAULT_SKELETON, decodeEvent, encodeGenesis, encodePatch, foldEvent, GENESIS_KIND, PATCH_KIND, searchTextOf } from "./events.ts";
import { scanLifecycle, updateLifecycle } from "./lifecycle.ts";
import { settle } from "./loading.ts";
import { materializeSteps } from "./materialize.ts";
import { SnapshotWriter } from "./snapshots.ts";
import { TextIndex } from "./texts.ts";

/** Default snapshot interval in events (docs/benchmarks.md, store section, has the measurements). */
export const DEFAULT_SNAPSHOT_EVERY = 128;

/**
 * The unit of the session's id counter (`store.reserve`): counter value k stands for ids
 * k·4096 + 1 … (k + 1)·4096, so two processes never hand out the same id (L5). Block 0 (ids
 * 1 … 4096) belongs to the session's first line. A process cuts the blocks it reserves into ranges
 * for its lines of history (EN-17): a new line first gets {@link FIRST_RANGE} ids, each later range
 * of the line is twice as large, up to a block.
 */
export const ID_BLOCK = 4096;

/** Ids a new line of history gets first (one page of the tree). */
export const FIRST_RANGE = PAGE_SIZE;

export interface JournalOptions {
  /** Write a snapshot when the chain has grown this many events past the last one (default 128). */
  readonly snapshotEvery?: number;
  /**
   * Called when a snapshot could not be written after a commit (the commit itself is durable and
   * succeeded; the snapshot is tried again at a later commit). Default: `process.emitWarning`.
   */
  readonly onSnapshotError?: (error: unknown, event: EventId) => void;
  /**
   * The fencing token of the lease this writer holds on the branch (ST-23): every append checks
   * it, so a writer whose lease was taken over fails with `LeaseLost` instead of writing.
   */
  readonly lease?: number;
}

export interface CommitInput {
  readonly ops: readonly Op[];
  readonly label?: string | null;
  readonly by?: string | null;
  readonly ts?: number;
}

/**
 * Where a commit mints its ids (EN-17): `floor` undefined — right after the live mark, in ids the
 * line already owns; otherwise the patches start with `["set", 0, "hwm", floor]` and mint from
 * `floor + 1`. Either way the line owns every id up to `end` once the commit is durable.
 */
export interface IdPlan {
  readonly floor: number | undefined;
  readonly end: number;
}

/** Ids `floor + 1 … end`, reserved for one journal. */
interface Range {
  readonly floor: number;
  readonly end: number;
}

const roundUp = (n: number, unit: number): number => Math.ceil(n / unit) * unit;

/**
 * Ids a process has reserved from a session's counter and not handed to a line yet: disjoint
 * ranges of whole pages, lowest first. Runtime bookkeeping only (L1): ids left here when the
 * process ends are simply never used. A range is handed only to a line whose mark is below it
 * (EN-17): the pool is shared by every line of the process, and a line reopened after another
 * handle or process wrote it may hold ids far above what this pool has left.
 */
const pools = new WeakMap<Store | AsyncStore, Map<string, Range[]>>();

/** Free ranges kept per session; beyond this the lowest are dropped (they only serve early forks). */
const POOL_RANGES = 16;

function poolOf(store: Store | AsyncStore, session: SessionId): Range[] {
  let bySession = pools.get(store);
  if (bySession === undefined) {
    bySession = new Map();
    pools.set(store, bySession);
  }
  let free = bySession.get(session);
  if (free === undefined) {
    free = [];
    bySession.set(session, free);
  }
  return free;
}

/** Takes `size` ids starting at a page boundary at or above `lo` from the free ranges, if they hold them. */
function takeFree(free: Range[], size: number, lo: number): Range | undefined {
  for (let i = 0; i < free.length; i++) {
    const f = free[i] as Range;
    const floor = Math.max(f.floor, lo);
    if (f.end - floor < size) continue;
    const rest: Range[] = [];
    if (floor > f.floor) rest.push({ floor: f.floor, end: floor });
    if (floor + size < f.end) rest.push({ floor: floor + size, end: f.end });
    free.splice(i, 1, ...rest);
    return { floor, end: floor + size };
  }
  return undefined;
}

/** Adds a freshly reserved range, joining it to a neighbour it touches. */
function addFree(free: Range[], r: Range): void {
  let i = free.findIndex((f) => f.floor > r.floor);
  if (i === -1) i = free.length;
  const before = free[i - 1];
  if (before !== undefined && before.end === r.floor) free[i - 1] = { floor: before.floor, end: r.end };
  else free.splice(i, 0, r);
  if (free.length > POOL_RANGES) free.splice(0, free.length - POOL_RANGES);
}

/**
 * A range of `size` ids (whole pages) that no line has used, above `mark` — the high-water mark
 * of the line that asks, so the line can mint there (ids only rise). From the process's pool when
 * it holds one that high, else from blocks reserved now: the counter only rises, so a fresh block
 * is above every id any line of the session has minted.
 */
function* grant(store: Store | AsyncStore, session: SessionId, size: number, mark: number): Generator<unknown, Range, unknown> {
  const free = poolOf(store, session);
  const lo = roundUp(mark, PAGE_SIZE);
  const pooled = takeFree(free, size, lo);
  if (pooled !== undefined) return pooled;
  const blocks = Math.ceil(size / ID_BLOCK);
  const first = (yield* value(store.reserve(session, blocks))) * ID_BLOCK;
  // Another line of this process may have taken from the pool while the reservation was awaited.
  const taken = takeFree(free, size, lo);
  if (taken !== undefined) {
    addFree(free, { floor: first, end: first + blocks * ID_BLOCK });
    return taken;
  }
  if (first < lo)
    throw new EngineError(
      "corrupt",
      `the id counter of session ${session} in ${store.path} is behind the ids its tree holds (block ${first / ID_BLOCK} reserved, ids up to ${mark} in use); the store is damaged: run \`strata verify\``,
    );
  addFree(free, { floor: first, end: first + blocks * ID_BLOCK });
  return takeFree(free, size, lo) as Range;
}

export class Journal {
  #tree: Tree;
  #head: EventMeta;
  #lastSnapshotDepth: number;
  readonly #texts: TextIndex;
  readonly #snapshots: SnapshotWriter;
  readonly #every: number;
  readonly #onSnapshotError: (error: unknown, event: EventId) => void;
  #live: Set<number>;
  #liveView: ReadonlySet<number> | undefined;
  /** This line owns the ids after the live mark up to here; `undefined`: a new line, whose first commit sets a floor. */
  #end: number | undefined;
  /** Ids reserved for this line and not used yet (kept when a commit fails, so nothing leaks). */
  #spare: Range | undefined;
  /** Size of the next range this line reserves. */
  #grow = FIRST_RANGE;
  #snapshotError: unknown;
  #snapshotRetry = 0;
  #snapshotBackoff = 1;
  readonly #lease: number | undefined;

  private constructor(
    readonly store: Store | AsyncStore,
    readonly session: SessionId,
    readonly branch: string,
    tree: Tree,
    head: EventMeta,
    lastSnapshotDepth: number,
    texts: TextIndex,
    options: JournalOptions,
    end: number | undefined,
    live: Set<number>,
  ) {
    this.#live = live;
    this.#end = end;
    this.#tree = tree;
    this.#head = head;
    this.#lastSnapshotDepth = lastSnapshotDepth;
    this.#texts = texts;
    this.#every = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
    this.#onSnapshotError = options.onSnapshotError ?? warnSnapshot;
    this.#lease = options.lease;
    this.#snapshots = new SnapshotWriter(store, texts);
  }

  /** Starts a session: writes its genesis event (the fixed skeleton) on branch "main". */
  static create(
    store: Store,
    input: { title?: string | null; metadata?: Record<string, unknown>; skeleton?: NodeSpec } = {},
    options: JournalOptions = {},
  ): { journal: Journal; session: SessionInfo } {
    return drive(Journal.createSteps(store, input, options)) as { journal: Journal; session: SessionInfo };
  }

  /** {@link create} on either port, as steps (steps.ts). */
  static *createSteps(
    store: Store | AsyncStore,
    input: { title?: string | null; metadata?: Record<string, unknown>; skeleton?: NodeSpec } = {},
    options: JournalOptions = {},
  ): Generator<unknown, { journal: Journal; session: SessionInfo }, unknown> {
    const data = encodeGenesis(input.skeleton ?? DEFAULT_SKELETON);
    const { session, genesis } = yield* value(
      store.createSession({
        title: input.title ?? null,
        metadata: input.metadata ?? {},
        genesis: { kind: GENESIS_KIND, label: "session.start", data },
      }),
    );
    const tree = foldEvent(undefined, decodeEvent(genesis), genesis.id);
    return {
      journal: new Journal(store, session.id, "main", tree, genesis, 0, new TextIndex(), options, ID_BLOCK, scanLifecycle(tree)),
      session,
    };
  }

  /**
   * Opens a branch at its head: nearest snapshot plus the events after it — or, when `known` is the
   * state at that head already (a fork from a state this process holds, EN-47), that state.
   */
  static open(store: Store, session: SessionId, branch = "main", options: JournalOptions = {}, known?: KnownVersion): Journal {
    return drive(Journal.openSteps(store, session, branch, options, known)) as Journal;
  }

  /** {@link open} on either port, as steps (steps.ts). */
  static *openSteps(
    store: Store | AsyncStore,
    session: SessionId,
    branch = "main",
    options: JournalOptions = {},
    known?: KnownVersion,
    /** The branch and its head's metadata when the caller has them (a fork just made it): round trips saved. */
    given: { readonly branch?: BranchInfo; readonly head?: EventMeta } = {},
  ): Generator<unknown, Journal, unknown> {
    const b =
      given.branch?.name === branch && given.branch.session === session ? given.branch : yield* value(store.branch(session, branch));
    if (b === undefined) throw new EngineError("not-found", `session ${session} has no branch "${branch}"`);
    const reuse = known !== undefined && known.event === b.head;
    const texts = reuse ? known.texts.clone() : new TextIndex();
    const { tree, live, snapshotDepth, meta } = reuse
      ? { tree: known.tree, live: new Set(known.live), snapshotDepth: known.snapshotDepth, meta: undefined }
      : yield* materializeSteps(store, b.head, { texts }, given.head);
    const head: EventMeta =
      meta ?? (given.head !== undefined && given.head.id === b.head ? given.head : ((yield* value(store.eventMeta(b.head))) as EventMeta));
    // A pinned branch (just forked or moved) starts a new line at its next append: it reserves ids
    // then. So does a kept rewound head (origin "rewind"), always: the ids after its mark may have
    // been handed to the rewound branch's new line (`handOver`). Any other line keeps minting in
    // the range that holds its mark: ranges are whole pages, so the rest of the mark's page is its
    // own (block 0 is the first line's).
    const fresh = b.pinned || b.origin === "rewind";
    const end = fresh ? undefined : tree.hwm <= ID_BLOCK ? ID_BLOCK : roundUp(tree.hwm, PAGE_SIZE);
    return new Journal(store, session, branch, tree, head, snapshotDepth, texts, options, end, live);
  }

  get tree(): Tree {
    return this.#tree;
  }

  /** The state at this line's head, for a fork from it (EN-47); the caller must not change `live`. */
  get version(): KnownVersion {
    return {
      event: this.#head.id as EventId,
      tree: this.#tree,
      live: this.#live,
      snapshotDepth: this.#lastSnapshotDepth,
      texts: this.#texts,
    };
  }

  get head(): EventMeta {
    return this.#head;
  }

  /** Ids of the live tree's lifecycle-bearing elements: a read-only copy, unchanged by later commits. */
  get live(): ReadonlySet<number> {
    if (this.#liveView === undefined) this.#liveView = new FrozenSet(this.#live);
    return this.#liveView;
  }

  /** True for a new line of history (after a fork or rewind) that has not committed yet. */
  get fresh(): boolean {
    return this.#end === undefined;
  }

  /** The last periodic snapshot failure not yet repaired by a successful snapshot (see {@link JournalOptions.onSnapshotError}). */
  get snapshotError(): unknown {
    return this.#snapshotError;
  }

  /** Appends one patch event. Throws (and changes nothing) if the patch does not apply or the head moved. */
  commit(input: CommitInput): EventMeta {
    return this.commitMany([input])[0] as EventMeta;
  }

  /** Appends several patch events in one transaction (group commit): all of them or none. */
  commitMany(inputs: readonly CommitInput[]): EventMeta[] {
    return this.commitWithOps(inputs).metas;
  }

  /** {@link commitWithOpsSteps} over a synchronous store. */
  commitWithOps(inputs: readonly CommitInput[]): { metas: EventMeta[]; patches: (readonly Op[])[] } {
    return drive(this.commitWithOpsSteps(inputs)) as { metas: EventMeta[]; patches: (readonly Op[])[] };
  }

  /**
   * Like {@link commitMany}, also returning the ops as stored. The patches are validated as the
   * caller wrote them (errors name the caller's ids); if the line needs a new id range, every id
   * they mint is then moved into it (EN-17).
   */
  *commitWithOpsSteps(
    inputs: readonly CommitInput[],
    onApplied?: () => void,
  ): Generator<unknown, { metas: EventMeta[]; patches: (readonly Op[])[] }, unknown> {
    if (inputs.length === 0) return { metas: [], patches: [] };
    checkInputs(inputs);
    const base = this.#tree;
    const patches = inputs.map((i) => i.ops);
    // Over the asynchronous port the pages and texts the patches reach are fetched first (loading.ts).
    let folds = yield* settle(() => foldAll(base, patches));
    const plan = yield* this.planIdsSteps((folds[folds.length - 1] as Fold).tree.hwm - base.hwm);
    this.#unchanged(base);
    let stored: (readonly Op[])[] = patches;
    if (plan.floor !== undefined) {
      const floored = withIdFloor(patches, base.hwm, plan.floor);
      stored = floored;
      folds = yield* settle(() => foldAll(base, floored));
    }
    return { metas: yield* this.#append(inputs, stored, folds, plan, onApplied), patches: stored };
  }

  /**
   * Over the asynchronous port a commit awaits the store, and another commit of the same object
   * could have moved the line meanwhile: the caller must not start a commit before the last one
   * answered (a `Session` queues them). This catches one that did, before it writes.
   */
  #unchanged(base: Tree): void {
    if (this.#tree !== base)
      throw new EngineError("bad-input", "another commit of this line ran while this one waited for the store; commit one at a time");
  }

  /**
   * Appends patches authored elsewhere (a session's recipes) under `plan` (from {@link planIds}):
   * `inputs` hold the ops as they will be stored, the floor op included. Validates them first.
   */
  *commitPlannedSteps(
    inputs: readonly CommitInput[],
    plan: IdPlan,
    folded?: { readonly base: Tree; readonly folds: readonly Fold[] },
    onApplied?: () => void,
  ): Generator<unknown, { metas: EventMeta[]; patches: (readonly Op[])[] }, unknown> {
    if (inputs.length === 0) return { metas: [], patches: [] };
    checkInputs(inputs, plan.floor);
    const patches = inputs.map((i) => i.ops);
    // The author's folds of exactly these patches onto this tree (the same applyPatch, options and
    // checks foldAll uses) are not folded a second time.
    const tree = this.#tree;
    const folds =
      folded !== undefined && folded.base === tree && folded.folds.length === patches.length
        ? folded.folds
        : yield* settle(() => foldAll(tree, patches));
    const last = (folds[folds.length - 1] as Fold).tree;
    const first = patches[0]?.[0];
    const floored = first !== undefined && first[0] === "set" && first[1] === 0;
    if (last.hwm > plan.end || (plan.floor === undefined ? this.#end === undefined : !floored))
      throw new EngineError("bad-input", `the patches mint ids outside the range planned for them (up to ${plan.end})`);
    return { metas: yield* this.#append(inputs, patches, folds, plan, onApplied), patches };
  }

  /**
   * The floor the next commit starts at, for a new line (EN-17): it reserves its first range now,
   * so a recipe can be authored where its ids will really be. Undefined for a line that continues.
   */
  *startFloorSteps(): Generator<unknown, number | undefined, unknown> {
    if (this.#end !== undefined) return undefined;
    const s = this.#spare;
    if (s !== undefined && s.floor >= this.#tree.hwm) return s.floor;
    yield* this.#reserve(0);
    return (this.#spare as Range).floor;
  }

  /**
   * Where a commit that mints `minted` ids goes (EN-17), reserving ids if this line has too few:
   * after the live mark (`floor` undefined) when the line's range, or a range reserved right after
   * it, holds them; otherwise a floor in a fresh range. `authoredAt` is the floor the patches were
   * authored on ({@link startFloor}); a plan with another floor means: author them again there.
   * Reserved ids stay with this journal until a commit uses them.
   */
  *planIdsSteps(minted: number, authoredAt?: number): Generator<unknown, IdPlan, unknown> {
    const hwm = this.#tree.hwm;
    for (let reserved = false; ; reserved = true) {
      const s = this.#spare;
      if (authoredAt === undefined && this.#end !== undefined) {
        const end = s !== undefined && s.floor === this.#end ? s.end : this.#end;
        if (hwm + minted <= end) return { floor: undefined, end };
      } else if (s !== undefined && s.floor >= hwm && (authoredAt === undefined || authoredAt === s.floor) && s.floor + minted <= s.end)
        return { floor: s.floor, end: s.end };
      if (reserved) {
        const r = this.#spare as Range;
        return { floor: r.floor, end: r.end };
      }
      yield* this.#reserve(minted);
    }
  }

  /** Reserves a range of at least `minted` ids (whole pages); joins it to the spare range when they touch. */
  *#reserve(minted: number): Generator<unknown, void, unknown> {
    const r = yield* grant(this.store, this.session, roundUp(Math.max(this.#grow, minted, 1), PAGE_SIZE), this.#tree.hwm);
    this.#grow = Math.min(this.#grow * 2, ID_BLOCK);
    const s = this.#spare;
    this.#spare = s !== undefined && s.end === r.floor ? { floor: s.floor, end: r.end } : r;
  }

  /**
   * After a rewind moved this line's branch to an earlier event, the ids this line owns and has
   * not used go to `next`, the branch's new line (nobody can mint them any more: the old head is
   * kept as a branch of origin "rewind", on which every reopened line starts fresh, and a writer
   * still on the moved branch gets a head conflict). A retry loop then does not use up a range per
   * attempt.
   */
  handOver(next: Journal): void {
    if (!next.fresh || next.#spare !== undefined) return;
    const hwm = this.#tree.hwm;
    let range: Range | undefined = this.#end !== undefined && this.#end > hwm ? { floor: hwm, end: this.#end } : undefined;
    const s = this.#spare;
    if (s !== undefined) range = range !== undefined && range.end === s.floor ? { floor: range.floor, end: s.end } : (range ?? s);
    this.#end = hwm;
    this.#spare = undefined;
    if (range !== undefined && range.floor >= next.#tree.hwm) {
      next.#spare = range;
      next.#grow = this.#grow;
    }
  }

  /** Appends validated patches (`folds[i]` is the tree after `patches[i]` and its effect) and makes them live. */
  *#append(
    inputs: readonly CommitInput[],
    patches: readonly (readonly Op[])[],
    folds: readonly Fold[],
    plan: IdPlan,
    /** Called once the events are the live state, before any snapshot they call for is written (which may wait for the store). */
    onApplied?: () => void,
  ): Generator<unknown, EventMeta[], unknown> {
    const head = this.#head;
    const metas = yield* value(
      this.store.append(
        this.session,
        this.branch,
        head.id,
        inputs.map((i, k) => {
          const ops = patches[k] as readonly Op[];
          const search = searchTextOf(ops);
          return {
            kind: PATCH_KIND,
            label: i.label ?? null,
            by: i.by ?? null,
            ts: i.ts,
            data: encodePatch(ops),
            // SE-8: the store may keep no copy of it: it is what events.ts registers for patch@1.
            ...(search === undefined ? {} : { search, searchDerived: true }),
          };
        }),
        this.#lease === undefined ? undefined : { lease: this.#lease },
      ),
    );
    // Durable: the computed trees become the live state, one event at a time, with a snapshot
    // wherever the chain passes K events since the last one (also inside a group commit, EN-5).
    if (plan.end !== this.#end) {
      this.#end = plan.end;
      this.#spare = undefined;
    }
    for (let i = 0; i < metas.length; i++) {
      const meta = metas[i] as EventMeta;
      const { tree, effect } = folds[i] as Fold;
      const before = this.#tree;
      // What the patch did, as the dom reported it when folding: O(patch), never a walk of the tree.
      this.#texts.recordPatch(meta.id, effect, tree);
      this.#live = updateLifecycle(this.#live, tree, effect);
      this.#liveView = undefined;
      // A tag index built by queries on the head follows it (DOM-33): O(patch), not O(tree).
      advanceIndex(before, tree, effect);
      this.#tree = tree;
      this.#head = meta;
      if (i === metas.length - 1) onApplied?.();
      yield* this.#maybeSnapshot();
    }
    return metas;
  }

  /**
   * A periodic snapshot after a durable commit is best effort: the commit has happened, so a
   * failure (disk full, …) is reported through `onSnapshotError` and tried again later (after 1,
   * 2, 4 … events, at most K), never thrown at the committer.
   */
  *#maybeSnapshot(): Generator<unknown, void, unknown> {
    const depth = this.#head.depth;
    if (depth - this.#lastSnapshotDepth < this.#every || depth < this.#snapshotRetry) return;
    try {
      yield* this.snapshotSteps();
    } catch (e) {
      this.#snapshotRetry = depth + this.#snapshotBackoff;
      this.#snapshotBackoff = Math.min(this.#snapshotBackoff * 2, this.#every);
      try {
        this.#onSnapshotError(e, this.#head.id);
      } catch {
        // a failing hook must not fail the commit either
      }
    }
  }

  /** Writes a snapshot of the head now. Throws if it cannot (the log is unaffected). */
  snapshot(): { pages: number; written: number } {
    return drive(this.snapshotSteps()) as { pages: number; written: number };
  }

  /** {@link snapshot} on either port, as steps (steps.ts). */
  *snapshotSteps(): Generator<unknown, { pages: number; written: number }, unknown> {
    let r: { pages: number; written: number };
    const head = this.#head;
    const tree = this.#tree;
    try {
      r = yield* this.#snapshots.writeSteps(head.id as EventId, tree, this.#live);
    } catch (e) {
      this.#snapshotError = e;
      throw e;
    }
    this.#snapshotError = undefined;
    this.#snapshotRetry = 0;
    this.#snapshotBackoff = 1;
    this.#lastSnapshotDepth = head.depth;
    // EN-46: what the snapshot stored is read back when touched, so the writer need not hold it.
    if (this.#tree === tree) this.#tree = this.#snapshots.release(tree);
    this.#texts.maybePrune(this.#tree);
    return r;
  }
}

/**
 * The state of a session at an event that a process already holds: its tree, lifecycle set, the
 * depth of the snapshot it was built from (or last written) and where its texts live. A line
 * opened at that event starts from it instead of reading the store (EN-47); it copies `live` and
 * `texts`, which its commits change.
 */
export interface KnownVersion {
  readonly event: EventId;
  readonly tree: Tree;
  readonly live: ReadonlySet<number>;
  readonly snapshotDepth: number;
  readonly texts: TextIndex;
}

/** A set that cannot be changed after it is built (what `live` hands out). */
class FrozenSet<T> extends Set<T> {
  readonly #sealed: boolean;
  constructor(values: Iterable<T>) {
    super();
    for (const v of values) super.add(v);
    this.#sealed = true;
  }
  override add(value: T): this {
    if (this.#sealed) throw new TypeError("a lifecycle set is a read-only view of one version");
    return super.add(value);
  }
  override delete(_value: T): boolean {
    throw new TypeError("a lifecycle set is a read-only view of one version");
  }
  override clear(): void {
    throw new TypeError("a lifecycle set is a read-only view of one version");
  }
}

function warnSnapshot(error: unknown, event: EventId): void {
  process.emitWarning(
    `strata: the snapshot after event ${event} could not be written (${(error as Error)?.message ?? String(error)}); the commit is durable and the snapshot will be tried again`,
    { code: "STRATA_SNAPSHOT" },
  );
}

/** A patch folded onto a tree: the tree after it, and what it did. */
export interface Fold {
  readonly tree: Tree;
  readonly effect: PatchEffect;
}

/** The trees after each patch, folded with the one fold replay uses; errors say which patch. */
function foldAll(base: Tree, patches: readonly (readonly Op[])[]): Fold[] {
  const folds: Fold[] = [];
  let tree = base;
  for (let i = 0; i < patches.length; i++) {
    let effect: PatchEffect | undefined;
    try {
      tree = foldEvent(tree, { kind: "patch", ops: patches[i] as readonly Op[] }, 0, (e) => (effect = e));
    } catch (e) {
      if (!(e instanceof EngineError) || e.cause === undefined) throw e;
      const which = patches.length > 1 ? `patch ${i + 1} of ${patches.length}` : "the patch";
      throw new EngineError("bad-event", `${which} does not apply: ${(e.cause as Error).message}`, { cause: e.cause });
    }
    folds.push({ tree, effect: effect as PatchEffect });
  }
  return folds;
}

/**
 * What a journaled commit may not carry: a label or `by` with a line break (the SSE framing could
 * not carry it, EN-25), or a high-water-mark op — ids are minted only in reserved ranges (EN-17),
 * so only the journal itself puts `["set", 0, "hwm", floor]` in front of a patch.
 */
export function checkInputs(inputs: readonly CommitInput[], floor?: number): void {
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i] as CommitInput;
    for (const [field, v] of [
      ["label", input.label],
      ["by", input.by],
    ] as const)
      if (v !== undefined && v !== null && (typeof v !== "string" || /[\r\n]/.test(v)))
        throw new EngineError("bad-input", `an event's ${field} must be one line of text, got ${JSON.stringify(v)}`);
    if (!Array.isArray(input.ops)) continue; // the fold reports it
    for (let k = 0; k < input.ops.length; k++) {
      const op = input.ops[k];
      if (!Array.isArray(op) || op[0] !== "set" || op[1] !== 0) continue;
      if (i === 0 && k === 0 && floor !== undefined && op[2] === "hwm" && op[3] === String(floor)) continue;
      throw new EngineError(
        "bad-input",
        `op ${k}${inputs.length > 1 ? ` of patch ${i + 1}` : ""} sets the high-water mark: journaled patches cannot; ids are minted in ranges the journal reserves (EN-17)`,
      );
    }
  }
}

/** The dom's id mapping (DOM-40), re-exported for the session's literal ops. */
export { shiftMinted } from "@strata/dom";

/** The tree with its high-water mark raised to `floor` (where a new range starts). */
export function raiseTo(tree: Tree, floor: number): Tree {
  return floor > tree.hwm ? applyPatch(tree, [["set", 0, "hwm", String(floor)]]) : tree;
}

/**
 * Puts `["set", 0, "hwm", floor]` in front of `patches` and moves every reference to an id minted
 * inside them (anything above `hwmBefore`: journaled patches cannot name other new ids) up by the
 * same amount, so literal ops keep pointing at the elements they insert.
 */
export function withIdFloor(patches: readonly (readonly Op[])[], hwmBefore: number, floor: number): (readonly Op[])[] {
  const moved = patches.map((ops) => shiftMinted(ops, hwmBefore, floor - hwmBefore));
  return moved.map((ops, i) => (i === 0 ? [["set", 0, "hwm", String(floor)] as Op, ...ops] : ops));
}
