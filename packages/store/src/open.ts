/**
 * Opening a database file safely (ST-2, ST-3): a file that is not a strata store, a newer schema,
 * or a damaged header is refused without writing a byte and without creating or deleting its -wal
 * and -shm files. The file is inspected first (its header, or SQLite read-only when a WAL holds
 * frames); only a store this build understands is reopened for writing and migrated.
 */
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { fromFs, fromSqlite, StoreError } from "./errors.ts";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";

export interface OpenOptions {
  /** `"normal"` (default): WAL with synchronous=NORMAL; `"full"`: synchronous=FULL (survives power loss). */
  readonly durability?: "normal" | "full";
  /** Create the file if it does not exist (default true). */
  readonly create?: boolean;
  /** Open without writing anything; migrations are not run (an older schema that this build cannot read as it is, is refused). */
  readonly readonly?: boolean;
  /** Milliseconds to wait for another writer's lock (default 5,000). */
  readonly busyTimeout?: number;
}

const SQLITE_MAGIC = "SQLite format 3\u0000";
/** Largest WAL-mode file whose schema is listed (from an in-memory copy) in a refusal message. */
const LIST_LIMIT = 64 * 1024 * 1024;

/** What the file at a path is, found without changing it (ST-3). */
type Inspection =
  | { readonly kind: "missing" | "empty" | "other" }
  | {
      readonly kind: "sqlite";
      /** `PRAGMA application_id` (header byte 68, or SQLite's answer when the WAL holds frames). */
      readonly applicationId: number;
      /** `PRAGMA user_version` (header byte 60, or SQLite's answer). */
      readonly userVersion: number;
      /** True when `sqlite_schema` has no entry at all (no table, index, view or trigger). */
      readonly emptySchema: boolean;
      /** Schema entries, for messages. */
      readonly names: () => string[];
    };

function statOf(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return undefined;
    throw fromFs(e, path, "inspect");
  }
}

/** The first `n` bytes of `path` (fewer if the file is shorter). */
function readHead(path: string, n: number): Buffer {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buf = Buffer.alloc(n);
    return buf.subarray(0, readSync(fd, buf, 0, n, 0));
  } catch (e) {
    throw fromFs(e, path, "read");
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const isSqlite = (head: Buffer) => head.length >= 100 && head.toString("latin1", 0, 16) === SQLITE_MAGIC;

/**
 * Inspects `path` without opening a connection that could write (ST-3). When the file has no WAL
 * frames, its header is the truth: identity from bytes 60 and 68, and the schema is empty when
 * page 1 (the root of `sqlite_schema`) is a leaf with no cells. When a WAL holds frames, SQLite
 * reads it read-only — in place if the -shm exists too (so nothing is created), otherwise from a
 * private copy — because opening a WAL database without its -shm creates one.
 */
function inspect(path: string): Inspection {
  const st = statOf(path);
  if (st === undefined) return { kind: "missing" };
  if (st.isDirectory()) throw fromFs(Object.assign(new Error("EISDIR"), { code: "EISDIR" }), path, "open");
  if (!st.isFile()) throw new StoreError("cannot-open", `${path} is not a regular file; give the path of a database file`);
  const wal = statOf(`${path}-wal`);
  const walFrames = wal?.isFile() === true && wal.size > 32; // a WAL header alone holds no frames
  if (!walFrames) {
    if (st.size === 0) return { kind: "empty" };
    const head = readHead(path, 108);
    if (!isSqlite(head) || head.length < 108) return { kind: "other" };
    return {
      kind: "sqlite",
      applicationId: head.readUInt32BE(68),
      userVersion: head.readUInt32BE(60),
      emptySchema: head[100] === 13 && head.readUInt16BE(103) === 0,
      names: () => namesFromFile(path, head, Number(st.size)),
    };
  }
  let head: Buffer | undefined;
  if (st.size > 0) {
    head = readHead(path, 108);
    if (!isSqlite(head)) return { kind: "other" };
    const applicationId = head.readUInt32BE(68);
    // A file of another application does not become a store through its WAL: refuse it by its header.
    if (applicationId !== 0 && applicationId !== APPLICATION_ID)
      return {
        kind: "sqlite",
        applicationId,
        userVersion: head.readUInt32BE(60),
        emptySchema: false,
        names: () => ["(not listed: unflushed WAL)"],
      };
  }
  if (statOf(`${path}-shm`) !== undefined) return identityFromSqlite(path, path);
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "strata-open-"));
    const copy = join(dir, "copy.db");
    copyFileSync(path, copy);
    copyFileSync(`${path}-wal`, `${copy}-wal`);
    return identityFromSqlite(path, copy);
  } catch (e) {
    if (e instanceof StoreError || head === undefined) throw e instanceof StoreError ? e : fromFs(e, path, "copy aside to read");
    // No room for a private copy: decide from the header; the read-write connection checks again.
    return {
      kind: "sqlite",
      applicationId: head.readUInt32BE(68),
      userVersion: head.readUInt32BE(60),
      emptySchema: head[100] === 13 && head.readUInt16BE(103) === 0,
      names: () => ["(not listed: unflushed WAL)"],
    };
  } finally {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** Identity and schema of `path` as SQLite sees it, WAL included, through a read-only connection to `file`. */
function identityFromSqlite(path: string, file: string): Inspection {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const names = schemaNames(db);
    return {
      kind: "sqlite",
      applicationId: db.pragma("application_id", { simple: true }) as number,
      userVersion: db.pragma("user_version", { simple: true }) as number,
      emptySchema: (db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get() as number) === 0,
      names: () => names,
    };
  } catch (e) {
    throw fromSqlite(e, `reading ${path}`);
  } finally {
    db?.close();
  }
}

