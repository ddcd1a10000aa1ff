/**
 * The SQLite store (ST-1 … ST-19): one file, WAL, the schema in schema.ts. Appends are
 * compare-and-swap on the branch head; a branch that owns its segment appends with a single
 * conditional INSERT (no extra write), so an append costs about what a raw insert costs (ST-9).
 */
import type Database from "better-sqlite3";
import {
  checkBranchName,
  checkCount,
  checkEvent,
  checkHash,
  checkId,
  checkMetadata,
  checkSession,
  checkTitle,
  notFound,
  show,
} from "./checks.ts";
import { type Chunk, decodeChunk, decodeDirectory, encodeChunk, encodeDirectory, PAGES_PER_CHUNK, samePages } from "./directory.ts";
import { fromSqlite, HeadConflict, StoreError, toStoreError } from "./errors.ts";
import { isHash, sha256 } from "./hash.ts";
import { newSessionId } from "./ids.ts";
import { type OpenOptions, openDatabase } from "./open.ts";
import { EVENT_FULL, prepare, type Statements } from "./statements.ts";
import type { CreateSessionInput, Store, VerifyHooks } from "./store.ts";
import type {
  BranchInfo,
  BranchOrigin,
  EventId,
  EventInput,
  EventMeta,
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
export function openStore(path: string, options: StoreOptions = {}): Store {
  return new SqliteStore(path, openDatabase(path, options), options);
}

interface Segment {
  readonly id: number;
  readonly session: SessionId;
  readonly parent: number | null;
  readonly forkDepth: number;
}

/** One piece of a chain: depths in (`from`, `to`] of `segment`. */
interface Span {
  readonly segment: number;
  readonly from: number;
  readonly to: number;
}

interface Tip {
  readonly segment: number;
  readonly depth: number;
  readonly id: EventId;
}

type Row = Record<string, unknown>;

/** Decoded directory chunks kept in memory (they are immutable; the oldest are dropped first). */
const CHUNK_CACHE = 65_536;
/**
 * A span's events are read as a rowid range when the ids between its first and last event hold
 * at most this many rows per event of the span (other sessions' rows interleaved); otherwise
 * through the (segment, depth) index (ST-7).
 */
const ROWID_SPREAD = 2;

/** The last chunk this store wrote at one chunk position: its pages (as given) and its hash (null: all empty). */
interface WrittenChunk {
  readonly pages: readonly (string | null)[];
  readonly hash: string | null;
}

export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #inlineLimit: number;
  readonly #segments = new Map<number, Segment>();
  /** Last known tip of branches this process appended to (fast-path hint; verified by SQL). */
  readonly #tips = new Map<string, Tip>();
  /** Directory chunks are immutable content-addressed blobs: cache them. */
  readonly #chunks = new Map<string, Chunk>();
  /**
   * Per chunk position, the chunk last written there: a snapshot whose pages at that position did
   * not change reuses its hash without checking, hashing or storing it again (ST-13).
   */
  readonly #written = new Map<number, WrittenChunk>();
  /**
   * Undo records for the caches above, for changes made inside this store's transactions: a
   * rolled-back transaction takes its cache changes with it (ST-12). Otherwise a tip or segment of
   * a rolled-back row would outlive it, and SQLite hands its id to the next row.
   */
  readonly #undo: (() => void)[] = [];
  #txDepth = 0;
  #closed = false;
  readonly #st: Statements;

  constructor(
    readonly path: string,
    db: Database.Database,
    options: StoreOptions = {},
  ) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#inlineLimit = options.inlineLimit ?? 1024 * 1024;
    this.#st = prepare(db);
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
    this.#db.close();
  }

  /** The underlying connection, for benchmarks and verification tools in this repository. */
  get database(): Database.Database {
    return this.#db;
  }

  transaction<T>(fn: () => T): T {
    this.#open();
    if (typeof fn !== "function") throw new StoreError("bad-input", "store.transaction takes a function that does the writes");
    try {
      return this.#tx(fn);
    } catch (e) {
      // The caller's own errors pass through as they are; SQLite's become StoreErrors.
      throw fromSqlite(e, "transaction");
    }
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
    const id = newSessionId(this.#now());
    const created = this.#now();
    const metadata = input.metadata ?? {};
    try {
      return this.#tx(() => {
        this.#st.insertSession.run(id, input.title ?? null, created, JSON.stringify(metadata));
        const segment = Number(this.#st.insertSegment.run(id, null, 0).lastInsertRowid);
        this.#st.insertBranch.run(id, "main", segment, null, created, "genesis", null);
        const genesis = this.#insertEvent(id, segment, 1, null, input.genesis);
        this.#setTip(tipKey(id, "main"), { segment, depth: 1, id: genesis.id });
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

  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[]): EventMeta[] {
    this.#open();
    checkSession(session, "append");
    if (typeof branch !== "string") throw new StoreError("bad-input", `append: the branch must be a name, got ${show(branch)}`);
    checkId(expectedHead, "append: the expected head");
    if (!Array.isArray(events))
      throw new StoreError("bad-input", `append takes an array of events {kind, data, label?, by?, ts?}, got ${show(events)}`);
    // Both paths below write only what passed these checks (ST-20).
    for (let i = 0; i < events.length; i++) checkEvent(events[i], events.length === 1 ? "append: the event" : `append: event ${i}`);
    if (events.length === 0) return [];
    const key = tipKey(session, branch);
    const tip = this.#tips.get(key);
    try {
      // Fast path: this branch owns its segment and we know its tip. One statement, autocommit;
      // its WHERE clause is the compare-and-swap (ST-9).
      if (events.length === 1 && tip !== undefined && tip.id === expectedHead) {
        const e = events[0] as EventInput;
        const ts = e.ts ?? this.#now();
        const [blob, data] = this.#payload(e.data);
        const r = this.#st.appendIfTip.run(
          tip.segment,
          tip.depth + 1,
          tip.id,
          e.kind,
          e.label ?? null,
          e.by ?? null,
          ts,
          blob,
          data,
          session,
          branch,
          tip.segment,
          tip.segment,
          tip.depth + 1,
        );
        if (r.changes === 1) {
          const id = Number(r.lastInsertRowid) as EventId;
          this.#setTip(key, { segment: tip.segment, depth: tip.depth + 1, id });
          return [{ id, session, prior: tip.id, depth: tip.depth + 1, kind: e.kind, label: e.label ?? null, by: e.by ?? null, ts }];
        }
      }
      return this.#tx(() => this.#appendSlow(session, branch, expectedHead, events));
    } catch (e) {
      throw fromSqlite(e, `appending to ${session}@${branch}`);
    }
  }

  #appendSlow(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[]): EventMeta[] {
    const row = (this.#st.branch.get(session, branch) as Row | undefined) ?? notFound(`branch "${branch}" of session ${session}`);
    let segment = Number(row.segment);
    let head: EventId;
    let depth: number;
    if (row.head === null) {
      const t = this.#st.tip.get(segment) as Row;
      head = Number(t.id) as EventId;
      depth = Number(t.depth);
    } else {
      head = Number(row.head) as EventId;
      depth = (this.eventMeta(head) as EventMeta).depth;
    }
    if (head !== expectedHead) {
      this.#setTip(tipKey(session, branch), undefined);
      throw new HeadConflict(session, branch, expectedHead, head);
    }
    if (row.head !== null) {
      // The first append after a fork or rewind opens a new segment that this branch owns.
      const from = this.#segmentOfEvent(head);
      segment = Number(this.#st.insertSegment.run(session, from, depth).lastInsertRowid);
      this.#st.ownSegment.run(segment, session, branch);
    }
    const out: EventMeta[] = [];
    let prior: EventId = head;
    for (const e of events) {
      const meta = this.#insertEvent(session, segment, ++depth, prior, e);
      out.push(meta);
      prior = meta.id;
    }
    this.#setTip(tipKey(session, branch), { segment, depth, id: prior });
    return out;
  }

  /** Inserts one event that {@link checkEvent} accepted. */
  #insertEvent(session: SessionId, segment: number, depth: number, prior: EventId | null, e: EventInput): EventMeta {
    const ts = e.ts ?? this.#now();
    const [blob, data] = this.#payload(e.data);
    const r = this.#st.insertEvent.run(segment, depth, prior, e.kind, e.label ?? null, e.by ?? null, ts, blob, data);
    return { id: Number(r.lastInsertRowid) as EventId, session, prior, depth, kind: e.kind, label: e.label ?? null, by: e.by ?? null, ts };
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
    const meta = this.eventMeta(at);
    if (meta === undefined || meta.session !== session)
      throw new StoreError("not-found", `event ${at} is not an event of session ${session}`);
    try {
      this.#st.insertBranch.run(session, name, this.#segmentOfEvent(at), at, this.#now(), "fork", at);
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
            this.#st.insertBranch.run(session, name, Number(row.segment), row.head, this.#now(), "rewind", to);
            kept = this.branch(session, name) as BranchInfo;
          } else if (existing.head !== current.head) {
            throw new StoreError("exists", `cannot keep the old head as "${name}": that branch exists and points elsewhere`);
          } else kept = existing;
        }
        this.#st.pinBranch.run(this.#segmentOfEvent(to), to, session, branch);
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
    return metaOf(row, this.#segment(Number(row.segment)).session);
  }

  events(ids: readonly EventId[]): StoredEvent[] {
    this.#open();
    if (!Array.isArray(ids)) throw new StoreError("bad-input", `events takes an array of event ids, got ${show(ids)}`);
    for (const id of ids) checkId(id, "events");
    const out: StoredEvent[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      const rows = this.#db.prepare(`${EVENT_FULL} WHERE e.id IN (${batch.map(() => "?").join(",")})`).all(...batch) as Row[];
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      for (const id of batch) {
        const r = byId.get(id);
        if (r !== undefined) out.push(this.#storedOf(r));
      }
    }
    return out;
  }

  chainData(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): string[] {
    const out: string[] = [];
    this.#readChain("chainData", head, afterDepth, limit, (contiguous, args) => {
      const found = (contiguous ? this.#st.chainDataRange : this.#st.chainDataDepths).all(...args) as string[];
      if (found.includes("")) {
        // blob-backed payloads read as "": their refs come in the same order
        const refs = (contiguous ? this.#st.chainBlobsRange : this.#st.chainBlobsDepths).all(...args) as Buffer[];
        let k = 0;
        for (let i = 0; i < found.length; i++) if (found[i] === "") found[i] = this.#blobText(refs[k++] as Buffer, head);
      }
      for (const d of found) out.push(d);
      return found.length;
    });
    return out;
  }

  chain(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): StoredEvent[] {
    const out: StoredEvent[] = [];
    this.#readChain("chain", head, afterDepth, limit, (contiguous, args, session) => {
      const found = (contiguous ? this.#st.chainRange : this.#st.chainDepths).all(...args) as unknown[][];
      for (const r of found) {
        const blob = r[7] as Buffer | null;
        out.push({
          id: r[0] as EventId,
          session,
          prior: (r[2] as EventId | null) ?? null,
          depth: r[1] as number,
          kind: r[3] as string,
          label: (r[4] as string | null) ?? null,
          by: (r[5] as string | null) ?? null,
          ts: r[6] as number,
          data: blob === null ? (r[8] as string) : this.#blobText(blob, r[0] as number),
        });
      }
      return found.length;
    });
    return out;
  }

  /**
   * One range read per span of `head`'s chain after `afterDepth`, at most `limit` rows (ST-7).
   * The span's first and last rows come from the index; if the ids between them are (nearly) all
   * this segment's — a line appended alone, the usual case and the long-resume path — `read` gets
   * a rowid range `[lo, hi, segment, room]`; if other sessions' or lines' rows are interleaved, it
   * gets `(segment, depth)` bounds `[segment, from, to, room]`, so the cost is the span's own rows
   * whatever else the file holds. `read` returns how many rows it read.
   */
  #readChain(
    what: string,
    head: EventId,
    afterDepth: number,
    limit: number,
    read: (contiguous: boolean, args: readonly number[], session: SessionId) => number,
  ): void {
    this.#open();
    checkId(head, `${what}: the head`);
    checkCount(afterDepth, `${what}: afterDepth`);
    checkCount(limit, `${what}: limit`);
    const meta = this.eventMeta(head) ?? notFound(`event ${head}`);
    let left = Math.min(limit, Number.MAX_SAFE_INTEGER);
    for (const span of this.#spans(this.#segmentOfEvent(head), meta.depth, afterDepth).reverse()) {
      if (left <= 0) break;
      const from = Math.max(span.from, afterDepth);
      const to = Math.min(span.to, from + left);
      const lo = this.#st.firstAfter.get(span.segment, from) as [number, number] | undefined;
      const hi = this.#st.lastUpTo.get(span.segment, to) as [number, number] | undefined;
      if (lo === undefined || hi === undefined || hi[1] < lo[1]) continue;
      const contiguous = hi[0] - lo[0] + 1 <= ROWID_SPREAD * (hi[1] - lo[1] + 1);
      left -= read(contiguous, contiguous ? [lo[0], hi[0], span.segment, left] : [span.segment, from, to, left], meta.session);
    }
  }

  chainMeta(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER, reverse = false): EventMeta[] {
    this.#open();
    checkId(head, "chainMeta: the head");
    checkCount(afterDepth, "chainMeta: afterDepth");
    checkCount(limit, "chainMeta: limit");
    limit = Math.min(limit, Number.MAX_SAFE_INTEGER);
    const meta = this.eventMeta(head) ?? notFound(`event ${head}`);
    const spans = this.#spans(this.#segmentOfEvent(head), meta.depth, afterDepth);
    const out: EventMeta[] = [];
    const ordered = reverse ? spans : spans.reverse();
    for (const span of ordered) {
      if (out.length >= limit) break;
      const st = reverse ? this.#st.listRangeDesc : this.#st.listRange;
      for (const r of st.all(span.segment, Math.max(span.from, afterDepth), span.to, limit - out.length) as Row[])
        out.push(metaOf(r, meta.session));
    }
    return withPriors(out, this, reverse);
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
    const seg = this.#segmentOfEvent(ancestor);
    return this.#spans(this.#segmentOfEvent(descendant), d.depth, 0).some((s) => s.segment === seg && a.depth > s.from && a.depth <= s.to);
  }

  atDepth(head: EventId, depth: number): EventMeta | undefined {
    this.#open();
    checkId(head, "atDepth: the head");
    if (!Number.isSafeInteger(depth)) throw new StoreError("bad-input", `atDepth: the depth must be an integer, got ${show(depth)}`);
    const h = this.eventMeta(head);
    if (h === undefined || depth < 1 || depth > h.depth) return undefined;
    const span = this.#spans(this.#segmentOfEvent(head), h.depth, 0).find((s) => depth > s.from && depth <= s.to);
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
    // Directory format 2 (ST-13, decision 0010): chunks of 64 page hashes are blobs themselves — a
    // bitmap of the chunk's pages, then the hash of each page present — and the directory is a
    // bitmap of the chunks that hold a page, then their hashes. A snapshot that changed a few pages
    // writes a few chunks; empty pages and empty chunks cost nothing to write or read; a chunk equal
    // to the one last written at its position is neither checked nor hashed nor stored again.
    const chunkCount = Math.ceil(pages.length / PAGES_PER_CHUNK);
    const changed: number[] = [];
    for (let c = 0; c < chunkCount; c++) {
      const base = c * PAGES_PER_CHUNK;
      const end = Math.min(base + PAGES_PER_CHUNK, pages.length);
      const last = this.#written.get(c);
      if (last !== undefined && samePages(last.pages, pages, base, end)) continue;
      for (let i = base; i < end; i++) {
        const p = pages[i];
        if (p !== null && !isHash(p))
          throw new StoreError(
            "bad-input",
            `putSnapshot: page ${i} is ${show(p)}, not a blob hash (64 lowercase hex characters returned by putBlob) or null; nothing was written`,
          );
      }
      changed.push(c);
    }
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    this.#tx(() => {
      for (const c of changed) {
        const base = c * PAGES_PER_CHUNK;
        const end = Math.min(base + PAGES_PER_CHUNK, pages.length);
        const bytes = encodeChunk(pages, base, end);
        const hash = bytes === undefined ? null : this.putBlob(bytes);
        this.#set(this.#written, c, { pages: pages.slice(base, end), hash });
      }
      const chunkHashes = Array.from({ length: chunkCount }, (_, c) => (this.#written.get(c) as WrittenChunk).hash);
      this.#st.insertSnapshot.run(event, this.#segmentOfEvent(event), meta.depth, header, encodeDirectory(pages.length, chunkHashes));
    });
  }

  nearestSnapshot(event: EventId): SnapshotRecord | undefined {
    this.#open();
    checkId(event, "nearestSnapshot");
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    for (const span of this.#spans(this.#segmentOfEvent(event), meta.depth, 0)) {
      const row = this.#st.snapshotIn.get(span.segment, span.from, span.to) as Row | undefined;
      if (row !== undefined) return this.#snapshotOf(row);
    }
    return undefined;
  }

  snapshots(session: SessionId): EventMeta[] {
    this.#open();
    checkSession(session, "snapshots");
    return (this.#st.snapshotsOf.all(session) as Row[]).map((r) => this.eventMeta(Number(r.event) as EventId) as EventMeta);
  }

  /** Decodes a stored directory, format 1 (every chunk, zero hash = empty) or 2 (only chunks with pages). */
  #snapshotOf(row: Row): SnapshotRecord {
    const event = Number(row.event);
    const dir = row.pages as Buffer;
    const bad = (why: string): never => {
      throw new StoreError("corrupt", `the snapshot at event ${event} has a damaged page directory (${why}); run \`strata verify\``);
    };
    const { count, chunks } = decodeDirectory(dir, bad);
    const missing = chunks.map(([, h]) => h).filter((h) => !this.#chunks.has(h));
    if (missing.length > 0) {
      if (this.#chunks.size + missing.length > CHUNK_CACHE)
        for (const k of [...this.#chunks.keys()].slice(0, this.#chunks.size + missing.length - CHUNK_CACHE)) this.#chunks.delete(k);
      for (const [h, data] of this.getBlobs(missing)) this.#remember(this.#chunks, h, decodeChunk(data, h, event));
    }
    const pages: (string | null)[] = new Array(count).fill(null);
    for (const [c, h] of chunks) {
      const chunk = this.#chunks.get(h);
      if (chunk === undefined)
        throw new StoreError("corrupt", `the snapshot at event ${event} names a missing page directory chunk ${h}; run \`strata verify\``);
      const base = c * PAGES_PER_CHUNK;
      for (let k = 0; k < chunk.at.length; k++) {
        const i = base + (chunk.at[k] as number);
        if (i < count) pages[i] = chunk.hashes[k] as string;
      }
    }
    return { event: event as EventId, depth: Number(row.depth), header: row.header as string, pages };
  }

  // ── blobs ───────────────────────────────────────────────────────────────────────────────────

  putBlob(data: Uint8Array | string): string {
    this.#open();
    if (typeof data !== "string" && !(data instanceof Uint8Array))
      throw new StoreError("bad-input", `putBlob takes a string or bytes (Uint8Array/Buffer), got ${show(data)}`);
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

  verify(session?: SessionId, hooks: VerifyHooks = {}): VerifyReport {
    this.#open();
    if (session !== undefined) checkSession(session, "verify");
    if (typeof hooks !== "object" || hooks === null)
      throw new StoreError("bad-input", "verify takes {checkEvent?, checkSnapshot?, progress?} as hooks");
    return verifyStore(this, this.#db, session, hooks);
  }

  // ── internals ───────────────────────────────────────────────────────────────────────────────

  #open(): void {
    if (this.#closed) throw new StoreError("closed", `the store at ${this.path} was closed`);
  }

  #segment(id: number): Segment {
    let s = this.#segments.get(id);
    if (s === undefined) {
      // Fetch the whole ancestry in one query: segments never change once written.
      for (const r of this.#st.segmentAncestry.all(id) as Row[]) {
        const seg: Segment = {
          id: Number(r.id),
          session: r.session as SessionId,
          parent: r.parent === null ? null : Number(r.parent),
          forkDepth: Number(r.fork_depth),
        };
        this.#remember(this.#segments, seg.id, seg);
      }
      s = this.#segments.get(id) ?? notFound(`segment ${id}`);
    }
    return s;
  }

  #segmentOfEvent(id: EventId): number {
    const row = this.#st.eventSegment.get(id) as Row | undefined;
    if (row === undefined) notFound(`event ${id}`);
    return Number((row as Row).segment);
  }

  /** The chain ending at (`segment`, `depth`), newest span first, cut at `afterDepth` (ST-7). */
  #spans(segment: number, depth: number, afterDepth: number): Span[] {
    const out: Span[] = [];
    let seg: Segment | undefined = this.#segment(segment);
    let to = depth;
    while (seg !== undefined && to > afterDepth) {
      out.push({ segment: seg.id, from: seg.forkDepth, to });
      to = seg.forkDepth;
      seg = seg.parent === null ? undefined : this.#segment(seg.parent);
    }
    return out;
  }

  #branchOf(session: SessionId, row: Row): BranchInfo {
    let head: EventId;
    let headDepth: number;
    if (row.head === null) {
      head = Number(row.tip_id) as EventId;
      headDepth = Number(row.tip_depth);
    } else {
      head = Number(row.head) as EventId;
      headDepth = Number(row.head_depth);
    }
    return {
      session,
      name: row.name as string,
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
    return { ...metaOf(row, this.#segment(Number(row.segment)).session), data };
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
  "verify",
] as const satisfies readonly (keyof Store)[];

function tipKey(session: SessionId, branch: string): string {
  return `${session}\u0000${branch}`;
}

function sessionOf(row: Row): SessionInfo {
  let metadata: Record<string, unknown>;
  try {
    metadata = JSON.parse(row.metadata as string);
  } catch {
    throw new StoreError("corrupt", `session ${row.id} has unreadable metadata; run \`strata verify\` and restore the file from a copy`);
  }
  return { id: row.id as SessionId, title: (row.title as string | null) ?? null, created: Number(row.created), metadata };
}

function metaOf(row: Row, session: SessionId): EventMeta {
  return {
    id: Number(row.id) as EventId,
    session,
    prior: row.prior === undefined || row.prior === null ? null : (Number(row.prior) as EventId),
    depth: Number(row.depth),
    kind: row.kind as string,
    label: (row.label as string | null) ?? null,
    by: (row.by as string | null) ?? null,
    ts: Number(row.ts),
  };
}

/**
 * Listing reads the covering index, which has no `prior`: on a chain, an event's prior is the
 * event before it, so only the first one needs a lookup.
 */
function withPriors<T extends EventMeta>(list: T[], store: SqliteStore, reverse = false): T[] {
  const n = list.length;
  if (n === 0) return list;
  const out = list.map((e, i) => {
    const j = reverse ? i + 1 : i - 1;
    if (j >= 0 && j < n) return { ...e, prior: (list[j] as T).id };
    return e;
  });
  const edge = reverse ? n - 1 : 0;
  const first = out[edge] as T;
  if (first.prior === null && first.depth > 1) out[edge] = { ...first, prior: store.eventMeta(first.id)?.prior ?? null };
  return out;
}
