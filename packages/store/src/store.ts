/**
 * The interface the engine talks to (DESIGN §4), the port every backend implements (decision
 * 0023). It is synchronous because the embedded backend is (better-sqlite3, decision 0007). Every
 * method either does all it says or throws a `StoreError` and changes nothing. A backend
 * implements it with its arguments already checked and wraps itself in `checkedStore`
 * (checked-store.ts), which checks every argument and maps every error; the conformance suite
 * (test/conformance/) is what a backend must pass.
 */
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

/** Checks the engine plugs into `verify` for what the store cannot judge alone (it knows no trees). */
export interface VerifyHooks {
  /** Returns why an event's payload is invalid, or undefined. */
  checkEvent?(event: StoredEvent): string | undefined;
  /** Returns why a snapshot differs from the replay of its chain, or undefined. */
  checkSnapshot?(snapshot: SnapshotRecord, session: SessionId): string | undefined;
  /** Called as work progresses (for progress display). */
  progress?(done: number, total: number): void;
}

export interface CreateSessionInput {
  readonly title?: string | null;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The first event of the session (depth 1, no prior), on branch "main". */
  readonly genesis: EventInput;
}

export interface Store {
  readonly path: string;
  close(): void;
  readonly closed: boolean;

  /** Runs `fn` in one write transaction: everything it writes commits together or not at all. */
  transaction<T>(fn: () => T): T;
  /**
   * Runs `fn` against one consistent state of the file (ST-17): every read inside sees the same
   * committed state, whatever other processes commit meanwhile. `fn` only reads: a write inside
   * is a `bad-input` error. Errors thrown by `fn` pass through unchanged.
   */
  readTransaction<T>(fn: () => T): T;

  createSession(input: CreateSessionInput): { session: SessionInfo; genesis: StoredEvent };
  getSession(id: SessionId): SessionInfo | undefined;
  /**
   * Sessions, newest first (by id: creation time); with `query.limit`, at most that many, and with
   * `query.before`, only those older than that session (a page's last id is the next page's
   * `before`). A page is one range read of the index, whatever the store holds.
   */
  listSessions(query?: SessionQuery): SessionInfo[];
  /**
   * Sessions by last activity, most recent first (ties: the newer session first), at most `limit`:
   * each with the newest of its branch heads. One statement however many sessions the store holds
   * (what `@last` and a listing by activity ask, without a lookup per session). A head that cannot
   * be read (a damaged file) counts as no activity.
   */
  recentSessions(limit?: number): SessionActivity[];
  /**
   * Events whose searchable text (`EventInput.search`) holds every word and phrase of `query.text`
   * (SE-4), newest first, each with a snippet (SE-5): found in the store's full-text index, which
   * every append keeps in its own transaction. Events written before the file had the index are
   * found once they are indexed (`searchBacklog`, `indexSearch`).
   */
  search(query: SearchQuery): SearchHit[];
  /**
   * Events with an id at or below this one were written before this file had a search index and
   * are not all indexed yet (SE-6); 0 when every event is.
   */
  searchBacklog(): number;
  /**
   * Indexes older events (SE-6): `entries` (each an event at or below the backlog, its text as
   * `EventInput.search` would have been) are indexed, and the backlog becomes `backlog`, which
   * says every event above it is now indexed. One transaction.
   */
  indexSearch(entries: readonly SearchEntry[], backlog: number): void;
  /** Sessions whose id starts with `prefix` (case-insensitive). */
  findSessions(prefix: string): SessionInfo[];
  /** Replaces title and/or merges metadata. */
  updateSession(id: SessionId, changes: { title?: string | null; metadata?: Readonly<Record<string, unknown>> }): SessionInfo;

