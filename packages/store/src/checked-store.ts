/**
 * The `Store` contract's edge, the same for every backend (ST-20, decision 0023): `CheckedStore`
 * wraps a backend and, on every method, refuses a call on a closed store (`closed`), checks every
 * argument (`bad-input`, checks.ts) before the backend sees it, refuses writes inside
 * `readTransaction` and `verify` (`bad-input`), and maps whatever the backend throws to a
 * `StoreError` once: a StoreError passes, the backend's own errors go through its `mapError`
 * (SQLite's result codes), and anything else is `internal`. Errors thrown by the caller's own
 * callbacks (`transaction`'s and `readTransaction`'s `fn`, `acquireLease`'s `stale`) pass through
 * unchanged.
 *
 * So a backend implements `Store` assuming checked arguments, an open store and no write inside a
 * read transaction, and never needs a guard of its own. The wrapper is a plain class (methods on
 * the prototype, no `#private` state), so a `Store` can be wrapped in a `Proxy`. Its cost per call
 * is the checks (`typeof` and integer tests, one well-formedness test per text) plus one method
 * call and a `try`; it allocates nothing on the append path.
 */
import { ARGS } from "./arg-checks.ts";
import { StoreError, toStoreError } from "./errors.ts";
import type { CreateSessionInput, Store, VerifyHooks } from "./store.ts";
import type {
  AppendOptions,
  BranchInfo,
  CollectOptions,
  CollectReport,
  EventId,
  EventInput,
  EventMeta,
  LeaseInfo,
  LeaseResult,
  LogQuery,
  RemovedSession,
  RemoveOptions,
  SearchEntry,
  SearchHit,
  SearchQuery,
  SessionActivity,
  SessionId,
  SessionInfo,
  SessionQuery,
  SnapshotRecord,
  StoredEvent,
  VerifyReport,
} from "./types.ts";

/** How a backend's own errors become StoreErrors: returns a StoreError, or the error unchanged when it is not the backend's. */
export type ErrorMapping = (e: unknown, where: string) => unknown;

/** Wraps a backend in the contract's checks (see {@link CheckedStore}). */
export function checkedStore(inner: Store, mapError?: ErrorMapping): Store {
  return new CheckedStore(inner, mapError);
}

export class CheckedStore implements Store {
  /** Depth of `readTransaction` and `verify` calls in progress: writes are refused inside them (ST-17). */
  private reading = 0;

  constructor(
    /** The backend: called only with checked arguments, while open, and with no write inside a read transaction. */
    protected readonly inner: Store,
    /** Maps the backend's own errors (see {@link ErrorMapping}); what it leaves is mapped by `toStoreError`. */
    private readonly mapError?: ErrorMapping,
  ) {}