/** Every schema entry but SQLite's own: tables by name, others as `name (type)`. */
function schemaNames(db: Database.Database): string[] {
  return (
    db.prepare("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type <> 'table', name").all() as {
      type: string;
      name: string;
    }[]
  ).map((r) => (r.type === "table" ? r.name : `${r.name} (${r.type})`));
}

/**
 * Schema names of a file with no WAL frames, for messages. A file in rollback-journal mode is read
 * by a read-only connection (which creates nothing); a WAL-mode file would get -wal/-shm files, so
 * it is read from an in-memory copy marked as rollback mode.
 */
function namesFromFile(path: string, head: Buffer, size: number): string[] {
  const walMode = head[18] === 2 || head[19] === 2;
  let db: Database.Database | undefined;
  try {
    if (!walMode) db = new Database(path, { readonly: true, fileMustExist: true });
    else {
      if (size > LIST_LIMIT) return ["(not listed: large WAL-mode file)"];
      const bytes = readFileSync(path);
      bytes[18] = 1;
      bytes[19] = 1;
      db = new Database(bytes, { readonly: true });
    }
    return schemaNames(db);
  } catch {
    return ["(unreadable)"];
  } finally {
    db?.close();
  }
}

function checkIdentity(path: string, applicationId: number, version: number, names: () => string[]): void {
  if (applicationId !== APPLICATION_ID)
    throw new StoreError(
      "not-strata",
      `${path} is a SQLite database but not a strata store (application_id ${applicationId}, tables: ${names().slice(0, 8).join(", ") || "none"}). ` +
        "It was not changed. Point --db at a strata store or at a new file.",
    );
  if (version > SCHEMA_VERSION)
    throw new StoreError(
      "newer-schema",
      `${path} uses store schema version ${version}, newer than this strata reads (${SCHEMA_VERSION}). It was not changed; upgrade strata to open it.`,
    );
  if (version < 1) throw new StoreError("corrupt", `${path} is marked as a strata store but has no schema version; it was not changed`);
}

/** True when this build reads a file of schema `version` without migrating it. */
function readableAsIs(version: number): boolean {
  return MIGRATIONS.every((m) => m.version <= version || m.readable === true);
}

/** Opens (creating and migrating when allowed) a strata database and applies the connection pragmas. */
export function openDatabase(path: string, options: OpenOptions = {}): Database.Database {
  if (typeof path !== "string" || path === "")
    throw new StoreError("bad-input", `a store path must be a non-empty string, got ${JSON.stringify(path)}`);
  const memory = path === ":memory:";
  let fresh = memory;
  let version = 0;
  if (!memory) {
    const found = inspect(path);
    switch (found.kind) {
      case "missing":
        if (options.create === false || options.readonly) throw new StoreError("not-found", `${path} does not exist`);
        if (!existsSync(dirname(path)))
          throw new StoreError("cannot-open", `cannot create ${path}: directory ${dirname(path)} does not exist`);
        fresh = true;
        break;
      case "empty":
        fresh = true;
        break;
      case "other":
        throw new StoreError(
          "not-strata",
          `${path} is not a SQLite database (it does not start with the SQLite header). It was not changed.`,
        );
      case "sqlite":
        // A SQLite file with nothing in it (no table, index, view or trigger) is adopted as new.
        if (found.applicationId === 0 && found.userVersion === 0 && found.emptySchema) fresh = true;
        else {
          checkIdentity(path, found.applicationId, found.userVersion, found.names);
          version = found.userVersion;
        }
    }
  }
  if (options.readonly && (fresh || !readableAsIs(version)))
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
      // Another process may have changed the file since it was inspected: ask again.
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
