/**
 * Looking at a database file without changing it (ST-3): its header, or — when a WAL holds frames
 * — SQLite through a read-only connection in place (when the -shm exists too) or on a private
 * copy, because opening a WAL database without its -shm creates one.
 */
import { closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, type Stats, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "../errors.ts";
import { fromFs, fromSqlite } from "./errors.ts";
import { APPLICATION_ID } from "./schema.ts";

const SQLITE_MAGIC = "SQLite format 3\u0000";
/** Largest WAL-mode file whose schema is listed (from an in-memory copy) in a refusal message. */
const LIST_LIMIT = 64 * 1024 * 1024;

/** What the file at a path is, found without changing it (ST-3). */
export type Inspection =
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

/** The stat of `path`, or undefined when nothing is there (asked without an exception: a missing -wal is the usual case). */
export function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (e) {
    throw fromFs(e, path, "inspect");
  }
}

/** The first `n` bytes of `path` (fewer if the file is shorter). */
export function readHead(path: string, n: number): Buffer {
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
export function inspect(path: string): Inspection {
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
