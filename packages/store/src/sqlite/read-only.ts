/**
 * Read-only opens (ST-24): they write nothing, migrate nothing, and never leave a -wal or -shm
 * file behind — also in a directory the user cannot write, where SQLite cannot create them. A
 * WAL-mode file is read one of three ways, decided per open:
 *
 * - The user may write the directory, the file and its -wal/-shm (if present): a normal
 *   connection with `PRAGMA query_only`. SQLite's files come and go as for any connection (the
 *   last one to close removes them), and SQL writes fail.
 * - Otherwise, when the -wal and -shm exist (a strata process has the file open, or was killed):
 *   SQLite's read-only mode in place, which since SQLite 3.22 reads the WAL through a -shm it
 *   cannot write. Nothing is created; a writer in another process keeps committing and every read
 *   transaction sees one consistent state.
 * - Otherwise (nobody has the file open, so the main file and a leftover WAL are all there is):
 *   a private copy in the temporary directory, read as it was when opened, up to
 *   {@link COPY_LIMIT}; beyond that, an error that says what is needed. (`immutable=1` would
 *   avoid the copy, but better-sqlite3 opens files without URI support.)
 */
import { accessSync, constants, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "../errors.ts";
import { checkTables, type OpenedDatabase, type OpenOptions, prepareConnection } from "./connection.ts";
import { fromFs, fromSqlite } from "./errors.ts";
import { statOf } from "./inspect.ts";

/** Largest file (with its WAL) that a read-only open copies aside when it cannot read it in place. */
export const COPY_LIMIT = 256 * 1024 * 1024;

const can = (path: string, mode: number): boolean => {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
};

export function openReadOnly(path: string, options: OpenOptions): OpenedDatabase {
  for (let attempt = 0; attempt < 3; attempt++) {
    const wal = statOf(`${path}-wal`) !== undefined;
    const shm = statOf(`${path}-shm`) !== undefined;
    const W = constants.W_OK | constants.R_OK;
    if (can(dirname(path), W) && can(path, W) && (!wal || can(`${path}-wal`, W)) && (!shm || can(`${path}-shm`, W))) {
      const db = connect(path, path, false, options);
      try {
        db.pragma("query_only = ON");
        return ready(path, db, "read-only", () => {}, options);
      } catch (e) {
        db.close();
        throw fromSqlite(e, `opening ${path} read-only`);
      }
    }
    if (wal && shm) {
      if (!can(`${path}-wal`, constants.R_OK) || !can(`${path}-shm`, constants.R_OK)) {
        // A writer that closed since the stat above removed them: look again (not a permission matter).
        if (statOf(`${path}-wal`) === undefined || statOf(`${path}-shm`) === undefined) continue;
        throw new StoreError(
          "cannot-open",
          `cannot read ${path}: its -wal and -shm files are not readable by you (a strata process of another user has it open). ` +
            "Ask for read permission on them (they take the database file's mode when created), or run the command as that user.",
        );
      }
      const db = connect(path, path, true, options);
      try {
        // The first read maps the -shm: if the writer closed meanwhile (and its files went), try again.
        db.prepare("SELECT count(*) FROM sqlite_schema").get();
        return ready(path, db, "read-only", () => {}, options);
      } catch (e) {
        db.close();
        const code = String((e as { code?: unknown }).code);
        if (code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY")) continue;
        throw fromSqlite(e, `opening ${path} read-only`);
      }
    }
    const copied = privateCopy(path, wal, options);
    if (copied !== undefined) return copied;
  }
  throw new StoreError("busy", `${path} kept changing while it was being opened read-only (another process is writing it); retry`);
}

/** Checks identity and version on a new read-only connection. */
function ready(
  path: string,
  db: Database.Database,
  access: OpenedDatabase["access"],
  release: () => void,
  options: OpenOptions,
): OpenedDatabase {
  const version = prepareConnection(path, db, options);
  checkTables(path, db, version, true);
  return { db, version, access, release };
}

function connect(path: string, file: string, readonly: boolean, options: OpenOptions): Database.Database {
  try {
    return new Database(file, { readonly, fileMustExist: true, timeout: options.busyTimeout ?? 5000 });
  } catch (e) {
    throw fromSqlite(e, `opening ${path} read-only`);
  }
}

/** Size, inode and times of the file and its WAL: a copy is whole if they did not change while it was made. */
function fingerprint(path: string): string {
  const f = statOf(path);
  const w = statOf(`${path}-wal`);
  return `${f?.ino}:${f?.size}:${f?.mtimeMs}:${f?.ctimeMs}:${w?.size}:${w?.mtimeMs}`;
}

/** Reads `path` (and its WAL) from a private copy; undefined if the file changed while it was copied. */
function privateCopy(path: string, wal: boolean, options: OpenOptions): OpenedDatabase | undefined {
  const size = Number(statOf(path)?.size ?? 0) + (wal ? Number(statOf(`${path}-wal`)?.size ?? 0) : 0);
  if (size > COPY_LIMIT)
    throw new StoreError(
      "cannot-open",
      `cannot open ${path} read-only: you cannot write its directory ${dirname(path)} (or the file), and no strata process has it open, so SQLite cannot read it in place ` +
        `(a WAL-mode database needs its -wal and -shm files, which it would have to create there); strata reads such a file from a private copy only up to ${COPY_LIMIT / 2 ** 20} MiB, ` +
        `and this one is ${(size / 2 ** 20).toFixed(1)} MiB. Run the command as a user who may write ${dirname(path)}, or while a strata process of its owner has the file open, ` +
        "or copy the file to a directory you can write and pass the copy with --db.",
    );
  const before = fingerprint(path);
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "strata-read-"));
    const copy = join(dir, "copy.db");
    copyFileSync(path, copy);
    if (wal) copyFileSync(`${path}-wal`, `${copy}-wal`);
    if (fingerprint(path) !== before) {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    const db = connect(path, copy, false, options);
    const keep = dir;
    const release = () => rmSync(keep, { recursive: true, force: true });
    try {
      db.pragma("query_only = ON");
      return ready(path, db, "read-only copy", release, options);
    } catch (e) {
      db.close();
      release();
      throw fromSqlite(e, `opening ${path} read-only`);
    }
  } catch (e) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    throw e instanceof StoreError ? e : fromFs(e, path, "copy aside to read");
  }
}
