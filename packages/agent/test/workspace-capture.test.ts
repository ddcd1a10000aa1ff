/**
 * WS-5 … WS-12: capturing a directory into the tree — the baseline, changes after edits, the stat
 * index (only changed files are hashed; racily clean entries are not trusted; a persisted index
 * is a cache), symlinks recorded as links and never followed, the size cap with bounded memory,
 * ignored and once-tracked files, entries vanishing and changing kind during a scan.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  addSkippedDiags,
  checkoutWorkspace,
  type FileChange,
  WorkspaceStateError,
  WorkspaceTracker,
  workspaceElement,
  workspaceFiles,
} from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import { commitCapture, file, link, newSession, put, readDir, render } from "./workspace-kit.ts";

afterEach(cleanup);

const summary = (changes: readonly FileChange[]): string[] =>
  changes.map((c) => `${c.type} ${c.type === "delete" ? c.before.path : c.entry.path}`);

/** Sets a file's mtime an hour back (and a little apart per file), so the stat index may trust it at once. */
function age(dir: string, rel: string, secondsAgo = 3600): void {
  const t = Date.now() / 1000 - secondsAgo;
  utimesSync(join(dir, rel), t, t + Math.random() / 10);
}

describe("WS-5 baseline and capture", () => {
  it("WS-5 the baseline records every file with mode and size; a capture records adds, modifies and deletes", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "a.txt", file("alpha"));
    put(dir, "src/b.ts", file("export const b = 1;\n"));
    put(dir, "bin/run.sh", file("#!/bin/sh\necho hi\n", true));
    put(dir, "link", link("src/b.ts"));
    const tracker = new WorkspaceTracker(dir, store);
    const base = await tracker.baseline(session.tree);
    expect(summary(base.changes)).toEqual(["add a.txt", "add bin/run.sh", "add link", "add src/b.ts"]);
    let tree = commitCapture(session, base);
    const files = workspaceFiles(tree);
    expect(files.get("bin/run.sh")?.mode).toBe("755");
    expect(files.get("a.txt")).toMatchObject({ mode: "644", size: 5 });
    expect(files.get("link")).toMatchObject({ mode: "link", size: 8 });
    // The bytes are blobs: a link's blob is its target text.
    expect(store.getBlob(files.get("link")?.hash as string)?.toString()).toBe("src/b.ts");
    expect(store.getBlob(files.get("a.txt")?.hash as string)?.toString()).toBe("alpha");

    put(dir, "a.txt", file("ALPHA!"));
    rmSync(join(dir, "src/b.ts"));
    put(dir, "new/c.txt", file("c"));
    const cap = await tracker.capture(tree);
    expect(summary(cap.changes)).toEqual(["modify a.txt", "add new/c.txt", "delete src/b.ts"]);
    tree = commitCapture(session, cap, "test.capture");
    expect((await tracker.capture(tree)).changes).toEqual([]);
    // The tree is the truth: captured against the baseline tree again, the same changes come back.
    expect(summary((await tracker.capture(session.at(session.log()[1]?.id as never))).changes)).toEqual(summary(cap.changes));
  });

  it("WS-5 a workspace directory that is missing is an io error, not a capture deleting everything", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "a", file("a"));
    const tracker = new WorkspaceTracker(dir, store);
    const tree = commitCapture(session, await tracker.baseline(session.tree));
    rmSync(dir, { recursive: true });
    const err = await tracker.capture(tree).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkspaceStateError);
    expect((err as WorkspaceStateError).code).toBe("io");
    expect((err as Error).message).toContain(dir);
  });
});

describe("WS-5 captures of one tracker run one at a time", () => {
  it("WS-5 concurrent captures against different trees each get the changes against their own tree", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    for (let i = 0; i < 3000; i++) put(dir, `d${i % 30}/f${i}`, file(`v${i}`));
    const tracker = new WorkspaceTracker(dir, store);
    const empty = session.tree;
    const full = commitCapture(session, await tracker.baseline(empty));
    put(dir, "d0/f0", file("changed"));
    const [a, b, c] = await Promise.all([tracker.capture(full), tracker.capture(empty), tracker.capture(full)]);
    expect(summary(a.changes)).toEqual(["modify d0/f0"]);
    expect(b.changes.length).toBe(3000);
    expect(b.changes.every((x) => x.type === "add")).toBe(true);
    expect(summary(c.changes)).toEqual(["modify d0/f0"]);
  });
});

