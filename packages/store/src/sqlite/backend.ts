/**
 * The SQLite backend of `Store` (ST-1 … ST-14, ST-17 … ST-25): one file, WAL, the schema in
 * schema.ts; sessions, branches, forks and rewinds as pointer moves, chain reads (chain-reader.ts
 * over segments.ts), snapshots (snapshot-pages.ts), blobs (blobs.ts), leases (leases.ts) and the
 * search index (search-index.ts).
 * Appends are compare-and-swap on the branch head, with one conditional INSERT on the fast path
 * (appends.ts).
 *
 * It implements the contract for checked arguments only: `SqliteStore` (sqlite-store.ts) wraps
 * it in `CheckedStore`, which checks every argument, refuses calls on a closed store and writes
 * inside read transactions, and maps errors. Its own methods call each other directly.
 */
import type Database from "better-sqlite3";
import { badTimestamp, checkBranchName, isTimestamp, notFound } from "../checks.ts";
import { HeadConflict, StoreError } from "../errors.ts";
import { newSessionId } from "../ids.ts";
import { branchOf, hexOf, metaOf, sessionOf, withPriors } from "../rows.ts";
import { PageDirectories } from "../snapshot-pages.ts";
import type { CreateSessionInput, Store, VerifyHooks } from "../store.ts";
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
} from "../types.ts";
import { UndoLog } from "../undo.ts";
import { Appends } from "./appends.ts";
import { BlobTable } from "./blobs.ts";
import { ChainReader } from "./chain-reader.ts";
import { fromSqlite } from "./errors.ts";
import { LeaseTable } from "./leases.ts";
import { LegacyDigests } from "./legacy.ts";
import type { OpenedDatabase } from "./open.ts";
import { collectGarbageRows, gcGeneration, removeSessionRows } from "./removal.ts";
import { DIGEST_VERSION } from "./schema.ts";
import { SearchIndex } from "./search-index.ts";
import { Segments, type Span } from "./segments.ts";
import { type EventRow, type MetaRow, prepare, type Statements } from "./statements.ts";
import { verifyStore } from "./verify.ts";

/** Pending search rows an appending connection gathers before it moves them into the index (SE-4). */
export const SEARCH_BATCH = 256;

/** What a backend is opened with besides its file. */
export interface BackendOptions {
  /** Largest event payload kept inline, in bytes (default 1 MiB); larger payloads become blobs. */
  readonly inlineLimit?: number;
  /** Clock for event timestamps (tests pin it). */
  readonly now?: () => number;
}

export class SqliteBackend implements Store {
  readonly #db: Database.Database;
  readonly #release: () => void;
  readonly #now: () => number;
  readonly #st: Statements;
  readonly #segments: Segments;
  readonly #blobs: BlobTable;
  readonly #pages: PageDirectories;
  readonly #leases: LeaseTable;
  readonly #chains: ChainReader;
  readonly #appends: Appends;
  /** Digests of a file of an older schema read as it is (undefined once migrated: rows store them). */
  readonly #legacy: LegacyDigests | undefined;
  /** The caches above change undoably inside transactions: a rollback takes its changes with it (ST-12). */
  readonly #undo = new UndoLog();
  #closed = false;
  /** The full-text index and its pending tail (SE-4 … SE-10). */
  readonly #search: SearchIndex;
  /** The collection generation the snapshot chunk-reuse cache was filled under (ST-36); undefined: not read yet. */
  #gcSeen: number | undefined;
  /** How the file is read (ST-24). */
  readonly access: OpenedDatabase["access"];
  /** The file's schema version as opened (older than SCHEMA_VERSION only for a read-only open of an older file). */
  readonly schemaVersion: number;

