/**
 * Opening a database file safely (ST-2, ST-3, ST-22, ST-24). A file that is not a strata store, a
 * newer schema, an empty file or a damaged one is refused without writing a byte and without
 * creating or deleting its -wal and -shm files. A new store is built aside and linked into place
 * whole, so no opener ever sees a half-made store. Only a whole store this build understands is
 * opened for writing (and migrated); read-only opens never migrate and never leave files behind
 * (see read-only.ts).
 */
import { constants, copyFileSync, existsSync, linkSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "../errors.ts";
import { nodeCrypto } from "../node-crypto.ts";
import { checkIdentity, checkTables, type OpenedDatabase, type OpenOptions, prepareConnection, readableAsIs } from "./connection.ts";
import { fromFs, fromSqlite } from "./errors.ts";
import { inspect } from "./inspect.ts";
import { damage } from "./integrity.ts";
import { openReadOnly } from "./read-only.ts";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";

export type { OpenedDatabase, OpenOptions, StoreAccess } from "./connection.ts";

/** Opens (creating when allowed, migrating when writable) a strata database. */
export function openDatabase(path: string, options: OpenOptions = {}): OpenedDatabase {
  if (typeof path !== "string" || path === "")
    throw new StoreError("bad-input", `a store path must be a non-empty string, got ${JSON.stringify(path)}`);
  if (path === ":memory:") {
    if (options.readonly) throw new StoreError("bad-input", "an in-memory store starts empty: it cannot be opened read-only");
    const db = new Database(":memory:");
    db.pragma("foreign_keys = OFF");
    migrate(db, 0);
    return { db, version: SCHEMA_VERSION, access: "read-write", release: () => {} };
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = inspect(path);
    switch (found.kind) {
      case "missing":
        if (options.create === false || options.readonly) throw new StoreError("not-found", `${path} does not exist`);
        createAside(path);
        continue; // open what is there now: this process's store, or a concurrent creator's
      case "empty":
        throw new StoreError(
          "not-strata",
          `${path} is an empty file (0 bytes), not a strata store. It was not changed; remove it, or point --db at a strata store or at a path where strata may create one.`,
        );
      case "other":
        throw new StoreError(
          "not-strata",
          `${path} is not a SQLite database (it does not start with the SQLite header). It was not changed.`,
        );
      case "sqlite":
        checkIdentity(path, found.applicationId, found.userVersion, found.names);
        if (!options.readonly) return openWritable(path, options);
        if (!readableAsIs(found.userVersion))
          throw new StoreError(
            "newer-schema",
            `${path} uses store schema version ${found.userVersion}, which this strata reads only after upgrading it; it was not changed. Open it once with a command that writes (e.g. \`strata run\` or \`strata import\`) to upgrade it.`,
          );
        return openReadOnly(path, options);
    }
  }
  throw new StoreError("io", `${path} appeared and disappeared while it was being opened; retry`);
}

/** Opens an existing store for writing: refused if damaged (ST-22), migrated to SCHEMA_VERSION (ST-4). */
function openWritable(path: string, options: OpenOptions): OpenedDatabase {
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, timeout: options.busyTimeout ?? 5000 });
  } catch (e) {
    throw fromSqlite(e, `opening ${path}`);
  }
  try {
    // Before anything else reads it: SQLite's own reads of a damaged file fail less clearly.
    const why = damage(path, db);
    if (why !== undefined)
      throw new StoreError(
        "damaged",
        `${path} is damaged: ${why}. strata does not write into a damaged store; nothing was changed. ` +
          "Run `strata verify` to see the damage (it opens the file read-only), then restore the file from a backup copy, " +
          `or salvage what is readable into a new file: \`sqlite3 ${path} .recover | sqlite3 salvaged.db\`, then \`strata --db salvaged.db verify\` (docs/spec/store.md, ST-22).`,
      );
    const version = prepareConnection(path, db, options);
    db.pragma("journal_mode = WAL");
    migrate(db, version);
    checkTables(path, db, SCHEMA_VERSION);
    return { db, version: SCHEMA_VERSION, access: "read-write", release: () => {} };
  } catch (e) {
    db.close();
    throw fromSqlite(e, `preparing ${path}`);
  }
}

/**
 * Creates a new store at `path` whole: built in a hidden file next to it, then hard-linked into
 * place, which fails if anything appeared at `path` meanwhile (then the caller opens that). So an
 * opener never meets a half-made store, and a 0-byte or empty SQLite file at a path is never
 * strata's: it is refused (ST-3). On a file system without hard links the file is copied into
 * place with an exclusive create instead.
 */
function createAside(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) throw new StoreError("cannot-open", `cannot create ${path}: directory ${dir} does not exist`);
  const tmp = join(dir, `.${basename(path)}.${process.pid}-${nodeCrypto().randomBytes(4).toString("hex")}.creating`);
  try {
    let db: Database.Database | undefined;
    try {
      db = new Database(tmp);
      db.pragma("journal_mode = WAL");
      migrate(db, 0);
    } catch (e) {
      throw fromSqlite(e, `creating ${path}`);
    } finally {
      db?.close();
    }
    try {
      linkSync(tmp, path);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "EEXIST") return;
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw fromFs(e, path, "create");
      try {
        copyFileSync(tmp, path, constants.COPYFILE_EXCL);
      } catch (c) {
        if ((c as { code?: string }).code !== "EEXIST") throw fromFs(c, path, "create");
      }
    }
  } catch (e) {
    throw e instanceof StoreError ? e : fromFs(e, path, "create");
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) rmSync(f, { force: true });
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
