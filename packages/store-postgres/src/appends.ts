/**
 * Appending on PostgreSQL (ST-8, ST-9, ST-21, ST-23, ST-32). A branch that owns its segment, whose
 * tip this process knows, appends one event with one conditional `INSERT … SELECT … WHERE … ON
 * CONFLICT DO NOTHING`: its `WHERE` checks the branch and the tip (with a lease token it holds the
 * lease row `FOR SHARE`, so a takeover waits for the append or the append sees the takeover), and
 * the unique `(segment, depth)` index makes two writers unable to take one place. The first append
 * after a fork or rewind this process made is one statement too (a data-modifying CTE). Everything
 * else — group commits, a fork another process made, a tip moved elsewhere — is one short
 * transaction. Digests are computed before a statement is sent.
 */
import { type BranchInfo, type EventId, type EventInput, type EventMeta, HeadConflict, LeaseLost, type SessionId } from "@strata/store";
import { branchOf, digestBytes, keptSearchText, leaseOf, notFound } from "@strata/store/backend";
import type { PgConnection } from "./connection.ts";
import { branchCols, tipKey } from "./rows.ts";
import { indexWords, TSV } from "./schema.ts";

/** The last known tip of a branch this process appended to: the one-statement append's hint, checked by SQL. */
export interface Tip {
  readonly segment: number;
  readonly depth: number;
  readonly id: EventId;
  readonly digest: Buffer;
}

/** A branch this process pinned (a fork, a rewind): where its head is, for a one-statement first append. */
export interface Pin {
  readonly head: EventId;
  readonly segment: number;
  readonly depth: number;
  readonly digest: Buffer;
}

/** What appends use of their backend. */
export interface AppendHost {
  readonly db: PgConnection;
  /** The schema, quoted. */
  readonly s: string;
  /** Largest event payload kept inline, in bytes. */
  readonly inlineLimit: number;
  clock(where: string): number;
  putBlob(data: string): Promise<string>;
  branch(session: SessionId, name: string): Promise<BranchInfo | undefined>;
  /** Wakes the session's followers once the write is committed. */
  wake(session: SessionId): void;
  /** The place of an event this process appended (remembered: later reads check that it still exists). */
  placed(session: SessionId, tip: Tip): void;
}

export class PgAppends {
  /** Last known tip of branches this process appended to (a hint: SQL checks it). */
  readonly #tips = new Map<string, Tip>();
  /** Branches this process forked or moved and has not appended to since (the hint is checked by SQL). */
  readonly #pins = new Map<string, Pin>();
  readonly #db: PgConnection;
  private readonly s: string;
  private readonly inlineLimit: number;
  private readonly clock: (where: string) => number;
  private readonly putBlob: (data: string) => Promise<string>;
  private readonly branch: (session: SessionId, name: string) => Promise<BranchInfo | undefined>;
  private readonly wake: (session: SessionId) => void;
  private readonly placed: (session: SessionId, tip: Tip) => void;

  constructor(host: AppendHost) {
    this.#db = host.db;
    this.s = host.s;
    this.inlineLimit = host.inlineLimit;
    this.clock = (w) => host.clock(w);
    this.putBlob = (d) => host.putBlob(d);
    this.branch = (session, name) => host.branch(session, name);
    this.wake = (session) => host.wake(session);
    this.placed = (session, tip) => host.placed(session, tip);
  }

