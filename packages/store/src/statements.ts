/**
 * The store's prepared statements, in one place: portable SQL (decision 0007), prepared once per
 * connection. Chain reads come in pairs — a rowid range and a (segment, depth) range — chosen per
 * span by the store (ST-7). A file of a schema before digests and leases (opened read-only,
 * unmigrated: ST-4) selects `NULL` for the digest, which the store then computes, and has no write
 * or lease statements.
 */
import type Database from "better-sqlite3";
import { StoreError } from "./errors.ts";

/** Columns of a full event row; raw chain reads return them in this order (digest at 7). */
const EVENT_COLUMNS = "id, depth, prior, kind, label, by, ts, digest, blob, data";

/** The statements of a connection; `legacy` for a file without digests and leases (schema < 3). */
export function prepare(db: Database.Database, legacy = false) {
  const D = legacy ? "NULL AS digest" : "digest";
  const full = legacy ? EVENT_COLUMNS.replace("digest", D) : EVENT_COLUMNS;
  /** A statement this file cannot have: using it is a read-only error (a legacy file is never written). */
  const write = (sql: string): Database.Statement => (legacy ? unwritable : db.prepare(sql));
  const tipOf = "(SELECT id FROM events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)";
  const tipDepthOf = "(SELECT depth FROM events WHERE segment = b.segment ORDER BY depth DESC LIMIT 1)";
  const headDepthOf = "(SELECT depth FROM events WHERE id = b.head)";
  const branchCols = `b.name, b.segment, b.head, b.created, b.origin, b.origin_event, ${tipOf} AS tip_id, ${tipDepthOf} AS tip_depth, ${headDepthOf} AS head_depth`;
  return {
    /** The columns of a full event row, for reads of many ids at once. */
    fullColumns: `segment, ${full}`,
    insertSession: write("INSERT INTO sessions (id, title, created, metadata) VALUES (?, ?, ?, ?)"),
    session: db.prepare("SELECT id, title, created, metadata FROM sessions WHERE id = ?"),
    sessions: db.prepare("SELECT id, title, created, metadata FROM sessions ORDER BY id DESC"),
    sessionsByPrefix: db.prepare("SELECT id, title, created, metadata FROM sessions WHERE id >= ? AND id < ? ORDER BY id DESC"),
    updateSession: write("UPDATE sessions SET title = ?, metadata = ? WHERE id = ?"),
    reserve: write("UPDATE sessions SET counter = counter + ? WHERE id = ? RETURNING counter").pluck(),
    insertSegment: write("INSERT INTO segments (session, parent, fork_depth) VALUES (?, ?, ?)"),
    segmentAncestry: db.prepare(
      // UNION (not UNION ALL): a cycle of parents in a damaged file ends the recursion (ST-7).
      `WITH RECURSIVE a(id) AS (SELECT ? UNION SELECT s.parent FROM segments s JOIN a ON s.id = a.id WHERE s.parent IS NOT NULL)
       SELECT s.id, s.session, s.parent, s.fork_depth FROM segments s JOIN a ON s.id = a.id`,
    ),
    insertBranch: write("INSERT INTO branches (session, name, segment, head, created, origin, origin_event) VALUES (?, ?, ?, ?, ?, ?, ?)"),
    branch: db.prepare(`SELECT ${branchCols} FROM branches b WHERE b.session = ? AND b.name = ?`),
    branches: db.prepare(`SELECT ${branchCols} FROM branches b WHERE b.session = ? ORDER BY b.created, b.name`),
    ownSegment: write("UPDATE branches SET segment = ?, head = NULL WHERE session = ? AND name = ?"),
    pinBranch: write("UPDATE branches SET segment = ?, head = ? WHERE session = ? AND name = ?"),
    headOf: db.prepare(`SELECT depth, ${D} FROM events WHERE id = ?`),
    insertEvent: write(
      "INSERT INTO events (segment, depth, prior, kind, label, by, ts, digest, blob, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    appendIfTip: write(
      `INSERT INTO events (segment, depth, prior, kind, label, by, ts, digest, blob, data)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM branches WHERE session = ? AND name = ? AND segment = ? AND head IS NULL)
         AND NOT EXISTS (SELECT 1 FROM events WHERE segment = ? AND depth = ?)`,
    ),
    // The same, fenced (ST-23): only while the branch's lease is still the writer's token.
    appendIfTipLeased: write(
      `INSERT INTO events (segment, depth, prior, kind, label, by, ts, digest, blob, data)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM branches WHERE session = ? AND name = ? AND segment = ? AND head IS NULL)
         AND NOT EXISTS (SELECT 1 FROM events WHERE segment = ? AND depth = ?)
         AND EXISTS (SELECT 1 FROM leases WHERE session = ? AND branch = ? AND token = ? AND owner IS NOT NULL)`,
    ),
    eventFull: db.prepare(`SELECT segment, ${full} FROM events WHERE id = ?`),
    eventMeta: db.prepare(`SELECT id, segment, depth, prior, kind, label, by, ts, ${D} FROM events WHERE id = ?`),
    eventSegment: db.prepare("SELECT segment FROM events WHERE id = ?"),
    atDepth: db.prepare("SELECT id FROM events WHERE segment = ? AND depth = ?"),
    firstAfter: db.prepare("SELECT id, depth FROM events WHERE segment = ? AND depth > ? ORDER BY depth LIMIT 1").raw(),
    lastUpTo: db.prepare("SELECT id, depth FROM events WHERE segment = ? AND depth <= ? ORDER BY depth DESC LIMIT 1").raw(),
    chainRange: db.prepare(`SELECT ${full} FROM events WHERE id >= ? AND id <= ? AND +segment = ? ORDER BY id LIMIT ?`).raw(),
    // Payload reads select one column (plucked): a blob-backed payload reads as "" and is filled
    // from the blob refs, fetched only for a batch that has one.
    chainDataRange: db.prepare("SELECT data FROM events WHERE id >= ? AND id <= ? AND +segment = ? ORDER BY id LIMIT ?").pluck(),
    chainBlobsRange: db
      .prepare("SELECT blob FROM events WHERE id >= ? AND id <= ? AND +segment = ? AND blob IS NOT NULL ORDER BY id LIMIT ?")
      .pluck(),
    chainDataDepths: db.prepare("SELECT data FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?").pluck(),
    chainBlobsDepths: db
      .prepare("SELECT blob FROM events WHERE segment = ? AND depth > ? AND depth <= ? AND blob IS NOT NULL ORDER BY depth LIMIT ?")
      .pluck(),
    chainDepths: db.prepare(`SELECT ${full} FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?`).raw(),
    listRange: db.prepare(
      `SELECT id, segment, depth, kind, label, by, ts, ${D} FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?`,
    ),
    listRangeDesc: db.prepare(
      `SELECT id, segment, depth, kind, label, by, ts, ${D} FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth DESC LIMIT ?`,
    ),
    insertSnapshot: write("INSERT OR REPLACE INTO snapshots (event, segment, depth, header, pages) VALUES (?, ?, ?, ?, ?)"),
    snapshotIn: db.prepare(
      "SELECT event, depth, header, pages FROM snapshots WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth DESC LIMIT 1",
    ),
    snapshotsOf: db.prepare("SELECT n.event FROM snapshots n JOIN segments s ON s.id = n.segment WHERE s.session = ? ORDER BY n.event"),
    insertBlob: write("INSERT INTO blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING"),
    blob: db.prepare("SELECT data FROM blobs WHERE hash = ?").pluck(),
    hasBlob: db.prepare("SELECT 1 FROM blobs WHERE hash = ?").pluck(),
    // Leases (ST-23). A released row keeps its last token (owner NULL) so tokens never repeat.
    lease: legacy ? undefined : db.prepare("SELECT token, owner, acquired, renewed FROM leases WHERE session = ? AND branch = ?"),
    takeLease: write(
      `INSERT INTO leases (session, branch, token, owner, acquired, renewed) VALUES (?, ?, 1, ?, ?, ?)
       ON CONFLICT (session, branch) DO UPDATE SET token = token + 1, owner = excluded.owner, acquired = excluded.acquired, renewed = excluded.renewed
       RETURNING token`,
    ).pluck(),
    renewLease: write("UPDATE leases SET renewed = ? WHERE session = ? AND branch = ? AND token = ? AND owner IS NOT NULL"),
    releaseLease: write(
      "UPDATE leases SET owner = NULL, acquired = NULL, renewed = NULL WHERE session = ? AND branch = ? AND token = ? AND owner IS NOT NULL",
    ),
  };
}

/**
 * Stands for a write statement on a legacy file (opened read-only as it is): preparing it would
 * fail (the columns are not there) and running it must not happen.
 */
const unwritable: Database.Statement = new Proxy({} as Database.Statement, {
  get(_, name) {
    if (name === "pluck" || name === "raw" || name === "expand" || name === "safeIntegers") return () => unwritable;
    return () => {
      throw new StoreError(
        "read-only",
        "this store was opened read-only (an older schema, read as it is, unmigrated); nothing was written",
      );
    };
  },
});

export type Statements = ReturnType<typeof prepare>;
