/**
 * The store's prepared statements, in one place: portable SQL (decision 0007), prepared once per
 * connection. Chain reads come in pairs — a rowid range and a (segment, depth) range — chosen per
 * span by the store (ST-7).
 */
import type Database from "better-sqlite3";

export const EVENT_FULL = "SELECT e.id, e.segment, e.depth, e.prior, e.kind, e.label, e.by, e.ts, e.blob, e.data FROM events e";

export function prepare(db: Database.Database) {
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
    firstAfter: db.prepare("SELECT id, depth FROM events WHERE segment = ? AND depth > ? ORDER BY depth LIMIT 1").raw(),
    lastUpTo: db.prepare("SELECT id, depth FROM events WHERE segment = ? AND depth <= ? ORDER BY depth DESC LIMIT 1").raw(),
    chainRange: db
      .prepare(
        "SELECT id, depth, prior, kind, label, by, ts, blob, data FROM events WHERE id >= ? AND id <= ? AND +segment = ? ORDER BY id LIMIT ?",
      )
      .raw(),
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
    chainDepths: db
      .prepare(
        "SELECT id, depth, prior, kind, label, by, ts, blob, data FROM events WHERE segment = ? AND depth > ? AND depth <= ? ORDER BY depth LIMIT ?",
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

export type Statements = ReturnType<typeof prepare>;