  /**
   * Removes the whole session (ST-35) in one write transaction: its branches (kept rewound heads
   * included), events, snapshots, leases and search rows — or, failing, nothing. Blobs stay
   * (`collectGarbage` reclaims those nothing reaches). Refused with `InUse` (`in-use`) while a
   * branch's lease is held by a live holder (`options.live`; default: any holder), `not-found`
   * when there is no such session. With `options.dryRun` it only counts what would go.
   */
  removeSession(id: SessionId, options?: RemoveOptions): RemovedSession;
  /**
   * Deletes the blobs — payloads, texts, files, snapshot pages and directory chunks — that nothing
   * left in the store reaches (ST-36): not an event's payload or text, not a snapshot's header or
   * directory, not (transitively, through `options.refs`) a reachable blob's bytes. Mark and sweep
   * run in one write transaction that no append, snapshot or blob write interleaves with, and it
   * is refused (`in-use`) while any branch is driven by a live lease holder: a driver may hold a
   * blob it put but has not yet referenced. `options.dryRun` deletes nothing.
   */
  collectGarbage(options: CollectOptions): CollectReport;

  /**
   * Reserves `count` consecutive numbers from the session's counter (starting at 1) and returns the
   * first. Concurrent writers never get the same number.
   */
  reserve(session: SessionId, count?: number): number;

  branches(session: SessionId): BranchInfo[];
  branch(session: SessionId, name: string): BranchInfo | undefined;
  /**
   * Appends `events` after `expectedHead` on `branch`, as one transaction, and moves the branch
   * head to the last one. Throws `HeadConflict` if the head is not `expectedHead`, and — when
   * `options.lease` is given — `LeaseLost` if the branch's lease is no longer that token (ST-23).
   * Each event gets its digest (ST-21).
   */
  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], options?: AppendOptions): EventMeta[];
  /** Creates branch `name` with its head at `at` (any event of the session). Writes one row. */
  fork(session: SessionId, at: EventId, name: string): BranchInfo;
  /**
   * Moves `branch`'s head to `to` (an event of the session). If the old head is not on the new
   * head's chain it is kept as branch `keepAs` (default `rewound/<branch>/<old head>`): nothing is
   * ever lost. Returns the moved branch and the kept one, if any. The moved branch is pinned: its
   * next append starts a new line of history. `pin: true` pins it even when `to` is its head
   * already (an importer uses it so an imported line never continues minting where it stopped).
   */
  moveHead(
    session: SessionId,
    branch: string,
    to: EventId,
    options?: { expected?: EventId; keepAs?: string; pin?: boolean },
  ): { branch: BranchInfo; kept: BranchInfo | null };

  event(id: EventId): StoredEvent | undefined;
  eventMeta(id: EventId): EventMeta | undefined;
  /** Payloads of many events at once (in the order asked; missing ids are skipped). */
  events(ids: readonly EventId[]): StoredEvent[];
  /**
   * The payloads of many events at once, by id (ST-28): the narrow read for text references into
   * the log. Missing ids are absent from the map; duplicates and any order are allowed. A backend
   * reads them in as few statements as it can (the SQLite one: a rowid range per dense run).
   */
  eventData(ids: readonly EventId[]): Map<EventId, string>;
  /**
   * The payloads of `head`'s chain after `afterDepth` (at most `limit`), oldest first: the narrow
   * read for a consumer that wants every event's content and no metadata (a full history).
   */
  chainData(head: EventId, afterDepth?: number, limit?: number): string[];
  /** Events with payloads on the chain ending at `head`, with depth > `afterDepth`, oldest first, at most `limit`. */
  chain(head: EventId, afterDepth?: number, limit?: number): StoredEvent[];
  /** Metadata of the chain ending at `head` (no payloads), oldest first, with depth > `afterDepth`. */
  chainMeta(head: EventId, afterDepth?: number, limit?: number, reverse?: boolean): EventMeta[];
  /**
   * The first event labelled `label` on the chain ending at `head` with depth > `afterDepth`, or
   * undefined: found in the index, so it costs the same wherever it is, or whether it is there.
   */
  firstLabeled(head: EventId, label: string, afterDepth?: number): EventMeta | undefined;
  /** A branch's history from the index, without payloads. */
  log(session: SessionId, query?: LogQuery): EventMeta[];
  /** True when `ancestor` is on the chain that ends at `descendant` (an event is its own ancestor). */
  isAncestor(ancestor: EventId, descendant: EventId): boolean;
  /** The event at `depth` on the chain ending at `head`. */
  atDepth(head: EventId, depth: number): EventMeta | undefined;

  /** Stores a snapshot of the state at `event`: an opaque header and page references. */
  putSnapshot(event: EventId, header: string, pages: readonly (string | null)[]): void;
  /** The snapshot on `event`'s chain with the greatest depth at or before it, if any. */
  nearestSnapshot(event: EventId): SnapshotRecord | undefined;
  snapshots(session: SessionId): EventMeta[];

  /** Stores bytes under their sha256 (hex) and returns it; storing the same bytes again is free. */
  putBlob(data: Uint8Array | string): string;
  getBlob(hash: string): Buffer | undefined;
  /** Many blobs at once, keyed by hash. */
  getBlobs(hashes: readonly string[]): Map<string, Buffer>;
  hasBlob(hash: string): boolean;

  /**
   * Takes the one-driver lease of (`session`, `branch`) in one IMMEDIATE write transaction (ST-23):
   * if nobody holds it, or `stale(holder)` — called inside the transaction — returns true, the
   * caller becomes the holder with a new fencing token (one more than the last token handed out
   * for this branch, released or not). Otherwise nothing changes and the holder is returned.
   * `owner` is opaque text of at most 4096 characters. Errors thrown by `stale` pass through.
   */
  acquireLease(session: SessionId, branch: string, owner: string, stale?: (holder: LeaseInfo) => boolean): LeaseResult;
  /** Marks the lease as alive now (`renewed`); false if `token` no longer holds it. */
  renewLease(session: SessionId, branch: string, token: number): boolean;
  /** Gives the lease up; false if `token` no longer holds it. The token is never handed out again. */
  releaseLease(session: SessionId, branch: string, token: number): boolean;
  /** The current holder of the branch's lease, if any (undefined on a file without leases: ST-4). */
  lease(session: SessionId, branch: string): LeaseInfo | undefined;

  verify(session?: SessionId, hooks?: VerifyHooks): VerifyReport;
}

