/**
 * The SQLite backend's prepared statements, in one place and typed: each says what it binds and
 * what it returns, so no cast of a row is needed anywhere else. Portable SQL (decision 0007),
 * prepared once per connection, when first used: an open prepares none, and a process prepares
 * only what it runs (preparing all of them cost about 2 ms of every open, issue 14). Chain reads
 * come in pairs — a rowid range and a (segment, depth) range — chosen per span by the chain
 * reader (ST-7). A file of a schema before digests and leases
 * (opened read-only, unmigrated: ST-4) selects `NULL` for the digest, which the store then
 * computes, and has no write or lease statements.
 *
 * The row types say what a whole file holds; the code that maps rows to values still converts
 * with `Number()` where a damaged file could hold something else (SQLite columns are not typed).
 */
import type Database from "better-sqlite3";
import { StoreError } from "../errors.ts";
import type { BranchRow, LeaseRow, MetaRow, SessionRow } from "../rows.ts";

export type { BranchRow, LeaseRow, MetaRow, SessionRow };

/** A prepared read binding `P` and returning rows (or values) `R`. */
export interface Query<P extends unknown[], R> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

/** A prepared write binding `P`. */
export interface Command<P extends unknown[]> {
  run(...params: P): { readonly changes: number; readonly lastInsertRowid: number | bigint };
}

export interface SegmentRow {
  readonly id: number;
  readonly session: string;
  readonly parent: number | null;
  readonly fork_depth: number;
}

export interface EventRow extends MetaRow {
  readonly prior: number | null;
  /** The payload's blob hash when it is stored as a blob (then `data` is ""). */
  readonly blob: Buffer | null;
  readonly data: string;
}

/** A full event row as a tuple, in EVENT_COLUMNS order (chain reads use raw rows: no object per row). */
export type EventTuple = [
  id: number,
  depth: number,
  prior: number | null,
  kind: string,
  label: string | null,
  by: string | null,
  ts: number,
  digest: Buffer | null,
  blob: Buffer | null,
  data: string,
];

/** An event's payload as a raw row: id, blob hash (blob-backed) and inline data ("" when blob-backed). */
export type DataTuple = [id: number, blob: Buffer | null, data: string];

/** An event's place: its id and depth (a raw row). */
export type Place = [id: number, depth: number];

export interface SnapshotRow {
  readonly event: number;
  readonly depth: number;
  readonly header: string;
  readonly pages: Buffer;
}

/** Columns of a full event row; raw chain reads return them in this order (see {@link EventTuple}). */
const EVENT_COLUMNS = "id, depth, prior, kind, label, by, ts, digest, blob, data";

/** Ids (or hashes) bound per execution of a by-key statement (one JSON array). */
const BATCH_IDS = 4096;
/** A run of wanted event ids is read as a range when it spans at most this many ids per wanted id. */
const RUN_SPREAD = 2;
/** Runs shorter than this are read by id (a range scan pays off from a few rows on). */
const RUN_MIN = 4;

