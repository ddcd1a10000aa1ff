/**
 * Appending to a branch (ST-8, ST-9, ST-21, ST-23): compare-and-swap on the branch head, with the
 * event's digest chained from the head's. A branch that owns its segment and whose tip this
 * process knows appends with one conditional `INSERT … SELECT … WHERE` in autocommit — the `WHERE`
 * is the compare-and-swap (and, with a lease token, the fencing check) — so an append costs an
 * insert and a sha256. Everything else (group commits, the first append after a fork or rewind, a
 * tip another process moved) takes the slow path in a transaction, which reads the head and opens
 * a segment when the branch is pinned. The tip hints change undoably (ST-12).
 *
 * Searchable text (SE-4, SE-10): a text the store cannot derive again is written as a pending row
 * in the append's transaction. A text it can derive (SE-8) is written nowhere: the event stays
 * above its kind's watermark, and this connection keeps the text in memory until its next flush
 * indexes it — so such an append is still the one-statement fast path.
 */
import { notFound } from "../checks.ts";
import { digestBytes } from "../digest.ts";
import { HeadConflict, LeaseLost } from "../errors.ts";
import { branchOf, tipKey } from "../rows.ts";
import { derivable } from "../search.ts";
import type { EventId, EventInput, EventMeta, SessionId } from "../types.ts";
import type { UndoLog } from "../undo.ts";
import type { BlobTable } from "./blobs.ts";
import type { LeaseTable } from "./leases.ts";
import type { LegacyDigests } from "./legacy.ts";
import type { Statements } from "./statements.ts";

/** The last known tip of a branch this process appended to: the fast path's hint, verified by SQL. */
interface Tip {
  readonly segment: number;
  readonly depth: number;
  readonly id: EventId;
  /** The tip event's digest: the next append's prior digest (ST-21). */
  readonly digest: Buffer;
}

/** The row of a head event: where it is and its digest. */
type HeadRow = { readonly segment: number; readonly depth: number; readonly digest: Buffer | null };

/** What appends use of their backend. */
/** A derived text this connection appended and has not indexed yet (SE-10). */
export interface HeldText {
  /**
   * The event's session. SQLite hands the ids of removed events out again, and only whole
   * sessions are removed: a held text is used only for an event of the session it was held for.
   */
  readonly session: SessionId;
  readonly text: string;
}

/**
 * Most derived texts one connection holds (SE-10). Past it — a group commit or import of many
 * events in one transaction, or flushes another writer's lock kept failing — a held text is written
 * as a pending row instead, so a writer's memory stays bounded.
 */
export const HOLD_MAX = 4096;

/** The meta key of the watermark of `kind`'s derived texts (SE-10). */
export const watermarkKey = (kind: string): string => `search_upto:${kind}`;

export interface AppendHost {
  readonly st: Statements;
  readonly undo: UndoLog;
  readonly blobs: BlobTable;
  readonly leases: LeaseTable;
  /** Digests of a file of an older schema (read-only, so never appended to; undefined once migrated). */
  readonly legacy: LegacyDigests | undefined;
  /** The store's clock, checked (ST-20). */
  clock(where: string): number;
  /** Runs `fn` in one write transaction (a savepoint when nested) whose rollback undoes its cache changes. */
  tx<T>(fn: () => T): T;
  /** Whether a write transaction is open on the connection. */
  inTransaction(): boolean;
}

export class Appends {
  /** Last known tip of branches this process appended to (fast-path hint; verified by SQL). */
  readonly #tips = new Map<string, Tip>();

  /** Search rows this connection added to `search_pending`, and derived texts it held, since it last flushed (SE-4, SE-10). */
  pending = 0;

  /** The derived texts this connection appended since its last flush, by event id (SE-10). */
  readonly held = new Map<number, HeldText>();

  /** Kinds whose watermark this connection has seen in the file (a watermark is never removed). */
  readonly #marked = new Map<string, true>();

  constructor(private readonly host: AppendHost) {}