/** The methods of `Store`, each once: what `CheckedStore` wraps and the conformance suite enumerates. */
export const STORE_METHODS = [
  "close",
  "transaction",
  "readTransaction",
  "createSession",
  "getSession",
  "listSessions",
  "recentSessions",
  "search",
  "searchBacklog",
  "indexSearch",
  "findSessions",
  "updateSession",
  "removeSession",
  "collectGarbage",
  "reserve",
  "branches",
  "branch",
  "append",
  "fork",
  "moveHead",
  "event",
  "eventMeta",
  "events",
  "eventData",
  "chainData",
  "chain",
  "chainMeta",
  "firstLabeled",
  "log",
  "isAncestor",
  "atDepth",
  "putSnapshot",
  "nearestSnapshot",
  "snapshots",
  "putBlob",
  "getBlob",
  "getBlobs",
  "hasBlob",
  "acquireLease",
  "renewLease",
  "releaseLease",
  "lease",
  "verify",
] as const satisfies readonly StoreMethod[];

/** The names of `Store`'s methods (its properties that are functions). */
export type StoreMethod = { [K in keyof Store]: Store[K] extends (...args: never[]) => unknown ? K : never }[keyof Store];

/** Compiles only while `STORE_METHODS` lists every method of `Store`: a new method must be added there (and checked). */
export const STORE_METHODS_COMPLETE: [Exclude<StoreMethod, (typeof STORE_METHODS)[number]>] extends [never] ? true : never = true;
