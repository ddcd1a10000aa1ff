/**
 * The SQLite store (ST-1 … ST-25): one file, WAL, the schema in schema.ts. Appends are
 * compare-and-swap on the branch head; a branch that owns its segment appends with a single
 * conditional INSERT (no extra write), so an append costs about what a raw insert costs (ST-9),
 * plus the sha256 of its digest (ST-21), computed from the tip's digest the store remembers.
 */
import type Database from "better-sqlite3";
import { ChainReader } from "./chain-reader.ts";
import {
  badTimestamp,
  checkBranchName,
  checkCount,
  checkEvent,
  checkHash,
  checkId,
  checkMetadata,
  checkSession,
  checkTitle,
  isTimestamp,
  notFound,
  show,
} from "./checks.ts";
import { digestBytes } from "./digest.ts";
import { fromSqlite, HeadConflict, LeaseLost, StoreError, toStoreError } from "./errors.ts";
import { sha256 } from "./hash.ts";
import { newSessionId } from "./ids.ts";
import { checkLeaseArgs, checkOwner, checkToken, LeaseTable } from "./leases.ts";
import { LegacyDigests } from "./legacy.ts";
import { type OpenedDatabase, type OpenOptions, openDatabase, type StoreAccess } from "./open.ts";
import { hexOf, metaOf, type Row, sessionOf, tipKey, withPriors } from "./rows.ts";
import { DIGEST_VERSION } from "./schema.ts";
import { Segments } from "./segments.ts";
import { SnapshotTable } from "./snapshot-table.ts";
import { prepare, type Statements } from "./statements.ts";
import type { CreateSessionInput, Store, VerifyHooks } from "./store.ts";
import type {
  AppendOptions,
  BranchInfo,
  BranchOrigin,
  EventId,
  EventInput,
  EventMeta,
  LeaseInfo,
  LeaseResult,
  LogQuery,
  SessionId,
  SessionInfo,
  SnapshotRecord,
  StoredEvent,
  VerifyReport,
} from "./types.ts";
import { verifyStore } from "./verify.ts";

export interface StoreOptions extends OpenOptions {
  /** Largest event payload kept inline, in bytes (default 1 MiB); larger payloads become blobs. */
  readonly inlineLimit?: number;
  /** Clock for event timestamps (tests pin it). */
  readonly now?: () => number;
}

/** Opens or creates a store. `":memory:"` gives a private in-memory store. */
export function openStore(path: string, options: StoreOptions = {}): SqliteStore {
  return new SqliteStore(path, openDatabase(path, options), options);
}

interface Tip {
  readonly segment: number;
  readonly depth: number;
  readonly id: EventId;
  /** The tip event's digest: the next append's prior digest (ST-21). */
  readonly digest: Buffer;
}

