/**
 * The PostgreSQL backend of the asynchronous storage port (decision 0035): the `Store` contract over
 * a `pg` pool, for checked arguments only (`openPgStore` wraps it in `AsyncCheckedStore`). Its
 * parts: connections and transactions (connection.ts), appends (appends.ts), event and chain
 * reads (chains.ts), rows (rows.ts), verify (verify.ts); here, sessions, branches, forks and
 * rewinds, snapshots, blobs and leases.
 *
 * - A fork is one statement writing one branch row; a rewind is one short transaction.
 * - A chain read is one statement (chains.ts); from a place this process remembers, a fork's or a
 *   resume's reads skip the place's lookup.
 * - Every write wakes its session's followers (follow.ts) once it has committed, with a statement
 *   of its own sent without waiting, at most one per session every 10 ms (wakes.ts).
 */
import {
  type AsyncStore,
  type BranchInfo,
  type CollectOptions,
  type CollectReport,
  type CreateSessionInput,
  type EventId,
  type EventInput,
  type EventMeta,
  HeadConflict,
  type LogQuery,
  newSessionId,
  type RemovedSession,
  type RemoveOptions,
  type SearchEntry,
  type SearchHit,
  type SearchQuery,
  type SessionActivity,
  type SessionId,
  type SessionInfo,
  type SessionQuery,
  type SnapshotRecord,
  type StoredEvent,
  StoreError,
  sha256,
  type VerifyHooks,
  type VerifyReport,
} from "@strata/store";
import {
  badTimestamp,
  branchOf,
  checkBranchName,
  decodeDirectory,
  digestBytes,
  isTimestamp,
  keptSearchText,
  notFound,
  PageDirectories,
  sessionOf,
} from "@strata/store/backend";
import type { Pool } from "pg";
import { PgAppends } from "./appends.ts";
import { PgChains } from "./chains.ts";
import { PgConnection } from "./connection.ts";
import { channelOf } from "./follow.ts";
import { acquireLease, type LeaseHost, readLease, releaseLease, renewLease } from "./leases.ts";
import { collectGarbageRows, gcGeneration, removeSessionRows } from "./removal.ts";
import { branchCols, metaOf } from "./rows.ts";
import { ident, indexWords, TSV } from "./schema.ts";

import { PgSearch } from "./search.ts";
import { verifyPg } from "./verify.ts";
import { Wakes } from "./wakes.ts";

/** What the backend is opened with besides its pool. */
export interface PgBackendOptions {
  /** Largest event payload kept inline, in bytes (default 1 MiB); larger payloads become blobs. */
  readonly inlineLimit?: number;
  /** Clock for event timestamps (tests pin it). */
  readonly now?: () => number;
  /**
   * Send each statement as a named prepared statement (default true): PostgreSQL plans it once per
   * connection instead of on every call. PgBouncer in transaction mode supports them from 1.21
   * (`max_prepared_statements`); before that, set false.
   */
  readonly prepare?: boolean;
}

export class PgBackend implements AsyncStore {
  readonly #pool: Pool;
  readonly #s: string;
  readonly #now: () => number;
  readonly #inlineLimit: number;
  readonly #db: PgConnection;
  readonly #appends: PgAppends;
  /** Event and chain reads, and where events are (chains.ts). */
  readonly #chains: PgChains;
  /** Chunk reuse and decoded chunks for snapshots written and read outside transactions (ST-13). */
  readonly #pages: PageDirectories;
  /** Chunk blobs an encode produced, written with its snapshot; and chunks fetched for a decode. */
  #pendingBlobs: Map<string, Buffer> | undefined;
  #fetched = new Map<string, Buffer>();
  /** Snapshots outside a transaction are written one at a time: the chunk-reuse cache is then never ahead of the database. */
  #snapshotQueue: Promise<unknown> = Promise.resolve();
  #closed = false;
  #closing: Promise<void> | undefined;
  /** The collection generation the chunk-reuse cache was filled under (ST-36); undefined: not read yet. */
  #gcSeen: number | undefined;
  /** The notification channel of this store's writes (follow.ts). */
  readonly #channel: string;
  /** The followers' wake-ups of this store's writes (wakes.ts). */
  readonly #wakes: Wakes;
  readonly #search: PgSearch;

