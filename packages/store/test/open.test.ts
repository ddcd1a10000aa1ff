/** ST-1 … ST-4: opening files safely, schema versions, migrations, connection settings. */
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  APPLICATION_ID,
  type EventId,
  MIGRATIONS,
  openStore,
  SCHEMA_VERSION,
  type SessionInfo,
  type SqliteStore,
  StoreError,
} from "../src/index.ts";
import { ev, fileStore, run, session, tempDir } from "./helpers.ts";

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const FIXTURE = join(import.meta.dirname, "../../../fixtures/store/v1.db");

/** Every file of a directory with the digest of its bytes (the -shm is listed, not hashed: readers may rebuild it). */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) out[f] = f.endsWith("-shm") ? "shm" : digest(join(dir, f));
  return out;
}

/** Opening `path` fails with `code`, and no file of its directory was created, changed or deleted (ST-3). */
function refusesUntouched(path: string, code: string, message: RegExp): StoreError {
  const dir = join(path, "..");
  const before = files(dir);
  let error: unknown;
  try {
    openStore(path).close();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe(code);
  expect((error as StoreError).message).toMatch(message);
  expect(files(dir), "ST-3: nothing created, changed or deleted").toEqual(before);
  return error as StoreError;
}

/**
 * What a writer killed before its checkpoint leaves, copied while its connection is open: the file,
 * its WAL with frames and, unless `shm` is false, its -shm.
 */
function killedCopy(live: string, shm = true): string {
  const dst = join(tempDir(), "killed.db");
  copyFileSync(live, dst);
  copyFileSync(`${live}-wal`, `${dst}-wal`);
  if (shm) copyFileSync(`${live}-shm`, `${dst}-shm`);
  return dst;
}

describe("ST-1 opening", () => {
  it("creates a WAL database with the strata application id and schema version", () => {
    const { store, path } = fileStore();
    const db = (store as SqliteStore).database;
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("application_id", { simple: true })).toBe(APPLICATION_ID);
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    store.close();
    const again = openStore(path);
    expect(again.listSessions()).toEqual([]);
    again.close();
  });

  it("sets synchronous explicitly on every connection: NORMAL by default, FULL on request", () => {
    const { store, path } = fileStore();
    store.close();
    for (const [options, expected] of [
      [{}, 1],
      [{ durability: "full" as const }, 2],
      [{ durability: "normal" as const }, 1],
    ] as const) {
      const s = openStore(path, options) as SqliteStore;
      expect(s.database.pragma("synchronous", { simple: true })).toBe(expected);
      s.close();
    }
  });

  it("opens ':memory:' as a private store", () => {
    const a = openStore(":memory:");
    const b = openStore(":memory:");
    session(a, 2);
    expect(a.listSessions()).toHaveLength(1);
    expect(b.listSessions()).toHaveLength(0);
  });

  it("ST-3: only a missing path becomes a new store; a 0-byte file or an empty SQLite database is refused untouched", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "empty.db"), "");
    refusesUntouched(join(dir, "empty.db"), "not-strata", /is an empty file \(0 bytes\), not a strata store\. It was not changed/);
    expect(() => openStore(join(dir, "empty.db"), { readonly: true })).toThrow(/empty file/);
    const db = new Database(join(dir, "blank.db"));
    db.exec("CREATE TABLE t (x); DROP TABLE t"); // a SQLite header, an empty schema
    db.close();
    refusesUntouched(join(dir, "blank.db"), "not-strata", /not a strata store \(application_id 0, tables: none\)/);
    // `create: true` creates only where nothing is; the new store appears whole (no temporary file stays).
    const s = openStore(join(dir, "new.db"), { create: true });
    session(s, 1);
    expect(s.listSessions()).toHaveLength(1);
    s.close();
    expect(readdirSync(dir).sort()).toEqual(["blank.db", "empty.db", "new.db"]);
  });

  it("ST-3: processes creating one new store at the same moment all open the same store", async () => {
    const path = join(tempDir(), "race.db");
    const start = Date.now() + 1500;
    const child = join(import.meta.dirname, "create-racer.ts");
    const results = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ["--import", "tsx", child, path, String(start)])),
    );
    for (const r of results) expect(r.code, r.err).toBe(0);
    const store = openStore(path);
    expect(store.listSessions()).toHaveLength(4);
    expect(store.verify().findings).toEqual([]);
    store.close();
    expect(readdirSync(join(path, "..")).filter((f) => f.includes(".creating"))).toEqual([]);
  });
});

