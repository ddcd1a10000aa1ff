/**
 * ST-24: read-only opens write nothing, migrate nothing and leave no -wal or -shm file — also in a
 * directory the reader cannot write, as another user, while a writer in another process commits.
 * When the tests run as root (as in CI) the reader runs as `nobody` (setpriv); otherwise as the
 * same user, with the directory made unwritable.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COPY_LIMIT, type EventId, openStore, type SqliteStore, StoreError } from "../src/index.ts";
import { ev, fileStore, ROOT, run, session, tempDir } from "./helpers.ts";

const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;
const HERE = import.meta.dirname;

/** Every file of a directory with its owner and the digest of its bytes (-shm listed, not hashed). */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    out[f] = `${statSync(p).uid}:${f.endsWith("-shm") ? "shm" : createHash("sha256").update(readFileSync(p)).digest("hex")}`;
  }
  return out;
}

/** A directory for a store that another user may read: its parents traversable, itself writable until `lock`. */
function sharedDir(): { dir: string; lock: () => void } {
  const base = tempDir();
  chmodSync(base, 0o755);
  const dir = join(base, "db");
  mkdirSync(dir);
  const locked: string[] = [];
  afterEach(() => {
    for (const d of locked.splice(0)) chmodSync(d, 0o755); // so the temp directory can be removed
  });
  return {
    dir,
    lock: () => {
      chmodSync(dir, 0o555);
      locked.push(dir);
    },
  };
}

interface ReaderResult {
  access?: string;
  sessions?: number;
  events?: number;
  findings?: unknown[];
  reads?: number;
  grew?: number;
  error?: { code: string; message: string };
}

/** Runs ro-reader.ts as another user when this process is root (so the directory is truly unwritable to it). */
async function reader(db: string, duration = 0): Promise<ReaderResult> {
  const args = ["--import", "tsx", join(HERE, "ro-reader.ts"), db, String(duration)];
  const r = ROOT_USER
    ? await run("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, ...args])
    : await run(process.execPath, args);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as ReaderResult;
}

/** Starts ro-writer.ts on `db`; resolves once its store is open. */
function writer(db: string, session: string, limit: number): Promise<{ child: ChildProcess; done: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(HERE, "ro-writer.ts"), db, session, String(limit)], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    const done = new Promise<number>((ok, fail) =>
      child.on("close", (code) =>
        code === 0 ? ok(Number(out.trim().split("\n").at(-1))) : fail(new Error(`writer exited ${code}: ${err}`)),
      ),
    );
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.stdout?.on("data", (d) => {
      out += d;
      if (out.startsWith("ready\n")) resolve({ child, done });
    });
    child.on("error", reject);
  });
}

describe("ST-24 read-only opens", () => {
  it("in a writable directory: nothing is written, no -wal or -shm stays, writes are read-only errors", () => {
    const { store, path } = fileStore();
    const s = session(store, 3);
    store.close();
    const dir = join(path, "..");
    const before = listing(dir);
    const ro = openStore(path, { readonly: true }) as SqliteStore;
    expect(ro.access).toBe("read-only");
    expect(ro.log(s.id)).toHaveLength(4);
    expect(ro.verify().findings).toEqual([]);
    for (const write of [
      () => ro.append(s.id, "main", ro.branch(s.id, "main")?.head as EventId, [ev("x")]),
      () => ro.fork(s.id, s.genesis, "f"),
      () => ro.putBlob("x"),
      () => ro.updateSession(s.id, { title: "t" }),
    ])
      try {
        write();
        expect.unreachable();
      } catch (e) {
        expect((e as StoreError).code).toBe("read-only");
      }
    ro.close();
    expect(listing(dir)).toEqual(before);
  });

  it("older schemas are read as they are: v1.db and v2.db are not migrated, not changed, nothing is left next to them", () => {
    for (const name of ["v1.db", "v2.db"]) {
      const dir = tempDir();
      const copy = join(dir, name);
      copyFileSync(join(ROOT, "fixtures/store", name), copy);
      const before = listing(dir);
      const version = readFileSync(copy).readUInt32BE(60); // the header's user_version (a connection would leave files)
      const ro = openStore(copy, { readonly: true }) as SqliteStore;
      expect(ro.schemaVersion).toBe(version);
      const sessions = ro.listSessions();
      expect(sessions.length).toBeGreaterThan(0);
      for (const x of sessions) for (const b of ro.branches(x.id)) expect(ro.chain(b.head).length).toBe(b.headDepth);
      expect(ro.verify().findings).toEqual([]);
      ro.close();
      expect(listing(dir), name).toEqual(before);
    }
  });

  it("in a directory the reader cannot write, with nobody writing: read from a private copy; nothing is created", async () => {
    const { dir, lock } = sharedDir();
    const path = join(dir, "strata.db");
    const store = openStore(path);
    const s = session(store, 12);
    store.putSnapshot(s.events[5]?.id as EventId, "h", [store.putBlob("p")]);
    store.close();
    expect(readdirSync(dir)).toEqual(["strata.db"]);
    lock();
    const before = listing(dir);
    const r = await reader(path);
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ access: "read-only copy", sessions: 1, events: 13, findings: [] });
    expect(listing(dir)).toEqual(before);
  });

  it("in a directory the reader cannot write, while a writer in another process commits: read in place, every read consistent", async () => {
    const { dir, lock } = sharedDir();
    const path = join(dir, "strata.db");
    const store = openStore(path);
    const s = session(store, 3);
    store.close();
    const w = await writer(path, s.id, 60_000);
    lock(); // the writer's -wal and -shm exist now; the reader can create nothing here
    try {
      const r = await reader(path, 2500);
      expect(r.error).toBeUndefined();
      expect(r.access).toBe("read-only");
      expect(r.findings).toEqual([]);
      expect(r.reads).toBeGreaterThan(3);
      expect(r.grew, "the reader saw the writer's commits as they landed").toBeGreaterThan(0);
    } finally {
      w.child.stdin?.end("stop\n");
    }
    const written = await w.done;
    expect(written).toBeGreaterThan(0);
    if (ROOT_USER) for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).uid, f).not.toBe(NOBODY);
    const after = openStore(path, { readonly: true });
    expect(after.log(s.id)).toHaveLength(4 + written);
    after.close();
  });

  it("when neither is possible, the error says exactly what is needed", async () => {
    const { dir, lock } = sharedDir();
    const path = join(dir, "strata.db");
    openStore(path).close();
    truncateSync(path, COPY_LIMIT + 4096); // sparse: as large as a file the reader may not copy aside
    lock();
    const r = await reader(path);
    expect(r.error?.code).toBe("cannot-open");
    expect(r.error?.message).toMatch(
      /cannot write its directory .* no strata process has it open, .* up to 256 MiB, and this one is 256\.0 MiB/,
    );
    expect(r.error?.message).toMatch(/Run the command as a user who may write .*or copy the file to a directory you can write/);
    expect(readdirSync(dir)).toEqual(["strata.db"]);
  });

  it("a missing file is not-found, and nothing is created", () => {
    const dir = tempDir();
    expect(() => openStore(join(dir, "none.db"), { readonly: true })).toThrow(StoreError);
    expect(readdirSync(dir)).toEqual([]);
  });
});