  get path(): string {
    return this.inner.path;
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  close(): void {
    try {
      this.inner.close();
    } catch (e) {
      throw toStoreError(e, "store.close", this.mapError);
    }
  }

  transaction<T>(fn: () => T): T {
    const own = new Callback();
    try {
      this.open();
      ARGS.transaction(fn);
      this.writing("transaction");
      return this.inner.transaction(own.wrap(() => synchronous(fn())));
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.transaction", this.mapError);
    }
  }

  readTransaction<T>(fn: () => T): T {
    const own = new Callback();
    try {
      this.open();
      ARGS.readTransaction(fn);
      this.reading++;
      try {
        return this.inner.readTransaction(own.wrap(fn));
      } finally {
        this.reading--;
      }
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.readTransaction", this.mapError);
    }
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  createSession(input: CreateSessionInput): { session: SessionInfo; genesis: StoredEvent } {
    try {
      this.open();
      ARGS.createSession(input);
      this.writing("createSession");
      return this.inner.createSession(input);
    } catch (e) {
      throw toStoreError(e, "store.createSession", this.mapError);
    }
  }

  getSession(id: SessionId): SessionInfo | undefined {
    try {
      this.open();
      ARGS.getSession(id);
      return this.inner.getSession(id);
    } catch (e) {
      throw toStoreError(e, "store.getSession", this.mapError);
    }
  }

  listSessions(query: SessionQuery = {}): SessionInfo[] {
    try {
      this.open();
      ARGS.listSessions(query);
      return this.inner.listSessions(query);
    } catch (e) {
      throw toStoreError(e, "store.listSessions", this.mapError);
    }
  }

  recentSessions(limit?: number): SessionActivity[] {
    try {
      this.open();
      ARGS.recentSessions(limit);
      return this.inner.recentSessions(limit);
    } catch (e) {
      throw toStoreError(e, "store.recentSessions", this.mapError);
    }
  }

  search(query: SearchQuery): SearchHit[] {
    try {
      this.open();
      ARGS.search(query);
      return this.inner.search(query);
    } catch (e) {
      throw toStoreError(e, "store.search", this.mapError);
    }
  }

  searchBacklog(): number {
    try {
      this.open();
      return this.inner.searchBacklog();
    } catch (e) {
      throw toStoreError(e, "store.searchBacklog", this.mapError);
    }
  }

  indexSearch(entries: readonly SearchEntry[], backlog: number): void {
    try {
      this.open();
      ARGS.indexSearch(entries, backlog);
      this.writing("indexSearch");
      this.inner.indexSearch(entries, backlog);
    } catch (e) {
      throw toStoreError(e, "store.indexSearch", this.mapError);
    }
  }

  findSessions(prefix: string): SessionInfo[] {
    try {
      this.open();
      ARGS.findSessions(prefix);
      return this.inner.findSessions(prefix);
    } catch (e) {
      throw toStoreError(e, "store.findSessions", this.mapError);
    }
  }

  updateSession(id: SessionId, changes: { title?: string | null; metadata?: Readonly<Record<string, unknown>> }): SessionInfo {
    try {
      this.open();
      ARGS.updateSession(id, changes);
      this.writing("updateSession");
      return this.inner.updateSession(id, changes);
    } catch (e) {
      throw toStoreError(e, "store.updateSession", this.mapError);
    }
  }

  removeSession(id: SessionId, options: RemoveOptions = {}): RemovedSession {
    const own = new Callback();
    try {
      this.open();
      ARGS.removeSession(id, options);
      this.writing("removeSession");
      const live = options.live;
      return this.inner.removeSession(id, live === undefined ? options : { ...options, live: own.wrap(live) });
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.removeSession", this.mapError);
    }
  }

  collectGarbage(options: CollectOptions): CollectReport {
    const own = new Callback();
    try {
      this.open();
      ARGS.collectGarbage(options);
      this.writing("collectGarbage");
      const { live, refs } = options;
      return this.inner.collectGarbage({
        ...options,
        ...(live === undefined ? {} : { live: own.wrap(live) }),
        refs: own.wrap(refs),
      });
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.collectGarbage", this.mapError);
    }
  }

  reserve(session: SessionId, count = 1): number {
    try {
      this.open();
      ARGS.reserve(session, count);
      this.writing("reserve");
      return this.inner.reserve(session, count);
    } catch (e) {
      throw toStoreError(e, "store.reserve", this.mapError);
    }
  }

  // ── branches ────────────────────────────────────────────────────────────────────────────────

  branches(session: SessionId): BranchInfo[] {
    try {
      this.open();
      ARGS.branches(session);
      return this.inner.branches(session);
    } catch (e) {
      throw toStoreError(e, "store.branches", this.mapError);
    }
  }

  branch(session: SessionId, name: string): BranchInfo | undefined {
    try {
      this.open();
      ARGS.branch(session, name);
      return this.inner.branch(session, name);
    } catch (e) {
      throw toStoreError(e, "store.branch", this.mapError);
    }
  }

  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], options?: AppendOptions): EventMeta[] {
    try {
      this.open();
      ARGS.append(session, branch, expectedHead, events, options);
      this.writing("append");
      return this.inner.append(session, branch, expectedHead, events, options);
    } catch (e) {
      throw toStoreError(e, "store.append", this.mapError);
    }
  }

  fork(session: SessionId, at: EventId, name: string): BranchInfo {
    try {
      this.open();
      ARGS.fork(session, at, name);
      this.writing("fork");
      return this.inner.fork(session, at, name);
    } catch (e) {
      throw toStoreError(e, "store.fork", this.mapError);
    }
  }

  moveHead(
    session: SessionId,
    branch: string,
    to: EventId,
    options: { expected?: EventId; keepAs?: string; pin?: boolean } = {},
  ): { branch: BranchInfo; kept: BranchInfo | null } {
    try {
      this.open();
      ARGS.moveHead(session, branch, to, options);
      this.writing("moveHead");
      return this.inner.moveHead(session, branch, to, options);
    } catch (e) {
      throw toStoreError(e, "store.moveHead", this.mapError);
    }
  }

  // ── events and chains ───────────────────────────────────────────────────────────────────────

  event(id: EventId): StoredEvent | undefined {
    try {
      this.open();
      ARGS.event(id);
      return this.inner.event(id);
    } catch (e) {
      throw toStoreError(e, "store.event", this.mapError);
    }
  }