  constructor(
    readonly path: string,
    opened: OpenedDatabase,
    options: BackendOptions = {},
  ) {
    this.#db = opened.db;
    this.#release = opened.release;
    this.access = opened.access;
    this.schemaVersion = opened.version;
    this.#now = options.now ?? Date.now;
    const legacy = opened.version < DIGEST_VERSION;
    this.#st = prepare(opened.db, legacy);
    const undo = this.#undo;
    this.#segments = new Segments(this.#st, (map, key, value) => undo.remember(map, key, value));
    this.#blobs = new BlobTable(this.#st, options.inlineLimit ?? 1024 * 1024);
    this.#pages = new PageDirectories({
      putBlob: (bytes) => this.#blobs.put(bytes),
      getBlobs: (hashes) => this.#blobs.getMany(hashes),
      set: (map, key, value) => undo.set(map, key, value),
      remember: (map, key, value) => undo.remember(map, key, value),
    });
    this.#chains = new ChainReader(this.#st, (head, depth, after) => this.#spans(head, depth, after), {
      blobText: (hash, event) => this.#blobs.text(hash, event),
      meta: (row, session) => this.#metaOf(row, session),
      digest: (raw, id) => (raw === null ? this.#legacyHex(id) : hexOf(raw)),
    });
    this.#leases = new LeaseTable(this.#st, (where) => this.#clock(where));
    this.#legacy = legacy ? new LegacyDigests(this.#st, this.#segments, (h, e) => this.#blobs.text(h, e)) : undefined;
    this.#appends = new Appends({
      st: this.#st,
      undo,
      blobs: this.#blobs,
      leases: this.#leases,
      legacy: this.#legacy,
      clock: (where) => this.#clock(where),
      tx: (fn) => this.#tx(fn),
      inTransaction: () => this.#db.inTransaction,
    });
    // Search rows a writer killed before moving them, and derived texts it held (SE-10): the
    // first writer to open the file indexes them.
    this.#search = new SearchIndex({
      db: this.#db,
      st: this.#st,
      appends: this.#appends,
      path,
      schemaVersion: this.schemaVersion,
      writable: this.access === "read-write",
      tx: (fn) => this.#tx(fn),
      read: (fn) => this.readTransaction(fn),
      eventData: (ids) => this.eventData(ids),
      eventKind: (id) => this.eventMeta(id)?.kind,
    });
    if (this.#search.leftByAKilledWriter()) this.#flushQuietly();
  }

  /**
   * Moves the pending search rows into the index, after the append that filled the batch has
   * committed: that append stands whatever happens here; a failure (another writer holding the
   * file) leaves the rows pending, still found, for the next batch.
   */
  #flushQuietly(): void {
    try {
      this.flushSearch();
    } catch {
      // pending rows stay pending and searchable; the next batch or close moves them
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#closed) return;
    this.#flushQuietly();
    this.#closed = true;
    try {
      this.#db.close();
    } finally {
      this.#release();
    }
  }

  /** The underlying connection, for benchmarks and verification tools in this repository. */
  get database(): Database.Database {
    return this.#db;
  }

  transaction<T>(fn: () => T): T {
    try {
      return this.#tx(fn);
    } catch (e) {
      // The caller's own errors pass through as they are; SQLite's become StoreErrors.
      throw fromSqlite(e, "transaction");
    }
  }

  readTransaction<T>(fn: () => T): T {
    // Inside a write transaction (or an outer read one) every read already sees one state.
    if (this.#db.inTransaction) return fn();
    try {
      this.#db.exec("BEGIN DEFERRED");
    } catch (e) {
      throw fromSqlite(e, "starting a read transaction");
    }
    try {
      return fn();
    } finally {
      // A read transaction has nothing to commit; ending it lets checkpoints pass its snapshot.
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
    }
  }

  /** Runs `fn` in a write transaction (a savepoint when nested); a rollback undoes its cache changes (ST-12). */
  #tx<T>(fn: () => T): T {
    return this.#undo.run(() => this.#db.transaction(fn).immediate());
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  createSession(input: CreateSessionInput): { session: SessionInfo; genesis: StoredEvent } {
    const created = this.#clock("createSession");
    const id = newSessionId(created);
    const metadata = input.metadata ?? {};
    try {
      return this.#tx(() => {
        this.#st.insertSession.run(id, input.title ?? null, created, JSON.stringify(metadata));
        const segment = Number(this.#st.insertSegment.run(id, null, 0).lastInsertRowid);
        this.#st.insertBranch.run(id, "main", segment, null, created, "genesis", null);
        const [genesis, digest] = this.#appends.insert(id, segment, 1, null, null, input.genesis);
        this.#appends.tipped(id, "main", segment, genesis, digest);
        return { session: { id, title: input.title ?? null, created, metadata }, genesis: { ...genesis, data: input.genesis.data } };
      });
    } catch (e) {
      throw fromSqlite(e, "creating a session");
    }
  }

  getSession(id: SessionId): SessionInfo | undefined {
    const row = this.#st.session.get(id);
    return row === undefined ? undefined : sessionOf(row);
  }

  listSessions(query: SessionQuery = {}): SessionInfo[] {
    const limit = query.limit !== undefined && Number.isFinite(query.limit) ? query.limit : -1; // SQLite: a negative LIMIT is none
    const before = query.before ?? "\u{10FFFF}";
    return this.#st.sessions.all(before, limit).map(sessionOf);
  }

  recentSessions(limit?: number): SessionActivity[] {
    const n = limit !== undefined && Number.isFinite(limit) ? limit : -1; // SQLite: a negative LIMIT is none
    return this.#st.recentSessions.all(n).map((r) => ({
      session: sessionOf(r),
      lastEvent: r.last_id === null ? null : (Number(r.last_id) as EventId),
      lastActivity: Number(r.last_ts ?? r.created),
    }));
  }

  // ── search (SE-4 … SE-10: search-index.ts) ──────────────────────────────────────────────────

  search(query: SearchQuery): SearchHit[] {
    return this.#search.search(query);
  }

  flushSearch(): number {
    return this.#search.flush();
  }

  searchBacklog(): number {
    return this.#search.backlog();
  }

  indexSearch(entries: readonly SearchEntry[], backlog: number): void {
    this.#search.index(entries, backlog);
  }

  findSessions(prefix: string): SessionInfo[] {
    const p = prefix.toUpperCase();
    if (!/^[0-9A-Z]*$/.test(p)) return [];
    return this.#st.sessionsByPrefix.all(p, `${p}\u{10FFFF}`).map(sessionOf);
  }

  updateSession(id: SessionId, changes: { title?: string | null; metadata?: Readonly<Record<string, unknown>> }): SessionInfo {
    // Read and write under the write lock: two concurrent merges of metadata both land.
    return this.#tx(() => {
      const current = this.getSession(id) ?? notFound(`session ${id}`);
      const title = changes.title === undefined ? current.title : changes.title;
      const metadata = changes.metadata === undefined ? current.metadata : { ...current.metadata, ...changes.metadata };
      this.#st.updateSession.run(title, JSON.stringify(metadata), id);
      return { ...current, title, metadata };
    });
  }

  removeSession(id: SessionId, options: RemoveOptions = {}): RemovedSession {
    try {
      // A dry run only reads (a read-only file can answer it).
      if (options.dryRun === true) return this.readTransaction(() => removeSessionRows(this.#db, this.schemaVersion, id, options));
      return this.#tx(() => removeSessionRows(this.#db, this.schemaVersion, id, options));
    } catch (e) {
      throw fromSqlite(e, `removing session ${id}`);
    }
  }

  collectGarbage(options: CollectOptions): CollectReport {
    try {
      if (options.dryRun === true) return this.readTransaction(() => collectGarbageRows(this.#db, options));
      return this.#tx(() => {
        const report = collectGarbageRows(this.#db, options);
        // Chunks this process remembers writing may be gone: the next snapshot writes its own.
        this.#pages.forget();
        this.#gcSeen = undefined;
        return report;
      });
    } catch (e) {
      throw fromSqlite(e, "collecting garbage");
    }
  }

  /** See `SqliteStore.compact`. */
  compact(minFree: number): { before: number; after: number; vacuumed: boolean } {
    const size = () => {
      const pages = Number(this.#db.pragma("page_count", { simple: true }));
      return {
        pages,
        free: Number(this.#db.pragma("freelist_count", { simple: true })),
        bytes: pages * Number(this.#db.pragma("page_size", { simple: true })),
      };
    };
    try {
      const before = size();
      if (before.pages === 0 || before.free / before.pages < minFree) return { before: before.bytes, after: before.bytes, vacuumed: false };
      this.#db.exec("VACUUM");
      this.#db.pragma("wal_checkpoint(TRUNCATE)");
      return { before: before.bytes, after: size().bytes, vacuumed: true };
    } catch (e) {
      throw fromSqlite(e, "compacting the file");
    }
  }

  reserve(session: SessionId, count = 1): number {
    const top = this.#st.reserve.get(count, session) ?? notFound(`session ${session}`);
    return top - count + 1;
  }

  // ── branches ────────────────────────────────────────────────────────────────────────────────

  branches(session: SessionId): BranchInfo[] {
    return this.#st.branches.all(session).map((r) => branchOf(session, r));
  }

  branch(session: SessionId, name: string): BranchInfo | undefined {
    const row = this.#st.branch.get(session, name);
    return row === undefined ? undefined : branchOf(session, row);
  }

  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], options?: AppendOptions): EventMeta[] {
    if (events.length === 0) return [];
    try {
      const written = this.#appends.append(session, branch, expectedHead, events, options?.lease);
      if (this.#appends.pending >= SEARCH_BATCH && !this.#db.inTransaction) this.#flushQuietly();
      return written;
    } catch (e) {
      throw fromSqlite(e, `appending to ${session}@${branch}`);
    }
  }

  /** The store's clock, checked like a caller's timestamp (ST-20). */
  #clock(where: string): number {
    const ts = this.#now();
    if (!isTimestamp(ts)) throw badTimestamp(ts, `${where}: the store's clock (options.now)`);
    return ts;
  }

  fork(session: SessionId, at: EventId, name: string): BranchInfo {
    // One read (the event's segment and depth) and one insert: the new branch is returned as
    // written, as `branch` would read it back (a pinned head: its depth is the event's).
    const place = this.#placeOf(at);
    if (place === undefined || place.session !== session)
      throw new StoreError("not-found", `event ${at} is not an event of session ${session}`);
    const created = this.#clock("fork");
    try {
      this.#st.insertBranch.run(session, name, place.segment, at, created, "fork", at);
    } catch (e) {
      if ((e as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY")
        throw new StoreError("exists", `session ${session} already has a branch named "${name}"; choose another name`);
      throw fromSqlite(e, "forking");
    }
    return { session, name, head: at, headDepth: place.depth, created, origin: "fork", pinned: true, originEvent: at };
  }

  moveHead(
    session: SessionId,
    branch: string,
    to: EventId,
    options: { expected?: EventId; keepAs?: string; pin?: boolean } = {},
  ): { branch: BranchInfo; kept: BranchInfo | null } {
    const target = this.eventMeta(to);
    if (target === undefined || target.session !== session)
      throw new StoreError("not-found", `event ${to} is not an event of session ${session}`);
    try {
      return this.#tx(() => {
        const row = this.#st.branch.get(session, branch) ?? notFound(`branch "${branch}" of session ${session}`);
        const current = branchOf(session, row);
        if (options.expected !== undefined && current.head !== options.expected)
          throw new HeadConflict(session, branch, options.expected, current.head);
        if (current.head === to && options.pin !== true) return { branch: current, kept: null };
        let kept: BranchInfo | null = null;
        if (!this.isAncestor(current.head, to)) {
          const name = options.keepAs ?? `rewound/${branch}/${current.head}`;
          checkBranchName(name); // the default name of a long branch can be too long
          const existing = this.branch(session, name);
          if (existing === undefined) {
            // The kept branch takes over the segment the moved branch owned (if it owned one).
            this.#st.insertBranch.run(session, name, Number(row.segment), row.head, this.#clock("moveHead"), "rewind", to);
            kept = this.branch(session, name) as BranchInfo;
          } else if (existing.head !== current.head) {
            throw new StoreError("exists", `cannot keep the old head as "${name}": that branch exists and points elsewhere`);
          } else kept = existing;
        }
        this.#st.pinBranch.run(this.#segmentOf(to), to, session, branch);
        this.#appends.forget(session, branch);
        return { branch: this.branch(session, branch) as BranchInfo, kept };
      });
    } catch (e) {
      throw fromSqlite(e, `moving ${session}@${branch}`);
    }
  }

  // ── events and chains ───────────────────────────────────────────────────────────────────────

  event(id: EventId): StoredEvent | undefined {
    const row = this.#st.eventFull.get(id);
    return row === undefined ? undefined : this.#storedOf(row);
  }

  eventMeta(id: EventId): EventMeta | undefined {
    const row = this.#st.eventMeta.get(id);
    if (row === undefined) return undefined;
    return this.#metaOf(row, this.#segments.segment(Number(row.segment)).session);
  }

  events(ids: readonly EventId[]): StoredEvent[] {
    const byId = new Map(this.#st.eventsIn(ids).map((r) => [Number(r.id), r]));
    const out: StoredEvent[] = [];
    for (const id of ids) {
      const r = byId.get(id);
      if (r !== undefined) out.push(this.#storedOf(r));
    }
    return out;
  }

  eventData(ids: readonly EventId[]): Map<EventId, string> {
    const out = new Map<EventId, string>();
    for (const [id, blob, data] of this.#st.dataIn(ids))
      out.set(Number(id) as EventId, blob === null ? data : this.#blobs.text(blob, Number(id)));
    return out;
  }

  chainData(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): string[] {
    return this.#chains.data(head, this.#headMeta(head), afterDepth, limit);
  }

  chain(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): StoredEvent[] {
    return this.#chains.events(this.#headMeta(head), afterDepth, limit);
  }

  chainMeta(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER, reverse = false): EventMeta[] {
    const metas = this.#chains.metas(this.#headMeta(head), afterDepth, limit, reverse);
    return withPriors(metas, (id) => this.eventMeta(id)?.prior ?? null, reverse);
  }

  firstLabeled(head: EventId, label: string, afterDepth = 0): EventMeta | undefined {
    const h = this.#headMeta(head);
    // Oldest span first; within a span, the covering index (segment, depth, kind, label, …) is scanned in SQL.
    for (const span of this.#spans(head, h.depth, afterDepth).reverse()) {
      const found = this.#st.firstLabeledIn.get(span.segment, Math.max(span.from, afterDepth), span.to, label);
      if (found !== undefined) return this.eventMeta(found[0] as EventId);
    }
    return undefined;
  }

  /** The metadata of a chain read's head, which must exist. */
  #headMeta(head: EventId): EventMeta {
    return this.eventMeta(head) ?? notFound(`event ${head}`);
  }

  log(session: SessionId, query: LogQuery = {}): EventMeta[] {
    const name = query.branch ?? "main";
    const b = this.branch(session, name) ?? notFound(`branch "${name}" of session ${session}`);
    let after = 0;
    if (query.after !== undefined) {
      const a = this.eventMeta(query.after);
      if (a === undefined || !this.isAncestor(query.after, b.head))
        throw new StoreError("not-found", `event ${query.after} is not on branch "${b.name}" of session ${session}`);
      after = a.depth;
    }
    return this.chainMeta(b.head, after, query.limit, query.reverse);
  }

  isAncestor(ancestor: EventId, descendant: EventId): boolean {
    const a = this.#placeOf(ancestor);
    const d = this.#placeOf(descendant);
    if (a === undefined || d === undefined || a.session !== d.session || a.depth > d.depth) return false;
    return this.#segments.spans(d.segment, d.depth, 0).some((s) => s.segment === a.segment && a.depth > s.from && a.depth <= s.to);
  }

  atDepth(head: EventId, depth: number): EventMeta | undefined {
    const h = this.#placeOf(head);
    if (h === undefined || depth < 1 || depth > h.depth) return undefined;
    const span = this.#segments.spans(h.segment, h.depth, 0).find((s) => depth > s.from && depth <= s.to);
    if (span === undefined) return undefined;
    const id = this.#st.atDepth.get(span.segment, depth);
    return id === undefined ? undefined : this.eventMeta(id as EventId);
  }

  // ── snapshots and blobs ─────────────────────────────────────────────────────────────────────

  putSnapshot(event: EventId, header: string, pages: readonly (string | null)[]): void {
    let changed = this.#pages.changedChunks(pages);
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    this.#tx(() => {
      // A collection since this process last wrote may have deleted chunks it would reuse from
      // memory (another session's, removed): read under the write lock, so none runs meanwhile.
      const generation = gcGeneration(this.#db);
      if (generation !== this.#gcSeen) {
        if (this.#gcSeen !== undefined) {
          this.#pages.forget();
          changed = this.#pages.changedChunks(pages);
        }
        this.#gcSeen = generation;
      }
      const directory = this.#pages.encode(pages, changed);
      this.#st.insertSnapshot.run(event, this.#segmentOf(event), meta.depth, header, directory);
    });
  }

  nearestSnapshot(event: EventId): SnapshotRecord | undefined {
    const place = this.#placeOf(event) ?? notFound(`event ${event}`);
    for (const span of this.#segments.spans(place.segment, place.depth, 0)) {
      const row = this.#st.snapshotIn.get(span.segment, span.from, span.to);
      if (row !== undefined) {
        const at = Number(row.event) as EventId;
        return { event: at, depth: Number(row.depth), header: row.header, pages: this.#pages.decode(at, row.pages) };
      }
    }
    return undefined;
  }

  snapshots(session: SessionId): EventMeta[] {
    return this.#st.snapshotsOf.all(session).map((e) => this.eventMeta(e as EventId) as EventMeta);
  }

  putBlob(data: Uint8Array | string): string {
    return this.#blobs.put(data);
  }

  getBlob(hash: string): Buffer | undefined {
    return this.#blobs.get(hash);
  }

  getBlobs(hashes: readonly string[]): Map<string, Buffer> {
    return this.#blobs.getMany(hashes);
  }

  hasBlob(hash: string): boolean {
    return this.#blobs.has(hash);
  }

  // ── leases (ST-23) ──────────────────────────────────────────────────────────────────────────

  acquireLease(session: SessionId, branch: string, owner: string, stale?: (holder: LeaseInfo) => boolean): LeaseResult {
    try {
      return this.#tx(() => {
        if (this.#st.session.get(session) === undefined) notFound(`session ${session}`);
        return this.#leases.acquire(session, branch, owner, stale);
      });
    } catch (e) {
      // The caller's `stale` may throw: its error passes through as it is; SQLite's become StoreErrors.
      throw fromSqlite(e, `taking the lease on ${session}@${branch}`);
    }
  }

  renewLease(session: SessionId, branch: string, token: number): boolean {
    return this.#leases.renew(session, branch, token);
  }

  releaseLease(session: SessionId, branch: string, token: number): boolean {
    return this.#leases.release(session, branch, token);
  }

  lease(session: SessionId, branch: string): LeaseInfo | undefined {
    return this.#leases.holder(session, branch);
  }

  verify(session?: SessionId, hooks: VerifyHooks = {}): VerifyReport {
    // One read transaction over everything verify reads, the hooks' reads included (ST-17): a
    // writer committing meanwhile is not seen half-way.
    return this.readTransaction(() => verifyStore(this, this.#db, session, hooks, this.#legacy !== undefined));
  }

  // ── internals ───────────────────────────────────────────────────────────────────────────────

  /**
   * Where event `id` is — its segment, depth and session — from one read of its row, or undefined
   * when it does not exist. (Its metadata would cost a digest on a legacy file, its segment alone a second read.)
   */
  #placeOf(id: EventId): { segment: number; depth: number; session: SessionId } | undefined {
    const row = this.#st.headOf.get(id);
    if (row === undefined) return undefined;
    const segment = Number(row.segment);
    return { segment, depth: Number(row.depth), session: this.#segments.segment(segment).session };
  }

  /** The segment of an event that must exist. */
  #segmentOf(id: EventId): number {
    return this.#segments.segmentOfEvent(id) ?? notFound(`event ${id}`);
  }

  /** The spans of the chain ending at event `head` (at `depth`), newest first, after `afterDepth`. */
  #spans(head: EventId, depth: number, afterDepth: number): Span[] {
    return this.#segments.spans(this.#segmentOf(head), depth, afterDepth);
  }

  #metaOf(row: MetaRow, session: SessionId): EventMeta {
    return metaOf(row, session, row.digest === null ? this.#legacyHex(Number(row.id) as EventId) : hexOf(row.digest));
  }

  /** The digest of an event of a legacy file (computed from its chain). */
  #legacyHex(id: EventId): string {
    if (this.#legacy === undefined) throw new StoreError("corrupt", `event ${id} has no digest; run \`strata verify\``);
    const row = this.#st.eventMeta.get(id) ?? notFound(`event ${id}`);
    return this.#legacy.of(id, Number(row.segment), Number(row.depth)).toString("hex");
  }

  #storedOf(row: EventRow): StoredEvent {
    const data = row.blob === null ? row.data : this.#blobs.text(row.blob, Number(row.id));
    return { ...this.#metaOf(row, this.#segments.segment(Number(row.segment)).session), data };
  }
}