  async append(
    session: SessionId,
    branch: string,
    expectedHead: EventId,
    events: readonly EventInput[],
    options?: { lease?: number },
  ): Promise<EventMeta[]> {
    if (events.length === 0) return [];
    const lease = options?.lease;
    const key = tipKey(session, branch);
    const tip = this.#tips.get(key);
    const e = events[0] as EventInput;
    const pin = this.#pins.get(key);
    if (events.length === 1 && pin?.head === expectedHead && !this.large(e.data)) {
      const first = await this.#firstAppend(session, branch, pin, e, lease);
      if (first !== undefined) return [first];
    }
    if (events.length === 1 && tip !== undefined && tip.id === expectedHead && !this.large(e.data)) {
      // One statement in autocommit (or in the caller's transaction): the compare-and-swap is its
      // WHERE and the unique (segment, depth) index; the fencing check holds the lease row.
      const s = this.s;
      const ts = e.ts ?? this.clock("append");
      const label = e.label ?? null;
      const by = e.by ?? null;
      const digest = digestBytes(tip.digest, e.kind, label, by, ts, e.data);
      const depth = tip.depth + 1;
      const fenced =
        lease === undefined
          ? ""
          : `AND EXISTS (SELECT 1 FROM ${s}.leases WHERE session = $11 AND branch = $12 AND token = $13 AND owner IS NOT NULL FOR SHARE)`;
      const values: unknown[] = [tip.segment, depth, tip.id, e.kind, label, by, ts, digest, null, e.data, session, branch];
      if (lease !== undefined) values.push(lease);
      values.push(keptSearchText(e), indexWords(e.search));
      const sp = `$${values.length - 1}`;
      const row = await this.#db.one<{ id: number }>(
        `INSERT INTO ${s}.events (segment, depth, prior, kind, label, by, ts, digest, blob, data, search, search_tsv)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, ${sp}::text, ${TSV(`$${values.length}::text`)}
         WHERE EXISTS (SELECT 1 FROM ${s}.branches WHERE session = $11 AND name = $12 AND segment = $1 AND head IS NULL FOR KEY SHARE)
           AND EXISTS (SELECT 1 FROM ${s}.events WHERE id = $3 AND segment = $1 AND depth = $2 - 1)
           ${fenced}
         ON CONFLICT (segment, depth) DO NOTHING
         RETURNING id`,
        values,
      );
      if (row !== undefined) {
        const id = Number(row.id) as EventId;
        this.wake(session);
        this.tip(session, branch, { segment: tip.segment, depth, id, digest });
        return [{ id, session, prior: tip.id, depth, kind: e.kind, label, by, ts, digest: digest.toString("hex") }];
      }
    }
    try {
      return await this.#db.write(() => this.#slowAppend(session, branch, expectedHead, events, lease));
    } catch (e) {
      if (!(e instanceof PlaceTaken)) throw e;
      this.forget(key);
      const now = await this.branch(session, branch);
      throw new HeadConflict(session, branch, expectedHead, now?.head ?? expectedHead);
    }
  }

  /**
   * The first append after a fork or rewind this process made, in one statement: the branch, still
   * pinned at the head (and, with a token, still leased: the lease row held `FOR SHARE`), locked; a
   * new segment whose parent is the head's; the branch moved to own it; the event inserted as its
   * first. Undefined when the branch moved meanwhile (the transaction path then says how).
   */
  async #firstAppend(
    session: SessionId,
    branch: string,
    pin: Pin,
    e: EventInput,
    lease: number | undefined,
  ): Promise<EventMeta | undefined> {
    const s = this.s;
    const ts = e.ts ?? this.clock("append");
    const label = e.label ?? null;
    const by = e.by ?? null;
    const digest = digestBytes(pin.digest, e.kind, label, by, ts, e.data);
    const values: unknown[] = [session, branch, pin.head, pin.segment, pin.depth, e.kind, label, by, ts, digest, e.data];
    const fenced =
      lease === undefined
        ? ""
        : `AND EXISTS (SELECT 1 FROM ${s}.leases WHERE session = $1 AND branch = $2 AND token = $12 AND owner IS NOT NULL FOR SHARE)`;
    if (lease !== undefined) values.push(lease);
    values.push(keptSearchText(e), indexWords(e.search));
    const sp = `$${values.length - 1}`;
    const row = await this.#db.one<{ id: number; segment: number }>(
      `WITH b AS (SELECT 1 FROM ${s}.branches WHERE session = $1 AND name = $2 AND head = $3 ${fenced} FOR UPDATE),
            g AS (INSERT INTO ${s}.segments (session, parent, fork_depth) SELECT $1, $4, $5 FROM b RETURNING id),
            u AS (UPDATE ${s}.branches SET segment = g.id, head = NULL FROM g WHERE session = $1 AND name = $2 RETURNING g.id AS seg)
       INSERT INTO ${s}.events (segment, depth, prior, kind, label, by, ts, digest, blob, data, search, search_tsv)
       SELECT u.seg, $5 + 1, $3, $6, $7, $8, $9, $10, NULL, $11, ${sp}::text, ${TSV(`$${values.length}::text`)} FROM u
       RETURNING id, segment`,
      values,
    );
    if (row === undefined) return undefined;
    const id = Number(row.id) as EventId;
    const depth = pin.depth + 1;
    this.unpin(session, branch);
    this.wake(session);
    this.tip(session, branch, { segment: Number(row.segment), depth, id, digest });
    return { id, session, prior: pin.head, depth, kind: e.kind, label, by, ts, digest: digest.toString("hex") };
  }

  /** Remembers where a branch this process pinned is (forgotten again if the transaction rolls back). */
  pin(session: SessionId, branch: string, pin: Pin): void {
    const key = tipKey(session, branch);
    this.#pins.set(key, pin);
    this.#tips.delete(key);
    this.#db.onRollback(() => this.#pins.delete(key));
  }

  unpin(session: SessionId, branch: string): void {
    this.#pins.delete(tipKey(session, branch));
  }

  /** An append in a transaction: group commits, the first append after a fork or rewind, a cold or moved tip. */
  async #slowAppend(
    session: SessionId,
    branch: string,
    expectedHead: EventId,
    events: readonly EventInput[],
    lease: number | undefined,
  ): Promise<EventMeta[]> {
    const s = this.s;
    const key = tipKey(session, branch);
    if (lease !== undefined) {
      const row = await this.#db.one(
        `SELECT token, owner, acquired, renewed FROM ${s}.leases WHERE session = $1 AND branch = $2 FOR SHARE`,
        [session, branch],
      );
      const holder = leaseOf(session, branch, row as never);
      if (holder?.token !== lease) throw new LeaseLost(session, branch, lease, holder);
    }
    // The branch, locked, with its head's row (segment and digest) in the same statement.
    const row = await this.#db.one(
      `SELECT h.head_segment, h.head_digest, ${branchCols(s)}
       LEFT JOIN LATERAL (SELECT segment AS head_segment, digest AS head_digest FROM ${s}.events WHERE id = COALESCE(b.head, t.id)) h ON true
       WHERE b.session = $1 AND b.name = $2 FOR UPDATE OF b`,
      [session, branch],
    );
    if (row === undefined) notFound(`branch "${branch}" of session ${session}`);
    const current = branchOf(session, row as never);
    const head = current.head;
    if (head !== expectedHead) {
      this.forget(key);
      throw new HeadConflict(session, branch, expectedHead, head);
    }
    if (row.head_digest === null) notFound(`event ${head}`);
    let segment = Number(row.segment);
    if (row.head !== null) {
      // The first append after a fork or rewind opens a new segment that this branch owns (one statement).
      const owned = await this.#db.one<{ segment: number }>(
        `WITH g AS (INSERT INTO ${s}.segments (session, parent, fork_depth) VALUES ($1, $2, $3) RETURNING id)
         UPDATE ${s}.branches SET segment = (SELECT id FROM g), head = NULL WHERE session = $1 AND name = $4 RETURNING segment`,
        [session, Number(row.head_segment), current.headDepth, branch],
      );
      segment = Number(owned?.segment);
    }
    const out: EventMeta[] = [];
    const cols: unknown[][] = [[], [], [], [], [], [], [], [], [], [], []];
    let digest: Buffer = row.head_digest as Buffer;
    let depth = current.headDepth;
    for (const ev of events) {
      const ts = ev.ts ?? this.clock("append");
      const label = ev.label ?? null;
      const by = ev.by ?? null;
      digest = digestBytes(digest, ev.kind, label, by, ts, ev.data);
      const [blob, data] = await this.payload(ev.data);
      depth++;
      const row = [segment, depth, ev.kind, label, by, ts, digest, blob, data, keptSearchText(ev), indexWords(ev.search)];
      for (const [k, v] of row.entries()) (cols[k] as unknown[]).push(v);
      out.push({ id: 0 as EventId, session, prior: null, depth, kind: ev.kind, label, by, ts, digest: digest.toString("hex") });
    }
    // One statement: the ids are taken in order from the sequence, each row's prior the row before.
    let ids: number[];
    try {
      const rows = await this.#db.q<{ id: number }>(
        `WITH v AS (SELECT t.*, nextval(pg_get_serial_sequence('${s}.events', 'id')) AS id
                    FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bytea[], $8::bytea[], $9::text[], $10::text[], $11::text[])
                         WITH ORDINALITY AS t(segment, depth, kind, label, by, ts, digest, blob, data, search, words, ord))
         INSERT INTO ${s}.events (id, segment, depth, prior, kind, label, by, ts, digest, blob, data, search, search_tsv)
         SELECT id, segment, depth, COALESCE(lag(id) OVER (ORDER BY ord), $12), kind, label, by, ts, digest, blob, data, search, ${TSV("words")}
         FROM v ORDER BY ord
         RETURNING id`,
        [...cols, head],
      );
      ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
    } catch (x) {
      // Another writer took the place after the head (a one-statement append does not lock the
      // branch): the transaction is void; the caller reads the head once it has rolled back.
      if ((x as { code?: string }).code === "23505") throw new PlaceTaken(session, branch, expectedHead);
      throw x;
    }
    let prior: EventId = head;
    const metas = out.map((m, i) => {
      const id = ids[i] as EventId;
      const meta = { ...m, id, prior };
      prior = id;
      return meta;
    });
    this.wake(session);
    this.unpin(session, branch);
    this.tip(session, branch, { segment, depth, id: prior, digest });
    return metas;
  }

  /** Remembers a branch's tip after a write (forgotten again if the transaction rolls back). */
  tip(session: SessionId, branch: string, tip: Tip): void {
    const key = tipKey(session, branch);
    this.#tips.set(key, tip);
    this.placed(session, tip);
    this.#db.onRollback(() => this.#tips.delete(key));
  }

  forget(key: string): void {
    this.#tips.delete(key);
  }

  large(data: string): boolean {
    return data.length * 3 > this.inlineLimit && Buffer.byteLength(data) > this.inlineLimit;
  }

  /** How a payload is stored: inline (`[null, data]`), or over the inline limit as a blob (`[hash, ""]`). */
  async payload(data: string): Promise<[Buffer | null, string]> {
    if (!this.large(data)) return [null, data];
    return [Buffer.from(await this.putBlob(data), "hex"), ""];
  }
}

/** The place after the head was taken by another writer inside a slow append: rolled back, then reported as a HeadConflict. */
class PlaceTaken extends Error {
  constructor(
    readonly session: SessionId,
    readonly branch: string,
    readonly expected: EventId,
  ) {
    super(`the place after event ${expected} on ${session}@${branch} was taken`);
  }
}
