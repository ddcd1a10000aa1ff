/**
 * The on-disk schema (ST-1 … ST-4) and its ordered migrations. Version 1 is the first format; a
 * database of every version ever released is kept under fixtures/store/ and opened by the tests.
 */
import type Database from "better-sqlite3";
import { isTimestamp } from "../checks.ts";
import { digestBytes } from "../digest.ts";

/** `PRAGMA application_id` of every strata database: "STRA". */
export const APPLICATION_ID = 0x53545241;

/** The schema version this build writes. */
export const SCHEMA_VERSION = 6;

/** The first schema version whose events carry digests and which has the lease table (ST-21, ST-23). */
export const DIGEST_VERSION = 3;

/** The first schema version with the full-text search index (SE-4). */
export const SEARCH_VERSION = 4;

/** The first schema version whose search index may keep no copy of derived texts (SE-8, decision 0045). */
export const SEARCH_TEXT_VERSION = 5;

/** The FTS5 table of version 5: no content of its own (`content=''`), rows deletable by rowid. */
export const CONTENTLESS_SEARCH =
  "CREATE VIRTUAL TABLE search USING fts5(text, session, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0')";

/** The first schema version whose search index may hold words without their positions (SE-9, decision 0046). */
export const WORD_SEARCH_VERSION = 6;

/**
 * The first schema version whose derived texts are not written with their event: each kind's
 * watermark (meta `search_upto:<kind>`) says up to which event they are indexed, and the events
 * above it are swept into the index from their payloads (SE-10, decision 0046).
 */
export const WATERMARK_VERSION = 6;

/**
 * The FTS5 table of version 6: contentless, and `detail = none` — which events hold a word, not
 * where in them (SE-9): phrases and the session are checked on the candidates it gives.
 */
export const WORD_SEARCH =
  "CREATE VIRTUAL TABLE search USING fts5(text, session, content = '', contentless_delete = 1, detail = none, tokenize = 'unicode61 remove_diacritics 0')";

export interface Migration {
  readonly version: number;
  readonly description: string;
  /**
   * True when this build reads a file of the previous version as it is (the migration only
   * announces what new writers may write): such a file can be opened read-only without migrating.
   */
  readonly readable?: boolean;
  up(db: Database.Database): void;
}

/**
 * Version 1.
 * - `events` is the log. Rows are never updated or deleted. `segment` + `depth` place an event on
 *   its chain (ST-6); `events_chain` covers every column a listing needs, so history is read from
 *   the index and never touches payloads (ST-5).
 * - `segments` are maximal runs of events appended one after another on one line of history; a
 *   fork or rewind starts a new segment whose parent is the segment it left at `fork_depth`.
 * - `branches` are named heads. `head IS NULL` means the branch follows the tip of its segment
 *   (it owns it); otherwise it is pinned to `head` until its next append opens a new segment.
 * - `snapshots` store opaque headers and page references; pages and large payloads are `blobs`,
 *   content-addressed by sha256 and shared by every branch and session.
 * - `sessions.counter` hands out increasing numbers (`reserve`), which the engine turns into
 *   disjoint id ranges for lines of history written at the same time.
 */
