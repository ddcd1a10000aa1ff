/**
 * Store errors (ST-20). Every expected failure is a `StoreError` with a closed `code` and a message
 * that says what is wrong, where, and what to do; a second writer gets a `HeadConflict`.
 */
import type { EventId, LeaseInfo, SessionId } from "./types.ts";

export type StoreErrorCode =
  /** The file is not a SQLite database, or a SQLite database that is not a strata store. */
  | "not-strata"
  /** The store was written by a newer strata (schema version above what this build reads). */
  | "newer-schema"
  /** SQLite reports corruption, or a read met damaged content (a head or segment that does not exist, a cycle). */
  | "corrupt"
  /** The file failed the integrity check on opening for writing (ST-22): strata does not write into it. */
  | "damaged"
  /** The file or its directory cannot be written (read-only file system, permissions). */
  | "read-only"
  /** The disk is full. */
  | "disk-full"
  /** The file cannot be opened or created (missing directory, permissions). */
  | "cannot-open"
  /** A branch head moved under a writer (see `HeadConflict`). */
  | "conflict"
  /** An append fenced with a lease token found another (or no) lease on the branch (see `LeaseLost`). */
  | "lease-lost"
  /** Another connection holds the write lock for longer than the busy timeout. */
  | "busy"
  /** A session, branch, event or blob that does not exist. */
  | "not-found"
  /** A branch name that is taken. */
  | "exists"
  /** Malformed arguments (bad branch name, event of another session, …). */
  | "bad-input"
  /** The store was closed. */
  | "closed"
  /** Any other I/O error SQLite reports. */
  | "io";

export class StoreError extends Error {
  override readonly name: string = "StoreError";
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A compare-and-swap on a branch head failed: another writer moved the branch since this writer
 * last saw it. Nothing was written.
 */
export class HeadConflict extends StoreError {
  override readonly name = "HeadConflict";
  constructor(
    readonly session: SessionId,
    readonly branch: string,
    readonly expected: EventId | null,
    readonly actual: EventId,
  ) {
    super(
      "conflict",
      `branch "${branch}" of session ${session} is at event ${actual}, not ${expected ?? "(none)"}: another writer moved it. ` +
        `Nothing was written; reopen the session to continue from ${actual}, or fork from ${expected ?? actual} to keep both lines.`,
    );
  }
}

/**
 * An append fenced with a lease token (`append(…, { lease })`) found that the branch's lease is no
 * longer that token: another process took the branch over, or the lease was released. Nothing
 * was written.
 */
export class LeaseLost extends StoreError {
  override readonly name = "LeaseLost";
  constructor(
    readonly session: SessionId,
    readonly branch: string,
    readonly token: number,
    /** The current holder, or undefined when nobody holds the branch. */
    readonly holder: LeaseInfo | undefined,
  ) {
    super(
      "lease-lost",
      `the lease on branch "${branch}" of session ${session} is no longer token ${token}: ${
        holder === undefined ? "it was released" : `it is held by ${holder.owner} (token ${holder.token})`
      }. Nothing was written; stop driving the branch (another process may be driving it now).`,
    );
  }
}

/** Maps a SQLite error to a StoreError with guidance; other errors pass through (see {@link toStoreError}). */
export function fromSqlite(e: unknown, where: string): unknown {
  if (e instanceof StoreError) return e;
  const code = (e as { code?: unknown }).code;
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

/**
 * Maps any error thrown inside a store call to a StoreError (ST-20): SQLite errors as in
 * {@link fromSqlite}; argument errors raised by the driver or Buffer (TypeError, RangeError) as
 * `bad-input`; anything else as `io`, keeping the original as `cause`.
 */
export function toStoreError(e: unknown, where: string): StoreError {
  const mapped = fromSqlite(e, where);
  if (mapped instanceof StoreError) return mapped;
  const msg = e instanceof Error ? e.message : String(e);
  const sys = (e as { code?: unknown } | null)?.code;
  if (sys === "ENOSPC" || sys === "EDQUOT")
    return new StoreError("disk-full", `${where}: the disk is full (${msg}); free space and retry — nothing was written`, { cause: e });
  if (sys === "EROFS" || sys === "EACCES" || sys === "EPERM")
    return new StoreError("read-only", `${where}: a file cannot be written (${msg}); check the file's and directory's permissions`, {
      cause: e,
    });
  if (e instanceof TypeError || e instanceof RangeError)
    return new StoreError(
      "bad-input",
      `${where}: an argument has the wrong type or shape (${msg}); check the call against the Store interface`,
      {
        cause: e,
      },
    );
  return new StoreError("io", `${where}: unexpected failure (${msg}); nothing was written — please report this with the file`, {
    cause: e,
  });
}

/** Maps a file-system error (stat, open, read of the database path) to a StoreError. */
export function fromFs(e: unknown, path: string, doing: string): StoreError {
  if (e instanceof StoreError) return e;
  const code = (e as { code?: unknown }).code;
  const msg = e instanceof Error ? e.message : String(e);
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
