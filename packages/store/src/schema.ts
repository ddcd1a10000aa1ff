/**
 * The on-disk schema (ST-1 … ST-4) and its ordered migrations. Version 1 is the first format; a
 * database of every version ever released is kept under fixtures/store/ and opened by the tests.
 */
import type Database from "better-sqlite3";

/** `PRAGMA application_id` of every strata database: "STRA". */
export const APPLICATION_ID = 0x53545241;

/** The schema version this build writes. */
export const SCHEMA_VERSION = 2;

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

/** Every migration, in order. A migration never changes once released. */
export const MIGRATIONS: readonly Migration[] = [V1, V2];