const V1: Migration = {
  version: 1,
  description: "sessions, segments, branches, events, snapshots, blobs",
  up(db) {
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT,
        created INTEGER NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        counter INTEGER NOT NULL DEFAULT 0
      ) WITHOUT ROWID;
      CREATE TABLE segments (
        id INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        parent INTEGER,
        fork_depth INTEGER NOT NULL
      );
      CREATE INDEX segments_session ON segments (session, id);
      CREATE TABLE branches (
        session TEXT NOT NULL,
        name TEXT NOT NULL,
        segment INTEGER NOT NULL,
        head INTEGER,
        created INTEGER NOT NULL,
        origin TEXT NOT NULL,
        origin_event INTEGER,
        PRIMARY KEY (session, name)
      ) WITHOUT ROWID;
      CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        segment INTEGER NOT NULL,
        depth INTEGER NOT NULL,
        prior INTEGER,
        kind TEXT NOT NULL,
        label TEXT,
        by TEXT,
        ts INTEGER NOT NULL,
        blob BLOB,
        data TEXT NOT NULL
      );
      CREATE INDEX events_chain ON events (segment, depth, kind, label, by, ts);
      CREATE TABLE snapshots (
        event INTEGER PRIMARY KEY,
        segment INTEGER NOT NULL,
        depth INTEGER NOT NULL,
        header TEXT NOT NULL,
        pages BLOB NOT NULL
      );
      CREATE INDEX snapshots_chain ON snapshots (segment, depth);
      CREATE TABLE blobs (
        id INTEGER PRIMARY KEY,
        hash BLOB NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        data BLOB NOT NULL
      );
    `);
  },
};

/**
 * Version 2 (decision 0010): snapshot page directories may be written in format 2, which lists only
 * the chunks that hold a page and stores each chunk as a bitmap plus the hashes of its pages, so a
 * directory that is mostly empty costs bytes in proportion to its pages (ST-13). No table changes:
 * the version is bumped so that a build that reads only format 1 refuses the file (`newer-schema`)
 * instead of misreading it. Format-1 directories written before stay valid and are read as they are.
 */
const V2: Migration = {
  version: 2,
  description: "snapshot page directories in format 2 (sparse chunks)",
  readable: true,
  up() {},
};

/**
 * Version 3 (decision 0014):
 * - every event stores `digest`, the sha256 chain over its prior's digest and its own content
 *   (ST-21). The events table is rebuilt with `digest` before the payload columns, so a row's
 *   digest is read without walking a large payload's overflow pages, and the listing index covers
 *   it (ST-5). Existing events get their digests here, in id order (an event's prior always has a
 *   smaller id), over their payloads as the store returns them (blob-backed ones from the blob).
 * - `leases` holds one row per (session, branch) that was ever leased (ST-23): the last fencing
 *   token handed out, kept after a release so a token is never reused, and the holder (`owner`
 *   NULL when released).
 *
 * `readable`: this build reads version 1 and 2 files as they are, read-only, computing their
 * digests when asked (ST-4).
 */
const V3: Migration = {
  version: 3,
  description: "event digest chain; one-driver leases",
  readable: true,
  up(db) {
    db.exec(`
      CREATE TABLE events_v3 (
        id INTEGER PRIMARY KEY,
        segment INTEGER NOT NULL,
        depth INTEGER NOT NULL,
        prior INTEGER,
        kind TEXT NOT NULL,
        label TEXT,
        by TEXT,
        ts INTEGER NOT NULL,
        digest BLOB NOT NULL,
        blob BLOB,
        data TEXT NOT NULL
      );
      CREATE TABLE leases (
        session TEXT NOT NULL,
        branch TEXT NOT NULL,
        token INTEGER NOT NULL,
        owner TEXT,
        acquired INTEGER,
        renewed INTEGER,
        PRIMARY KEY (session, branch)
      ) WITHOUT ROWID;
    `);
    digestEvents(db);
    db.exec(`
      DROP TABLE events;
      ALTER TABLE events_v3 RENAME TO events;
      CREATE INDEX events_chain ON events (segment, depth, kind, label, by, ts, digest);
    `);
  },
};

/**
 * Version 4 (decision 0039): `search`, an FTS5 table of every event's searchable text, its rowid
 * the event's id, kept by every append in the append's transaction (SE-4). The tokenizer cuts text
 * into runs of letters and digits and folds case (`unicode61`, diacritics kept: a PostgreSQL
 * store's index keeps them too). The events a file already holds are its backlog (meta
 * `search_backlog`: the highest id not yet indexed), indexed by `indexSearch` after the migration
 * (SE-6); the migration itself reads no payload. `readable`: a version 3 file is read as it is,
 * without search.
 */
const V4: Migration = {
  version: 4,
  description: "full-text search index",
  readable: true,
  up(db) {
    // `session` (the event's session id, one token) lets a search in one session intersect its
    // few events with a word's doclist instead of filtering every match (SE-4). No column sizes:
    // they serve only bm25 ranking, which search does not use (hits are newest first), and
    // keeping them is a fourth row per event (a quarter of the index's cost per append).
    db.exec("CREATE VIRTUAL TABLE search USING fts5(text, session, columnsize = 0, tokenize = 'unicode61 remove_diacritics 0')");
    // The index's tail: what appends wrote since the last move into the index, one plain row per
    // event (an FTS5 insert per transaction writes a segment of its own; moved in batches, it is
    // a fraction of that). Searches read both.
    db.exec("CREATE TABLE search_pending (id INTEGER PRIMARY KEY, session TEXT NOT NULL, text TEXT NOT NULL) STRICT");
    const max = Number(db.prepare("SELECT COALESCE(MAX(id), 0) FROM events").pluck().get());
    if (max > 0) db.prepare("INSERT INTO meta (key, value) VALUES ('search_backlog', ?)").run(String(max));
  },
};

/** Copies every event into `events_v3` with its digest, a batch of rows at a time. */
function digestEvents(db: Database.Database): void {
  const batch = db.prepare(
    "SELECT id, segment, depth, prior, kind, label, by, ts, blob, data FROM events WHERE id > ? ORDER BY id LIMIT 512",
  );
  const blob = db.prepare("SELECT data FROM blobs WHERE hash = ?").pluck();
  const digestOf = db.prepare("SELECT digest FROM events_v3 WHERE id = ?").pluck();
  const insert = db.prepare(
    "INSERT INTO events_v3 (id, segment, depth, prior, kind, label, by, ts, digest, blob, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  // The last event seen per segment: an event's prior is almost always the one before it there.
  const last = new Map<number, { id: number; digest: Buffer }>();
  let after = 0;
  for (;;) {
    const rows = batch.all(after) as Record<string, unknown>[];
    if (rows.length === 0) return;
    for (const r of rows) {
      const id = Number(r.id);
      const segment = Number(r.segment);
      const prior = r.prior === null ? null : Number(r.prior);
      let priorDigest: Buffer | null = null;
      if (prior !== null) {
        const tip = last.get(segment);
        // A prior that is not (or no longer) a row chains from nothing; verify reports the link.
        priorDigest = tip?.id === prior ? tip.digest : ((digestOf.get(prior) as Buffer | undefined) ?? null);
      }
      // A blob-backed payload is digested as its text; a missing blob as the empty text the row holds.
      const data = r.blob === null ? r.data : ((blob.get(r.blob) as Buffer | undefined)?.toString("utf8") ?? r.data);
      const digest = rowDigest(priorDigest, r.kind, r.label, r.by, r.ts, data);
      insert.run(id, segment, r.depth, r.prior, r.kind, r.label, r.by, r.ts, digest, r.blob, r.data);
      last.set(segment, { id, digest });
      after = id;
    }
  }
}

/** A digest of zeros marks a row whose fields cannot be digested (see {@link rowDigest}). */
export const NO_DIGEST = Buffer.alloc(32);

/**
 * The digest of a stored row. A row that an older build or an edit in SQL left with fields no
 * append accepts (a timestamp such as 1e300, a kind that is not text) gets {@link NO_DIGEST},
 * which `verify` reports; the migration goes on.
 */
export function rowDigest(prior: Buffer | null, kind: unknown, label: unknown, by: unknown, ts: unknown, data: unknown): Buffer {
  const text = (v: unknown) => typeof v === "string";
  if (!text(kind) || !(label === null || text(label)) || !(by === null || text(by)) || !text(data) || !isTimestamp(ts)) return NO_DIGEST;
  return digestBytes(prior, kind as string, label as string | null, by as string | null, ts, data as string);
}

/**
 * Version 5 (decision 0045): the search index keeps no copy of a text it can derive again (SE-8).
 * Version 4's FTS5 table stored every indexed text a second time (its content table, as large as
 * the payloads); here `search` is contentless and rows are deleted by rowid (`contentless_delete`),
 * `search_text` keeps only the texts the store could not derive from the payload, and a pending
 * row says whether its text is derived. A file whose index holds rows keeps its version 4 table
 * (meta `search_copy` = `kept`: rebuilding it would re-tokenize every indexed event while the file
 * opens); an index with nothing in it yet is made anew. `readable`: a version 4 file is read as
 * it is.
 */
const V5: Migration = {
  version: 5,
  description: "search without a copy of derived texts",
  readable: true,
  up(db) {
    db.exec("CREATE TABLE search_text (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT");
    db.exec("ALTER TABLE search_pending ADD COLUMN derived INTEGER NOT NULL DEFAULT 0");
    const indexed = db.prepare("SELECT rowid FROM search LIMIT 1").get() !== undefined;
    if (indexed) db.prepare("INSERT INTO meta (key, value) VALUES ('search_copy', 'kept')").run();
    else {
      db.exec("DROP TABLE search");
      db.exec(CONTENTLESS_SEARCH);
    }
  },
};

/**
 * Version 6 (decision 0046): the search index records which events hold a word, not where in them
 * (FTS5 `detail = none`, SE-9). Positions were most of the index (about 0.8 KB of a 2.5 KB step,
 * a third of the file) and of an append's cost; a phrase is now checked on the text of each
 * candidate the words give, as the pending rows always were. A file whose index holds rows (or
 * keeps its version 4 copy) keeps it, positions and all, and searches it as before: rebuilding it
 * would re-derive and re-tokenize every indexed event while the file opens. An index with no row
 * yet is made anew. `readable`: a version 5 file is read as it is.
 */
const V6: Migration = {
  version: 6,
  description: "a search index of words without positions",
  readable: true,
  up(db) {
    const kept = db.prepare("SELECT 1 FROM meta WHERE key = 'search_copy'").get() !== undefined;
    const indexed = db.prepare("SELECT rowid FROM search LIMIT 1").get() !== undefined;
    if (kept || indexed) return;
    db.exec("DROP TABLE search");
    db.exec(WORD_SEARCH);
  },
};

/** Every migration, in order. A migration never changes once released. */
export const MIGRATIONS: readonly Migration[] = [V1, V2, V3, V4, V5, V6];
