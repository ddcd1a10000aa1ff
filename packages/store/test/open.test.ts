/** ST-1 … ST-4: opening files safely, schema versions, migrations, connection settings. */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { APPLICATION_ID, openStore, SCHEMA_VERSION, type SessionInfo, type SqliteStore, StoreError } from "../src/index.ts";
import { ev, fileStore, session, tempDir } from "./helpers.ts";

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

function refuses(path: string, code: string, message: RegExp): void {
  const before = digest(path);
  try {
    openStore(path);
    expect.unreachable("opened");
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError);
    expect((e as StoreError).code).toBe(code);
    expect((e as StoreError).message).toMatch(message);
  }
  expect(digest(path), "ST-3: a refused file is not changed").toBe(before);
  expect(existsSync(`${path}-wal`)).toBe(false);
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

  it("initialises an empty file and an empty SQLite database", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "empty.db"), "");
    openStore(join(dir, "empty.db")).close();
    const db = new Database(join(dir, "blank.db"));
    db.close();
    const s = openStore(join(dir, "blank.db"));
    session(s, 1);
    expect(s.listSessions()).toHaveLength(1);
  });
});

describe("ST-3 refusing foreign, newer and damaged files without touching them", () => {
  it("a file that is not SQLite", () => {
    const path = join(tempDir(), "notes.db");
    writeFileSync(path, "these are my notes, not a database\n".repeat(100));
    refuses(path, "not-strata", /is not a SQLite database .* It was not changed/);
  });

  it("a SQLite database of another application", () => {
    const path = join(tempDir(), "other.db");
    const db = new Database(path);
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada')");
    db.close();
    refuses(path, "not-strata", /is a SQLite database but not a strata store \(application_id 0, tables: customers\)/);
  });

  it("a strata store of a newer schema", () => {
    const { store, path } = fileStore();
    session(store, 1);
    store.close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    refuses(path, "newer-schema", new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this strata reads \\(${SCHEMA_VERSION}\\)`));
  });

  it("a database whose pages are damaged", () => {
    const { store, path } = fileStore();
    session(store, 200);
    store.close();
    const bytes = readFileSync(path);
    // Keep the header page, scribble over the rest: opening reads only the schema; reading rows fails cleanly.
    for (let i = 4096 * 2; i < bytes.length; i += 7) bytes[i] = 0x5a;
    writeFileSync(path, bytes);
    let error: unknown;
    try {
      const s = openStore(path);
      s.verify();
      for (const x of s.listSessions()) s.log(x.id);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect(["corrupt", "not-strata"]).toContain((error as StoreError).code);
    expect((error as StoreError).message).toMatch(/damaged|not a strata|not a SQLite/);
  });

  it("a missing file when creation is off, and a missing directory", () => {
    expect(() => openStore(join(tempDir(), "nope.db"), { create: false })).toThrow(/does not exist/);
    expect(() => openStore(join(tempDir(), "no", "such", "dir.db"))).toThrow(/directory .* does not exist/);
  });
});

describe("ST-4 schema versions and the stored v1 fixture", () => {
  it("opens fixtures/store/v1.db (written by schema version 1) with its history intact", () => {
    const fixture = join(import.meta.dirname, "../../../fixtures/store/v1.db");
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
});