  eventMeta(id: EventId): EventMeta | undefined {
    try {
      this.open();
      ARGS.eventMeta(id);
      return this.inner.eventMeta(id);
    } catch (e) {
      throw toStoreError(e, "store.eventMeta", this.mapError);
    }
  }

  events(ids: readonly EventId[]): StoredEvent[] {
    try {
      this.open();
      ARGS.events(ids);
      return this.inner.events(ids);
    } catch (e) {
      throw toStoreError(e, "store.events", this.mapError);
    }
  }

  eventData(ids: readonly EventId[]): Map<EventId, string> {
    try {
      this.open();
      ARGS.eventData(ids);
      return this.inner.eventData(ids);
    } catch (e) {
      throw toStoreError(e, "store.eventData", this.mapError);
    }
  }

  chainData(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): string[] {
    try {
      this.open();
      ARGS.chainData(head, afterDepth, limit);
      return this.inner.chainData(head, afterDepth, limit);
    } catch (e) {
      throw toStoreError(e, "store.chainData", this.mapError);
    }
  }

  chain(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): StoredEvent[] {
    try {
      this.open();
      ARGS.chain(head, afterDepth, limit);
      return this.inner.chain(head, afterDepth, limit);
    } catch (e) {
      throw toStoreError(e, "store.chain", this.mapError);
    }
  }

  chainMeta(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER, reverse = false): EventMeta[] {
    try {
      this.open();
      ARGS.chainMeta(head, afterDepth, limit, reverse);
      return this.inner.chainMeta(head, afterDepth, limit, Boolean(reverse));
    } catch (e) {
      throw toStoreError(e, "store.chainMeta", this.mapError);
    }
  }

  firstLabeled(head: EventId, label: string, afterDepth = 0): EventMeta | undefined {
    try {
      this.open();
      ARGS.firstLabeled(head, label, afterDepth);
      return this.inner.firstLabeled(head, label, afterDepth);
    } catch (e) {
      throw toStoreError(e, "store.firstLabeled", this.mapError);
    }
  }

  log(session: SessionId, query: LogQuery = {}): EventMeta[] {
    try {
      this.open();
      ARGS.log(session, query);
      return this.inner.log(session, query);
    } catch (e) {
      throw toStoreError(e, "store.log", this.mapError);
    }
  }

  isAncestor(ancestor: EventId, descendant: EventId): boolean {
    try {
      this.open();
      ARGS.isAncestor(ancestor, descendant);
      return this.inner.isAncestor(ancestor, descendant);
    } catch (e) {
      throw toStoreError(e, "store.isAncestor", this.mapError);
    }
  }

  atDepth(head: EventId, depth: number): EventMeta | undefined {
    try {
      this.open();
      ARGS.atDepth(head, depth);
      return this.inner.atDepth(head, depth);
    } catch (e) {
      throw toStoreError(e, "store.atDepth", this.mapError);
    }
  }

  // ── snapshots and blobs ─────────────────────────────────────────────────────────────────────

  putSnapshot(event: EventId, header: string, pages: readonly (string | null)[]): void {
    try {
      this.open();
      ARGS.putSnapshot(event, header, pages);
      this.writing("putSnapshot");
      this.inner.putSnapshot(event, header, pages);
    } catch (e) {
      throw toStoreError(e, "store.putSnapshot", this.mapError);
    }
  }

  nearestSnapshot(event: EventId): SnapshotRecord | undefined {
    try {
      this.open();
      ARGS.nearestSnapshot(event);
      return this.inner.nearestSnapshot(event);
    } catch (e) {
      throw toStoreError(e, "store.nearestSnapshot", this.mapError);
    }
  }

  snapshots(session: SessionId): EventMeta[] {
    try {
      this.open();
      ARGS.snapshots(session);
      return this.inner.snapshots(session);
    } catch (e) {
      throw toStoreError(e, "store.snapshots", this.mapError);
    }
  }

  putBlob(data: Uint8Array | string): string {
    try {
      this.open();
      ARGS.putBlob(data);
      this.writing("putBlob");
      return this.inner.putBlob(data);
    } catch (e) {
      throw toStoreError(e, "store.putBlob", this.mapError);
    }
  }

  getBlob(hash: string): Buffer | undefined {
    try {
      this.open();
      ARGS.getBlob(hash);
      return this.inner.getBlob(hash);
    } catch (e) {
      throw toStoreError(e, "store.getBlob", this.mapError);
    }
  }