  /** Whether `e`'s text is derived again from its payload (SE-8), so that it is held, not written (SE-10). */
  #holds(e: EventInput): boolean {
    return e.search !== undefined && derivable(e.kind, e.searchDerived);
  }

  /**
   * Makes sure the watermark of `kind` exists before its first held event is inserted: at the
   * newest id then, so every event of the kind appended from now on is above it (SE-10).
   */
  #mark(kind: string): void {
    if (this.#marked.has(kind)) return;
    this.host.st.ensureWatermark.run(watermarkKey(kind));
    this.host.undo.remember(this.#marked, kind, true);
  }

  /** The derived text this connection holds for event `id` of `session` (SE-10), if any. */
  heldText(id: number, session: string): string | undefined {
    const h = this.held.get(id);
    return h !== undefined && h.session === session ? h.text : undefined;
  }

  /**
   * Records the search text of inserted event `id`: held in memory when derived (`holds`, SE-10),
   * else a pending row (SE-4).
   */
  #searchable(id: number, session: SessionId, e: EventInput, holds: boolean): void {
    if (e.search === undefined) return;
    // A spilled derived text is a pending row marked derived (no kept copy when it moves, SE-8).
    // Outside a transaction it is a second statement: a crash between the two leaves the event
    // above its watermark, indexed from its payload by the next sweep.
    if (!holds) this.host.st.insertPendingOf.run(id, session, e.search, 0);
    else if (this.held.size < HOLD_MAX) this.host.undo.set(this.held, id, { session, text: e.search });
    else this.host.st.insertPendingOf.run(id, session, e.search, 1);
    this.pending++;
  }

  /** Appends checked `events` after `expectedHead` (see `Store.append`); call inside the caller's error mapping. */
  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], lease: number | undefined): EventMeta[] {
    const { st, undo } = this.host;
    const key = tipKey(session, branch);
    const tip = this.#tips.get(key);
    // Fast path: this branch owns its segment and we know its tip. One statement, autocommit;
    // its WHERE clause is the compare-and-swap (ST-9), and the fencing check when a lease is given.
    // An event with a text the store cannot derive is two rows (its pending search row, SE-4), in
    // one transaction; a derived text is held in memory (SE-10).
    if (events.length === 1 && tip !== undefined && tip.id === expectedHead) {
      const e = events[0] as EventInput;
      const holds = this.#holds(e);
      if (e.search !== undefined && !holds && !this.host.inTransaction())
        return this.host.tx(() => this.append(session, branch, expectedHead, events, lease));
      if (holds) this.#mark(e.kind);
      const ts = e.ts ?? this.host.clock("append");
      const label = e.label ?? null;
      const by = e.by ?? null;
      const digest = digestBytes(tip.digest, e.kind, label, by, ts, e.data);
      const [blob, data] = this.host.blobs.payload(e.data);
      const depth = tip.depth + 1;
      const s = tip.segment;
      const r =
        lease === undefined
          ? st.appendIfTip.run(s, depth, tip.id, e.kind, label, by, ts, digest, blob, data, session, branch, s, s, depth)
          : st.appendIfTipLeased.run(
              s,
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
              s,
              s,
              depth,
              session,
              branch,
              lease,
            );
      if (r.changes === 1) {
        const id = Number(r.lastInsertRowid) as EventId;
        this.#searchable(id, session, e, holds);
        undo.set(this.#tips, key, { segment: s, depth, id, digest });
        return [{ id, session, prior: tip.id, depth, kind: e.kind, label, by, ts, digest: digest.toString("hex") }];
      }
    }
    return this.host.tx(() => this.#slow(session, branch, expectedHead, events, lease));
  }

  /** An append in a transaction: group commits, the first append after a fork or rewind, a cold tip. */
  #slow(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], lease: number | undefined): EventMeta[] {
    const { st, undo } = this.host;
    if (lease !== undefined) {
      const holder = this.host.leases.holder(session, branch);
      if (holder?.token !== lease) throw new LeaseLost(session, branch, lease, holder);
    }
    const row = st.branch.get(session, branch) ?? notFound(`branch "${branch}" of session ${session}`);
    const current = branchOf(session, row);
    let segment = Number(row.segment);
    const head = current.head;
    let depth = current.headDepth;
    const key = tipKey(session, branch);
    if (head !== expectedHead) {
      undo.set(this.#tips, key, undefined);
      throw new HeadConflict(session, branch, expectedHead, head);
    }
    // The head's row (segment, depth, digest), read once when needed.
    let headRow: HeadRow | undefined;
    const headOf = (): HeadRow => (headRow ??= st.headOf.get(head) ?? notFound(`event ${head}`));
    if (row.head !== null) {
      // The first append after a fork or rewind opens a new segment that this branch owns.
      segment = Number(st.insertSegment.run(session, Number(headOf().segment), depth).lastInsertRowid);
      st.ownSegment.run(segment, session, branch);
    }
    const out: EventMeta[] = [];
    let prior: EventId = head;
    // The tip hint holds the head's digest when it names the head SQL just read (group commits).
    const hint = this.#tips.get(key);
    let digest = hint?.id === head ? hint.digest : this.#digestOf(head, headOf());
    for (const e of events) {
      const [meta, d] = this.insert(session, segment, ++depth, prior, digest, e);
      out.push(meta);
      prior = meta.id;
      digest = d;
    }
    undo.set(this.#tips, key, { segment, depth, id: prior, digest });
    return out;
  }

  /** Inserts one checked event, chained to `priorDigest` (inside the caller's transaction); returns it and its digest. */
  insert(
    session: SessionId,
    segment: number,
    depth: number,
    prior: EventId | null,
    priorDigest: Buffer | null,
    e: EventInput,
  ): [EventMeta, Buffer] {
    const ts = e.ts ?? this.host.clock("append");
    const label = e.label ?? null;
    const by = e.by ?? null;
    const digest = digestBytes(priorDigest, e.kind, label, by, ts, e.data);
    const [blob, data] = this.host.blobs.payload(e.data);
    const holds = this.#holds(e);
    if (holds) this.#mark(e.kind);
    const r = this.host.st.insertEvent.run(segment, depth, prior, e.kind, label, by, ts, digest, blob, data);
    const id = Number(r.lastInsertRowid) as EventId;
    this.#searchable(id, session, e, holds);
    return [{ id, session, prior, depth, kind: e.kind, label, by, ts, digest: digest.toString("hex") }, digest];
  }

  /** Remembers the tip of a branch that was just written (a new session's main). */
  tipped(session: SessionId, branch: string, segment: number, meta: EventMeta, digest: Buffer): void {
    this.host.undo.set(this.#tips, tipKey(session, branch), { segment, depth: meta.depth, id: meta.id, digest });
  }

  /** Forgets the tip of a branch that moved (its next append reads the head again). */
  forget(session: SessionId, branch: string): void {
    this.host.undo.set(this.#tips, tipKey(session, branch), undefined);
  }

  /** The stored digest of existing event `id`, whose row is `row` (computed for a legacy file). */
  #digestOf(id: EventId, row: HeadRow): Buffer {
    if (row.digest !== null) return row.digest;
    return (this.host.legacy as LegacyDigests).of(id, Number(row.segment), Number(row.depth));
  }
}