export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #release: () => void;
  readonly #now: () => number;
  readonly #inlineLimit: number;
  readonly #segments: Segments;
  /** Digests of a file of an older schema read as it is (undefined once migrated: rows store them). */
  readonly #legacy: LegacyDigests | undefined;
  /** Last known tip of branches this process appended to (fast-path hint; verified by SQL). */
  readonly #tips = new Map<string, Tip>();
  /** Snapshot directories and their caches (ST-13). */
  readonly #snapshots: SnapshotTable;
  readonly #leases: LeaseTable;
  readonly #chains: ChainReader;
  /**
   * Undo records for the caches above, for changes made inside this store's transactions: a
   * rolled-back transaction takes its cache changes with it (ST-12). Otherwise a tip or segment of
   * a rolled-back row would outlive it, and SQLite hands its id to the next row.
   */
  readonly #undo: (() => void)[] = [];
  #txDepth = 0;
  /** Depth of `readTransaction` calls: writes are refused inside one. */
  #reading = 0;
  #closed = false;
  readonly #st: Statements;
  /** How the file is read (ST-24). */
  readonly access: StoreAccess;
  /** The file's schema version as opened (older than SCHEMA_VERSION only for a read-only open of an older file). */
  readonly schemaVersion: number;

  constructor(
    readonly path: string,
    opened: OpenedDatabase,
    options: StoreOptions = {},
  ) {
    this.#db = opened.db;
    this.#release = opened.release;
    this.access = opened.access;
    this.schemaVersion = opened.version;
    this.#now = options.now ?? Date.now;
    this.#inlineLimit = options.inlineLimit ?? 1024 * 1024;
    const legacy = opened.version < DIGEST_VERSION;
    this.#st = prepare(opened.db, legacy);
    this.#segments = new Segments(this.#st, (map, key, value) => this.#remember(map, key, value));
    this.#snapshots = new SnapshotTable({
      st: this.#st,
      putBlob: (bytes) => this.putBlob(bytes),
      getBlobs: (hashes) => this.getBlobs(hashes),
      set: (map, key, value) => this.#set(map, key, value),
      remember: (map, key, value) => this.#remember(map, key, value),
    });
    this.#chains = new ChainReader(this.#st, (head, depth, after) => this.#spans(head, depth, after), {
      blobText: (hash, event) => this.#blobText(hash, event),
      meta: (row, session) => this.#metaOf(row, session),
      digest: (raw, id) => (raw === null ? this.#legacyHex(id) : hexOf(raw)),
    });
    this.#leases = new LeaseTable(this.#st, (where) => this.#clock(where));
    this.#legacy = legacy ? new LegacyDigests(this.#st, this.#segments, (h, e) => this.#blobText(h, e)) : undefined;
    // Every failure (corruption, full disk, read-only file, lock timeout, a malformed argument)
    // surfaces as a StoreError that says what happened and what to do (ST-20).
    for (const name of GUARDED) {
      const method = this[name] as (...args: unknown[]) => unknown;
      Object.defineProperty(this, name, {
        value: (...args: unknown[]) => {
          try {
            return method.apply(this, args);
          } catch (e) {
            throw toStoreError(e, `store.${name}`);
          }
        },
      });
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#closed) return;
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
    this.#open();
    if (typeof fn !== "function") throw new StoreError("bad-input", "store.transaction takes a function that does the writes");
    this.#writing("transaction");
    try {
      return this.#tx(fn);
    } catch (e) {
      // The caller's own errors pass through as they are; SQLite's become StoreErrors.
      throw fromSqlite(e, "transaction");
    }
  }

  readTransaction<T>(fn: () => T): T {
    this.#open();
    if (typeof fn !== "function") throw new StoreError("bad-input", "store.readTransaction takes a function that does the reads");
    // Inside a write transaction (or an outer read one) every read already sees one state.
    if (this.#db.inTransaction) {
      this.#reading++;
      try {
        return fn();
      } finally {
        this.#reading--;
      }
    }
    try {
      this.#db.exec("BEGIN DEFERRED");
    } catch (e) {
      throw fromSqlite(e, "starting a read transaction");
    }
    this.#reading++;
    try {
      return fn();
    } finally {
      this.#reading--;
      // A read transaction has nothing to commit; ending it lets checkpoints pass its snapshot.
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
    }
  }

  /** Refuses a write inside `readTransaction`: it would need the write lock from a snapshot that may be stale. */
  #writing(what: string): void {
    if (this.#reading > 0)
      throw new StoreError(
        "bad-input",
        `store.${what} was called inside store.readTransaction, which only reads; write outside it (or use store.transaction)`,
      );
  }

  /**
   * Runs `fn` in a write transaction (a savepoint when nested). If it rolls back, the cache changes
   * made inside it are undone, so no cache refers to a row that does not exist (ST-12).
   */
  #tx<T>(fn: () => T): T {
    const mark = this.#undo.length;
    this.#txDepth++;
    try {
      return this.#db.transaction(fn).immediate();
    } catch (e) {
      while (this.#undo.length > mark) (this.#undo.pop() as () => void)();
      throw e;
    } finally {
      if (--this.#txDepth === 0) this.#undo.length = 0;
    }
  }

  /** Sets (or, with undefined, forgets) a cache entry, undoably inside a transaction. */
  #set<K, V>(map: Map<K, V>, key: K, value: V | undefined): void {
    if (this.#txDepth > 0) {
      const before = map.get(key);
      this.#undo.push(() => (before === undefined ? map.delete(key) : map.set(key, before)));
    }
    if (value === undefined) map.delete(key);
    else map.set(key, value);
  }

  /** Sets (or, with undefined, forgets) a branch's tip hint. */
  #setTip(key: string, tip: Tip | undefined): void {
    this.#set(this.#tips, key, tip);
  }

  /** Adds a cache entry for an immutable fact (a segment, a chunk), undoably inside a transaction. */
  #remember<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (map.has(key)) return;
    if (this.#txDepth > 0) this.#undo.push(() => map.delete(key));
    map.set(key, value);
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  createSession(input: CreateSessionInput): { session: SessionInfo; genesis: StoredEvent } {
    this.#open();
    if (typeof input !== "object" || input === null)
      throw new StoreError("bad-input", "createSession takes {genesis: {kind, data}, title?, metadata?}");
    checkTitle(input.title, "createSession");
    checkMetadata(input.metadata, "createSession");
    checkEvent(input.genesis, "createSession: the genesis event");
    this.#writing("createSession");
    const created = this.#clock("createSession");
    const id = newSessionId(created);
    const metadata = input.metadata ?? {};
    try {
      return this.#tx(() => {
        this.#st.insertSession.run(id, input.title ?? null, created, JSON.stringify(metadata));
        const segment = Number(this.#st.insertSegment.run(id, null, 0).lastInsertRowid);
        this.#st.insertBranch.run(id, "main", segment, null, created, "genesis", null);
        const [genesis, digest] = this.#insertEvent(id, segment, 1, null, null, input.genesis);
        this.#setTip(tipKey(id, "main"), { segment, depth: 1, id: genesis.id, digest });
        return { session: { id, title: input.title ?? null, created, metadata }, genesis: { ...genesis, data: input.genesis.data } };
      });
    } catch (e) {
      throw fromSqlite(e, "creating a session");
    }
  }

  getSession(id: SessionId): SessionInfo | undefined {
    this.#open();
    checkSession(id, "getSession");
    const row = this.#st.session.get(id) as Row | undefined;
    return row === undefined ? undefined : sessionOf(row);
  }

  listSessions(): SessionInfo[] {
    this.#open();
    return (this.#st.sessions.all() as Row[]).map(sessionOf);
  }

  findSessions(prefix: string): SessionInfo[] {
    this.#open();
    if (typeof prefix !== "string") throw new StoreError("bad-input", `findSessions takes a prefix string, got ${show(prefix)}`);
    const p = prefix.toUpperCase();
    if (!/^[0-9A-Z]*$/.test(p)) return [];
    return (this.#st.sessionsByPrefix.all(p, `${p}\u{10FFFF}`) as Row[]).map(sessionOf);
  }

  updateSession(id: SessionId, changes: { title?: string | null; metadata?: Readonly<Record<string, unknown>> }): SessionInfo {
    this.#open();
    checkSession(id, "updateSession");
    if (typeof changes !== "object" || changes === null)
      throw new StoreError("bad-input", "updateSession takes {title?, metadata?} as its second argument");
    checkTitle(changes.title, "updateSession");
    checkMetadata(changes.metadata, "updateSession");
    this.#writing("updateSession");
    // Read and write under the write lock: two concurrent merges of metadata both land.
    return this.#tx(() => {
      const current = this.getSession(id) ?? notFound(`session ${id}`);
      const title = changes.title === undefined ? current.title : changes.title;
      const metadata = changes.metadata === undefined ? current.metadata : { ...current.metadata, ...changes.metadata };
      this.#st.updateSession.run(title, JSON.stringify(metadata), id);
      return { ...current, title, metadata };
    });
  }

  reserve(session: SessionId, count = 1): number {
    this.#open();
    checkSession(session, "reserve");
    if (!Number.isSafeInteger(count) || count < 1) throw new StoreError("bad-input", `reserve takes a positive count, got ${count}`);
    this.#writing("reserve");
    const top = this.#st.reserve.get(count, session) as number | undefined;
    if (top === undefined) notFound(`session ${session}`);
    return (top as number) - count + 1;
  }

  // ── branches ────────────────────────────────────────────────────────────────────────────────

  branches(session: SessionId): BranchInfo[] {
    this.#open();
    checkSession(session, "branches");
    return (this.#st.branches.all(session) as Row[]).map((r) => this.#branchOf(session, r));
  }

  branch(session: SessionId, name: string): BranchInfo | undefined {
    this.#open();
    checkSession(session, "branch");
    if (typeof name !== "string") throw new StoreError("bad-input", `branch takes a branch name, got ${show(name)}`);
    const row = this.#st.branch.get(session, name) as Row | undefined;
    return row === undefined ? undefined : this.#branchOf(session, row);
  }

  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], options?: AppendOptions): EventMeta[] {
    this.#open();
    checkSession(session, "append");
    if (typeof branch !== "string") throw new StoreError("bad-input", `append: the branch must be a name, got ${show(branch)}`);
    checkId(expectedHead, "append: the expected head");
    if (!Array.isArray(events))
      throw new StoreError("bad-input", `append takes an array of events {kind, data, label?, by?, ts?}, got ${show(events)}`);
    // Both paths below write only what passed these checks (ST-20).
    for (let i = 0; i < events.length; i++) checkEvent(events[i], events.length === 1 ? "append: the event" : `append: event ${i}`);
    const lease = options?.lease;
    if (lease !== undefined && (!Number.isSafeInteger(lease) || lease < 1))
      throw new StoreError(
        "bad-input",
        `append: options.lease must be a lease token (a positive integer from acquireLease), got ${show(lease)}`,
      );
    this.#writing("append");
    if (events.length === 0) return [];
    const key = tipKey(session, branch);
    const tip = this.#tips.get(key);
    try {
      // Fast path: this branch owns its segment and we know its tip. One statement, autocommit;
      // its WHERE clause is the compare-and-swap (ST-9), and the fencing check when a lease is given.
      if (events.length === 1 && tip !== undefined && tip.id === expectedHead) {
        const e = events[0] as EventInput;
        const ts = e.ts ?? this.#clock("append");
        const label = e.label ?? null;
        const by = e.by ?? null;
        const digest = digestBytes(tip.digest, e.kind, label, by, ts, e.data);
        const [blob, data] = this.#payload(e.data);
        const depth = tip.depth + 1;
        const r =
          lease === undefined
            ? this.#st.appendIfTip.run(
                tip.segment,
                depth,
                tip.id,
                e.kind,
                label,
                by,
                ts,
                digest,
                blob,
                data,
                session,
                branch,
                tip.segment,
                tip.segment,
                depth,
              )
            : this.#st.appendIfTipLeased.run(
                tip.segment,
                depth,
                tip.id,
                e.kind,
                label,
                by,
                ts,
                digest,
                blob,
                data,
                session,
                branch,
                tip.segment,
                tip.segment,
                depth,
                session,
                branch,
                lease,
              );
        if (r.changes === 1) {
          const id = Number(r.lastInsertRowid) as EventId;
          this.#setTip(key, { segment: tip.segment, depth, id, digest });
          return [{ id, session, prior: tip.id, depth, kind: e.kind, label, by, ts, digest: digest.toString("hex") }];
        }
      }
      return this.#tx(() => this.#appendSlow(session, branch, expectedHead, events, lease));
    } catch (e) {
      throw fromSqlite(e, `appending to ${session}@${branch}`);
    }
  }

  #appendSlow(
    session: SessionId,
    branch: string,
    expectedHead: EventId,
    events: readonly EventInput[],
    lease: number | undefined,
  ): EventMeta[] {
    if (lease !== undefined) {
      const holder = this.#leases.holder(session, branch);
      if (holder?.token !== lease) throw new LeaseLost(session, branch, lease, holder);
    }
    const row = (this.#st.branch.get(session, branch) as Row | undefined) ?? notFound(`branch "${branch}" of session ${session}`);
    const current = this.#branchOf(session, row);
    let segment = Number(row.segment);
    const head = current.head;
    let depth = current.headDepth;
    if (head !== expectedHead) {
      this.#setTip(tipKey(session, branch), undefined);
      throw new HeadConflict(session, branch, expectedHead, head);
    }
    if (row.head !== null) {
      // The first append after a fork or rewind opens a new segment that this branch owns.
      segment = Number(this.#st.insertSegment.run(session, this.#segmentOf(head), depth).lastInsertRowid);
      this.#st.ownSegment.run(segment, session, branch);
    }
    const out: EventMeta[] = [];
    let prior: EventId = head;
    // The tip hint holds the head's digest when it names the head SQL just read (group commits).
    const hint = this.#tips.get(tipKey(session, branch));
    let digest = hint?.id === head ? hint.digest : this.#digestOf(head);
    for (const e of events) {
      const [meta, d] = this.#insertEvent(session, segment, ++depth, prior, digest, e);
      out.push(meta);
      prior = meta.id;
      digest = d;
    }
    this.#setTip(tipKey(session, branch), { segment, depth, id: prior, digest });
    return out;
  }

  /** Inserts one event that {@link checkEvent} accepted, chained to `priorDigest`; returns it and its digest. */
  #insertEvent(
    session: SessionId,
    segment: number,
    depth: number,
    prior: EventId | null,
    priorDigest: Buffer | null,
    e: EventInput,
  ): [EventMeta, Buffer] {
    const ts = e.ts ?? this.#clock("append");
    const label = e.label ?? null;
    const by = e.by ?? null;
    const digest = digestBytes(priorDigest, e.kind, label, by, ts, e.data);
    const [blob, data] = this.#payload(e.data);
    const r = this.#st.insertEvent.run(segment, depth, prior, e.kind, label, by, ts, digest, blob, data);
    const id = Number(r.lastInsertRowid) as EventId;
    return [{ id, session, prior, depth, kind: e.kind, label, by, ts, digest: digest.toString("hex") }, digest];
  }

  /** The store's clock, checked like a caller's timestamp (ST-20). */
  #clock(where: string): number {
    const ts = this.#now();
    if (!isTimestamp(ts)) throw badTimestamp(ts, `${where}: the store's clock (options.now)`);
    return ts;
  }

  /** The stored digest of an existing event (computed for a legacy file). */
  #digestOf(id: EventId): Buffer {
    const row = (this.#st.headOf.get(id) as Row | undefined) ?? notFound(`event ${id}`);
    if (row.digest !== null) return row.digest as Buffer;
    const segment = this.#segmentOf(id);
    return (this.#legacy as LegacyDigests).of(id, segment, Number(row.depth));
  }

  /** Payloads over the inline limit are stored once as a blob and referenced (ST-14). */
  #payload(data: string): [Buffer | null, string] {
    if (data.length * 3 <= this.#inlineLimit || Buffer.byteLength(data) <= this.#inlineLimit) return [null, data];
    return [Buffer.from(this.putBlob(data), "hex"), ""];
  }

  fork(session: SessionId, at: EventId, name: string): BranchInfo {
    this.#open();
    checkSession(session, "fork");
    checkId(at, "fork: the event to fork at");
    checkBranchName(name);
    this.#writing("fork");
    const meta = this.eventMeta(at);
    if (meta === undefined || meta.session !== session)
      throw new StoreError("not-found", `event ${at} is not an event of session ${session}`);
    try {
      this.#st.insertBranch.run(session, name, this.#segmentOf(at), at, this.#clock("fork"), "fork", at);
    } catch (e) {
      if ((e as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY")
        throw new StoreError("exists", `session ${session} already has a branch named "${name}"; choose another name`);
      throw fromSqlite(e, "forking");
    }
    return this.branch(session, name) as BranchInfo;
  }

  moveHead(
    session: SessionId,
    branch: string,
    to: EventId,
    options: { expected?: EventId; keepAs?: string; pin?: boolean } = {},
  ): { branch: BranchInfo; kept: BranchInfo | null } {
    this.#open();
    checkSession(session, "moveHead");
    if (typeof branch !== "string") throw new StoreError("bad-input", `moveHead: the branch must be a name, got ${show(branch)}`);
    checkId(to, "moveHead: the target event");
    if (typeof options !== "object" || options === null)
      throw new StoreError("bad-input", "moveHead takes {expected?, keepAs?} as options");
    if (options.expected !== undefined) checkId(options.expected, "moveHead: the expected head");
    this.#writing("moveHead");
    const target = this.eventMeta(to);
    if (target === undefined || target.session !== session)
      throw new StoreError("not-found", `event ${to} is not an event of session ${session}`);
    try {
      return this.#tx(() => {
        const current = this.branch(session, branch) ?? notFound(`branch "${branch}" of session ${session}`);
        if (options.expected !== undefined && current.head !== options.expected)
          throw new HeadConflict(session, branch, options.expected, current.head);
        if (current.head === to && options.pin !== true) return { branch: current, kept: null };
        const row = this.#st.branch.get(session, branch) as Row;
        let kept: BranchInfo | null = null;
        if (!this.isAncestor(current.head, to)) {
          const name = options.keepAs ?? `rewound/${branch}/${current.head}`;
          checkBranchName(name);
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
        this.#setTip(tipKey(session, branch), undefined);
        return { branch: this.branch(session, branch) as BranchInfo, kept };
      });
    } catch (e) {
      throw fromSqlite(e, `moving ${session}@${branch}`);
    }
  }

  // ── events ──────────────────────────────────────────────────────────────────────────────────

  event(id: EventId): StoredEvent | undefined {
    this.#open();
    checkId(id, "event");
    const row = this.#st.eventFull.get(id) as Row | undefined;
    return row === undefined ? undefined : this.#storedOf(row);
  }

  eventMeta(id: EventId): EventMeta | undefined {
    this.#open();
    checkId(id, "eventMeta");
    const row = this.#st.eventMeta.get(id) as Row | undefined;
    if (row === undefined) return undefined;
    return this.#metaOf(row, this.#segments.segment(Number(row.segment)).session);
  }

  events(ids: readonly EventId[]): StoredEvent[] {
    this.#open();
    if (!Array.isArray(ids)) throw new StoreError("bad-input", `events takes an array of event ids, got ${show(ids)}`);
    for (const id of ids) checkId(id, "events");
    const out: StoredEvent[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      const rows = this.#db
        .prepare(`SELECT ${this.#st.fullColumns} FROM events WHERE id IN (${batch.map(() => "?").join(",")})`)
        .all(...batch) as Row[];
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      for (const id of batch) {
        const r = byId.get(id);
        if (r !== undefined) out.push(this.#storedOf(r));
      }
    }
    return out;
  }

  chainData(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): string[] {
    const meta = this.#chainHead("chainData", head, afterDepth, limit);
    return this.#chains.data(head, meta, afterDepth, limit);
  }

  chain(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): StoredEvent[] {
    const meta = this.#chainHead("chain", head, afterDepth, limit);
    return this.#chains.events(meta, afterDepth, limit);
  }

  chainMeta(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER, reverse = false): EventMeta[] {
    const meta = this.#chainHead("chainMeta", head, afterDepth, limit);
    return withPriors(this.#chains.metas(meta, afterDepth, limit, reverse), (id) => this.eventMeta(id)?.prior ?? null, reverse);
  }

  /** Checks a chain read's arguments; the head's metadata. */
  #chainHead(what: string, head: EventId, afterDepth: number, limit: number): EventMeta {
    this.#open();
    checkId(head, `${what}: the head`);
    checkCount(afterDepth, `${what}: afterDepth`);
    checkCount(limit, `${what}: limit`);
    return this.eventMeta(head) ?? notFound(`event ${head}`);
  }

  log(session: SessionId, query: LogQuery = {}): EventMeta[] {
    this.#open();
    checkSession(session, "log");
    if (typeof query !== "object" || query === null)
      throw new StoreError("bad-input", "log takes {branch?, after?, limit?, reverse?} as its query");
    if (query.after !== undefined) checkId(query.after, "log: after");
    if (query.limit !== undefined) checkCount(query.limit, "log: limit");
    const b = this.branch(session, query.branch ?? "main") ?? notFound(`branch "${query.branch ?? "main"}" of session ${session}`);
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
    this.#open();
    checkId(ancestor, "isAncestor");
    checkId(descendant, "isAncestor");
    const a = this.eventMeta(ancestor);
    const d = this.eventMeta(descendant);
    if (a === undefined || d === undefined || a.session !== d.session || a.depth > d.depth) return false;
    const seg = this.#segmentOf(ancestor);
    return this.#spans(descendant, d.depth, 0).some((s) => s.segment === seg && a.depth > s.from && a.depth <= s.to);
  }

  atDepth(head: EventId, depth: number): EventMeta | undefined {
    this.#open();
    checkId(head, "atDepth: the head");
    if (!Number.isSafeInteger(depth)) throw new StoreError("bad-input", `atDepth: the depth must be an integer, got ${show(depth)}`);
    const h = this.eventMeta(head);
    if (h === undefined || depth < 1 || depth > h.depth) return undefined;
    const span = this.#spans(head, h.depth, 0).find((s) => depth > s.from && depth <= s.to);
    if (span === undefined) return undefined;
    const row = this.#st.atDepth.get(span.segment, depth) as Row | undefined;
    return row === undefined ? undefined : this.eventMeta(Number(row.id) as EventId);
  }

  // ── snapshots ───────────────────────────────────────────────────────────────────────────────

  putSnapshot(event: EventId, header: string, pages: readonly (string | null)[]): void {
    this.#open();
    checkId(event, "putSnapshot: the event");
    if (typeof header !== "string") throw new StoreError("bad-input", `putSnapshot: the header must be a string, got ${show(header)}`);
    if (!Array.isArray(pages))
      throw new StoreError("bad-input", `putSnapshot: pages must be an array of blob hashes or nulls, got ${show(pages)}`);
    this.#writing("putSnapshot");
    const changed = this.#snapshots.changedChunks(pages);
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    this.#tx(() => this.#snapshots.write(event, this.#segmentOf(event), meta.depth, header, pages, changed));
  }

  nearestSnapshot(event: EventId): SnapshotRecord | undefined {
    this.#open();
    checkId(event, "nearestSnapshot");
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    for (const span of this.#spans(event, meta.depth, 0)) {
      const row = this.#st.snapshotIn.get(span.segment, span.from, span.to) as Row | undefined;
      if (row !== undefined) return this.#snapshots.decode(row);
    }
    return undefined;
  }

  snapshots(session: SessionId): EventMeta[] {
    this.#open();
    checkSession(session, "snapshots");
    return (this.#st.snapshotsOf.all(session) as Row[]).map((r) => this.eventMeta(Number(r.event) as EventId) as EventMeta);
  }

  // ── blobs ───────────────────────────────────────────────────────────────────────────────────

  putBlob(data: Uint8Array | string): string {
    this.#open();
    if (typeof data !== "string" && !(data instanceof Uint8Array))
      throw new StoreError("bad-input", `putBlob takes a string or bytes (Uint8Array/Buffer), got ${show(data)}`);
    this.#writing("putBlob");
    const hash = sha256(data);
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    try {
      this.#st.insertBlob.run(hash, bytes.byteLength, bytes);
    } catch (e) {
      throw fromSqlite(e, "storing a blob");
    }
    return hash.toString("hex");
  }

  getBlob(hash: string): Buffer | undefined {
    this.#open();
    checkHash(hash, "getBlob");
    const v = this.#st.blob.get(Buffer.from(hash, "hex")) as Buffer | undefined;
    return v ?? undefined;
  }

  getBlobs(hashes: readonly string[]): Map<string, Buffer> {
    this.#open();
    if (!Array.isArray(hashes)) throw new StoreError("bad-input", `getBlobs takes an array of blob hashes, got ${show(hashes)}`);
    for (const h of hashes) checkHash(h, "getBlobs");
    const out = new Map<string, Buffer>();
    for (let i = 0; i < hashes.length; i += 500) {
      const batch = hashes.slice(i, i + 500).map((h) => Buffer.from(h, "hex"));
      const rows = this.#db
        .prepare(`SELECT hash, data FROM blobs WHERE hash IN (${batch.map(() => "?").join(",")})`)
        .all(...batch) as Row[];
      for (const r of rows) out.set((r.hash as Buffer).toString("hex"), r.data as Buffer);
    }
    return out;
  }

  hasBlob(hash: string): boolean {
    this.#open();
    checkHash(hash, "hasBlob");
    return this.#st.hasBlob.get(Buffer.from(hash, "hex")) !== undefined;
  }

  // ── leases (ST-23) ──────────────────────────────────────────────────────────────────────────

  acquireLease(session: SessionId, branch: string, owner: string, stale?: (holder: LeaseInfo) => boolean): LeaseResult {
    this.#open();
    checkLeaseArgs(session, branch, "acquireLease");
    checkOwner(owner, stale);
    this.#writing("acquireLease");
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
    this.#open();
    checkLeaseArgs(session, branch, "renewLease");
    checkToken(token, "renewLease");
    this.#writing("renewLease");
    return this.#leases.renew(session, branch, token);
  }

  releaseLease(session: SessionId, branch: string, token: number): boolean {
    this.#open();
    checkLeaseArgs(session, branch, "releaseLease");
    checkToken(token, "releaseLease");
    this.#writing("releaseLease");
    return this.#leases.release(session, branch, token);
  }

  lease(session: SessionId, branch: string): LeaseInfo | undefined {
    this.#open();
    checkLeaseArgs(session, branch, "lease");
    return this.#leases.holder(session, branch);
  }

  verify(session?: SessionId, hooks: VerifyHooks = {}): VerifyReport {
    this.#open();
    if (session !== undefined) checkSession(session, "verify");
    if (typeof hooks !== "object" || hooks === null)
      throw new StoreError("bad-input", "verify takes {checkEvent?, checkSnapshot?, progress?} as hooks");
    // One read transaction over everything verify reads, the hooks' reads included (ST-17): a
    // writer committing meanwhile is not seen half-way.
    return this.readTransaction(() => verifyStore(this, this.#db, session, hooks, this.#legacy !== undefined));
  }

  // ── internals ───────────────────────────────────────────────────────────────────────────────

  #open(): void {
    if (this.#closed) throw new StoreError("closed", `the store at ${this.path} was closed`);
  }

  /** The segment of an event that must exist. */
  #segmentOf(id: EventId): number {
    return this.#segments.segmentOfEvent(id) ?? notFound(`event ${id}`);
  }

  /** The spans of the chain ending at event `head` (at `depth`), newest first, after `afterDepth`. */
  #spans(head: EventId, depth: number, afterDepth: number) {
    return this.#segments.spans(this.#segmentOf(head), depth, afterDepth);
  }

  #metaOf(row: Row, session: SessionId): EventMeta {
    return metaOf(row, session, row.digest === null ? this.#legacyHex(Number(row.id) as EventId) : hexOf(row.digest));
  }

  /** The digest of an event of a legacy file (computed from its chain). */
  #legacyHex(id: EventId): string {
    if (this.#legacy === undefined) throw new StoreError("corrupt", `event ${id} has no digest; run \`strata verify\``);
    const row = (this.#st.eventMeta.get(id) as Row | undefined) ?? notFound(`event ${id}`);
    return this.#legacy.of(id, Number(row.segment), Number(row.depth)).toString("hex");
  }

  /**
   * A branch row as BranchInfo. A head that names no event (a pinned head whose event is gone, a
   * segment with no events) is damage: a `corrupt` error naming the session, branch and event.
   */
  #branchOf(session: SessionId, row: Row): BranchInfo {
    let head: EventId;
    let headDepth: number;
    const name = row.name as string;
    if (row.head === null) {
      if (row.tip_id === null)
        throw new StoreError(
          "corrupt",
          `branch "${name}" of session ${session} follows segment ${row.segment}, which has no events: the database is damaged; run \`strata verify\` to list the damage`,
        );
      head = Number(row.tip_id) as EventId;
      headDepth = Number(row.tip_depth);
    } else {
      if (row.head_depth === null)
        throw new StoreError(
          "corrupt",
          `branch "${name}" of session ${session} points at event ${row.head}, which does not exist: the database is damaged; run \`strata verify\` to list the damage, and restore the file from a backup copy`,
        );
      head = Number(row.head) as EventId;
      headDepth = Number(row.head_depth);
    }
    return {
      session,
      name,
      head,
      headDepth,
      created: Number(row.created),
      origin: row.origin as BranchOrigin,
      pinned: row.head !== null,
      originEvent: row.origin_event === null ? null : (Number(row.origin_event) as EventId),
    };
  }

  #blobText(hash: Buffer, event: number): string {
    const bytes = this.getBlob(hash.toString("hex"));
    if (bytes === undefined) throw new StoreError("corrupt", `event ${event} refers to missing blob ${hash.toString("hex")}`);
    return bytes.toString("utf8");
  }

  #storedOf(row: Row): StoredEvent {
    let data = row.data as string;
    if (row.blob !== null) {
      const hash = (row.blob as Buffer).toString("hex");
      const bytes = this.getBlob(hash);
      if (bytes === undefined) throw new StoreError("corrupt", `event ${row.id} refers to missing blob ${hash}`);
      data = bytes.toString("utf8");
    }
    return { ...this.#metaOf(row, this.#segments.segment(Number(row.segment)).session), data };
  }
}

const GUARDED = [
  "createSession",
  "getSession",
  "listSessions",
  "findSessions",
  "updateSession",
  "reserve",
  "branches",
  "branch",
  "fork",
  "moveHead",
  "event",
  "eventMeta",
  "events",
  "chain",
  "chainData",
  "chainMeta",
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
  "renewLease",
  "releaseLease",
  "lease",
  "verify",
] as const satisfies readonly (keyof Store)[];
