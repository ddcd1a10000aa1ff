/** ST-22: strata does not write into a file it can see is damaged; read-only opens still report. */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type EventId, openStore, QUICK_CHECK_LIMIT, SCHEMA_VERSION, StoreError } from "../src/index.ts";
import { ev, fileStore, session } from "./helpers.ts";

const digest = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** A closed store of `n` events after genesis, checkpointed into its main file. */
function closedStore(n = 40): { path: string; id: string } {
  const { store, path } = fileStore();
  const s = session(store, n);
  store.close();
  return { path, id: s.id };
}

/** Opening `path` for writing is refused as damaged, naming verify and the recovery path; nothing in its directory changes. */
function refusedForWriting(path: string, why: RegExp): StoreError {
  const dir = join(path, "..");
  const before = readdirSync(dir).map((f) => `${f}:${digest(join(dir, f))}`);
  let error: unknown;
  try {
    openStore(path).close();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe("damaged");
  expect((error as StoreError).message).toMatch(why);
  expect((error as StoreError).message).toMatch(/strata does not write into a damaged store; nothing was changed/);
  expect((error as StoreError).message).toMatch(/Run `strata verify`.*restore the file from a backup copy.*\.recover/);
  expect(readdirSync(dir).map((f) => `${f}:${digest(join(dir, f))}`)).toEqual(before);
  return error as StoreError;
}

describe("ST-22 the integrity check on opening for writing", () => {
  it("a store missing one of its tables is refused at open, for writing and read-only, naming the table; nothing changes", () => {
    const { path } = closedStore(5);
    const db = new Database(path);
    db.exec("DROP TABLE branches");
    db.close();
    refusedForWriting(path, new RegExp(`has no branches table, which a store of schema version ${SCHEMA_VERSION} has`));
    const before = digest(path);
    expect(() => openStore(path, { readonly: true })).toThrow(/is damaged: it has no branches table.*Restore the file from a backup copy/);
    expect(digest(path)).toBe(before);
    // SE-8: the texts the index keeps apart are one of its tables too.
    const other = closedStore(5).path;
    const db2 = new Database(other);
    db2.exec("DROP TABLE search_text");
    db2.close();
    refusedForWriting(other, /has no search_text table/);
  });

  it("a copy cut short by one byte is refused for writing; read-only, verify reports the damage", () => {
    const { path } = closedStore();
    const size = readFileSync(path).length;
    truncateSync(path, size - 1);
    refusedForWriting(path, new RegExp(`the file is ${size - 1} bytes, not a whole number of 4096-byte pages`));
    const ro = openStore(path, { readonly: true });
    const r = ro.verify();
    expect(r.ok).toBe(false);
    ro.close();
  });

  it("a copy cut short by whole pages is refused: its header counts more pages than the file holds", () => {
    const { path } = closedStore(200);
    const size = readFileSync(path).length;
    truncateSync(path, size - 4096);
    refusedForWriting(path, /its header says \d+ pages of 4096 bytes, but the file holds \d+: it was cut short/);
  });

  it("a small file with damaged pages is refused by SQLite's quick check", () => {
    const { path } = closedStore(300);
    const bytes = readFileSync(path);
    expect(bytes.length).toBeLessThan(QUICK_CHECK_LIMIT);
    for (let i = 4096 * 3; i < 4096 * 5; i += 5) bytes[i] = 0x5a;
    writeFileSync(path, bytes);
    refusedForWriting(path, /SQLite's quick check found|SQLite cannot read it/);
    const ro = openStore(path, { readonly: true });
    expect(ro.verify().findings.some((f) => f.code === "integrity")).toBe(true);
    ro.close();
  });

  it("a header whose fixed fields are wrong is refused", () => {
    const { path } = closedStore();
    const bytes = readFileSync(path);
    bytes[21] = 0x41; // the max embedded payload fraction is 64 in every SQLite file
    writeFileSync(path, bytes);
    refusedForWriting(path, /payload fractions/);
  });

  it("a whole store opens for writing again and again, also while another connection writes to it", () => {
    const { store, path } = fileStore();
    const s = session(store, 5);
    let head = store.branch(s.id, "main")?.head as EventId;
    for (let i = 0; i < 30; i++) {
      head = store.append(s.id, "main", head, [ev(`x${i}`.repeat(200))])[0]?.id as EventId;
      const other = openStore(path);
      expect(other.branch(s.id, "main")?.head).toBe(head);
      other.close();
    }
    store.close();
  });
});
