/**
 * Appending to a branch (ST-8, ST-9, ST-21, ST-23): compare-and-swap on the branch head, with the
 * event's digest chained from the head's. A branch that owns its segment and whose tip this
 * process knows appends with one conditional `INSERT … SELECT … WHERE` in autocommit — the `WHERE`
 * is the compare-and-swap (and, with a lease token, the fencing check) — so an append costs an
 * insert and a sha256. Everything else (group commits, the first append after a fork or rewind, a
 * tip another process moved) takes the slow path in a transaction, which reads the head and opens
 * a segment when the branch is pinned. The tip hints change undoably (ST-12).
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

  /** Search rows this connection added to `search_pending` since it last moved them into the index (SE-4). */
  pending = 0;

  constructor(private readonly host: AppendHost) {}

  /** The pending search row of event `id` (SE-4), saying whether its text is derived from the payload (SE-8). */
  #pend(id: number, session: SessionId, e: EventInput, text: string): void {
    this.host.st.insertPendingOf.run(id, session, text, derivable(e.kind, e.searchDerived) ? 1 : 0);
    this.pending++;
  }

  /** Appends checked `events` after `expectedHead` (see `Store.append`); call inside the caller's error mapping. */
  append(session: SessionId, branch: string, expectedHead: EventId, events: readonly EventInput[], lease: number | undefined): EventMeta[] {
    const { st, undo } = this.host;
    const key = tipKey(session, branch);
    const tip = this.#tips.get(key);
    // Fast path: this branch owns its segment and we know its tip. One statement, autocommit;
    // its WHERE clause is the compare-and-swap (ST-9), and the fencing check when a lease is given.
    // An event with searchable text is two rows (its pending search row, SE-4), in one transaction.
    if (events.length === 1 && tip !== undefined && tip.id === expectedHead) {
      if ((events[0] as EventInput).search !== undefined && !this.host.inTransaction())
        return this.host.tx(() => this.append(session, branch, expectedHead, events, lease));
      const e = events[0] as EventInput;
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
        if (e.search !== undefined) this.#pend(id, session, e, e.search);
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
    const r = this.host.st.insertEvent.run(segment, depth, prior, e.kind, label, by, ts, digest, blob, data);
    const id = Number(r.lastInsertRowid) as EventId;
    if (e.search !== undefined) this.#pend(id, session, e, e.search);
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