/** The statements of a connection; `legacy` for a file without digests and leases (schema < 3). */
export function prepare(db: Database.Database, legacy = false) {
  const D = legacy ? "NULL AS digest" : "digest";
  const full = legacy ? EVENT_COLUMNS.replace("digest", D) : EVENT_COLUMNS;
  // The one place where statements get their types (better-sqlite3's are untyped). Each makes
  // its statement when called: `lazily` calls it on the statement's first use.
  const rows =
    <P extends unknown[], R>(sql: string) =>
    () =>
      db.prepare(sql) as unknown as Query<P, R>;
  const values =
    <P extends unknown[], V>(sql: string) =>
    () =>
      db.prepare(sql).pluck() as unknown as Query<P, V>;
  const tuples =
    <P extends unknown[], T>(sql: string) =>
    () =>
      db.prepare(sql).raw() as unknown as Query<P, T>;
  /** Writes (and a write's RETURNING): a legacy file is never written, so they stand for a refusal there. */
  const command =
    <P extends unknown[]>(sql: string) =>
    (): Command<P> =>
      legacy ? UNWRITABLE : (db.prepare(sql) as unknown as Command<P>);
  const returning =
    <P extends unknown[], V>(sql: string) =>
    (): Query<P, V> =>
      legacy ? UNWRITABLE : values<P, V>(sql)();
  const tipOf = "(SELECT id FROM events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)";
  const tipDepthOf = "(SELECT depth FROM events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)";
  const headDepthOf = "(SELECT depth FROM events WHERE id = b.head)";
  const branchCols = `b.name, b.segment, b.head, b.created, b.origin, b.origin_event, ${tipOf} AS tip_id, ${tipDepthOf} AS tip_depth, ${headDepthOf} AS head_depth`;
  const sessionCols = "id, title, created, metadata";
  const listCols = `id, segment, depth, kind, label, by, ts, ${D}`;
  /** Full rows of many events at once, read in id runs (see {@link inRuns}). */
  const eventsIn = () =>
    inRuns(
      rows<[lo: number, hi: number], EventRow>(`SELECT segment, ${full} FROM events WHERE id >= ? AND id <= ?`)(),
      rows<[ids: string], EventRow>(`SELECT segment, ${full} FROM events WHERE id IN (SELECT value FROM json_each(?))`)(),
      (r) => Number(r.id),
    );
  /** Payloads only (`[id, blob, data]`, `data` "" when blob-backed), the same way: the narrow read of text references. */
  const dataIn = () =>
    inRuns(
      tuples<[lo: number, hi: number], DataTuple>("SELECT id, blob, data FROM events WHERE id >= ? AND id <= ?")(),
      tuples<[ids: string], DataTuple>("SELECT id, blob, data FROM events WHERE id IN (SELECT value FROM json_each(?))")(),
      (r) => Number(r[0]),
    );
  /** Hashes and bytes of many blobs at once, by hex hash (one statement, like `eventsIn`). */
  const blobsIn = () => {
    const stmt = rows<[hashes: string], { hash: Buffer; data: Buffer }>(
      "SELECT hash, data FROM blobs WHERE hash IN (SELECT unhex(value) FROM json_each(?))",
    )();
    return (hashes: readonly string[]): { hash: Buffer; data: Buffer }[] => {
      if (hashes.length <= BATCH_IDS) return stmt.all(JSON.stringify(hashes));
      const out: { hash: Buffer; data: Buffer }[] = [];
      for (let i = 0; i < hashes.length; i += BATCH_IDS)
        for (const r of stmt.all(JSON.stringify(hashes.slice(i, i + BATCH_IDS)))) out.push(r);
      return out;
    };
  };
  return lazily({
    eventsIn,
    dataIn,
    blobsIn,
    insertSession: command<[id: string, title: string | null, created: number, metadata: string]>(
      "INSERT INTO sessions (id, title, created, metadata) VALUES (?, ?, ?, ?)",
    ),
    session: rows<[id: string], SessionRow>(`SELECT ${sessionCols} FROM sessions WHERE id = ?`),
    sessions: rows<[before: string, limit: number], SessionRow>(
      `SELECT ${sessionCols} FROM sessions WHERE id < ? ORDER BY id DESC LIMIT ?`,
    ),
    // Every branch's head (its pinned event, else its segment's tip), kept when it is an event of the
    // session; the newest per session (ts, then id) ranks the sessions. One statement (recentSessions).
    recentSessions: rows<[limit: number], SessionRow & { last_id: number | null; last_ts: number | null }>(
      `WITH heads AS (
         SELECT b.session, COALESCE(b.head, ${tipOf}) AS head FROM branches b
       ), ranked AS (
         SELECT h.session, e.id, e.ts, ROW_NUMBER() OVER (PARTITION BY h.session ORDER BY e.ts DESC, e.id DESC) AS n
         FROM heads h JOIN events e ON e.id = h.head JOIN segments g ON g.id = e.segment AND g.session = h.session
       )
       SELECT s.id, s.title, s.created, s.metadata, r.id AS last_id, r.ts AS last_ts
       FROM sessions s LEFT JOIN ranked r ON r.session = s.id AND r.n = 1
       ORDER BY COALESCE(r.ts, s.created) DESC, s.id DESC LIMIT ?`,
    ),
    sessionsByPrefix: rows<[from: string, to: string], SessionRow>(
      `SELECT ${sessionCols} FROM sessions WHERE id >= ? AND id < ? ORDER BY id DESC`,
    ),
    updateSession: command<[title: string | null, metadata: string, id: string]>(
      "UPDATE sessions SET title = ?, metadata = ? WHERE id = ?",
    ),
    reserve: returning<[count: number, id: string], number>("UPDATE sessions SET counter = counter + ? WHERE id = ? RETURNING counter"),
    insertSegment: command<[session: string, parent: number | null, forkDepth: number]>(
      "INSERT INTO segments (session, parent, fork_depth) VALUES (?, ?, ?)",
    ),
    segmentAncestry: rows<[id: number], SegmentRow>(
      // UNION (not UNION ALL): a cycle of parents in a damaged file ends the recursion (ST-7).
      `WITH RECURSIVE a(id) AS (SELECT ? UNION SELECT s.parent FROM segments s JOIN a ON s.id = a.id WHERE s.parent IS NOT NULL)
       SELECT s.id, s.session, s.parent, s.fork_depth FROM segments s JOIN a ON s.id = a.id`,
    ),
    insertBranch: command<
      [session: string, name: string, segment: number, head: number | null, created: number, origin: string, originEvent: number | null]
    >("INSERT INTO branches (session, name, segment, head, created, origin, origin_event) VALUES (?, ?, ?, ?, ?, ?, ?)"),
    branch: rows<[session: string, name: string], BranchRow>(`SELECT ${branchCols} FROM branches b WHERE b.session = ? AND b.name = ?`),
    branches: rows<[session: string], BranchRow>(`SELECT ${branchCols} FROM branches b WHERE b.session = ? ORDER BY b.created, b.name`),
    ownSegment: command<[segment: number, session: string, name: string]>(
      "UPDATE branches SET segment = ?, head = NULL WHERE session = ? AND name = ?",
    ),
    pinBranch: command<[segment: number, head: number, session: string, name: string]>(
      "UPDATE branches SET segment = ?, head = ? WHERE session = ? AND name = ?",
    ),
    headOf: rows<[id: number], { segment: number; depth: number; digest: Buffer | null }>(
      `SELECT segment, depth, ${D} FROM events WHERE id = ?`,
    ),
    insertEvent: command<
      [
        segment: number,
        depth: number,
        prior: number | null,
        kind: string,
        label: string | null,
        by: string | null,
        ts: number,
        digest: Buffer,
        blob: Buffer | null,
        data: string,
      ]
    >("INSERT INTO events (segment, depth, prior, kind, label, by, ts, digest, blob, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    // The append fast path (ST-9): the WHERE is the compare-and-swap on the branch's tip.
    appendIfTip: command<AppendParams>(
      `INSERT INTO events (segment, depth, prior, kind, label, by, ts, digest, blob, data)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM branches WHERE session = ? AND name = ? AND segment = ? AND head IS NULL)
         AND NOT EXISTS (SELECT 1 FROM events WHERE segment = ? AND depth = ?)`,
    ),
    // The same, fenced (ST-23): only while the branch's lease is still the writer's token.
    appendIfTipLeased: command<[...AppendParams, session: string, branch: string, token: number]>(
      `INSERT INTO events (segment, depth, prior, kind, label, by, ts, digest, blob, data)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM branches WHERE session = ? AND name = ? AND segment = ? AND head IS NULL)
         AND NOT EXISTS (SELECT 1 FROM events WHERE segment = ? AND depth = ?)
         AND EXISTS (SELECT 1 FROM leases WHERE session = ? AND branch = ? AND token = ? AND owner IS NOT NULL)`,
    ),
    eventFull: rows<[id: number], EventRow>(`SELECT segment, ${full} FROM events WHERE id = ?`),
    eventMeta: rows<[id: number], EventRow>(`SELECT id, segment, depth, prior, kind, label, by, ts, ${D} FROM events WHERE id = ?`),
    eventSegment: values<[id: number], number>("SELECT segment FROM events WHERE id = ?"),
    atDepth: values<[segment: number, depth: number], number>("SELECT id FROM events WHERE segment = ? AND depth = ?"),
    firstAfter: tuples<[segment: number, depth: number], Place>(
      "SELECT id, depth FROM events WHERE segment = ? AND depth > ? ORDER BY depth LIMIT 1",
    ),
    lastUpTo: tuples<[segment: number, depth: number], Place>(
      "SELECT id, depth FROM events WHERE segment = ? AND depth <= ? ORDER BY depth DESC LIMIT 1",
    ),
    chainRange: tuples<IdRange, EventTuple>(`SELECT ${full} FROM events WHERE id >= ? AND id <= ? AND +segment = ? ORDER BY id LIMIT ?`),
    chainDepths: tuples<DepthRange, EventTuple>(
      `SELECT ${full} FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?`,
    ),
    // Payload reads select one column (plucked): a blob-backed payload reads as NULL (an inline
    // payload may be "") and is filled from the blob refs, fetched only for a batch that has one.
    chainDataRange: values<IdRange, string | null>(
      "SELECT CASE WHEN blob IS NULL THEN data END FROM events WHERE id >= ? AND id <= ? AND +segment = ? ORDER BY id LIMIT ?",
    ),
    chainBlobsRange: values<IdRange, Buffer>(
      "SELECT blob FROM events WHERE id >= ? AND id <= ? AND +segment = ? AND blob IS NOT NULL ORDER BY id LIMIT ?",
    ),
    chainDataDepths: values<DepthRange, string | null>(
      "SELECT CASE WHEN blob IS NULL THEN data END FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?",
    ),
    chainBlobsDepths: values<DepthRange, Buffer>(
      "SELECT blob FROM events WHERE segment = ? AND depth > ? AND depth <= ? AND blob IS NOT NULL ORDER BY depth LIMIT ?",
    ),
    listRange: rows<DepthRange, MetaRow>(
      `SELECT ${listCols} FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?`,
    ),
    firstLabeledIn: tuples<[segment: number, from: number, to: number, label: string], [id: number]>(
      "SELECT id FROM events WHERE segment = ? AND depth > ? AND depth <= ? AND label = ? ORDER BY depth LIMIT 1",
    ),
    listRangeDesc: rows<DepthRange, MetaRow>(
      `SELECT ${listCols} FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth DESC LIMIT ?`,
    ),
    insertSnapshot: command<[event: number, segment: number, depth: number, header: string, pages: Buffer]>(
      "INSERT OR REPLACE INTO snapshots (event, segment, depth, header, pages) VALUES (?, ?, ?, ?, ?)",
    ),
    snapshotIn: rows<[segment: number, from: number, to: number], SnapshotRow>(
      "SELECT event, depth, header, pages FROM snapshots WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth DESC LIMIT 1",
    ),
    snapshotsOf: values<[session: string], number>(
      "SELECT n.event FROM snapshots n JOIN segments s ON s.id = n.segment WHERE s.session = ? ORDER BY n.event",
    ),
    insertBlob: command<[hash: Buffer, size: number, data: Uint8Array]>(
      "INSERT INTO blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING",
    ),
    blob: values<[hash: Buffer], Buffer>("SELECT data FROM blobs WHERE hash = ?"),
    hasBlob: values<[hash: Buffer], number>("SELECT 1 FROM blobs WHERE hash = ?"),
    // Search (SE-4 … SE-6): the FTS5 table's rowid is the event's id.
    // A pending row says whether its text is derived from the payload (version 5, SE-8).
    insertPendingOf: command<[event: number, session: string, text: string, derived: number]>(
      "INSERT OR REPLACE INTO search_pending (id, session, text, derived) VALUES (?, ?, ?, ?)",
    ),
    moveTexts: command<[]>("INSERT OR REPLACE INTO search_text (id, text) SELECT id, text FROM search_pending WHERE derived = 0"),
    insertSearchText: command<[event: number, text: string]>("INSERT OR REPLACE INTO search_text (id, text) VALUES (?, ?)"),
    countPending: values<[], number>("SELECT count(*) FROM search_pending"),
    movePending: command<[]>("INSERT OR REPLACE INTO search (rowid, text, session) SELECT id, text, session FROM search_pending"),
    clearPending: command<[]>("DELETE FROM search_pending"),
    insertSearchOf: command<[event: number, text: string, again: number]>(
      "INSERT OR REPLACE INTO search (rowid, text, session) SELECT ?, ?, g.session FROM events e JOIN segments g ON g.id = e.segment WHERE e.id = ?",
    ),
    // The watermarks of derived texts (SE-10, schema 6): per kind, every event of it up to the
    // value is indexed unless it has a pending row; above it, one may be indexed already (a pending
    // row marked derived, moved by a process that does not sweep the kind).
    watermarks: rows<[], { key: string; value: string }>("SELECT key, value FROM meta WHERE key LIKE 'search_upto:%'"),
    ensureWatermark: command<[key: string]>(
      "INSERT OR IGNORE INTO meta (key, value) SELECT ?, CAST(COALESCE(MAX(id), 0) AS TEXT) FROM events",
    ),
    raiseWatermark: command<[key: string]>("UPDATE meta SET value = (SELECT CAST(COALESCE(MAX(id), 0) AS TEXT) FROM events) WHERE key = ?"),
    unswept: rows<[after: number, kind: string], UnsweptRow>(
      `SELECT e.id, g.session FROM events e JOIN segments g ON g.id = e.segment
       WHERE e.id > ? AND e.kind = ?
         AND NOT EXISTS (SELECT 1 FROM search_pending p WHERE p.id = e.id)
         AND NOT EXISTS (SELECT 1 FROM search x WHERE x.rowid = e.id)
       ORDER BY e.id`,
    ),
    hasUnswept: values<[after: number, kind: string], number>("SELECT 1 FROM events WHERE id > ? AND kind = ? LIMIT 1"),
    insertSearch: command<[event: number, text: string, session: string]>(
      "INSERT OR REPLACE INTO search (rowid, text, session) VALUES (?, ?, ?)",
    ),
    search: rows<[match: string, before: number, limit: number], SearchRow>(
      `SELECT x.rowid AS id, x.text, e.kind, e.label, e.by, e.ts, g.session
       FROM search x JOIN events e ON e.id = x.rowid JOIN segments g ON g.id = e.segment
       WHERE search MATCH ? AND x.rowid < ? ORDER BY x.rowid DESC LIMIT ?`,
    ),
    searchIn: rows<[match: string, before: number, session: string, limit: number], SearchRow>(
      `SELECT x.rowid AS id, x.text, e.kind, e.label, e.by, e.ts, g.session
       FROM search x JOIN events e ON e.id = x.rowid JOIN segments g ON g.id = e.segment
       WHERE search MATCH ? AND x.rowid < ? AND g.session = ? ORDER BY x.rowid DESC LIMIT ?`,
    ),
    // Version 5's contentless index (SE-8): the text kept apart when it is not derived, else NULL.
    searchKept: rows<[match: string, before: number, limit: number], KeptSearchRow>(
      `SELECT x.rowid AS id, t.text, e.kind, e.label, e.by, e.ts, g.session
       FROM search x JOIN events e ON e.id = x.rowid JOIN segments g ON g.id = e.segment LEFT JOIN search_text t ON t.id = x.rowid
       WHERE search MATCH ? AND x.rowid < ? ORDER BY x.rowid DESC LIMIT ?`,
    ),
    searchKeptIn: rows<[match: string, before: number, session: string, limit: number], KeptSearchRow>(
      `SELECT x.rowid AS id, t.text, e.kind, e.label, e.by, e.ts, g.session
       FROM search x JOIN events e ON e.id = x.rowid JOIN segments g ON g.id = e.segment LEFT JOIN search_text t ON t.id = x.rowid
       WHERE search MATCH ? AND x.rowid < ? AND g.session = ? ORDER BY x.rowid DESC LIMIT ?`,
    ),
    searchCopy: values<[], string>("SELECT value FROM meta WHERE key = 'search_copy'"),
    searchBacklog: values<[], string>("SELECT value FROM meta WHERE key = 'search_backlog'"),
    setSearchBacklog: command<[value: string]>(
      "INSERT INTO meta (key, value) VALUES ('search_backlog', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
    clearSearchBacklog: command<[]>("DELETE FROM meta WHERE key = 'search_backlog'"),
    // Leases (ST-23). A released row keeps its last token (owner NULL) so tokens never repeat.
    lease: legacy
      ? () => undefined
      : rows<[session: string, branch: string], LeaseRow>(
          "SELECT token, owner, acquired, renewed FROM leases WHERE session = ? AND branch = ?",
        ),
    takeLease: returning<[session: string, branch: string, owner: string, acquired: number, renewed: number], number>(
      `INSERT INTO leases (session, branch, token, owner, acquired, renewed) VALUES (?, ?, 1, ?, ?, ?)
       ON CONFLICT (session, branch) DO UPDATE SET token = token + 1, owner = excluded.owner, acquired = excluded.acquired, renewed = excluded.renewed
       RETURNING token`,
    ),
    renewLease: command<[renewed: number, session: string, branch: string, token: number]>(
      "UPDATE leases SET renewed = ? WHERE session = ? AND branch = ? AND token = ? AND owner IS NOT NULL",
    ),
    releaseLease: command<[session: string, branch: string, token: number]>(
      "UPDATE leases SET owner = NULL, acquired = NULL, renewed = NULL WHERE session = ? AND branch = ? AND token = ? AND owner IS NOT NULL",
    ),
  });
}

export type Statements = ReturnType<typeof prepare>;

/** An event above its kind's watermark with no pending row or kept text (SE-10): to be indexed from its derived text. */
export interface UnsweptRow {
  readonly id: number;
  readonly session: string;
}

/** A search hit's row. */
export interface SearchRow {
  readonly id: number;
  readonly text: string;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  readonly ts: number;
  readonly session: string;
}

/** A hit of version 5's contentless index: its text when the store kept it (SE-8), else NULL (derived from the payload). */
export interface KeptSearchRow extends Omit<SearchRow, "text"> {
  readonly text: string | null;
}

/** A span read as a rowid range: first id, last id, segment, at most rows. */
export type IdRange = [lo: number, hi: number, segment: number, limit: number];
/** A span read through the (segment, depth) index: segment, after depth, up to depth, at most rows. */
export type DepthRange = [segment: number, from: number, to: number, limit: number];

type AppendParams = [
  segment: number,
  depth: number,
  prior: number,
  kind: string,
  label: string | null,
  by: string | null,
  ts: number,
  digest: Buffer,
  blob: Buffer | null,
  data: string,
  session: string,
  branch: string,
  ownedSegment: number,
  tipSegment: number,
  nextDepth: number,
];

const refuse = (): never => {
  throw new StoreError("read-only", "this store was opened read-only (an older schema, read as it is, unmigrated); nothing was written");
};

/**
 * Stands for a write statement on a legacy file (opened read-only as it is): preparing it would
 * fail (the columns are not there) and running it must not happen.
 */
const UNWRITABLE = { run: refuse, get: refuse, all: refuse };

/**
 * Rows of many events at once (any order, duplicates and missing ids allowed; rows in no particular
 * order). Ids are sorted and cut into runs: a run whose ids are at least half of the id range it
 * spans (a snapshot page's texts, a chain appended alone) is one rowid range scan, filtered; the
 * rest are bound as one JSON array (`json_each`). Both statements are prepared once: a statement
 * prepared per `IN (…)` list, and a B-tree descent per id, cost most of a bulk text read (issue 14).
 */
function inRuns<R>(
  range: Query<[lo: number, hi: number], R>,
  byIds: Query<[ids: string], R>,
  idOf: (row: R) => number,
): (ids: readonly number[]) => R[] {
  return (ids) => {
    const sorted = [...new Set(ids)].sort((x, y) => x - y);
    const out: R[] = [];
    const loose: number[] = [];
    for (let i = 0; i < sorted.length; ) {
      // the longest run from i that spans at most RUN_SPREAD ids per wanted id
      let j = i;
      while (j + 1 < sorted.length && (sorted[j + 1] as number) - (sorted[i] as number) + 1 <= RUN_SPREAD * (j + 2 - i)) j++;
      const count = j - i + 1;
      if (count < RUN_MIN) for (let k = i; k <= j; k++) loose.push(sorted[k] as number);
      else {
        const lo = sorted[i] as number;
        const hi = sorted[j] as number;
        const wanted = count === hi - lo + 1 ? undefined : new Set(sorted.slice(i, j + 1));
        for (const r of range.all(lo, hi)) if (wanted === undefined || wanted.has(idOf(r))) out.push(r);
      }
      i = j + 1;
    }
    for (let i = 0; i < loose.length; i += BATCH_IDS) for (const r of byIds.all(JSON.stringify(loose.slice(i, i + BATCH_IDS)))) out.push(r);
    return out;
  };
}

/**
 * An object whose members are made by `makers` on first use and then kept as plain values, so a
 * member costs nothing until it is used and a property read after. The getters live on the
 * prototype and each first use adds an own data property that shadows its getter: the object stays
 * in V8's fast-property mode (replacing an own getter would make it a dictionary: 9× slower reads).
 */
function lazily<T extends object>(makers: { readonly [K in keyof T]: () => T[K] }): T {
  const proto = {};
  const out = Object.create(proto) as T;
  for (const key of Object.keys(makers) as (keyof T)[]) {
    Object.defineProperty(proto, key, {
      get(this: T): T[typeof key] {
        const value = makers[key]();
        Object.defineProperty(this, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return out;
}
