/**
 * The SQLite store (ST-1 … ST-19): one file, WAL, the schema in schema.ts. Appends are
 * compare-and-swap on the branch head; a branch that owns its segment appends with a single
 * conditional INSERT (no extra write), so an append costs about what a raw insert costs (ST-9).
 */
import type Database from "better-sqlite3";
import { fromSqlite, HeadConflict, StoreError } from "./errors.ts";
import { sha256 } from "./hash.ts";
import { BRANCH_NAME, newSessionId } from "./ids.ts";
import { type OpenOptions, openDatabase } from "./open.ts";
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

const PAGES_PER_CHUNK = 64;
const HASH_BYTES = 32;
const ZERO_HASH = Buffer.alloc(HASH_BYTES);

export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #inlineLimit: number;
  readonly #segments = new Map<number, Segment>();
  /** Last known tip of branches this process appended to (fast-path hint; verified by SQL). */
  readonly #tips = new Map<string, Tip>();
  /** Directory chunks are immutable content-addressed blobs: cache them. */
  readonly #chunks = new Map<string, (string | null)[]>();
  #closed = false;
  readonly #st: ReturnType<typeof prepare>;

  constructor(
    readonly path: string,
    db: Database.Database,
    options: StoreOptions = {},
  ) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#inlineLimit = options.inlineLimit ?? 1024 * 1024;
    this.#st = prepare(db);
    // Every SQLite failure (corruption, full disk, read-only file, lock timeout) surfaces as a
    // StoreError that says what happened and what to do (ST-20).
    for (const name of GUARDED) {
      const method = this[name] as (...args: unknown[]) => unknown;
      Object.defineProperty(this, name, {
        value: (...args: unknown[]) => {
          try {
            return method.apply(this, args);
          } catch (e) {
            throw fromSqlite(e, `store.${name}`);
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
    try {
      return this.#db.transaction(fn).immediate();
    } catch (e) {
      throw fromSqlite(e, "transaction");
    }
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  createSession(input: CreateSessionInput): { session: SessionInfo; genesis: StoredEvent } {
    this.#open();
    const id = newSessionId(this.#now());
    const created = this.#now();
    const metadata = input.metadata ?? {};
    try {
      return this.#db
        .transaction(() => {
          this.#st.insertSession.run(id, input.title ?? null, created, JSON.stringify(metadata));
          const segment = Number(this.#st.insertSegment.run(id, null, 0).lastInsertRowid);
          this.#st.insertBranch.run(id, "main", segment, null, created, "genesis", null);
          const genesis = this.#insertEvent(id, segment, 1, null, input.genesis);
          this.#tips.set(tipKey(id, "main"), { segment, depth: 1, id: genesis.id });
          return { session: { id, title: input.title ?? null, created, metadata }, genesis: { ...genesis, data: input.genesis.data } };
        })
        .immediate();
    } catch (e) {
      throw fromSqlite(e, "creating a session");
    }
  }

  getSession(id: SessionId): SessionInfo | undefined {
    this.#open();
    const row = this.#st.session.get(id) as Row | undefined;
    return row === undefined ? undefined : sessionOf(row);
  }

  listSessions(): SessionInfo[] {
    this.#open();
    return (this.#st.sessions.all() as Row[]).map(sessionOf);
  }

  findSessions(prefix: string): SessionInfo[] {
    this.#open();
    const p = prefix.toUpperCase();
    if (!/^[0-9A-Z]*$/.test(p)) return [];
    return (this.#st.sessionsByPrefix.all(p, `${p}\u{10FFFF}`) as Row[]).map(sessionOf);
  }

  updateSession(id: SessionId, changes: { title?: string | null; metadata?: Readonly<Record<string, unknown>> }): SessionInfo {
    this.#open();
    const current = this.getSession(id) ?? notFound(`session ${id}`);
    const title = changes.title === undefined ? current.title : changes.title;
    const metadata = changes.metadata === undefined ? current.metadata : { ...current.metadata, ...changes.metadata };
    this.#st.updateSession.run(title, JSON.stringify(metadata), id);
    return { ...current, title, metadata };
  }

  reserve(session: SessionId, count = 1): number {
    this.#open();
    if (!Number.isSafeInteger(count) || count < 1) throw new StoreError("bad-input", `reserve takes a positive count, got ${count}`);
    const top = this.#st.reserve.get(count, session) as number | undefined;
    if (top === undefined) notFound(`session ${session}`);
    return (top as number) - count + 1;
  }

  // ── branches ────────────────────────────────────────────────────────────────────────────────

  branches(session: SessionId): BranchInfo[] {
    this.#open();
    return (this.#st.branches.all(session) as Row[]).map((r) => this.#branchOf(session, r));
  }

  branch(session: SessionId, name: string): BranchInfo | undefined {
    this.#open();
    const row = this.#st.branch.get(session, name) as Row | undefined;
    return row === undefined ? undefined : this.#branchOf(session, row);
  }

  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[]): EventMeta[] {
    this.#open();
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
          this.#tips.set(key, { segment: tip.segment, depth: tip.depth + 1, id });
          return [{ id, session, prior: tip.id, depth: tip.depth + 1, kind: e.kind, label: e.label ?? null, by: e.by ?? null, ts }];
        }
      }
      return this.#db.transaction(() => this.#appendSlow(session, branch, expectedHead, events)).immediate();
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
      this.#tips.delete(tipKey(session, branch));
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
    this.#tips.set(tipKey(session, branch), { segment, depth, id: prior });
    return out;
  }

  #insertEvent(session: SessionId, segment: number, depth: number, prior: EventId | null, e: EventInput): EventMeta {
    if (typeof e.kind !== "string" || e.kind === "") throw new StoreError("bad-input", "an event needs a kind");
    if (typeof e.data !== "string") throw new StoreError("bad-input", "event data must be a string");
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
    options: { expected?: EventId; keepAs?: string } = {},
  ): { branch: BranchInfo; kept: BranchInfo | null } {
    this.#open();
    const target = this.eventMeta(to);
    if (target === undefined || target.session !== session)
      throw new StoreError("not-found", `event ${to} is not an event of session ${session}`);
    try {
      return this.#db
        .transaction(() => {
          const current = this.branch(session, branch) ?? notFound(`branch "${branch}" of session ${session}`);
          if (options.expected !== undefined && current.head !== options.expected)
            throw new HeadConflict(session, branch, options.expected, current.head);
          if (current.head === to) return { branch: current, kept: null };
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
          this.#tips.delete(tipKey(session, branch));
          return { branch: this.branch(session, branch) as BranchInfo, kept };
        })
        .immediate();
    } catch (e) {
      throw fromSqlite(e, `moving ${session}@${branch}`);
    }
  }

  // ── events ──────────────────────────────────────────────────────────────────────────────────

  event(id: EventId): StoredEvent | undefined {
    this.#open();
    const row = this.#st.eventFull.get(id) as Row | undefined;
    return row === undefined ? undefined : this.#storedOf(row);
  }

  eventMeta(id: EventId): EventMeta | undefined {
    this.#open();
    const row = this.#st.eventMeta.get(id) as Row | undefined;
    if (row === undefined) return undefined;
    return metaOf(row, this.#segment(Number(row.segment)).session);
  }

  events(ids: readonly EventId[]): StoredEvent[] {
    this.#open();
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

  chain(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER): StoredEvent[] {
    this.#open();
    const meta = this.eventMeta(head) ?? notFound(`event ${head}`);
    const out: StoredEvent[] = [];
    const session = meta.session;
    for (const span of this.#spans(this.#segmentOfEvent(head), meta.depth, afterDepth).reverse()) {
      if (out.length >= limit) break;
      // A segment's events are appended in order, so its depth range is an id range: read it as a
      // rowid range scan (sequential), as arrays, straight into events — the full-resume path (ST-7).
      const lo = this.#st.firstAfter.get(span.segment, Math.max(span.from, afterDepth)) as number | undefined;
      const hi = this.#st.lastUpTo.get(span.segment, span.to) as number | undefined;
      if (lo === undefined || hi === undefined) continue;
      for (const r of this.#st.chainRange.all(lo, hi, span.segment, limit - out.length) as unknown[][]) {
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
    }
    return out;
  }

  chainMeta(head: EventId, afterDepth = 0, limit = Number.MAX_SAFE_INTEGER, reverse = false): EventMeta[] {
    this.#open();
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
    const a = this.eventMeta(ancestor);
    const d = this.eventMeta(descendant);
    if (a === undefined || d === undefined || a.session !== d.session || a.depth > d.depth) return false;
    const seg = this.#segmentOfEvent(ancestor);
    return this.#spans(this.#segmentOfEvent(descendant), d.depth, 0).some((s) => s.segment === seg && a.depth > s.from && a.depth <= s.to);
  }

  atDepth(head: EventId, depth: number): EventMeta | undefined {
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
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    // Two levels: chunks of 64 page hashes are blobs themselves, so a snapshot that changed a few
    // pages writes a few chunks and a short list (ST-13).
    const chunkHashes: Buffer[] = [];
    for (let i = 0; i < pages.length; i += PAGES_PER_CHUNK) {
      const slice = pages.slice(i, i + PAGES_PER_CHUNK);
      if (slice.every((p) => p === null)) {
        chunkHashes.push(ZERO_HASH);
        continue;
      }
      const chunk = Buffer.concat(slice.map((p) => (p === null ? ZERO_HASH : Buffer.from(p, "hex"))));
      chunkHashes.push(Buffer.from(this.putBlob(chunk), "hex"));
    }
    const dir = Buffer.concat([uint32(pages.length), ...chunkHashes]);
    try {
      this.#st.insertSnapshot.run(event, this.#segmentOfEvent(event), meta.depth, header, dir);
    } catch (e) {
      throw fromSqlite(e, `storing a snapshot at ${event}`);
    }
  }

  nearestSnapshot(event: EventId): SnapshotRecord | undefined {
    this.#open();
    const meta = this.eventMeta(event) ?? notFound(`event ${event}`);
    for (const span of this.#spans(this.#segmentOfEvent(event), meta.depth, 0)) {
      const row = this.#st.snapshotIn.get(span.segment, span.from, span.to) as Row | undefined;
      if (row !== undefined) return this.#snapshotOf(row);
    }
    return undefined;
  }

  snapshots(session: SessionId): EventMeta[] {
    this.#open();
    return (this.#st.snapshotsOf.all(session) as Row[]).map((r) => this.eventMeta(Number(r.event) as EventId) as EventMeta);
  }

  #snapshotOf(row: Row): SnapshotRecord {
    const dir = row.pages as Buffer;
    const count = dir.readUInt32BE(0);
    const pages: (string | null)[] = [];
    const want: string[] = [];
    for (let off = 4; off < dir.length; off += HASH_BYTES) {
      const h = dir.subarray(off, off + HASH_BYTES);
      if (!h.equals(ZERO_HASH)) want.push(h.toString("hex"));
    }
    const missing = want.filter((h) => !this.#chunks.has(h));
    if (missing.length > 0)
      for (const [h, data] of this.getBlobs(missing)) {
        const list: (string | null)[] = [];
        for (let off = 0; off < data.length; off += HASH_BYTES) {
          const p = data.subarray(off, off + HASH_BYTES);
          list.push(p.equals(ZERO_HASH) ? null : p.toString("hex"));
        }
        this.#chunks.set(h, list);
      }
    for (let off = 4; off < dir.length; off += HASH_BYTES) {
      const h = dir.subarray(off, off + HASH_BYTES);
      const n = Math.min(PAGES_PER_CHUNK, count - pages.length);
      if (h.equals(ZERO_HASH)) for (let i = 0; i < n; i++) pages.push(null);
      else {
        const list = this.#chunks.get(h.toString("hex"));
        if (list === undefined)
          throw new StoreError("corrupt", `snapshot at event ${row.event} names a missing page directory chunk ${h.toString("hex")}`);
        pages.push(...list.slice(0, n));
      }
    }
    return { event: Number(row.event) as EventId, depth: Number(row.depth), header: row.header as string, pages };
  }

  // ── blobs ───────────────────────────────────────────────────────────────────────────────────

  putBlob(data: Uint8Array | string): string {
    this.#open();
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
    const v = this.#st.blob.get(Buffer.from(hash, "hex")) as Buffer | undefined;
    return v ?? undefined;
  }

  getBlobs(hashes: readonly string[]): Map<string, Buffer> {
    this.#open();
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
    return this.#st.hasBlob.get(Buffer.from(hash, "hex")) !== undefined;
  }

  verify(session?: SessionId, hooks: VerifyHooks = {}): VerifyReport {
    this.#open();
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
        this.#segments.set(seg.id, seg);
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

const EVENT_FULL = "SELECT e.id, e.segment, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.blob, e.data FROM events e";

function prepare(db: Database.Database) {
  const tipOf = "(SELECT id FROM events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)";
  const tipDepthOf = "(SELECT depth FROM events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)";
  const headDepthOf = "(SELECT depth FROM events WHERE id = b.head)";
  const branchCols = `b.name, b.segment, b.head, b.created, b.origin, b.origin_event, ${tipOf} AS tip_id, ${tipDepthOf} AS tip_depth, ${headDepthOf} AS head_depth`;
  return {
    insertSession: db.prepare("INSERT INTO sessions (id, title, created, metadata) VALUES (?, ?, ?, ?)"),
    session: db.prepare("SELECT id, title, created, metadata FROM sessions WHERE id = ?"),
    sessions: db.prepare("SELECT id, title, created, metadata FROM sessions ORDER BY id DESC"),
    sessionsByPrefix: db.prepare("SELECT id, title, created, metadata FROM sessions WHERE id >= ? AND id < ? ORDER BY id DESC"),
    updateSession: db.prepare("UPDATE sessions SET title = ?, metadata = ? WHERE id = ?"),
    reserve: db.prepare("UPDATE sessions SET counter = counter + ? WHERE id = ? RETURNING counter").pluck(),
    insertSegment: db.prepare("INSERT INTO segments (session, parent, fork_depth) VALUES (?, ?, ?)"),
    segmentAncestry: db.prepare(
      `WITH RECURSIVE a(id) AS (SELECT ? UNION ALL SELECT s.parent FROM segments s JOIN a ON s.id = a.id WHERE s.parent IS NOT NULL)
       SELECT s.id, s.session, s.parent, s.fork_depth FROM segments s JOIN a ON s.id = a.id`,
    ),
    insertBranch: db.prepare(
      "INSERT INTO branches (session, name, segment, head, created, origin, origin_event) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    branch: db.prepare(`SELECT ${branchCols} FROM branches b WHERE b.session = ? AND b.name = ?`),
    branches: db.prepare(`SELECT ${branchCols} FROM branches b WHERE b.session = ? ORDER BY b.created, b.name`),
    ownSegment: db.prepare("UPDATE branches SET segment = ?, head = NULL WHERE session = ? AND name = ?"),
    pinBranch: db.prepare("UPDATE branches SET segment = ?, head = ? WHERE session = ? AND name = ?"),
    tip: db.prepare("SELECT id, depth FROM events WHERE segment = ? ORDER BY depth DESC LIMIT 1"),
    insertEvent: db.prepare(
      "INSERT INTO events (segment, depth, prior, kind, label, by, ts, blob, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    appendIfTip: db.prepare(
      `INSERT INTO events (segment, depth, prior, kind, label, by, ts, blob, data)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM branches WHERE session = ? AND name = ? AND segment = ? AND head IS NULL)
         AND NOT EXISTS (SELECT 1 FROM events WHERE segment = ? AND depth = ?)`,
    ),
    eventFull: db.prepare(`${EVENT_FULL} WHERE e.id = ?`),
    eventMeta: db.prepare("SELECT id, segment, depth, prior, kind, label, by, ts FROM events WHERE id = ?"),
    eventSegment: db.prepare("SELECT segment FROM events WHERE id = ?"),
    atDepth: db.prepare("SELECT id FROM events WHERE segment = ? AND depth = ?"),
    firstAfter: db.prepare("SELECT id FROM events WHERE segment = ? AND depth > ? ORDER BY depth LIMIT 1").pluck(),
    lastUpTo: db.prepare("SELECT id FROM events WHERE segment = ? AND depth <= ? ORDER BY depth DESC LIMIT 1").pluck(),
    chainRange: db
      .prepare(
        "SELECT id, depth, prior, kind, label, by, ts, blob, data FROM events WHERE id >= ? AND id <= ? AND +segment = ? ORDER BY id LIMIT ?",
      )
      .raw(),
    listRange: db.prepare(
      "SELECT id, segment, depth, kind, label, by, ts FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?",
    ),
    listRangeDesc: db.prepare(
      "SELECT id, segment, depth, kind, label, by, ts FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth DESC LIMIT ?",
    ),
    insertSnapshot: db.prepare("INSERT OR REPLACE INTO snapshots (event, segment, depth, header, pages) VALUES (?, ?, ?, ?, ?)"),
    snapshotIn: db.prepare(
      "SELECT event, depth, header, pages FROM snapshots WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth DESC LIMIT 1",
    ),
    snapshotsOf: db.prepare("SELECT n.event FROM snapshots n JOIN segments s ON s.id = n.segment WHERE s.session = ? ORDER BY n.event"),
    insertBlob: db.prepare("INSERT INTO blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING"),
    blob: db.prepare("SELECT data FROM blobs WHERE hash = ?").pluck(),
    hasBlob: db.prepare("SELECT 1 FROM blobs WHERE hash = ?").pluck(),
  };
}

function tipKey(session: SessionId, branch: string): string {
  return `${session}\u0000${branch}`;
}

function notFound(what: string): never {
  throw new StoreError("not-found", `${what} does not exist`);
}

function checkBranchName(name: string): void {
  if (typeof name !== "string" || !BRANCH_NAME.test(name))
    throw new StoreError(
      "bad-input",
      `branch name ${JSON.stringify(name)} is not allowed: use letters, digits, ".", "_", "/", "-" (no "@" or "~")`,
    );
}

function sessionOf(row: Row): SessionInfo {
  return {
    id: row.id as SessionId,
    title: (row.title as string | null) ?? null,
    created: Number(row.created),
    metadata: JSON.parse(row.metadata as string),
  };
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

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