  constructor(
    readonly path: string,
    pool: Pool,
    schema: string,
    options: PgBackendOptions = {},
  ) {
    this.#pool = pool;
    this.#channel = channelOf(schema);
    this.#wakes = new Wakes((session) => this.#pool.query("SELECT pg_notify($1, $2)", [this.#channel, session]));
    this.#s = ident(schema);
    this.#now = options.now ?? Date.now;
    this.#inlineLimit = options.inlineLimit ?? 1024 * 1024;
    this.#db = new PgConnection(pool, options.prepare ?? true, (tx) => {
      for (const session of tx.wakes) this.#wake(session);
    });
    this.#chains = new PgChains(this.#db, this.#s, (hashes) => this.getBlobs(hashes));
    this.#appends = new PgAppends({
      db: this.#db,
      s: this.#s,
      inlineLimit: this.#inlineLimit,
      clock: (where) => this.#clock(where),
      putBlob: (data) => this.putBlob(data),
      branch: (session, name) => this.branch(session, name),
      wake: (session) => this.#wake(session),
      placed: (session, tip) => this.#chains.remember(tip.id, { segment: tip.segment, depth: tip.depth, digest: tip.digest, session }),
    });
    this.#pages = this.#directories();
    this.#search = new PgSearch({ db: this.#db, s: this.#s, eventData: (ids) => this.eventData(ids) });
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): Promise<void> {
    // One closing, however many callers ask: followers learn of this store's last writes at once
    // (not at their next poll), then the pool ends once.
    this.#closing ??= (async () => {
      await this.#wakes.close();
      this.#closed = true;
      await this.#pool.end();
    })();
    return this.#closing;
  }

  /** The pool (benchmarks and tests in this repository). */
  get pool(): Pool {
    return this.#pool;
  }

  async transaction<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.#db.write(fn);
  }

  async readTransaction<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.#db.read(fn);
  }

  #clock(where: string): number {
    const ts = this.#now();
    if (!isTimestamp(ts)) throw badTimestamp(ts, `${where}: the store's clock (options.now)`);
    return ts;
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  async createSession(input: CreateSessionInput): Promise<{ session: SessionInfo; genesis: StoredEvent }> {
    const s = this.#s;
    const created = this.#clock("createSession");
    const id = newSessionId(created);
    const metadata = input.metadata ?? {};
    const g = input.genesis;
    const ts = g.ts ?? this.#clock("createSession");
    const label = g.label ?? null;
    const by = g.by ?? null;
    const digest = digestBytes(null, g.kind, label, by, ts, g.data);
    return this.#db.write(async () => {
      await this.#db.q(`INSERT INTO ${s}.sessions (id, title, created, metadata) VALUES ($1, $2, $3, $4)`, [
        id,
        input.title ?? null,
        created,
        JSON.stringify(metadata),
      ]);
      const seg = await this.#db.one<{ id: number }>(
        `INSERT INTO ${s}.segments (session, parent, fork_depth) VALUES ($1, NULL, 0) RETURNING id`,
        [id],
      );
      const segment = Number(seg?.id);
      await this.#db.q(
        `INSERT INTO ${s}.branches (session, name, segment, head, created, origin) VALUES ($1, 'main', $2, NULL, $3, 'genesis')`,
        [id, segment, created],
      );
      const [blob, data] = await this.#appends.payload(g.data);
      const ev = await this.#db.one<{ id: number }>(
        `INSERT INTO ${s}.events (segment, depth, prior, kind, label, by, ts, digest, blob, data, search, search_tsv)
         VALUES ($1, 1, NULL, $2, $3, $4, $5, $6, $7, $8, $9, ${TSV("$10::text")}) RETURNING id`,
        [segment, g.kind, label, by, ts, digest, blob, data, keptSearchText(g), indexWords(g.search)],
      );
      const eid = Number(ev?.id) as EventId;
      this.#appends.tip(id, "main", { segment, depth: 1, id: eid, digest });
      return {
        session: { id, title: input.title ?? null, created, metadata },
        genesis: { id: eid, session: id, prior: null, depth: 1, kind: g.kind, label, by, ts, digest: digest.toString("hex"), data: g.data },
      };
    });
  }

  async getSession(id: SessionId): Promise<SessionInfo | undefined> {
    const row = await this.#db.one(`SELECT id, title, created, metadata FROM ${this.#s}.sessions WHERE id = $1`, [id]);
    return row === undefined ? undefined : sessionOf(row as never);
  }

  async listSessions(query: SessionQuery = {}): Promise<SessionInfo[]> {
    const rows = await this.#db.q(`SELECT id, title, created, metadata FROM ${this.#s}.sessions WHERE id < $1 ORDER BY id DESC LIMIT $2`, [
      query.before ?? "\u{10FFFF}",
      query.limit !== undefined && Number.isFinite(query.limit) ? query.limit : null,
    ]);
    return rows.map((r) => sessionOf(r as never));
  }

  async recentSessions(limit?: number): Promise<SessionActivity[]> {
    const s = this.#s;
    // Every branch's head (its pinned event, else its segment's tip), kept when it is an event of the
    // session; the newest per session (ts, then id) ranks the sessions. One statement.
    const rows = await this.#db.q(
      `WITH heads AS (
         SELECT b.session, COALESCE(b.head, (SELECT id FROM ${s}.events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)) AS head
         FROM ${s}.branches b
       ), newest AS (
         SELECT DISTINCT ON (h.session) h.session, e.id, e.ts
         FROM heads h JOIN ${s}.events e ON e.id = h.head JOIN ${s}.segments g ON g.id = e.segment AND g.session = h.session
         ORDER BY h.session, e.ts DESC, e.id DESC
       )
       SELECT x.id, x.title, x.created, x.metadata, n.id AS last_id, n.ts AS last_ts
       FROM ${s}.sessions x LEFT JOIN newest n ON n.session = x.id
       ORDER BY COALESCE(n.ts, x.created) DESC, x.id DESC LIMIT $1`,
      [limit !== undefined && Number.isFinite(limit) ? limit : null],
    );
    return rows.map((r) => ({
      session: sessionOf(r as never),
      lastEvent: r.last_id === null ? null : (Number(r.last_id) as EventId),
      lastActivity: Number(r.last_ts ?? r.created),
    }));
  }

  // ── search (SE-4 … SE-6; search.ts) ─────────────────────────────────────────────────────────

  search(query: SearchQuery): Promise<SearchHit[]> {
    return this.#search.search(query);
  }

  searchBacklog(): Promise<number> {
    return this.#search.searchBacklog();
  }

  indexSearch(entries: readonly SearchEntry[], backlog: number): Promise<void> {
    return this.#search.indexSearch(entries, backlog);
  }

  async findSessions(prefix: string): Promise<SessionInfo[]> {
    const p = prefix.toUpperCase();
    if (!/^[0-9A-Z]*$/.test(p)) return [];
    const rows = await this.#db.q(
      `SELECT id, title, created, metadata FROM ${this.#s}.sessions WHERE id >= $1 AND id < $2 ORDER BY id DESC`,
      [p, `${p}\u{10FFFF}`],
    );
    return rows.map((r) => sessionOf(r as never));
  }

  async updateSession(
    id: SessionId,
    changes: { title?: string | null; metadata?: Readonly<Record<string, unknown>> },
  ): Promise<SessionInfo> {
    return this.#db.write(async () => {
      const row = await this.#db.one(`SELECT id, title, created, metadata FROM ${this.#s}.sessions WHERE id = $1 FOR UPDATE`, [id]);
      const current = row === undefined ? notFound(`session ${id}`) : sessionOf(row as never);
      const title = changes.title === undefined ? current.title : changes.title;
      const metadata = changes.metadata === undefined ? current.metadata : { ...current.metadata, ...changes.metadata };
      await this.#db.q(`UPDATE ${this.#s}.sessions SET title = $1, metadata = $2 WHERE id = $3`, [title, JSON.stringify(metadata), id]);
      return { ...current, title, metadata };
    });
  }

  async removeSession(id: SessionId, options: RemoveOptions = {}): Promise<RemovedSession> {
    if (options.dryRun === true) return this.#db.read(() => removeSessionRows(this.#db, this.#s, id, options));
    this.#chains.forget();
    return this.#db.write(() => removeSessionRows(this.#db, this.#s, id, options));
  }

  async collectGarbage(options: CollectOptions): Promise<CollectReport> {
    if (options.dryRun === true) return this.#db.read(() => collectGarbageRows(this.#db, this.#s, options));
    // After the snapshots queued before it, so none of them encodes against a cache it empties.
    const run = this.#snapshotQueue.then(() =>
      this.#db.write(async () => {
        const report = await collectGarbageRows(this.#db, this.#s, options);
        this.#chains.forget();
        this.#pages.forget();
        this.#gcSeen = undefined;
        return report;
      }),
    );
    this.#snapshotQueue = run.catch(() => {});
    return run;
  }

  async reserve(session: SessionId, count = 1): Promise<number> {
    const row = await this.#db.one<{ counter: number }>(
      `UPDATE ${this.#s}.sessions SET counter = counter + $1 WHERE id = $2 RETURNING counter`,
      [count, session],
    );
    if (row === undefined) notFound(`session ${session}`);
    return Number(row.counter) - count + 1;
  }

  // ── branches ────────────────────────────────────────────────────────────────────────────────

  async branches(session: SessionId): Promise<BranchInfo[]> {
    const rows = await this.#db.q(`SELECT ${branchCols(this.#s)} WHERE b.session = $1 ORDER BY b.created, b.name`, [session]);
    return rows.map((r) => branchOf(session, r as never));
  }

  async branch(session: SessionId, name: string): Promise<BranchInfo | undefined> {
    const row = await this.#db.one(`SELECT ${branchCols(this.#s)} WHERE b.session = $1 AND b.name = $2`, [session, name]);
    return row === undefined ? undefined : branchOf(session, row as never);
  }

  append(
    session: SessionId,
    branch: string,
    expectedHead: EventId,
    events: readonly EventInput[],
    options?: { lease?: number },
  ): Promise<EventMeta[]> {
    return this.#appends.append(session, branch, expectedHead, events, options);
  }

  /** Wakes the followers of `session` once the write is committed: after the current transaction commits, or now (wakes.ts). */
  #wake(session: SessionId): void {
    const tx = this.#db.current();
    if (tx !== undefined) tx.wakes.add(session);
    else this.#wakes.wake(session);
  }

  async fork(session: SessionId, at: EventId, name: string): Promise<BranchInfo> {
    const s = this.#s;
    const created = this.#clock("fork");
    // One statement: the event's place (of this session) and the branch row, unless the name is taken.
    // The segment row is held (FOR KEY SHARE) so a removal of the session waits for the fork, or the
    // fork finds the session gone: no branch row is left of a removed session (removal.ts).
    const row = await this.#db.one<{ segment: number; depth: number; digest: Buffer; written: number }>(
      `WITH p AS (SELECT e.segment, e.depth, e.digest FROM ${s}.events e JOIN ${s}.segments g ON g.id = e.segment WHERE e.id = $3 AND g.session = $1 FOR KEY SHARE OF g),
            w AS (INSERT INTO ${s}.branches (session, name, segment, head, created, origin, origin_event)
                  SELECT $1, $2, p.segment, $3, $4, 'fork', $3 FROM p ON CONFLICT (session, name) DO NOTHING RETURNING 1)
       SELECT p.segment, p.depth, p.digest, (SELECT count(*) FROM w)::int AS written FROM p`,
      [session, name, at, created],
    );
    if (row === undefined) throw new StoreError("not-found", `event ${at} is not an event of session ${session}`);
    if (row.written !== 1) throw new StoreError("exists", `session ${session} already has a branch named "${name}"; choose another name`);
    this.#chains.remember(at, { segment: Number(row.segment), depth: Number(row.depth), digest: row.digest, session });
    this.#appends.pin(session, name, { head: at, segment: Number(row.segment), depth: Number(row.depth), digest: row.digest });
    return { session, name, head: at, headDepth: Number(row.depth), created, origin: "fork", pinned: true, originEvent: at };
  }

  async moveHead(
    session: SessionId,
    branch: string,
    to: EventId,
    options: { expected?: EventId; keepAs?: string; pin?: boolean } = {},
  ): Promise<{ branch: BranchInfo; kept: BranchInfo | null }> {
    const s = this.#s;
    const target = await this.#chains.placeOf(to);
    if (target === undefined || target.session !== session)
      throw new StoreError("not-found", `event ${to} is not an event of session ${session}`);
    return this.#db.write(async () => {
      const row = await this.#db.one(`SELECT ${branchCols(s)} WHERE b.session = $1 AND b.name = $2 FOR UPDATE OF b`, [session, branch]);
      if (row === undefined) notFound(`branch "${branch}" of session ${session}`);
      const current = branchOf(session, row as never);
      if (options.expected !== undefined && current.head !== options.expected)
        throw new HeadConflict(session, branch, options.expected, current.head);
      if (current.head === to && options.pin !== true) return { branch: current, kept: null };
      let kept: BranchInfo | null = null;
      if (!(await this.isAncestor(current.head, to))) {
        const name = options.keepAs ?? `rewound/${branch}/${current.head}`;
        checkBranchName(name); // the default name of a long branch can be too long
        const existing = await this.branch(session, name);
        if (existing === undefined) {
          // The kept branch takes over the segment the moved branch owned (if it owned one).
          await this.#db.q(
            `INSERT INTO ${s}.branches (session, name, segment, head, created, origin, origin_event) VALUES ($1, $2, $3, $4, $5, 'rewind', $6)`,
            [session, name, Number(row.segment), row.head, this.#clock("moveHead"), to],
          );
          kept = (await this.branch(session, name)) as BranchInfo;
        } else if (existing.head !== current.head) {
          throw new StoreError("exists", `cannot keep the old head as "${name}": that branch exists and points elsewhere`);
        } else kept = existing;
      }
      await this.#db.q(`UPDATE ${s}.branches SET segment = $1, head = $2 WHERE session = $3 AND name = $4`, [
        target.segment,
        to,
        session,
        branch,
      ]);
      this.#appends.pin(session, branch, { head: to, segment: target.segment, depth: target.depth, digest: target.digest });
      this.#wake(session);
      return { branch: (await this.branch(session, branch)) as BranchInfo, kept };
    });
  }

  // ── events and chains (chains.ts) ───────────────────────────────────────────────────────────

  readonly event: AsyncStore["event"] = (id) => this.#chains.event(id);
  readonly eventMeta: AsyncStore["eventMeta"] = (id) => this.#chains.eventMeta(id);
  readonly events: AsyncStore["events"] = (ids) => this.#chains.events(ids);
  readonly eventData: AsyncStore["eventData"] = (ids) => this.#chains.eventData(ids);
  readonly chainData: AsyncStore["chainData"] = (head, afterDepth, limit) => this.#chains.chainData(head, afterDepth, limit);
  readonly chain: AsyncStore["chain"] = (head, afterDepth, limit) => this.#chains.chain(head, afterDepth, limit);
  readonly chainMeta: AsyncStore["chainMeta"] = (head, afterDepth, limit, reverse) =>
    this.#chains.chainMeta(head, afterDepth, limit, reverse);
  readonly firstLabeled: AsyncStore["firstLabeled"] = (head, label, afterDepth) => this.#chains.firstLabeled(head, label, afterDepth);
  readonly isAncestor: AsyncStore["isAncestor"] = (ancestor, descendant) => this.#chains.isAncestor(ancestor, descendant);
  readonly atDepth: AsyncStore["atDepth"] = (head, depth) => this.#chains.atDepth(head, depth);

  async log(session: SessionId, query: LogQuery = {}): Promise<EventMeta[]> {
    const name = query.branch ?? "main";
    const b = (await this.branch(session, name)) ?? notFound(`branch "${name}" of session ${session}`);
    let after = 0;
    if (query.after !== undefined) {
      const a = await this.eventMeta(query.after);
      if (a === undefined || !(await this.isAncestor(query.after, b.head)))
        throw new StoreError("not-found", `event ${query.after} is not on branch "${b.name}" of session ${session}`);
      after = a.depth;
    }
    return this.chainMeta(b.head, after, query.limit, query.reverse);
  }

  // ── snapshots and blobs ─────────────────────────────────────────────────────────────────────

  /** The page directories over this backend's blobs; `encode` collects the chunks it writes (see putSnapshot). */
  #directories(): PageDirectories {
    return new PageDirectories({
      putBlob: (bytes) => {
        const hash = sha256(bytes).toString("hex");
        this.#pendingBlobs?.set(hash, bytes);
        return hash;
      },
      getBlobs: (hashes) => new Map(hashes.flatMap((h) => (this.#fetched.has(h) ? [[h, this.#fetched.get(h) as Buffer]] : []))),
      set: (map, key, value) => {
        const before = map.get(key);
        if (value === undefined) map.delete(key);
        else map.set(key, value);
        this.#db.onRollback(() => (before === undefined ? map.delete(key) : map.set(key, before)));
      },
      remember: (map, key, value) => {
        if (!map.has(key)) map.set(key, value);
      },
    });
  }

  async putSnapshot(event: EventId, header: string, pages: readonly (string | null)[]): Promise<void> {
    // Inside a caller's transaction the chunks are written without reuse (a directory of its own:
    // the shared reuse cache must never name a chunk another transaction has not committed).
    const inTx = this.#db.current() !== undefined;
    const dirs = inTx ? this.#directories() : this.#pages;
    let changed = dirs.changedChunks(pages);
    const place = (await this.#chains.placeOf(event)) ?? notFound(`event ${event}`);
    const write = async () =>
      this.#db.write(async () => {
        if (!inTx) {
          // A collection since this process last wrote may have deleted chunks the shared cache
          // would reuse (another session's, removed): read waiting for any collection running.
          const generation = await gcGeneration(this.#db, this.#s);
          if (generation !== this.#gcSeen) {
            if (this.#gcSeen !== undefined) {
              this.#pages.forget();
              changed = dirs.changedChunks(pages);
            }
            this.#gcSeen = generation;
          }
        }
        const blobs = new Map<string, Buffer>();
        this.#pendingBlobs = blobs;
        let directory: Buffer;
        try {
          directory = dirs.encode(pages, changed);
        } finally {
          this.#pendingBlobs = undefined;
        }
        if (blobs.size > 0) await this.#putBlobs([...blobs.values()]);
        await this.#db.q(
          `INSERT INTO ${this.#s}.snapshots (event, segment, depth, header, pages) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (event) DO UPDATE SET segment = excluded.segment, depth = excluded.depth, header = excluded.header, pages = excluded.pages`,
          [event, place.segment, place.depth, header, directory],
        );
      });
    if (inTx) return write();
    const run = this.#snapshotQueue.then(write, write);
    this.#snapshotQueue = run.catch(() => {});
    return run;
  }

  async nearestSnapshot(event: EventId): Promise<SnapshotRecord | undefined> {
    const known = this.#chains.known(event);
    const place = known ?? (await this.#chains.placeOf(event)) ?? notFound(`event ${event}`);
    const spans = await this.#chains.spans(place.segment, place.depth, 0);
    const s = this.#s;
    const nearest = `SELECT n.event, n.depth, n.header, n.pages FROM unnest($1::bigint[], $2::int[], $3::int[]) WITH ORDINALITY AS s(seg, lo, hi, ord)
       CROSS JOIN LATERAL (SELECT * FROM ${s}.snapshots WHERE segment = s.seg AND depth > s.lo AND depth <= s.hi ORDER BY depth DESC LIMIT 1) n
       ORDER BY s.ord LIMIT 1`;
    const args = [spans.map((x) => x.segment), spans.map((x) => x.from), spans.map((x) => x.to)];
    // From a remembered place, the same statement says whether the event still exists.
    const found =
      known === undefined
        ? await this.#db.one(nearest, args)
        : await this.#db.one(
            `SELECT EXISTS (SELECT 1 FROM ${s}.events WHERE id = $4) AS there, n.* FROM (SELECT 1) one LEFT JOIN LATERAL (${nearest}) n ON true`,
            [...args, event],
          );
    if (found !== undefined && found.there === false) await this.#chains.stillThere(event);
    const row = found?.event === null ? undefined : found;
    if (row === undefined) return undefined;
    const at = Number(row.event) as EventId;
    const where = `the snapshot at event ${at}`;
    // The directory names its chunks: fetch those this process has not decoded, then decode.
    const hashes = decodeDirectory(row.pages, where).chunks.map(([, h]) => h);
    const fetched = await this.getBlobs(hashes);
    this.#fetched = fetched;
    try {
      return { event: at, depth: Number(row.depth), header: row.header, pages: this.#pages.decode(at, row.pages) };
    } finally {
      this.#fetched = new Map();
    }
  }

  async snapshots(session: SessionId): Promise<EventMeta[]> {
    const s = this.#s;
    const rows = await this.#db.q(
      `SELECT e.id, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.digest FROM ${s}.snapshots n JOIN ${s}.segments g ON g.id = n.segment
       JOIN ${s}.events e ON e.id = n.event WHERE g.session = $1 ORDER BY n.event`,
      [session],
    );
    return rows.map((r) => metaOf(r, session));
  }

  async putBlob(data: Uint8Array | string): Promise<string> {
    const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return (await this.#putBlobs([bytes]))[0] as string;
  }

  /** Stores many blobs in one statement; returns their hashes (hex), in order. */
  async #putBlobs(list: readonly Buffer[]): Promise<string[]> {
    const hashes = list.map((b) => sha256(b));
    await this.#db.q(
      `INSERT INTO ${this.#s}.blobs (hash, size, data) SELECT * FROM unnest($1::bytea[], $2::int[], $3::bytea[]) ON CONFLICT (hash) DO NOTHING`,
      [hashes, list.map((b) => b.byteLength), list],
    );
    return hashes.map((h) => h.toString("hex"));
  }

  async getBlob(hash: string): Promise<Buffer | undefined> {
    const row = await this.#db.one(`SELECT data FROM ${this.#s}.blobs WHERE hash = $1`, [Buffer.from(hash, "hex")]);
    return row?.data as Buffer | undefined;
  }

  async getBlobs(hashes: readonly string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    if (hashes.length === 0) return out;
    const wanted = [...new Set(hashes)].map((h) => Buffer.from(h, "hex"));
    for (const r of await this.#db.q(`SELECT hash, data FROM ${this.#s}.blobs WHERE hash = ANY($1::bytea[])`, [wanted]))
      out.set((r.hash as Buffer).toString("hex"), r.data as Buffer);
    return out;
  }

  async hasBlob(hash: string): Promise<boolean> {
    return (await this.#db.one(`SELECT 1 FROM ${this.#s}.blobs WHERE hash = $1`, [Buffer.from(hash, "hex")])) !== undefined;
  }

  // ── leases (ST-23; leases.ts) ────────────────────────────────────────────────────────────────

  readonly acquireLease: AsyncStore["acquireLease"] = (session, branch, owner, stale) =>
    acquireLease(this.#leaseHost, session, branch, owner, stale);
  readonly renewLease: AsyncStore["renewLease"] = (session, branch, token) => renewLease(this.#leaseHost, session, branch, token);
  readonly releaseLease: AsyncStore["releaseLease"] = (session, branch, token) => releaseLease(this.#leaseHost, session, branch, token);
  readonly lease: AsyncStore["lease"] = (session, branch) => readLease(this.#leaseHost, session, branch);

  get #leaseHost(): LeaseHost {
    return { db: this.#db, s: this.#s, clock: (where) => this.#clock(where) };
  }

  async verify(session?: SessionId, hooks: VerifyHooks = {}): Promise<VerifyReport> {
    // One read transaction over everything verify reads, the hooks' reads included (ST-17).
    return this.readTransaction(() =>
      verifyPg(
        {
          q: (text, values) => this.#db.q(text, values),
          s: this.#s,
          nearestSnapshot: (e) => this.nearestSnapshot(e),
          hasBlobs: (h) => this.getBlobs(h),
        },
        session,
        hooks,
      ),
    );
  }
}
