/**
 * The SQLite store, as callers get it from `openStore`: the SQLite backend (backend.ts) inside the
 * contract's checks (`CheckedStore`), with SQLite's errors mapped (errors.ts), plus what only
 * this backend has — how its file is read (`access`), the schema version it was opened at, and the
 * connection itself for benchmarks and tools in this repository.
 */
import type Database from "better-sqlite3";
import { CheckedStore } from "../checked-store.ts";
import { type BackendOptions, SqliteBackend } from "./backend.ts";
import { fromSqlite } from "./errors.ts";
import { type OpenedDatabase, type OpenOptions, openDatabase, type StoreAccess } from "./open.ts";

export interface StoreOptions extends OpenOptions, BackendOptions {}

/** Opens or creates a store. `":memory:"` gives a private in-memory store. */
export function openStore(path: string, options: StoreOptions = {}): SqliteStore {
  return new SqliteStore(path, openDatabase(path, options), options);
}

export class SqliteStore extends CheckedStore {
  /** The backend itself (the wrapper's `inner`, with its SQLite-only members). */
  private readonly backend: SqliteBackend;

  constructor(path: string, opened: OpenedDatabase, options: BackendOptions = {}) {
    const backend = new SqliteBackend(path, opened, options);
    super(backend, fromSqlite);
    this.backend = backend;
  }

  /** How the file is read (ST-24). */
  get access(): StoreAccess {
    return this.backend.access;
  }

  /** The file's schema version as opened (older than SCHEMA_VERSION only for a read-only open of an older file). */
  get schemaVersion(): number {
    return this.backend.schemaVersion;
  }

  /**
   * Moves the search rows appends wrote since the last batch into the full-text index now (SE-4);
   * answers how many. Appends do it every 256 rows and `close` does it, so callers rarely need to.
   */
  flushSearch(): number {
    return this.backend.flushSearch();
  }

  /**
   * Returns free pages to the file system (decision 0040): when at least `minFree` (a fraction,
   * default 0.25) of the file's pages are free — after `removeSession` and `collectGarbage` —
   * rewrites it (`VACUUM`, which waits for other writers like any write) and truncates the WAL.
   * Answers the file's bytes in pages before and after, and whether it rewrote it.
   */
  compact(minFree = 0.25): { before: number; after: number; vacuumed: boolean } {
    return this.backend.compact(minFree);
  }

  /** The underlying connection, for benchmarks and verification tools in this repository. */
  get database(): Database.Database {
    return this.backend.database;
  }
}