describe("WS-9 the stat index: only changed files are hashed", () => {
  it("WS-9 after the baseline, a capture hashes exactly the files whose stat changed", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    for (let i = 0; i < 300; i++) put(dir, `d${i % 7}/f${i}.txt`, file(`content ${i}`));
    for (let i = 0; i < 300; i++) age(dir, `d${i % 7}/f${i}.txt`);
    const hashed: string[] = [];
    const tracker = new WorkspaceTracker(dir, store, { onHash: (p) => hashed.push(p) });
    let tree = commitCapture(session, await tracker.baseline(session.tree));
    expect(hashed.length).toBe(300);
    hashed.length = 0;
    expect((await tracker.capture(tree)).changes).toEqual([]);
    expect(hashed).toEqual([]);

    put(dir, "d1/f1.txt", file("changed"));
    put(dir, "d2/f2.txt", file("content 2")); // rewritten with the same bytes: hashed, no change
    put(dir, "d3/new.txt", file("new"));
    for (const p of ["d1/f1.txt", "d2/f2.txt", "d3/new.txt"]) age(dir, p, 1800);
    const cap = await tracker.capture(tree);
    expect(hashed.sort()).toEqual(["d1/f1.txt", "d2/f2.txt", "d3/new.txt"]);
    expect(summary(cap.changes)).toEqual(["modify d1/f1.txt", "add d3/new.txt"]);
    expect(cap.stats?.hashed).toBe(3);
    tree = commitCapture(session, cap, "test.capture");
    hashed.length = 0;
    expect((await tracker.capture(tree)).changes).toEqual([]);
    expect(hashed).toEqual([]);
  });

  it("WS-10 an entry recorded in the same tick as the file's mtime (racily clean) is hashed again, not trusted", async () => {
    // A persisted index stands in for the race: its entry has the file's exact stat tuple but
    // stale bytes' hash, as when a same-size write lands in the tick the index was taken in.
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "f", file("new bytes"));
    age(dir, "f");
    const indexFile = join(tempDir(), "index.json");
    const base = new WorkspaceTracker(dir, store, { indexFile });
    const tree = commitCapture(session, await base.baseline(session.tree));
    const saved = JSON.parse(readFileSync(indexFile, "utf8")) as {
      entries: [string, number, number, number, number, number, string, number][];
    };
    const row = saved.entries[0] as [string, number, number, number, number, number, string, number];
    const stale = "0".repeat(64);
    const forge = (seenAt: number): void => {
      row[6] = stale;
      row[7] = seenAt;
      writeFileSync(indexFile, JSON.stringify(saved));
    };
    // seenAt within the mtime's tick: racy, so hashed again (and found unchanged against the tree).
    forge(row[2] + 1);
    let hashed = 0;
    const racy = new WorkspaceTracker(dir, store, { indexFile, onHash: () => hashed++ });
    expect((await racy.status(tree)).changes).toEqual([]);
    expect(hashed).toBe(1);
    // seenAt well after the mtime: the tuple is trusted (which is why the racy rule matters).
    // (`status` stores nothing; a capture would read the file anyway, to store bytes it lacks.)
    forge(row[2] + 60_000);
    hashed = 0;
    const trusting = new WorkspaceTracker(dir, store, { indexFile, onHash: () => hashed++ });
    expect(summary((await trusting.status(tree)).changes)).toEqual(["modify f"]);
    expect(hashed).toBe(0);
    forge(row[2] + 60_000);
    const healing = new WorkspaceTracker(dir, store, { indexFile, onHash: () => hashed++ });
    expect((await healing.capture(tree)).changes).toEqual([]);
    expect(hashed).toBe(1);
  });

  it("WS-11 a persisted index lets a fresh process hash nothing; a damaged or foreign one is just empty", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    for (let i = 0; i < 20; i++) put(dir, `f${i}`, file(`x${i}`));
    for (let i = 0; i < 20; i++) age(dir, `f${i}`);
    const indexFile = join(tempDir(), "index.json");
    const tree = commitCapture(session, await new WorkspaceTracker(dir, store, { indexFile }).baseline(session.tree));
    let hashed = 0;
    const fresh = new WorkspaceTracker(dir, store, { indexFile, onHash: () => hashed++ });
    expect((await fresh.capture(tree)).changes).toEqual([]);
    expect(hashed).toBe(0);

    writeFileSync(indexFile, "{ not json");
    hashed = 0;
    expect((await new WorkspaceTracker(dir, store, { indexFile, onHash: () => hashed++ }).capture(tree)).changes).toEqual([]);
    expect(hashed).toBe(20);

    const other = tempDir();
    for (let i = 0; i < 20; i++) put(other, `f${i}`, file(`x${i}`));
    hashed = 0;
    // The index file now holds `dir`'s entries (rewritten above); for `other` it is foreign.
    expect((await new WorkspaceTracker(other, store, { indexFile, onHash: () => hashed++ }).capture(tree)).changes).toEqual([]);
    expect(hashed).toBe(20);
  });

  it("WS-9 a fresh tracker (a new process, a resume) primes its index by hashing once", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    for (let i = 0; i < 10; i++) put(dir, `f${i}`, file(`x${i}`));
    for (let i = 0; i < 10; i++) age(dir, `f${i}`);
    const tree = commitCapture(session, await new WorkspaceTracker(dir, store).baseline(session.tree));
    let hashed = 0;
    const fresh = new WorkspaceTracker(dir, store, { onHash: () => hashed++ });
    await fresh.capture(tree);
    expect(hashed).toBe(10);
    await fresh.capture(tree);
    expect(hashed).toBe(10);
    expect(fresh.indexSize).toBe(10);
  });
});

