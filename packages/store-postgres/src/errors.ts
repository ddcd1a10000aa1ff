/**
 * PostgreSQL's errors as StoreErrors (ST-20): the server's SQLSTATE classes and the driver's
 * connection failures, each with what to do. What this leaves is mapped by the contract's edge
 * (`toStoreError`: a Node system error is `io`, anything else `internal`).
 */
import { StoreError } from "@strata/store";

/** Maps an error of the driver or server to a StoreError, or returns it unchanged when it is neither. */
export function fromPg(e: unknown, where: string): unknown {
  if (e instanceof StoreError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (typeof code !== "string") {
    // The driver's own: a connection that ended under a query, a pool that was ended.
    if (/Connection terminated|connection is closed|Client has encountered a connection error|Cannot use a pool after/i.test(message))
      return new StoreError(
        "io",
        `${where}: the connection to PostgreSQL was lost (${message}); retry — a write that failed here may or may not have committed: read the head`,
        { cause: e },
      );
    return e;
  }
  if (code === "53100")
    return new StoreError(
      "disk-full",
      `${where}: the PostgreSQL server is out of disk space (${message}); free space and retry — nothing was written`,
      { cause: e },
    );
  if (code === "25006")
    return new StoreError("read-only", `${where}: the PostgreSQL server is read-only (${message}); connect to the primary`, { cause: e });
  if (code === "42501")
    return new StoreError("read-only", `${where}: the PostgreSQL role may not do this (${message}); grant it the store's schema`, {
      cause: e,
    });
  if (code === "57014")
    return new StoreError("busy", `${where}: the statement ran past statement_timeout (${message}); retry, or raise statementTimeout`, {
      cause: e,
    });
  if (code === "55P03")
    return new StoreError("busy", `${where}: a lock wait timed out: another transaction holds the row (${message}); retry`, { cause: e });
  if (code === "40001" || code === "40P01")
    return new StoreError("busy", `${where}: PostgreSQL aborted the transaction on a conflict with another (${message}); retry`, {
      cause: e,
    });
  if (code === "XX001" || code === "XX002")
    return new StoreError("corrupt", `${where}: PostgreSQL reports damaged data (${message}); restore from a backup`, { cause: e });
  if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03")
    return new StoreError("io", `${where}: the connection to PostgreSQL failed (${message}); check the server, and retry`, { cause: e });
  if (code === "53300")
    return new StoreError(
      "busy",
      `${where}: the PostgreSQL server has no free connection (${message}); lower the pool size or raise max_connections`,
      { cause: e },
    );
  if (code === "28P01" || code === "28000" || code === "3D000")
    return new StoreError(
      "cannot-open",
      `${where}: PostgreSQL refused the connection (${message}); check the URL's user, password and database`,
      { cause: e },
    );
  return new StoreError("io", `${where}: PostgreSQL error ${code}: ${message}`, { cause: e });
}
