/**
 * Opening a database file safely (ST-2, ST-3): a file that is not a strata store, a newer schema,
 * or a damaged header is refused without writing a byte. The file is inspected read-only first;
 * only a store this build understands is reopened for writing and migrated.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { fromSqlite, StoreError } from "./errors.ts";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";

export interface OpenOptions {
  /** `"normal"` (default): WAL with synchronous=NORMAL; `"full"`: synchronous=FULL (survives power loss). */
  readonly durability?: "normal" | "full";
  /** Create the file if it does not exist (default true). */
  readonly create?: boolean;
  /** Open without writing anything; migrations are not run (a read-only store of an older schema is refused). */
  readonly readonly?: boolean;
  /** Milliseconds to wait for another writer's lock (default 5,000). */
  readonly busyTimeout?: number;
}

const SQLITE_MAGIC = "SQLite format 3\u0000";

interface Header {
  readonly kind: "empty" | "sqlite" | "other";
  /** `PRAGMA application_id`, from byte 68 of the header. */
  readonly applicationId: number;
  /** `PRAGMA user_version`, from byte 60 of the header. */
  readonly userVersion: number;
  /** Bytes 18–19 are 2 in WAL mode: opening such a file, even read-only, creates -wal/-shm files. */
  readonly wal: boolean;
}

/** Reads the file header of `path` without opening it as a database (nothing can be written). */
function sniff(path: string): Header {
  const size = statSync(path).size;
  if (size === 0) return { kind: "empty", applicationId: 0, userVersion: 0, wal: false };
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(100);
    const n = readSync(fd, buf, 0, 100, 0);
    if (n < 100 || buf.toString("latin1", 0, 16) !== SQLITE_MAGIC) return { kind: "other", applicationId: 0, userVersion: 0, wal: false };
    return { kind: "sqlite", applicationId: buf.readUInt32BE(68), userVersion: buf.readUInt32BE(60), wal: buf[18] === 2 || buf[19] === 2 };
  } finally {
    closeSync(fd);
  }
}

function checkIdentity(path: string, applicationId: number, version: number, tables: () => string[]): void {
  if (applicationId !== APPLICATION_ID)
    throw new StoreError(
      "not-strata",
      `${path} is a SQLite database but not a strata store (application_id ${applicationId}, tables: ${tables().slice(0, 8).join(", ") || "none"}). ` +
        "It was not changed. Point --db at a strata store or at a new file.",
    );
  if (version > SCHEMA_VERSION)
    throw new StoreError(
      "newer-schema",
      `${path} uses store schema version ${version}, newer than this strata reads (${SCHEMA_VERSION}). It was not changed; upgrade strata to open it.`,
    );
  if (version < 1) throw new StoreError("corrupt", `${path} is marked as a strata store but has no schema version; it was not changed`);
}

/** Application id and schema version as SQLite sees them (WAL included), read-only. */
function readIdentity(path: string): { applicationId: number; userVersion: number; wal: false } {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return {
      applicationId: db.pragma("application_id", { simple: true }) as number,
      userVersion: db.pragma("user_version", { simple: true }) as number,
      wal: false,
    };
  } catch (e) {
    throw fromSqlite(e, `reading ${path}`);
  } finally {
    db?.close();
  }
}

/** Lists tables read-only, for messages; only for files not in WAL mode (which opening would touch). */
function tablesOf(path: string, header: Header): string[] {
  if (header.wal) return ["(not listed: WAL file)"];
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
  } catch {
    return ["(unreadable)"];
  } finally {
    db?.close();
  }
}

/** Opens (creating and migrating when allowed) a strata database and applies the connection pragmas. */
export function openDatabase(path: string, options: OpenOptions = {}): Database.Database {
  const memory = path === ":memory:";
  let fresh = memory;
  let version = 0;
  if (!memory) {
    if (existsSync(path)) {
      let header = sniff(path);
      if (header.kind === "other")
        throw new StoreError(
          "not-strata",
          `${path} is not a SQLite database (it does not start with the SQLite header). It was not changed.`,
        );
      // In WAL mode the file header can lag behind the log (another connection may have just
      // created the store): ask SQLite, read-only, unless the header already identifies a store.
      if (header.wal && header.applicationId !== APPLICATION_ID) header = { ...header, ...readIdentity(path) };
      if (header.kind === "empty") fresh = true;
      else if (header.applicationId === 0 && header.userVersion === 0 && tablesOf(path, header).length === 0) fresh = true;
      else {
        checkIdentity(path, header.applicationId, header.userVersion, () => tablesOf(path, header));
        version = header.userVersion;
      }
    } else {
      if (options.create === false || options.readonly) throw new StoreError("not-found", `${path} does not exist`);
      if (!existsSync(dirname(path)))
        throw new StoreError("cannot-open", `cannot create ${path}: directory ${dirname(path)} does not exist`);
      fresh = true;
    }
  }
  if (options.readonly && (fresh || version < SCHEMA_VERSION))
    throw new StoreError("bad-input", `${path} needs to be ${fresh ? "initialised" : "migrated"} before it can be opened read-only`);
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: options.readonly ?? false, timeout: options.busyTimeout ?? 5000 });
  } catch (e) {
    throw fromSqlite(e, `opening ${path}`);
  }
  try {
    if (!options.readonly) db.pragma("journal_mode = WAL");
    // Set explicitly on every connection: a new connection to a WAL file defaults to NORMAL, a
    // connection that switched the file to WAL keeps FULL (libraries.md).
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("foreign_keys = OFF");
    if (!fresh) {
      // The header can be behind a WAL the last writer did not checkpoint: ask SQLite as well.
      checkIdentity(
        path,
        db.pragma("application_id", { simple: true }) as number,
        db.pragma("user_version", { simple: true }) as number,
        () => [],
      );
    }
    if (!options.readonly) migrate(db, fresh ? 0 : version);
    return db;
  } catch (e) {
    db.close();
    throw fromSqlite(e, `preparing ${path}`);
  }
}

/** Runs every migration above `from`, each in its own transaction with the version bump. */
function migrate(db: Database.Database, from: number): void {
  for (const m of MIGRATIONS) {
    if (m.version <= from) continue;
    db.transaction(() => {
      // Another process may have migrated while this one waited for the lock.
      if ((db.pragma("user_version", { simple: true }) as number) >= m.version) return;
      m.up(db);
      if (m.version === 1) {
        db.pragma(`application_id = ${APPLICATION_ID}`);
        db.prepare("INSERT INTO meta (key, value) VALUES ('format', 'strata')").run();
      }
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}
