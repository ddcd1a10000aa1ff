/**
 * The Session (EN-18 … EN-30): the one authority over a session's state. Its only state is the
 * tree (and the log it comes from); it caches and indexes, nothing more (L1). Writes are journal
 * first (L2); rewind, fork and resume are one lifecycle operation (L7); subscribers, replicas and
 * streams are projections of the same events (L8).
 */
import {
  applyPatch,
  count,
  draftWithEffect,
  type Element,
  type NodeId,
  type NodeSpec,
  type Op,
  type PatchEffect,
  type SelectOptions,
  select,
  selectOne,
  type Tree,
  type TreeDraft,
  toSnapshot,
} from "@strata/dom";
import {
  type AsyncStore,
  type BranchInfo,
  drive,
  type EventId,
  type EventMeta,
  isAsyncStore,
  type SessionId,
  type Store,
  StoreError,
  value,
} from "@strata/store";
import { EngineError } from "./errors.ts";
import { decodeEvent, markChecked } from "./events.ts";
import {
  type CommitInput,
  checkInputs,
  type Fold,
  type IdPlan,
  Journal,
  type JournalOptions,
  type KnownVersion,
  raiseTo,
  shiftMinted,
} from "./journal.ts";
import { type LifecycleWork, lifecycleWork, NO_WORK } from "./lifecycle.ts";
import { settle } from "./loading.ts";
import { materializeSteps } from "./materialize.ts";
import type { Answer, Port } from "./port.ts";
import { loadTreeSteps } from "./snapshots.ts";
import type { Frame } from "./sse.ts";
import { type StreamHost, type StreamOptions, StreamWriter } from "./stream.ts";
import { Subscription, type SubscriptionSource } from "./subscription.ts";
import { TextIndex } from "./texts.ts";

export interface SessionOptions extends JournalOptions {
  /** Frames a subscriber may have queued before it is marked lagged (default 10,000). */
  readonly subscriberBuffer?: number;
}

export interface CreateOptions<P extends Port = Store> extends SessionOptions {
  readonly title?: string | null;
  readonly metadata?: Record<string, unknown>;
  /** The fixed skeleton (default `<session><meta/><body/></session>`). */
  readonly genesis?: NodeSpec;
  /**
   * The session's first commits, made in the same store transaction as its genesis event (EN-34):
   * a crash leaves either no session or the session with everything `init` wrote (an agent run's
   * inputs and task, see `startRun`). If `init` throws, nothing is stored and `create` throws it.
   * Over a synchronous store `init` must be synchronous; over the asynchronous port it may await
   * (every store call it makes, across its awaits, is in the creation's transaction).
   */
  readonly init?: (session: Session<P>) => void | Promise<void>;
}

export interface CommitOptions {
  readonly label?: string | null;
  readonly by?: string | null;
  readonly ts?: number;
}

/** What changes the tree: ops, or a recipe that authors them on a draft (DOM-32). */
export type Change = readonly Op[] | ((draft: TreeDraft) => void);

/** The default flush interval of a stream over the asynchronous port (50 ms over SQLite). */
export const ASYNC_STREAM_INTERVAL_MS = 500;
export class Session<P extends Port = Store> implements StreamHost, SubscriptionSource {
  #journal: Journal;
  /** Over the asynchronous port: the last storage operation queued (they run one at a time, in call order). */
  #queue: Promise<unknown> = Promise.resolve();
  /** Over the asynchronous port: operations called and not settled yet. */
  #pending = 0;
  readonly #subscribers = new Set<Subscription>();
  readonly #streams = new Map<number, StreamWriter>();
  /** Over the asynchronous port: a queued flush of a stream closed before it ran, that failed (thrown by `flush()`). */
  #streamFailure: unknown;
  /** Over the asynchronous port: closed streams whose queued flushes have not all landed (still shown). */
  readonly #draining = new Set<StreamWriter>();
  /** Over the asynchronous port: streams whose queued flushes are dropped (their element went away, or one failed). */
  readonly #dropped = new WeakSet<StreamWriter>();
  /** States at events read with `at` (the last 16), reused by a fork from one of them (EN-47). */
  readonly #cache = new Map<EventId, KnownVersion>();
  #view: Tree | undefined;
  #closed = false;
  /** The lifecycle work of the transition that produced this object (open, fork); empty for create. */
  readonly work: LifecycleWork;