describe("WS-6 the size cap", () => {
  it("WS-6 a 1 GiB (sparse) file is left out with a skipped entry, without reading it (bounded memory)", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "small", file("s"));
    writeFileSync(join(dir, "huge.bin"), "");
    truncateSync(join(dir, "huge.bin"), 1024 ** 3);
    const before = process.memoryUsage().rss;
    let hashed = 0;
    const tracker = new WorkspaceTracker(dir, store, { onHash: () => hashed++ });
    const base = await tracker.baseline(session.tree);
    const grew = process.memoryUsage().rss - before;
    expect(summary(base.changes)).toEqual(["add small"]);
    expect(base.skipped).toEqual([{ path: "huge.bin", size: 1024 ** 3 }]);
    expect(hashed).toBe(1);
    expect(grew).toBeLessThan(64 * 1024 * 1024);
  });

  it("WS-6 the cap is inclusive; a tracked file that grows past it is deleted from the record and reported", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "at-cap", file("x".repeat(100)));
    put(dir, "over-cap", file("x".repeat(101)));
    put(dir, "grows", file("x".repeat(10)));
    const tracker = new WorkspaceTracker(dir, store, { maxFileBytes: 100 });
    const base = await tracker.baseline(session.tree);
    expect(summary(base.changes)).toEqual(["add at-cap", "add grows"]);
    expect(base.skipped).toEqual([{ path: "over-cap", size: 101 }]);
    const tree = commitCapture(session, base);
    put(dir, "grows", file("x".repeat(500)));
    const cap = await tracker.capture(tree);
    expect(summary(cap.changes)).toEqual(["delete grows"]);
    expect(cap.skipped).toEqual([
      { path: "grows", size: 500 },
      { path: "over-cap", size: 101 },
    ]);
  });
});

describe("WS-12 symlinks are recorded, never followed", () => {
  it("WS-12 links to directories inside and outside, to the root itself and dangling ones are links; nothing behind them is scanned", async () => {
    const { session, store } = newSession();
    const outside = tempDir();
    put(outside, "secret.txt", file("do not record me"));
    const dir = tempDir();
    put(dir, "sub/in.txt", file("in"));
    symlinkSync(outside, join(dir, "out"));
    symlinkSync(".", join(dir, "loop"));
    symlinkSync("sub", join(dir, "sub-link"));
    symlinkSync("nowhere", join(dir, "dangling"));
    symlinkSync(join(outside, "secret.txt"), join(dir, "secret-link"));
    const base = await new WorkspaceTracker(dir, store).baseline(session.tree);
    expect(summary(base.changes)).toEqual(["add dangling", "add loop", "add out", "add secret-link", "add sub-link", "add sub/in.txt"]);
    const files = workspaceFiles(commitCapture(session, base));
    expect(files.get("out")?.mode).toBe("link");
    expect(store.getBlob(files.get("secret-link")?.hash as string)?.toString()).toBe(join(outside, "secret.txt"));
    expect(files.get("secret-link")?.size).toBe(Buffer.byteLength(join(outside, "secret.txt")));
  });

  it("WS-12 a workspace root given through a symlink is scanned as the directory it names", async () => {
    const { session, store } = newSession();
    const real = tempDir();
    put(real, "a", file("a"));
    const via = join(tempDir(), "via");
    symlinkSync(real, via);
    const base = await new WorkspaceTracker(via, store).baseline(session.tree);
    expect(summary(base.changes)).toEqual(["add a"]);
  });
});

