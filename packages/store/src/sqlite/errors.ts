/**
 * How the SQLite backend's failures become StoreErrors (ST-20): SQLite's result codes (a full
 * disk, a read-only file, damage, a lock held too long) and the file-system errors of opening a
 * database file. Everything else is mapped by `toStoreError` (errors.ts).
 */
import { messageOf, StoreError } from "../errors.ts";

/** Maps a SQLite error to a StoreError with guidance; other errors pass through as they are (see `toStoreError`). */
export function fromSqlite(e: unknown, where: string): unknown {
  if (e instanceof StoreError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_")) return e;
  const msg = (e as Error).message;
  if (code.startsWith("SQLITE_FULL"))
    return new StoreError("disk-full", `${where}: the disk is full (${msg}); free space and retry — nothing was written`, { cause: e });
  if (code.startsWith("SQLITE_READONLY"))
    return new StoreError("read-only", `${where}: the database cannot be written (${msg}); check the file's and directory's permissions`, {
      cause: e,
    });
  if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) {
    // `verify` reports damage as findings; telling its caller to run it would be circular.
    const todo = /verify/.test(where)
      ? "restore the file from a backup copy"
      : "run `strata verify` to list the damage, and restore the file from a backup copy";
    return new StoreError("corrupt", `${where}: the database is damaged (${msg}); ${todo}`, { cause: e });
  }
  if (code.startsWith("SQLITE_CANTOPEN"))
    return new StoreError(
      "cannot-open",
      `${where}: cannot open the database file (${msg}); check that the path and its directory exist and are accessible`,
      {
        cause: e,
      },
    );
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
    return new StoreError("busy", `${where}: another process holds the database lock (${msg}); retry, or stop the other writer`, {
      cause: e,
    });
  return new StoreError("io", `${where}: ${msg}`, { cause: e });
}
/** Maps a file-system error (stat, open, read of the database path) to a StoreError. */
export function fromFs(e: unknown, path: string, doing: string): StoreError {
  if (e instanceof StoreError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const msg = messageOf(e);
  switch (code) {
    case "EISDIR":
      return new StoreError(
        "cannot-open",
        `${path} is a directory, not a database file; give the path of a file (e.g. ${path}/strata.db)`,
        {
          cause: e,
        },
      );
    case "EACCES":
    case "EPERM":
      return new StoreError("cannot-open", `cannot ${doing} ${path}: permission denied; check the file's and its directory's permissions`, {
        cause: e,
      });
    case "ENOTDIR":
    case "ENOENT":
      return new StoreError("cannot-open", `cannot ${doing} ${path}: a part of the path does not exist or is not a directory`, {
        cause: e,
      });
    case "ENOSPC":
      return new StoreError("disk-full", `cannot ${doing} ${path}: the disk is full; free space and retry`, { cause: e });
    default:
      return new StoreError("io", `cannot ${doing} ${path}: ${msg}`, { cause: e });
  }
}