  private constructor(
    readonly store: P,
    journal: Journal,
    work: LifecycleWork,
    private options: SessionOptions,
  ) {
    this.#journal = journal;
    this.work = work;
  }

  /**
   * Starts a session: writes the genesis event (and whatever `options.init` commits, atomically
   * with it) and returns it live on branch "main".
   */
  static create<P extends Port>(store: P, options: CreateOptions<P> = {}): Answer<P, Session<P>> {
    const init = options.init;
    if (init !== undefined && typeof init !== "function")
      throw new EngineError("bad-input", "Session.create: `init` must be a function that commits the session's first events");
    function* make(): Generator<unknown, Session<P>, unknown> {
      const { journal } = yield* Journal.createSteps(
        store,
        { title: options.title ?? null, metadata: options.metadata ?? {}, skeleton: options.genesis },
        options,
      );
      return new Session(store, journal, NO_WORK, options);
    }
    if (isAsyncStore(store)) return Session.#createAsync(store, make, init) as Answer<P, Session<P>>;
    if (init === undefined) return drive(make()) as Answer<P, Session<P>>;
    let made: Session<P> | undefined;
    try {
      return (store as Store).transaction(() => {
        made = drive(make()) as Session<P>;
        const result: unknown = init(made);
        if (result instanceof Promise)
          throw new EngineError("bad-input", "Session.create: `init` must be synchronous (it runs inside the store transaction)");
        return made;
      }) as Answer<P, Session<P>>;
    } catch (e) {
      // Rolled back: the object's tree holds commits the store does not; nobody may use it.
      if (made !== undefined) made.#discard();
      throw e;
    }
  }