describe("WS-8 ignored files", () => {
  it("WS-8 ignored files and directories are left out; the database inside the workspace is too", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "data"));
    const store = openStore(join(dir, "data", "s.db"));
    const session = Session.create(store);
    session.commit([], { label: "test.touch" }); // the database and its WAL exist
    put(dir, ".gitignore", file("node_modules/\n*.log\n"));
    put(dir, "node_modules/x/index.js", file("x"));
    put(dir, "app.log", file("log"));
    put(dir, ".git/config", file("[core]"));
    put(dir, ".strata/strata.db", file("db"));
    put(dir, "src/a.ts", file("a"));
    put(dir, "src/b.gen.ts", file("gen"));
    const base = await new WorkspaceTracker(dir, store, { extraIgnores: ["src/*.gen.ts"] }).baseline(session.tree);
    expect(summary(base.changes)).toEqual(["add .gitignore", "add src/a.ts"]);
    // Ignored directories are not entered: nothing below node_modules was even listed.
    expect(base.stats?.statted).toBeLessThan(10);
    store.close();
  });

  it("WS-8 a file tracked before it became ignored stays tracked (as in git) until it is deleted", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "build/out.js", file("v1"));
    put(dir, "keep.txt", file("k"));
    const tracker = new WorkspaceTracker(dir, store);
    let tree = commitCapture(session, await tracker.baseline(session.tree));
    put(dir, ".gitignore", file("build/\n"));
    put(dir, "build/out.js", file("v2"));
    put(dir, "build/other.js", file("untracked and ignored"));
    const cap = await tracker.capture(tree);
    expect(summary(cap.changes)).toEqual(["add .gitignore", "modify build/out.js"]);
    tree = commitCapture(session, cap, "test.capture");
    rmSync(join(dir, "build"), { recursive: true });
    expect(summary((await tracker.capture(tree)).changes)).toEqual(["delete build/out.js"]);
  });

  it("WS-8 an edited .gitignore takes effect at the next capture", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, ".gitignore", file("*.tmp\n"));
    put(dir, "a.tmp", file("a"));
    const tracker = new WorkspaceTracker(dir, store);
    const tree = commitCapture(session, await tracker.baseline(session.tree));
    expect(workspaceFiles(tree).has("a.tmp")).toBe(false);
    put(dir, ".gitignore", file("*.bak\n"));
    expect(summary((await tracker.capture(tree)).changes)).toEqual(["modify .gitignore", "add a.tmp"]);
  });
});

