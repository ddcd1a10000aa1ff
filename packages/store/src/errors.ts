/**
 * Store errors (ST-20), the same for every backend. Every expected failure is a `StoreError` with a
 * closed `code` and a message that says what is wrong, where, and what to do; a second writer gets
 * a `HeadConflict`, a fenced writer that lost its lease a `LeaseLost`. A backend maps its own
 * failures (SQLite's: sqlite/errors.ts); {@link toStoreError} maps what is left, once, at the edge
 * of every store call (checked-store.ts).
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
  /**
   * A branch is driven by a live lease holder: `removeSession` of its session, or
   * `collectGarbage` of its store, is refused (see `InUse`).
   */
  | "in-use"
  /** Another connection holds the write lock for longer than the busy timeout. */
  | "busy"
  /** A session, branch, event or blob that does not exist. */
  | "not-found"
  /** A branch name that is taken. */
  | "exists"
  /** Malformed arguments (bad branch name, event of another session, …): the caller's to fix. */
  | "bad-input"
  /** The store was closed: a call after `close()`. */
  | "closed"
  /** Any other I/O error the backend reports. */
  | "io"
  /**
   * A failure inside the store that is neither the caller's input nor the file's state nor I/O — a
   * bug (a TypeError or RangeError from the store's own code or its driver): report it.
   */
  | "internal";

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
 * A session (or, for `collectGarbage`, the store) has a branch whose lease is held by a process
 * still driving it (ST-35, ST-36). Nothing was changed.
 */
export class InUse extends StoreError {
  override readonly name = "InUse";
  constructor(
    readonly holder: LeaseInfo,
    what: string,
  ) {
    super(
      "in-use",
      `${what} refused: branch "${holder.branch}" of session ${holder.session} is driven by ${holder.owner} (lease ${holder.token}); nothing was changed. Wait for it to finish or stop it, then retry.`,
    );
  }
}

/** Throws `InUse` for the first held lease `live` judges live (default: any holder is) — both backends' removal and collection. */
export function refuseDriven(leases: readonly LeaseInfo[], live: ((holder: LeaseInfo) => boolean) | undefined, what: string): void {
  for (const holder of leases) if (live === undefined || live(holder) === true) throw new InUse(holder, what);
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

/** File-system error codes that mean "no space" and "cannot write", wherever they come from. */
const NO_SPACE = new Set(["ENOSPC", "EDQUOT"]);
const NO_WRITE = new Set(["EROFS", "EACCES", "EPERM"]);

/**
 * Maps any error thrown inside a store call to a StoreError (ST-20): a StoreError passes as it is;
 * `backend` maps the backend's own errors (SQLite's codes); a file-system error is `disk-full`,
 * `read-only` or `io`; anything else — a TypeError or RangeError of the store's own code or its
 * driver, which the argument checks should have made impossible — is `internal` (a bug, not the
 * caller's bad input), keeping the original as `cause`.
 */
export function toStoreError(e: unknown, where: string, backend?: (e: unknown, where: string) => unknown): StoreError {
  if (e instanceof StoreError) return e;
  const mapped = backend?.(e, where);
  if (mapped instanceof StoreError) return mapped;
  const msg = messageOf(e);
  const sys = (e as { code?: unknown } | null)?.code;
  if (typeof sys === "string" && NO_SPACE.has(sys))
    return new StoreError("disk-full", `${where}: the disk is full (${msg}); free space and retry — nothing was written`, { cause: e });
  if (typeof sys === "string" && NO_WRITE.has(sys))
    return new StoreError("read-only", `${where}: a file cannot be written (${msg}); check the file's and directory's permissions`, {
      cause: e,
    });
  if (typeof sys === "string" && /^E[A-Z]+$/.test(sys)) return new StoreError("io", `${where}: ${msg}`, { cause: e });
  return new StoreError(
    "internal",
    `${where}: internal error in the store (${msg}); please report it with the call that failed — \`strata verify\` checks the file`,
    { cause: e },
  );
}

/** The message of anything thrown, without throwing again (a value without `toString` included). */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  try {
    return String(e);
  } catch {
    return typeof e;
  }
}
