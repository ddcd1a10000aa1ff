/**
 * The store's vocabulary. The store keeps events, heads, snapshots and blobs as opaque data; what
 * an event's `kind` and `data` mean is the engine's business (DESIGN §4).
 */

declare const eventIdBrand: unique symbol;
declare const sessionIdBrand: unique symbol;

/** A global, increasing event id (unique across the whole database). */
export type EventId = number & { readonly [eventIdBrand]: true };
/** A session id: 26 characters of Crockford base32, time-ordered. */
export type SessionId = string & { readonly [sessionIdBrand]: true };

export function eventId(n: number): EventId {
  if (!Number.isSafeInteger(n) || n <= 0) throw new TypeError(`not an event id: ${String(n)}`);
  return n as EventId;
}

export function sessionId(s: string): SessionId {
  if (typeof s !== "string" || !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(s)) throw new TypeError(`not a session id: ${JSON.stringify(s)}`);
  return s as SessionId;
}

/** An event to append. `data` is text the store does not interpret (the engine writes JSON). */
export interface EventInput {
  readonly kind: string;
  readonly label?: string | null;
  readonly by?: string | null;
  /** Milliseconds since the epoch; defaults to the store's clock. */
  readonly ts?: number;
  readonly data: string;
  /**
   * The event's searchable text (SE-1): indexed with the event in the same transaction and found
   * by `search`. Not part of the event (its digest, its payload): a store may drop it.
   */
  readonly search?: string;
  /**
   * SE-8: `search` is what the function registered for this kind (`registerSearchText`) derives
   * from `data`. The store may then index it without keeping a copy, and derive it again for a
   * hit's snippet. Without it (or with no function registered) the store keeps the text.
   */
  readonly searchDerived?: boolean;
}

/** What the index knows of an event: everything but its payload (DESIGN §4: listing reads no payloads). */
export interface EventMeta {
  readonly id: EventId;
  readonly session: SessionId;
  /** The event this one follows on its chain (`null` for the genesis event). */
  readonly prior: EventId | null;
  /** Position on its chain: genesis is 1. */
  readonly depth: number;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  readonly ts: number;
  /**
   * sha256 over the prior's digest and this event's kind, label, by, ts and data, as 64 lowercase
   * hex characters (ST-21, `eventDigest`): the same in every database that holds the chain.
   */
  readonly digest: string;
}

export interface StoredEvent extends EventMeta {
  readonly data: string;
}