  getBlobs(hashes: readonly string[]): Map<string, Buffer> {
    try {
      this.open();
      ARGS.getBlobs(hashes);
      return this.inner.getBlobs(hashes);
    } catch (e) {
      throw toStoreError(e, "store.getBlobs", this.mapError);
    }
  }

  hasBlob(hash: string): boolean {
    try {
      this.open();
      ARGS.hasBlob(hash);
      return this.inner.hasBlob(hash);
    } catch (e) {
      throw toStoreError(e, "store.hasBlob", this.mapError);
    }
  }

  // ── leases (ST-23) ──────────────────────────────────────────────────────────────────────────

  acquireLease(session: SessionId, branch: string, owner: string, stale?: (holder: LeaseInfo) => boolean): LeaseResult {
    const own = new Callback();
    try {
      this.open();
      ARGS.acquireLease(session, branch, owner, stale);
      this.writing("acquireLease");
      return this.inner.acquireLease(session, branch, owner, stale === undefined ? undefined : own.wrap(stale));
    } catch (e) {
      // The caller's `stale` may throw: its error passes through as it is.
      throw own.threw(e) ? e : toStoreError(e, "store.acquireLease", this.mapError);
    }
  }

  renewLease(session: SessionId, branch: string, token: number): boolean {
    try {
      this.open();
      ARGS.renewLease(session, branch, token);
      this.writing("renewLease");
      return this.inner.renewLease(session, branch, token);
    } catch (e) {
      throw toStoreError(e, "store.renewLease", this.mapError);
    }
  }

  releaseLease(session: SessionId, branch: string, token: number): boolean {
    try {
      this.open();
      ARGS.releaseLease(session, branch, token);
      this.writing("releaseLease");
      return this.inner.releaseLease(session, branch, token);
    } catch (e) {
      throw toStoreError(e, "store.releaseLease", this.mapError);
    }
  }

  lease(session: SessionId, branch: string): LeaseInfo | undefined {
    try {
      this.open();
      ARGS.lease(session, branch);
      return this.inner.lease(session, branch);
    } catch (e) {
      throw toStoreError(e, "store.lease", this.mapError);
    }
  }

  verify(session?: SessionId, hooks: VerifyHooks = {}): VerifyReport {
    try {
      this.open();
      ARGS.verify(session, hooks);
      // Verify only reads (ST-17): a hook that writes is refused like a write inside readTransaction.
      this.reading++;
      try {
        return this.inner.verify(session, hooks);
      } finally {
        this.reading--;
      }
    } catch (e) {
      throw toStoreError(e, "store.verify", this.mapError);
    }
  }

  // ── the contract's own state ────────────────────────────────────────────────────────────────

  /** Refuses a call on a closed store. */
  private open(): void {
    if (this.inner.closed) throw new StoreError("closed", `the store at ${this.inner.path} was closed`);
  }

  /** Refuses a write inside `readTransaction` (or `verify`): it would need the write lock from a snapshot that may be stale. */
  private writing(what: string): void {
    if (this.reading > 0)
      throw new StoreError(
        "bad-input",
        `store.${what} was called inside store.readTransaction, which only reads; write outside it (or use store.transaction)`,
      );
  }
}

/**
 * What a transaction's `fn` returned, refused when it is a promise: the store is synchronous, so
 * writes after an `await` would land outside the transaction. Thrown inside it, so it rolls back.
 */
function synchronous<T>(result: T): T {
  if (typeof (result as { then?: unknown } | null)?.then !== "function") return result;
  Promise.resolve(result).catch(() => {}); // its failure, if any, is reported by the error below
  throw new StoreError(
    "bad-input",
    "store.transaction: fn returned a promise, but the store is synchronous: do every write inside fn without await; nothing was written",
  );
}

/**
 * A caller's callback, wrapped so that what it throws — or the promise it returns rejects with — is
 * known: exactly that error passes through the store unchanged (ST-20).
 */
export class Callback {
  #thrown: { readonly error: unknown } | undefined;

  wrap<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args) => {
      try {
        const r = fn(...args);
        if (typeof (r as { then?: unknown } | null)?.then !== "function") return r;
        return Promise.resolve(r).catch((e: unknown) => {
          this.#thrown = { error: e };
          throw e;
        }) as R;
      } catch (e) {
        this.#thrown = { error: e };
        throw e;
      }
    };
  }

  threw(e: unknown): boolean {
    return this.#thrown !== undefined && this.#thrown.error === e;
  }
}
