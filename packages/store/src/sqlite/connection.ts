/**
 * What every connection to a store is (ST-1, ST-2): the options of an open, the identity a file
 * must carry, and the settings applied to each connection.
 */
import type Database from "better-sqlite3";
import { StoreError } from "../errors.ts";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";

export interface OpenOptions {
  /** `"normal"` (default): WAL with synchronous=NORMAL; `"full"`: synchronous=FULL (survives power loss). */
  readonly durability?: "normal" | "full";
  /** Create the file if no file exists at the path (default true). An existing file is never replaced or adopted. */
  readonly create?: boolean;
  /**
   * Open without writing anything: no migration (an older schema is read as it is), no -wal or
   * -shm file left behind, in a directory the user cannot write too (ST-24).
   */
  readonly readonly?: boolean;
  /** Milliseconds to wait for another writer's lock (default 5,000). */
  readonly busyTimeout?: number;
}

/** How a store reads its file: in place for writing, in place read-only, or from a private copy (ST-24). */
export type StoreAccess = "read-write" | "read-only" | "read-only copy";

/** An open connection and what it is. */
export interface OpenedDatabase {
  readonly db: Database.Database;
  /** The file's schema version as opened: SCHEMA_VERSION, or older for a read-only open of an older file. */
  readonly version: number;
  readonly access: StoreAccess;
  /** Removes what the open made besides the connection (a private copy); call after closing `db`. */
  readonly release: () => void;
}

export function checkIdentity(path: string, applicationId: number, version: number, names: () => string[]): void {
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
export function readableAsIs(version: number): boolean {
  return MIGRATIONS.every((m) => m.version <= version || m.readable === true);
}

/** The tables a store of schema `version` has (statements are prepared on first use, so a missing one is found here). */
function tablesOf(version: number): readonly string[] {
  const base = ["sessions", "segments", "branches", "events", "snapshots", "blobs"];
  if (version < 3) return base;
  if (version < 4) return [...base, "meta", "leases"];
  return version >= 5
    ? [...base, "meta", "leases", "search", "search_pending", "search_text"]
    : [...base, "meta", "leases", "search", "search_pending"];
}

/**
 * Refuses a store that lacks a table its schema version has (ST-22): the open would succeed and the
 * first read or write of that table fail. One read of the schema table.
 */
export function checkTables(path: string, db: Database.Database, version: number, readonly = false): void {
  const have = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
  const missing = tablesOf(version).filter((t) => !have.has(t));
  if (missing.length > 0)
    throw new StoreError(
      "damaged",
      `${path} is damaged: it has no ${missing.join(", ")} table${missing.length > 1 ? "s" : ""}, which a store of schema version ${version} has. ` +
        (readonly
          ? "Nothing was changed. Restore the file from a backup copy, or salvage what is readable: "
          : "strata does not write into a damaged store; nothing was changed. Run `strata verify` to see the damage, then restore the file from a backup copy, or salvage what is readable: ") +
        `\`sqlite3 ${path} .recover | sqlite3 salvaged.db\` (docs/spec/store.md, ST-22).`,
    );
}

/** Sets what every connection sets (ST-1) and checks the identity SQLite sees (the WAL included). */
export function prepareConnection(path: string, db: Database.Database, options: OpenOptions): number {
  // Set explicitly on every connection: a new connection to a WAL file defaults to NORMAL, a
  // connection that switched the file to WAL keeps FULL (libraries.md).
  db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
  db.pragma("foreign_keys = OFF");
  // Another process may have changed the file since it was inspected: ask again.
  const version = db.pragma("user_version", { simple: true }) as number;
  checkIdentity(path, db.pragma("application_id", { simple: true }) as number, version, () => []);
  return version;
}