describe("WS-18 entries that vanish, appear or change kind during a scan", () => {
  it("WS-18 files and directories removed or replaced mid-scan are handled without an error; the next capture is exact", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    for (let i = 0; i < 40; i++) put(dir, `d${i % 4}/f${i}`, file(`v${i}`));
    let done = false;
    // The first file hashed pulls the rug: everything else vanishes, changes kind, or appears.
    const tracker = new WorkspaceTracker(dir, store, {
      onHash: (p) => {
        if (done) return;
        done = true;
        for (let i = 0; i < 40; i++) {
          const rel = `d${i % 4}/f${i}`;
          if (rel === p) continue;
          rmSync(join(dir, rel), { force: true, recursive: true });
          if (i % 3 === 1) mkdirSync(join(dir, rel));
          if (i % 3 === 2) symlinkSync("elsewhere", join(dir, rel));
        }
        rmSync(join(dir, "d3"), { recursive: true, force: true });
        put(dir, "appeared/late.txt", file("late"));
      },
    });
    const base = await tracker.baseline(session.tree);
    // Whatever it saw, it saw consistently: every recorded file has the bytes its record says.
    for (const c of base.changes) if (c.type !== "delete") expect(store.hasBlob(c.entry.hash)).toBe(true);
    const tree = commitCapture(session, base);
    const settled = commitCapture(session, await tracker.capture(tree), "test.capture");
    const expected = render(readDir(dir));
    const recorded = [...workspaceFiles(settled).keys()].sort();
    expect(recorded).toEqual(expected.map((l) => l.split(/ -> | /)[0]).sort());
  });

  it("WS-18 captures running while another process churns the directory never fail; once it stops, the record is exact", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    const script = `
      const fs = require("fs"), path = require("path");
      const dir = process.argv[1]; const end = Date.now() + 1500; let i = 0;
      while (Date.now() < end) {
        const p = path.join(dir, "c" + (i % 7), "e" + (i % 13));
        try {
          fs.mkdirSync(path.dirname(p), { recursive: true });
          switch (i % 5) {
            case 0: fs.writeFileSync(p, "x".repeat(i % 50)); break;
            case 1: fs.rmSync(p, { recursive: true, force: true }); break;
            case 2: fs.rmSync(p, { recursive: true, force: true }); fs.symlinkSync("../c1", p); break;
            case 3: fs.rmSync(p, { recursive: true, force: true }); fs.mkdirSync(p); fs.writeFileSync(path.join(p, "in"), "in"); break;
            case 4: fs.rmSync(path.dirname(p), { recursive: true, force: true }); break;
          }
        } catch {}
        i++;
      }`;
    const child = spawn(process.execPath, ["-e", script, dir], { stdio: "ignore" });
    const exited = new Promise<void>((r) => child.on("exit", () => r()));
    const tracker = new WorkspaceTracker(dir, store);
    let tree = commitCapture(session, await tracker.baseline(session.tree));
    let captures = 0;
    let running = true;
    void exited.then(() => {
      running = false;
    });
    while (running) {
      tree = commitCapture(session, await tracker.capture(tree), "test.capture");
      captures++;
      // A small directory's capture never needs to yield; let the child's exit be noticed.
      await new Promise((r) => setImmediate(r));
    }
    tree = commitCapture(session, await tracker.capture(tree), "test.capture");
    expect(captures).toBeGreaterThan(3);
    const recorded = [...workspaceFiles(tree).values()].map((e) => e.path).sort();
    expect(recorded).toEqual(
      render(readDir(dir))
        .map((l) => l.split(/ -> | /)[0])
        .sort(),
    );
    expect((await tracker.capture(tree)).changes).toEqual([]);
  }, 30_000);
});

describe("WS-19 what is not a workspace file", () => {
  it("WS-19 FIFOs are not recorded (and never block a scan); names a tree cannot carry are skipped as bad-name", async () => {
    const { session, store } = newSession();
    const dir = tempDir();
    put(dir, "ok.txt", file("ok"));
    execFileSync("mkfifo", [join(dir, "pipe")]);
    writeFileSync(join(dir, "line\nbreak"), "x");
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/bad-`), Buffer.from([0xff, 0xfe])]), "not utf-8");
    mkdirSync(join(dir, "ctl\u0001dir"));
    writeFileSync(join(dir, "ctl\u0001dir", "inner"), "x");
    const base = await new WorkspaceTracker(dir, store).baseline(session.tree);
    // A line break is a character XML carries (escaped in attributes): that name is recorded.
    expect(summary(base.changes)).toEqual(["add line\nbreak", "add ok.txt"]);
    expect(base.skipped.map((s) => [s.path, s.reason])).toEqual([
      ["bad-\uFFFD\uFFFD", "bad-name"],
      ["ctl\u2401dir", "bad-name"],
    ]);
    // The skipped paths can be recorded as diagnostics; the record checks out as it was.
    const tree = commitCapture(session, base);
    session.commit((d) => addSkippedDiags(d, workspaceElement(tree)?.id as never, base.skipped), { label: "test.diags" });
    const out = tempDir();
    await checkoutWorkspace(session.tree, out, store);
    expect(readFileSync(join(out, "line\nbreak"), "utf8")).toBe("x");
  });
});
