/**
 * The raw SQLite baseline of the public-API benchmarks: what storing the same bytes "by hand"
 * costs, with better-sqlite3. One row per event in a plain table (WAL, `synchronous=NORMAL`, one
 * autocommit statement per event), each row naming its parent so a fork is a branch row plus the
 * new event; a branch table holds heads. No snapshots, no tree: reading a state is reading and
 * decoding the rows up to it, which is the floor for any reader of the same bytes.
 */
import { rmSync } from "node:fs";
import Database from "better-sqlite3";
import { contentOf } from "./workload.ts";

export interface RawEvent {
  readonly ts: number;
  readonly kind: string;
  readonly label: string | null;
  readonly data: string;
}

/** Messages and characters read (a check that every reader saw the same content). */
export interface Content {
  messages: number;
  chars: number;
}

export class RawSessionLog {
  readonly db: Database.Database;
  readonly #insert: Database.Statement;
  #last = 0;

  private constructor(db: Database.Database) {
    this.db = db;
    this.#insert = db.prepare("INSERT INTO log (session, parent, ts, kind, label, data) VALUES (?, ?, ?, ?, ?, ?)");
  }

  /** A new, empty log at `path` (any file there is replaced). */
  static create(path: string): RawSessionLog {
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec(
      "CREATE TABLE log (id INTEGER PRIMARY KEY, session TEXT NOT NULL, parent INTEGER, ts INTEGER NOT NULL, kind TEXT NOT NULL, label TEXT, data TEXT NOT NULL);" +
        "CREATE INDEX log_session ON log (session, id);" +
        "CREATE TABLE branch (session TEXT NOT NULL, name TEXT NOT NULL, head INTEGER NOT NULL, PRIMARY KEY (session, name));",
    );
    return new RawSessionLog(db);
  }

  /** An existing log (what a fresh process resuming it does). */
  static open(path: string): RawSessionLog {
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    return new RawSessionLog(db);
  }

  /** Appends one event after the previous one; returns its row id. */
  append(session: string, e: RawEvent): number {
    const id = Number(this.#insert.run(session, this.#last === 0 ? null : this.#last, e.ts, e.kind, e.label, e.data).lastInsertRowid);
    this.#last = id;
    return id;
  }

  /** Every message of the session up to row `upTo` (default: all), decoded, in order. */
  content(session: string, upTo = Number.MAX_SAFE_INTEGER): Content {
    const out: Content = { messages: 0, chars: 0 };
    const rows = this.db.prepare("SELECT data FROM log WHERE session = ? AND id <= ? ORDER BY id").pluck();
    for (const data of rows.iterate(session, upTo) as Iterable<string>) contentOf(data, out);
    return out;
  }

  /** A branch at row `at` plus one event on it, in one transaction: the raw fork + one step. */
  fork(session: string, name: string, at: number, e: RawEvent): number {
    return this.db.transaction(() => {
      if (this.db.prepare("SELECT 1 FROM log WHERE id = ? AND session = ?").get(at, session) === undefined)
        throw new Error(`raw fork: row ${at} is not an event of session ${session}`);
      const id = Number(this.#insert.run(session, at, e.ts, e.kind, e.label, e.data).lastInsertRowid);
      this.db.prepare("INSERT INTO branch (session, name, head) VALUES (?, ?, ?)").run(session, name, id);
      return id;
    })();
  }

  close(): void {
    this.db.close();
  }
}