export interface SessionInfo {
  readonly id: SessionId;
  readonly title: string | null;
  readonly created: number;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** A page of `listSessions`: newest first. */
export interface SessionQuery {
  /** At most this many sessions. */
  readonly limit?: number;
  /** Only sessions older than this one (exclusive): the previous page's last id. */
  readonly before?: SessionId;
}

/** What `search` looks for (SE-4). */
export interface SearchQuery {
  /**
   * Words, each found anywhere in an event's text (case does not matter); a word in double quotes
   * (`"open questions"`) is a phrase. At least one word; at most {@link MAX_SEARCH_TERMS}.
   */
  readonly text: string;
  /** Only this session's events. */
  readonly session?: SessionId;
  /** At most this many hits (default 20, at most 1000). */
  readonly limit?: number;
  /** Only events older than this one (a page's last hit is the next page's `before`). */
  readonly before?: EventId;
}

/** An older event's searchable text, for `indexSearch` (SE-6). */
export interface SearchEntry {
  readonly event: EventId;
  /** Its text, as `EventInput.search` would have been. */
  readonly text: string;
  /** As `EventInput.searchDerived` (SE-8): the text is what the function registered for its kind derives from its payload. */
  readonly derived?: boolean;
}

/** Most words and phrases one search may hold. */
export const MAX_SEARCH_TERMS = 16;

/** One event whose text holds every word of a search (SE-4). */
export interface SearchHit {
  readonly event: EventId;
  readonly session: SessionId;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  readonly ts: number;
  /** A piece of the event's text around the first match, on one line, "…" where it was cut. */
  readonly snippet: string;
  /** Where the words matched in `snippet`: [start, end) offsets, in order. */
  readonly marks: readonly (readonly [number, number])[];
}

/** A session with its last activity (`recentSessions`). */
export interface SessionActivity {
  readonly session: SessionInfo;
  /** The newest of its branch heads (the greatest `ts`, then id); null when none can be read. */
  readonly lastEvent: EventId | null;
  /** That event's `ts`, or the session's `created` without one. */
  readonly lastActivity: number;
}

/** How a branch came to be. */
export type BranchOrigin = "genesis" | "fork" | "rewind";

export interface BranchInfo {
  readonly session: SessionId;
  readonly name: string;
  readonly head: EventId;
  readonly headDepth: number;
  readonly created: number;
  readonly origin: BranchOrigin;
  /** True until the branch's first append after a fork or move: that append starts a new line (segment). */
  readonly pinned: boolean;
  /** For a fork: the event it was forked at. For a kept rewound head: the event the branch was rewound to. */
  readonly originEvent: EventId | null;
}

/** A snapshot as stored: opaque header bytes plus the list of page references (blob hashes). */
export interface SnapshotRecord {
  readonly event: EventId;
  readonly depth: number;
  readonly header: string;
  /** Page references, in page order; `null` for an empty page. */
  readonly pages: readonly (string | null)[];
}

/** Options of `append`. */
export interface AppendOptions {
  /**
   * A fencing token from `acquireLease`: the append writes only while the branch's lease is still
   * that token, and otherwise fails with `LeaseLost` (ST-23). Without it, leases are not looked at.
   */
  readonly lease?: number;
}

/** The holder of a branch's one-driver lease (ST-23). */
export interface LeaseInfo {
  readonly session: SessionId;
  readonly branch: string;
  /** Fencing token: increases on every successful acquisition of this (session, branch), never reused. */
  readonly token: number;
  /** Opaque text chosen by the holder (the CLI puts its pid, host and process start time there). */
  readonly owner: string;
  /** When this holder acquired the lease (ms since the epoch, the store's clock). */
  readonly acquired: number;
  /** When this holder last renewed it (equal to `acquired` until the first renewal). */
  readonly renewed: number;
}

/** What `acquireLease` returns: the new lease, or the holder that kept it. */
export type LeaseResult = { readonly ok: true; readonly lease: LeaseInfo } | { readonly ok: false; readonly holder: LeaseInfo };

export interface LogQuery {
  /** Branch to list (default "main"). */
  readonly branch?: string;
  /** Only events after this one on the branch (exclusive). */
  readonly after?: EventId;
  /** At most this many events (default: all). */
  readonly limit?: number;
  /** Newest first. */
  readonly reverse?: boolean;
}

/** Options of `removeSession` (ST-35). */
export interface RemoveOptions {
  /** Count what would go and remove nothing. */
  readonly dryRun?: boolean;
  /**
   * Whether a held lease's holder is still driving its branch (called inside the removal's write
   * transaction); default: every held lease is. A live holder refuses the removal (`in-use`).
   */
  readonly live?: (holder: LeaseInfo) => boolean;
}

/** What `removeSession` removed (or, with `dryRun`, would remove). */
export interface RemovedSession {
  readonly session: SessionInfo;
  /** Branches, kept rewound heads included. */
  readonly branches: number;
  readonly events: number;
  readonly snapshots: number;
}

/** Options of `collectGarbage` (ST-36). */
export interface CollectOptions {
  /** Find what would be reclaimed and delete nothing. */
  readonly dryRun?: boolean;
  /** As `RemoveOptions.live`, over every held lease of the store: a live holder refuses the collection (`in-use`). */
  readonly live?: (holder: LeaseInfo) => boolean;
  /**
   * The blob hashes a reachable blob's bytes name. Required: only the writer of a blob's format
   * knows what it names — the engine's snapshot pages are deflated JSON, so a text scan of their
   * bytes misses their texts (pass the engine's `storedBlobRefs`; `textRefs` scans the bytes as
   * text, for blobs of no other format). It may name more than the blob really refers to (that
   * only keeps more), never fewer.
   */
  readonly refs: (bytes: Buffer) => Iterable<string>;
}

/** What `collectGarbage` reclaimed (or, with `dryRun`, would reclaim), and what it kept. */
export interface CollectReport {
  readonly dryRun: boolean;
  /** Blobs reclaimed: payloads, texts, files, snapshot pages and directory chunks nothing reaches. */
  readonly blobs: number;
  /** Their bytes. */
  readonly bytes: number;
  /** Blobs kept (reachable), and their bytes. */
  readonly keptBlobs: number;
  readonly keptBytes: number;
}

/** One problem `verify` found. */
export interface VerifyFinding {
  readonly code:
    | "integrity"
    | "schema"
    | "dangling-prior"
    | "chain-gap"
    | "duplicate-depth"
    | "bad-segment"
    | "bad-head"
    | "missing-blob"
    | "bad-blob"
    | "bad-digest"
    | "bad-event"
    | "bad-snapshot"
    | "snapshot-mismatch";
  readonly session?: SessionId;
  readonly event?: EventId;
  readonly message: string;
}

export interface VerifyReport {
  readonly ok: boolean;
  readonly sessions: number;
  readonly events: number;
  readonly snapshots: number;
  readonly blobs: number;
  readonly findings: readonly VerifyFinding[];
}
