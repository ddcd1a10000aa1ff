/**
 * ST-18 / ST-20: a full disk is a `disk-full` StoreError that says to free space — when a store is
 * created, when it is appended to — never an "unexpected" io error, and nothing half-written stays.
 * The disk is a real 512 KiB tmpfs when the tests may mount one (root, as in CI); otherwise SQLite's
 * own page limit (`max_page_count`) fills the file, which SQLite reports the same way (SQLITE_FULL).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EventId, openStore, type SqliteStore, StoreError } from "../src/index.ts";
import { ev, session, tempDir } from "./helpers.ts";

const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) execFileSync("umount", [m]);
});

/** A directory on a 512 KiB file system, or undefined when this process may not mount one. */
function smallDisk(): string | undefined {
  const dir = join(tempDir(), "disk");
  mkdirSync(dir);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

function expectDiskFull(f: () => unknown): StoreError {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).code, (error as Error).message).toBe("disk-full");
  expect((error as StoreError).message).toMatch(/the disk is full.*free space and retry/);
  return error as StoreError;
}

describe("ST-18 a full disk", () => {
  it("is disk-full when appending and when creating a store; nothing half-written stays; freeing space is enough", () => {
    const disk = smallDisk();
    const path = join(disk ?? tempDir(), "strata.db");
    const store = openStore(path) as SqliteStore;
    const s = session(store, 2);
    if (disk === undefined)
      store.database.pragma(`max_page_count = ${(store.database.pragma("page_count", { simple: true }) as number) + 8}`);
    let head = store.branch(s.id, "main")?.head as EventId;
    const written: EventId[] = [];
    expectDiskFull(() => {
      for (let i = 0; i < 10_000; i++) {
        head = store.append(s.id, "main", head, [ev("y".repeat(3000))])[0]?.id as EventId;
        written.push(head);
      }
    });
    store.close();
    if (disk !== undefined) {
      // The disk is full: creating another store fails the same way, and leaves nothing behind.
      writeFileSync(join(disk, "filler"), Buffer.alloc(0));
      try {
        for (let i = 0; ; i++) writeFileSync(join(disk, `filler${i}`), Buffer.alloc(4096));
      } catch {
        // full now
      }
      const before = readdirSync(disk).sort();
      expectDiskFull(() => openStore(join(disk, "second.db")));
      expect(readdirSync(disk).sort()).toEqual(before);
      for (const f of readdirSync(disk)) if (f.startsWith("filler")) rmSync(join(disk, f));
    }
    const again = openStore(path);
    expect(again.verify().findings).toEqual([]);
    expect(again.branch(s.id, "main")?.head).toBe(head);
    for (const id of written) expect(again.eventMeta(id)).toBeDefined();
    again.close();
  });
});