describe("ST-3 refusing foreign, newer and damaged files without touching them", () => {
  it("a file that is not SQLite", () => {
    const path = join(tempDir(), "notes.db");
    writeFileSync(path, "these are my notes, not a database\n".repeat(100));
    refusesUntouched(path, "not-strata", /is not a SQLite database .* It was not changed/);
  });

  it("a SQLite database of another application", () => {
    const path = join(tempDir(), "other.db");
    const db = new Database(path);
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada')");
    db.close();
    refusesUntouched(path, "not-strata", /is a SQLite database but not a strata store \(application_id 0, tables: customers\)/);
  });

  it("a strata store of a newer schema", () => {
    const { store, path } = fileStore();
    session(store, 1);
    store.close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    refusesUntouched(
      path,
      "newer-schema",
      new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this strata reads \\(${SCHEMA_VERSION}\\)`),
    );
  });

  it("a database whose pages are damaged: refused for writing (ST-22); read-only, reads fail cleanly", () => {
    const { store, path } = fileStore();
    session(store, 200);
    store.close();
    const bytes = readFileSync(path);
    // Keep the header page, scribble over the rest: opening reads only the schema; reading rows fails cleanly.
    for (let i = 4096 * 2; i < bytes.length; i += 7) bytes[i] = 0x5a;
    writeFileSync(path, bytes);
    refusesUntouched(path, "damaged", /is damaged: .*strata verify/);
    let error: unknown;
    try {
      const s = openStore(path, { readonly: true });
      expect(s.verify().ok).toBe(false);
      for (const x of s.listSessions()) s.log(x.id);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect(["corrupt", "not-strata"]).toContain((error as StoreError).code);
    expect((error as StoreError).message).toMatch(/damaged|not a strata|not a SQLite/);
  });

  it("a foreign SQLite database in WAL mode: no -wal or -shm appears next to it", () => {
    const path = join(tempDir(), "foreign-wal.db");
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    db.close();
    expect(readdirSync(join(path, ".."))).toEqual(["foreign-wal.db"]);
    refusesUntouched(path, "not-strata", /not a strata store \(application_id 0, tables: t\)/);
  });

  it("a foreign database that holds only a view is not adopted as empty (every schema entry counts)", () => {
    const path = join(tempDir(), "views.db");
    const db = new Database(path);
    db.exec("CREATE VIEW v AS SELECT 1");
    db.close();
    refusesUntouched(path, "not-strata", /tables: v \(view\)/);
    const wal = join(tempDir(), "views-wal.db");
    const w = new Database(wal);
    w.pragma("journal_mode = WAL");
    w.exec("CREATE VIEW v AS SELECT 1");
    w.close();
    refusesUntouched(wal, "not-strata", /tables: v \(view\)/);
  });

  it("a store of a newer schema whose version is only in an unflushed WAL: refused read-only, nothing checkpointed", () => {
    const live = join(tempDir(), "live.db");
    openStore(live).close();
    const db = new Database(live);
    db.pragma("wal_autocheckpoint = 0");
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.exec("CREATE TABLE newer_stuff (x)");
    const withShm = killedCopy(live);
    const withoutShm = killedCopy(live, false);
    db.close();
    expect(readFileSync(withShm).readUInt32BE(60), "the file header still says the old version").toBe(SCHEMA_VERSION);
    refusesUntouched(withShm, "newer-schema", new RegExp(`schema version ${SCHEMA_VERSION + 1}`));
    // Without its -shm the WAL is read from a private copy, so no -shm is created either.
    refusesUntouched(withoutShm, "newer-schema", new RegExp(`schema version ${SCHEMA_VERSION + 1}`));
  });

  it("a store whose writer was killed before a checkpoint opens with every committed event, -shm or not", () => {
    const live = join(tempDir(), "live.db");
    const store = openStore(live) as SqliteStore;
    store.database.pragma("wal_autocheckpoint = 0");
    const s = session(store, 3);
    const head = s.events[2]?.id as EventId;
    const copies = [killedCopy(live), killedCopy(live, false)];
    store.close();
    for (const path of copies) {
      const again = openStore(path);
      expect(again.branch(s.id, "main")?.head).toBe(head);
      expect(again.verify().ok).toBe(true);
      again.close();
    }
    // A store whose every commit is still in an unflushed WAL (the main file holds only its header
    // page, as an older strata that created stores in place left them when killed) opens too.
    const source = fileStore();
    const t = session(source.store, 1);
    source.store.close();
    const fresh = join(tempDir(), "fresh.db");
    const raw = new Database(fresh);
    raw.pragma("journal_mode = WAL");
    raw.pragma("wal_autocheckpoint = 0");
    raw.exec(`ATTACH '${source.path}' AS src`);
    raw.transaction(() => {
      for (const { name, sql } of raw
        // FTS5's shadow tables (search_data, …) are made by its CREATE VIRTUAL TABLE.
        .prepare(
          "SELECT name, sql FROM src.sqlite_schema WHERE sql IS NOT NULL AND name NOT IN ('search_data', 'search_idx', 'search_content', 'search_docsize', 'search_config') ORDER BY type = 'index'",
        )
        .all() as { name: string; sql: string }[]) {
        raw.exec(sql);
        if (!sql.startsWith("CREATE INDEX")) raw.exec(`INSERT INTO main."${name}" SELECT * FROM src."${name}"`);
      }
    })();
    raw.pragma(`application_id = ${APPLICATION_ID}`);
    raw.pragma(`user_version = ${SCHEMA_VERSION}`);
    const copy = killedCopy(fresh, false);
    raw.close();
    expect(readFileSync(copy).length, "the main file holds one page: everything else is in the WAL").toBeLessThanOrEqual(4096);
    const reopened = openStore(copy);
    expect(reopened.log(t.id)).toHaveLength(2);
    expect(reopened.verify().findings).toEqual([]);
    reopened.close();
  });

  it("an empty SQLite file in WAL mode is another program's database, not a store being created: refused untouched", () => {
    const path = join(tempDir(), "creating.db");
    const creator = new Database(path);
    creator.pragma("journal_mode = WAL");
    creator.close();
    refusesUntouched(path, "not-strata", /not a strata store \(application_id 0, tables: none\)/);
  });

  it("a directory, or a path through a file, is a clear cannot-open error", () => {
    const dir = join(tempDir(), "adir");
    mkdirSync(dir);
    try {
      openStore(dir);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(StoreError);
      expect((e as StoreError).code).toBe("cannot-open");
      expect((e as StoreError).message).toMatch(/is a directory, not a database file/);
    }
    const file = join(tempDir(), "plain.txt");
    writeFileSync(file, "x");
    expect(() => openStore(join(file, "inside.db"))).toThrow(StoreError);
  });

  it("a missing file when creation is off, and a missing directory", () => {
    expect(() => openStore(join(tempDir(), "nope.db"), { create: false })).toThrow(/does not exist/);
    expect(() => openStore(join(tempDir(), "no", "such", "dir.db"))).toThrow(/directory .* does not exist/);
  });
});

describe("ST-4 schema versions and the stored v1 fixture", () => {
  it("opens fixtures/store/v1.db (written by schema version 1) with its history intact", () => {
    const fixture = FIXTURE;
    const copy = join(tempDir(), "v1.db");
    copyFileSync(fixture, copy);
    const before = readFileSync(fixture);
    const store = openStore(copy);
    const sessions = store.listSessions();
    expect(sessions.map((s) => s.title)).toEqual(["v1 fixture"]);
    const id = (sessions[0] as SessionInfo).id;
    expect(store.branches(id).map((b) => [b.name, b.headDepth])).toEqual([
      ["main", 6],
      ["experiment", 5],
      ["rewound/main/7", 6],
    ]);
    expect(store.log(id).map((e) => e.label)).toEqual(["genesis", "e1", "e2", "e3", "e4", "after-rewind"]);
    expect(store.verify().ok).toBe(true);
    const head = store.branch(id, "main")?.head as never;
    store.append(id, "main", head, [ev("{}", "written-by-current-code")]);
    expect(store.log(id).at(-1)?.label).toBe("written-by-current-code");
    expect(readFileSync(fixture).equals(before), "the fixture itself is never written").toBe(true);
  });

  it("migrations are ordered, one version each, up to SCHEMA_VERSION", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    for (const m of MIGRATIONS) expect(m.description).not.toBe("");
  });

  it("v1 → v2 on a copy of v1.db: read-only opens read it unmigrated, a writer migrates it, old snapshots read the same", () => {
    const fixture = digest(FIXTURE);
    const copy = join(tempDir(), "v1.db");
    copyFileSync(FIXTURE, copy);
    const version = () => {
      const db = new Database(copy, { readonly: true });
      const v = db.pragma("user_version", { simple: true });
      db.close();
      return v;
    };
    // v2 only announces a new snapshot directory format, which this build reads along with v1's.
    const ro = openStore(copy, { readonly: true });
    const id = (ro.listSessions()[0] as SessionInfo).id;
    const at = ro.snapshots(id)[0]?.id as EventId;
    const old = ro.nearestSnapshot(at);
    expect(old?.pages.length).toBeGreaterThan(0);
    ro.close();
    expect(version()).toBe(1);
    const store = openStore(copy) as SqliteStore;
    expect(version()).toBe(SCHEMA_VERSION);
    const raw = store.database.prepare("SELECT pages FROM snapshots WHERE event = ?").pluck();
    expect((raw.get(at) as Buffer)[0], "the v1 directory is left as it was").toBe(0);
    expect(store.nearestSnapshot(at)).toEqual(old);
    // New snapshots are written in format 2 and read back the same.
    const head = store.branch(id, "main")?.head as EventId;
    store.putSnapshot(head, "new", old?.pages as (string | null)[]);
    expect((raw.get(head) as Buffer)[0]).toBe(2);
    expect(store.nearestSnapshot(head)?.pages).toEqual(old?.pages);
    expect(store.verify().findings).toEqual([]);
    store.close();
    expect(digest(FIXTURE), "the fixture itself is never written").toBe(fixture);
    // Each migration after v1 so far only announces a format this build reads: no read-only open needs it.
    expect(MIGRATIONS.filter((m) => m.version > 1).every((m) => m.readable)).toBe(true);
  });
});