  static async #createAsync<P extends Port>(
    store: AsyncStore,
    make: () => Generator<unknown, Session<P>, unknown>,
    init: ((session: Session<P>) => void | Promise<void>) | undefined,
  ): Promise<Session<P>> {
    if (init === undefined) return await drive(make());
    let made: Session<P> | undefined;
    // The body answers at once where the store does (asyncStore runs a synchronous transaction,
    // whose body must finish synchronously): a promise only where something was awaited.
    const after = (s: Session<P>): Session<P> | Promise<Session<P>> => {
      made = s;
      const r = init(s);
      if (thenable(r)) return Promise.resolve(r).then(() => s.#settled());
      return s.#pending === 0 ? s : s.#settled();
    };
    try {
      return await store.transaction(() => {
        const m = drive(make());
        return thenable(m) ? Promise.resolve(m).then(after) : after(m);
      });
    } catch (e) {
      if (made !== undefined) made.#discard();
      throw e;
    }
  }

  /**
   * Runs a storage operation: at once over a synchronous store; over the asynchronous port after
   * the operations called before it (a session's writes never overlap: each folds onto the tree
   * the one before it made).
   */
  #run<T>(steps: () => Generator<unknown, T, unknown>): Answer<P, T> {
    if (!isAsyncStore(this.store)) return drive(steps()) as Answer<P, T>;
    if (this.#pending === 0) {
      // Nothing before it: it starts now (what it does before its first store call happens at
      // once, and inside a synchronous transaction of asyncStore all of it does).
      let r: T | Promise<T>;
      try {
        r = drive(steps());
      } catch (e) {
        return Promise.reject(e) as Answer<P, T>;
      }
      return (thenable(r) ? this.#track(Promise.resolve(r)) : Promise.resolve(r)) as Answer<P, T>;
    }
    return this.#track(this.#queue.then(() => drive(steps()))) as Answer<P, T>;
  }

  #track<T>(run: Promise<T>): Promise<T> {
    this.#pending++;
    this.#queue = run.then(
      () => void this.#pending--,
      () => void this.#pending--,
    );
    return run;
  }

  /** This session once every operation called so far has settled. */
  async #settled(): Promise<this> {
    while (this.#pending > 0) await this.#queue;
    return this;
  }

  /** Marks an object whose writes were rolled back as closed, without writing anything. */
  #discard(): void {
    this.#closed = true;
    for (const s of [...this.#streams.values()])
      s.abort(new EngineError("stream-ended", "the stream ended: the session's creation was rolled back"));
    for (const s of [...this.#subscribers]) s.close();
  }

  /**
   * Opens a branch at its head (snapshot + tail) and returns it with the lifecycle work of a resume:
   * everything lifecycle-bearing in the head, to spawn or reconcile (resume is the lifecycle
   * operation from an empty tree, L7).
   */
  static open<P extends Port>(
    store: P,
    session: SessionId,
    options: SessionOptions & { branch?: string } = {},
  ): Answer<P, { session: Session<P>; work: LifecycleWork }> {
    function* steps(): Generator<unknown, { session: Session<P>; work: LifecycleWork }, unknown> {
      if ((yield* value(store.getSession(session))) === undefined)
        throw new EngineError("not-found", `session ${session} does not exist in ${store.path}`);
      const journal = yield* Journal.openSteps(store, session, options.branch ?? "main", options);
      const work = yield* settle(() => lifecycleWork(undefined, { tree: journal.tree, live: journal.live }));
      return { session: new Session(store, journal, work, options), work };
    }
    return drive(steps()) as Answer<P, { session: Session<P>; work: LifecycleWork }>;
  }

  get id(): SessionId {
    return this.#journal.session;
  }

  get branch(): string {
    return this.#journal.branch;
  }

  get head(): EventMeta {
    return this.#journal.head;
  }

  /** The live tree: the durable tree plus text streamed but not flushed yet. */
  get tree(): Tree {
    if (this.#view === undefined) {
      const durable = this.#journal.tree;
      const ops: Op[] = [];
      for (const s of this.#shown())
        if (s.pending !== "" && durable.rec(s.element)?.first === 0) ops.push(["append", s.element, s.pending]);
      this.#view = ops.length === 0 ? durable : applyPatch(durable, ops);
    }
    return this.#view;
  }

  /** The streams whose text is shown before it is durable: the open ones, and closed ones still flushing. */
  #shown(): StreamWriter[] {
    return this.#draining.size === 0 ? [...this.#streams.values()] : [...this.#streams.values(), ...this.#draining];
  }

  /** The tree as the log has it (what a reopen gives). */
  get durableTree(): Tree {
    return this.#journal.tree;
  }

  /**
   * Ids of the live tree's lifecycle-bearing elements (running calls, jobs, subagents): a
   * read-only set of this version, which later commits do not change.
   */
  get live(): ReadonlySet<number> {
    return this.#journal.live;
  }

  select(selector: string, options?: SelectOptions): Element[] {
    return select(this.tree, selector, options);
  }

  selectOne(selector: string, options?: SelectOptions): Element | undefined {
    return selectOne(this.tree, selector, options);
  }

  count(selector: string, options?: SelectOptions): number {
    return count(this.tree, selector, options);
  }

  /**
   * Commits one patch event (journal first, L2): pending streams are flushed, the patch is folded
   * onto the tree (validation), appended with the expected head, then made live. A failing commit
   * changes nothing. Returns the event.
   */
  commit(change: Change, options: CommitOptions = {}): Answer<P, EventMeta> {
    // Streamed text is made durable first, as of this call (over the asynchronous port its
    // flushes are queued before the commit).
    this.#flushForCommit();
    return this.#run(() => first(this.#commitMany([{ change, ...options }])));
  }

  /**
   * Commits several patches as one transaction (group commit). Recipes see the previous ones'
   * result. A recipe must be a pure function of its draft: in the rare case that the ids it mints
   * must move to a newly reserved range (EN-17), it is run again on the raised tree, so that the
   * ids it captures are the ids it gets.
   */
  commitMany(inputs: readonly ({ change: Change } & CommitOptions)[]): Answer<P, EventMeta[]> {
    if (inputs.length > 0) this.#flushForCommit();
    return this.#run(() => this.#commitMany(inputs));
  }

  *#commitMany(inputs: readonly ({ change: Change } & CommitOptions)[]): Generator<unknown, EventMeta[], unknown> {
    this.#open();
    if (inputs.length === 0) return [];
    const j = this.#journal;
    // The view (durable tree + streamed text) follows the commit as soon as it is live.
    const applied = () => void (this.#view = undefined);
    const meta = (input: CommitOptions) => ({ label: input.label ?? null, by: input.by ?? null, ts: input.ts });
    // Literal ops are validated as written (errors name the caller's ids), then moved if needed.
    if (inputs.every((i) => typeof i.change !== "function"))
      return this.#publish(
        yield* j.commitWithOpsSteps(
          inputs.map((i) => ({ ops: i.change as readonly Op[], ...meta(i) })),
          applied,
        ),
      );
    const base = j.tree;
    // Author on the tree as it will be: a new line starts at a floor in its own range (L5).
    const author = (floor: number | undefined): { patches: CommitInput[]; minted: number; folds: Fold[] } => {
      const start = floor === undefined ? base : raiseTo(base, floor);
      let tree = start;
      // Each patch folded onto the tree before it, as the journal folds it (foldAll): on a line that
      // continues (no floor) these are the journal's folds, so it does not fold them again.
      const folds: Fold[] = [];
      const patches = inputs.map((input, i) => {
        let ops: readonly Op[];
        if (typeof input.change === "function") {
          // The draft applies each op as the recipe makes it, with foldAll's options: its tree and
          // effect are the patch's fold (DOM-32), so the patch is folded once, here.
          const drafted = draftWithEffect(tree, input.change, { monotonic: true });
          ops = drafted.ops;
          checkInputs([{ ops }]);
          folds.push({ tree: drafted.tree, effect: drafted.effect });
          tree = drafted.tree;
        } else {
          ops = floor === undefined ? input.change : shiftMinted(input.change, base.hwm, floor - base.hwm);
          checkInputs([{ ops }]);
          let effect: PatchEffect | undefined;
          tree = applyPatch(tree, ops, { monotonic: true, onEffect: (e) => (effect = e) });
          folds.push({ tree, effect: effect as PatchEffect });
        }
        if (i === 0 && floor !== undefined) ops = [["set", 0, "hwm", String(floor)], ...ops];
        return { ops, ...meta(input) };
      });
      return { patches, minted: tree.hwm - start.hwm, folds };
    };
    let floor = yield* j.startFloorSteps();
    let plan: IdPlan | undefined;
    let authored: { patches: CommitInput[]; minted: number; folds: Fold[] } | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      // A recipe is a pure function of its draft: over the asynchronous port it runs again once
      // what it read is fetched (loading.ts).
      const at = floor;
      authored = yield* settle(() => author(at));
      plan = yield* j.planIdsSteps(authored.minted, floor);
      if (plan.floor === floor) break;
      floor = plan.floor; // the ids must go to a range reserved just now: author again there
    }
    if (plan === undefined || authored === undefined || plan.floor !== floor)
      throw new EngineError(
        "bad-input",
        "a recipe minted a different number of ids each time it ran; recipes must be pure functions of the draft",
      );
    return this.#publish(
      yield* j.commitPlannedSteps(authored.patches, plan, floor === undefined ? { base, folds: authored.folds } : undefined, applied),
    );
  }

  #publish({ metas, patches }: { metas: EventMeta[]; patches: (readonly Op[])[] }): EventMeta[] {
    this.#view = undefined;
    for (let i = 0; i < metas.length && this.#subscribers.size > 0; i++) {
      const m = metas[i] as EventMeta;
      const frame: Frame = { type: "event", id: m.id, label: m.label, by: m.by, ops: markChecked(patches[i] as readonly Op[]) };
      for (const s of this.#subscribers) s.offer(frame);
    }
    if (this.#streams.size > 0 || this.#draining.size > 0) this.#endRemovedStreams(metas[metas.length - 1] as EventMeta);
    return metas;
  }

  /**
   * A commit that removed a streamed element, or gave it children, ends that stream: its text up
   * to the commit was flushed before it (EN-27); later appends to the writer throw, saying why.
   */
  #endRemovedStreams(meta: EventMeta): void {
    const tree = this.#journal.tree;
    for (const s of this.#shown()) {
      const r = tree.rec(s.element);
      if (r !== undefined && r.first === 0) continue;
      // Its flushes still queued (over the asynchronous port) cannot land any more: dropped.
      this.#dropped.add(s);
      this.#draining.delete(s);
      this.#view = undefined;
      s.abort(
        new EngineError(
          "stream-ended",
          `the stream into element ${s.element} ended: event ${meta.id} ${r === undefined ? "removed the element" : "gave it child elements"}`,
        ),
      );
    }
  }

  /**
   * Makes streamed text durable before a commit. A stream whose flush fails does not fail the
   * commit: if its element can no longer take text the stream ends (its writer reports why);
   * otherwise its text stays pending for the next flush.
   */
  #flushForCommit(): void {
    for (const s of [...this.#streams.values()]) s.flushQuietly();
  }

  /**
   * Writes a snapshot of the head now (EN-5: they are also written every K events, best effort).
   * Throws if the store cannot take it; the log is unaffected either way.
   */
  snapshot(): Answer<P, { pages: number; written: number }> {
    this.#open();
    return this.#run(() => this.#journal.snapshotSteps());
  }

  /** Why the last periodic snapshot could not be written, until one is (see `onSnapshotError`). */
  get snapshotError(): unknown {
    return this.#journal.snapshotError;
  }

  /** @internal SubscriptionSource */
  headId(): EventId {
    return this.head.id;
  }

  /**
   * Loads the whole live tree and answers it (decision 0037). Over the asynchronous port a tree
   * reads only the pages and texts fetched so far — the engine's own operations fetch what they
   * touch, so a resume reads only the head's last pages — and a synchronous read that reaches
   * anything else throws `not-loaded`: call this before reading the tree whole (`tree`, `select`,
   * templates, `subscribe`). It costs one call for the pages and one per level of texts; what is
   * loaded stays loaded, through later commits. Over the synchronous port it reads every page now.
   */
  load(): Answer<P, Tree> {
    this.#open();
    return this.#run(() => this.#load());
  }

  *#load(): Generator<unknown, Tree, unknown> {
    yield* loadTreeSteps(this.#journal.tree);
    return this.tree;
  }

  /**
   * The tree right after `event` (any event of this session, on any branch). Over the asynchronous
   * port its pages and texts are fetched when first needed: `loadTree(tree)` loads it whole.
   */
  at(event: EventId): Answer<P, Tree> {
    return this.#run(() => this.#at(event));
  }

  *#at(event: EventId): Generator<unknown, Tree, unknown> {
    yield* this.#ownEvent(event);
    if (event === this.head.id) return this.#journal.tree;
    return (yield* this.#versionAt(event)).tree;
  }

  *#ownEvent(event: EventId): Generator<unknown, EventMeta, unknown> {
    const meta = yield* value(this.store.eventMeta(event));
    if (meta === undefined || meta.session !== this.id)
      throw new EngineError("not-found", `event ${event} is not an event of session ${this.id}`);
    return meta;
  }

  *#versionAt(event: EventId): Generator<unknown, KnownVersion, unknown> {
    let v = this.#cache.get(event);
    if (v === undefined) {
      const texts = new TextIndex();
      const { tree, live, snapshotDepth } = yield* materializeSteps(this.store, event, { texts });
      v = { event, tree, live, snapshotDepth, texts };
      this.#cache.set(event, v);
      if (this.#cache.size > 16) this.#cache.delete(this.#cache.keys().next().value as EventId);
    }
    return v;
  }

  /** History of a branch (default: this one) from the index, without materializing anything. */
  log(options: { branch?: string; after?: EventId; limit?: number; reverse?: boolean } = {}): Answer<P, EventMeta[]> {
    return this.store.log(this.id, {
      branch: options.branch ?? this.branch,
      after: options.after,
      limit: options.limit,
      reverse: options.reverse,
    }) as Answer<P, EventMeta[]>;
  }

  branches(): Answer<P, BranchInfo[]> {
    return this.store.branches(this.id) as Answer<P, BranchInfo[]>;
  }

  /**
   * A new branch whose head is `event` (one row), opened as its own live session. Its `work` is the
   * lifecycle diff from this session's live tree to the fork point (L7).
   */
  fork(event: EventId, options: { name?: string } = {}): Answer<P, Session<P>> {
    this.#open();
    return this.#run(() => this.#fork(event, options));
  }

  *#fork(event: EventId, options: { name?: string }): Generator<unknown, Session<P>, unknown> {
    const at = yield* this.#ownEvent(event);
    const name = options.name ?? (yield* this.#freeBranchName(`fork-${event}`));
    const branch = yield* value(this.store.fork(this.id, event, name));
    // The lease fences the branch it was taken on, not the new one.
    const { lease: _, ...unfenced } = this.options;
    // A fork from the head, or from a state `at` read, starts from that state (EN-47).
    const known = event === this.head.id ? this.#journal.version : this.#cache.get(event);
    const journal = yield* Journal.openSteps(this.store, this.id, name, unfenced, known, { branch, head: at });
    const work = yield* settle(() => lifecycleWork({ tree: this.tree, live: this.live }, { tree: journal.tree, live: journal.live }));
    return new Session(this.store, journal, work, unfenced);
  }

  /**
   * Moves this branch's head back to `event` (on its chain); the abandoned head stays as branch
   * `rewound/<branch>/<head>`. The next commit follows `event`, minting ids no branch has used
   * (L5). Returns the lifecycle work from the live tree to the target (L7).
   */
  rewind(event: EventId, options: { keepAs?: string } = {}): Answer<P, LifecycleWork> {
    this.#open();
    this.#flushForCommit();
    return this.#run(() => this.#rewind(event, options));
  }

  *#rewind(event: EventId, options: { keepAs?: string }): Generator<unknown, LifecycleWork, unknown> {
    if (!(yield* value(this.store.isAncestor(event, this.head.id))))
      throw new EngineError("not-found", `event ${event} is not on branch "${this.branch}" of session ${this.id}; fork from it instead`);
    const store = this.store;
    return yield* this.#moveTo(
      this.branch,
      function* (id: SessionId, branch: string, expected: EventId) {
        yield* value(store.moveHead(id, branch, event, { expected, keepAs: options.keepAs }));
      },
      true,
    );
  }

  /** Makes this object follow another branch of the session (a branch switch): same lifecycle operation. */
  switchTo(branch: string): Answer<P, LifecycleWork> {
    this.#open();
    this.#flushForCommit();
    return this.#run(() => this.#switchTo(branch));
  }

  *#switchTo(branch: string): Generator<unknown, LifecycleWork, unknown> {
    if ((yield* value(this.store.branch(this.id, branch))) === undefined)
      throw new EngineError("not-found", `session ${this.id} has no branch "${branch}"`);
    return yield* this.#moveTo(branch, function* () {});
  }

  *#moveTo(
    branch: string,
    move: (id: SessionId, branch: string, expected: EventId) => Generator<unknown, void, unknown>,
    rewind = false,
  ): Generator<unknown, LifecycleWork, unknown> {
    // Streams belong to the line being left: what they hold was flushed when the move was called
    // (rewind, switchTo), and they end here.
    const before = { tree: this.#journal.tree, live: this.#journal.live };
    yield* move(this.id, this.branch, this.head.id);
    for (const s of [...this.#streams.values()])
      s.abort(new EngineError("stream-ended", `the stream into element ${s.element} ended: the session moved to another line of history`));
    const old = this.#journal;
    if (branch !== old.branch && this.options.lease !== undefined) {
      // The lease fences the branch it was taken on: on another branch this object writes unfenced.
      const { lease: _, ...rest } = this.options;
      this.options = rest;
    }
    this.#journal = yield* Journal.openSteps(this.store, this.id, branch, this.options);
    // After a rewind, the ids the abandoned line reserved and did not use serve the new line (EN-17).
    if (rewind) old.handOver(this.#journal);
    this.#view = undefined;
    const after = { tree: this.#journal.tree, live: this.#journal.live };
    const work = yield* settle(() => lifecycleWork(before, after));
    if (this.#subscribers.size > 0) {
      // A reset frame holds the whole tree: over the asynchronous port it is loaded first.
      if (isAsyncStore(this.store)) yield* loadTreeSteps(after.tree);
      const frame = this.resetFrame();
      for (const s of this.#subscribers) s.offer(frame);
    }
    return work;
  }

  /** @internal SubscriptionSource: the state to start over from (the durable head). */
  resetFrame(): Frame {
    return { type: "reset", event: this.head.id, branch: this.branch, tree: toSnapshot(this.#journal.tree) };
  }

  /** @internal SubscriptionSource: text streamed and not durable yet, per element. */
  pendingText(): { id: NodeId; text: string }[] {
    const out: { id: NodeId; text: string }[] = [];
    for (const s of this.#shown()) if (s.pending !== "") out.push({ id: s.element, text: s.pending });
    return out;
  }

  /**
   * The patch stream: a snapshot frame at `from` (default: the head), every event after it in
   * order, then live events, with a `reset` frame after a rewind or branch switch (EN-24).
   */
  subscribe(options: { from?: EventId; buffer?: number } = {}): Subscription {
    this.#open();
    const from = options.from ?? this.head.id;
    if (isAsyncStore(this.store) && from !== this.head.id)
      throw new EngineError(
        "bad-input",
        `on the asynchronous port a subscription starts at the head (event ${this.head.id}); read what came before with log() and at()`,
      );
    const store = this.store as Store;
    if (from !== this.head.id && !store.isAncestor(from, this.head.id))
      throw new EngineError("not-found", `event ${from} is not on branch "${this.branch}"; subscribe from an event of it`);
    const first: Frame = {
      type: "snapshot",
      event: from,
      branch: this.branch,
      tree: toSnapshot(from === this.head.id ? this.#journal.tree : (drive(this.#at(from)) as Tree)),
    };
    const sub = new Subscription(this, first, from, options.buffer ?? this.options.subscriberBuffer ?? 10_000);
    this.#subscribers.add(sub);
    return sub;
  }

  /**
   * @internal SubscriptionSource: the durable events after `cursor` on this line, oldest first
   * (payloads decoded and validated once, here); undefined when `cursor` is not on this line.
   */
  eventsAfter(cursor: EventId, limit: number): { meta: EventMeta; ops: readonly Op[] }[] | undefined {
    const head = this.head.id;
    if (cursor === head) return [];
    // Over the asynchronous port a subscriber cannot catch up synchronously: it starts over (reset).
    if (isAsyncStore(this.store)) return undefined;
    const store = this.store as Store;
    const c = store.eventMeta(cursor);
    if (c === undefined || !store.isAncestor(cursor, head)) return undefined;
    return store.chain(head, c.depth, limit).map((e) => {
      const d = decodeEvent(e);
      return { meta: e, ops: d.kind === "patch" ? d.ops : markChecked([]) };
    });
  }

  /** @internal SubscriptionSource */
  detach(sub: Subscription): void {
    this.#subscribers.delete(sub);
  }

  /**
   * A writer that streams text into element `id` (EN-27): shown at once, durable as coalesced
   * `append` ops every 50 ms or 64 KiB. One stream per element.
   */
  stream(id: NodeId, options: StreamOptions = {}): StreamWriter {
    this.#open();
    const r = this.#journal.tree.rec(id);
    if (r === undefined) throw new EngineError("not-found", `element ${id} does not exist`);
    if (r.first !== 0) throw new EngineError("bad-event", `element ${id} <${r.tag}> has children; text can only be streamed into a leaf`);
    if (this.#streams.has(id)) throw new EngineError("bad-event", `element ${id} already has an open stream`);
    // Over the network each flush costs statements and a wake-up of every follower: a flush every
    // half second by default (a 49-second reply is ~100 flushes, not ~1,000), decision 0037.
    const interval = options.intervalMs ?? (isAsyncStore(this.store) ? ASYNC_STREAM_INTERVAL_MS : undefined);
    const w = new StreamWriter(this, id, interval === undefined ? options : { ...options, intervalMs: interval });
    this.#streams.set(id, w);
    return w;
  }

  /** @internal StreamHost */
  showChunk(id: NodeId, text: string): void {
    this.#view = undefined;
    if (this.#subscribers.size === 0) return;
    const frame: Frame = { type: "chunk", id, text };
    for (const s of this.#subscribers) s.offer(frame);
  }

  /** @internal StreamHost */
  flushChunk(id: NodeId, text: string, label: string, stream: StreamWriter): boolean {
    this.#open();
    if (!isAsyncStore(this.store)) {
      this.#publish(this.#journal.commitWithOps([{ ops: [["append", id, text]], label }]));
      return false;
    }
    // Over the asynchronous port the flush is queued after the operations called before it, in
    // order; the text stays shown (pending) until it is durable. If it fails the stream ends with
    // its error (a later flush must not land before it); for a stream already closed the next
    // `flush()` throws it.
    const queued = this.#run(
      function* (this: Session<P>) {
        // A stream whose element went away, or whose earlier queued flush failed, drops the rest.
        if (this.#dropped.has(stream)) return this.#settle(stream, text);
        const metas = yield* this.#journal.commitWithOpsSteps([{ ops: [["append", id, text]], label }], () => this.#settle(stream, text));
        this.#publish(metas);
      }.bind(this),
    ) as Promise<void>;
    queued.catch((e: unknown) => {
      this.#dropped.add(stream);
      this.#settle(stream, text);
      if (!stream.closed) stream.abort(e);
      else this.#streamFailure ??= e;
    });
    return true;
  }

  /**
   * A queued flush of `text` into `stream` answered: its text is no longer shown as pending (it is
   * in the live tree, or dropped); a closed stream stops being shown once nothing of it is pending.
   */
  #settle(stream: StreamWriter, text: string): void {
    stream.flushed(text);
    if (stream.pending === "") this.#draining.delete(stream);
    this.#view = undefined;
  }

  /** @internal StreamHost: whether element `id` can still take streamed text. */
  accepts(id: NodeId): boolean {
    return this.#journal.tree.rec(id)?.first === 0;
  }

  /** @internal StreamHost */
  ended(stream: StreamWriter): void {
    this.#streams.delete(stream.element);
    // Over the asynchronous port its last flushes may still be queued: shown until they land.
    if (stream.pending !== "" && stream.endedBy === undefined) this.#draining.add(stream);
    this.#view = undefined;
  }

  /**
   * Makes all streamed text durable now. Every stream is flushed; the first failure is thrown
   * after (a stream whose element can no longer take text has ended, see EN-27).
   */
  flush(): Answer<P, void> {
    if (isAsyncStore(this.store)) {
      // Each stream's pending text is queued now; this answers after every flush queued before it.
      // A queued flush that failed (of a stream closed since) is thrown here.
      for (const s of [...this.#streams.values()]) s.flush();
      return this.#settled().then(() => {
        const failed = this.#streamFailure;
        this.#streamFailure = undefined;
        if (failed !== undefined) throw failed;
      }) as Answer<P, void>;
    }
    let failure: { error: unknown } | undefined;
    for (const s of [...this.#streams.values()])
      try {
        s.flush();
      } catch (e) {
        failure ??= { error: e };
      }
    if (failure !== undefined) throw failure.error;
    return undefined as Answer<P, void>;
  }

  /**
   * Records how this process leaves the session (L6: a process exit and a switch to another session
   * are different transitions), flushes, and ends every subscription.
   */
  close(options: { reason?: "exit" | "switch" } = {}): Answer<P, void> {
    if (this.#closed) return (isAsyncStore(this.store) ? this.#settled().then(() => undefined) : undefined) as Answer<P, void>;
    this.#flushForCommit();
    for (const s of [...this.#streams.values()])
      s.abort(new EngineError("stream-ended", `the stream into element ${s.element} ended: its session was closed`));
    return this.#run(() => this.#close(options));
  }

  *#close(options: { reason?: "exit" | "switch" }): Generator<unknown, void, unknown> {
    if (this.#closed) return;
    if (options.reason !== undefined) {
      const reason = options.reason;
      yield* this.#commitMany([
        {
          change: (d) => {
            // Found by walking down from the root, not by a selector (which indexes the whole tree:
            // over the asynchronous port it would fetch every page, decision 0037).
            const meta = d.tree.root.children.find((c) => c.tag === "meta");
            if (meta === undefined) return;
            const container = meta.children.find((c) => c.tag === "transitions")?.id ?? d.appendChild(meta.id, { tag: "transitions" });
            d.appendChild(container, { tag: "transition", attrs: { kind: reason } });
          },
          label: `session.${reason}`,
        },
      ]);
    }
    this.#closed = true;
    for (const s of [...this.#subscribers]) s.close();
  }

  #open(): void {
    if (this.#closed) throw new EngineError("closed", `session ${this.id} was closed in this process; open it again`);
    if (this.store.closed) throw new StoreError("closed", `the store of session ${this.id} was closed`);
  }

  /** `base`, or `base-2`, `base-3` … : the first name no branch of the session has. */
  freeBranchName(base: string): Answer<P, string> {
    return this.#run(() => this.#freeBranchName(base));
  }

  *#freeBranchName(base: string): Generator<unknown, string, unknown> {
    // One lookup when the name is free (the usual case): a fork costs the same next to 10 branches
    // or 10,000. Only a taken name lists the session's branches, to pick the first free suffix.
    if ((yield* value(this.store.branch(this.id, base))) === undefined) return base;
    const taken = new Set((yield* value(this.store.branches(this.id))).map((b) => b.name));
    if (!taken.has(base)) return base;
    for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
  }
}

/** The first of a commit's events. */
function* first(steps: Generator<unknown, EventMeta[], unknown>): Generator<unknown, EventMeta, unknown> {
  return (yield* steps)[0] as EventMeta;
}

const thenable = <T>(v: T | PromiseLike<T>): v is PromiseLike<T> => typeof (v as { then?: unknown } | null)?.then === "function";
