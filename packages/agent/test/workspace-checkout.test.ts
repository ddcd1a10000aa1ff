/**
 * WS-13 … WS-17: checking a record out into a directory — exact bytes and modes, symlinks
 * recreated and never written through, removals limited to what the record owns (ignored files
 * untouched), emptied directories removed, incremental writes, atomic per file, a hostile record
 * refused before anything is written — and `outsideChanges`.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { NodeSpec, Tree } from "@strata/dom";
import type { Session } from "@strata/engine";
import { afterEach, describe, expect, it } from "vitest";
import { checkoutWorkspace, ensureWorkspace, outsideChanges, WorkspaceStateError, WorkspaceTracker } from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import { commitCapture, file, link, newSession, put, readDir, render } from "./workspace-kit.ts";

afterEach(cleanup);

/** A directory captured into a fresh session: the tree, its session and store. */
async function recorded(entries: Record<string, ReturnType<typeof file> | ReturnType<typeof link>>) {
  const { session, store } = newSession();
  const dir = tempDir();
  for (const [p, e] of Object.entries(entries)) put(dir, p, e);
  const tracker = new WorkspaceTracker(dir, store);
  const tree = commitCapture(session, await tracker.baseline(session.tree));
  return { session, store, dir, tracker, tree };
}

/** A tree whose workspace holds exactly `files` (as raw elements: nothing checks them on the way in). */
function rawRecord(session: Session, files: readonly Record<string, string>[]): Tree {
  session.commit(
    (d) => {
      const ws = ensureWorkspace(d);
      for (const attrs of files) d.appendChild(ws, { tag: "file", attrs } as NodeSpec);
    },
    { label: "test.raw" },
  );
  return session.tree;
}

const walkAll = (dir: string): string[] => readdirSync(dir, { recursive: true }).map(String).sort();

describe("WS-13 checkout writes the record exactly", () => {
  it("WS-13 bytes, modes (whatever the umask) and links are reproduced; nothing temporary is left", async () => {
    const { store, dir, tree } = await recorded({
      "a.txt": file("alpha"),
      "bin/x": file("#!/bin/sh\n", true),
      "deep/er/still/f": file(Buffer.from([0, 1, 2, 255])),
      "l-in": link("a.txt"),
      "l-out": link("../../../etc/passwd"),
      empty: file(""),
    });
    const old = process.umask(0o077);
    try {
      const out = tempDir();
      const report = await checkoutWorkspace(tree, out, store);
      expect(report).toEqual({ written: 6, removed: 0, unchanged: 0 });
      expect(render(readDir(out))).toEqual(render(readDir(dir)));
      expect(lstatSync(join(out, "a.txt")).mode & 0o777).toBe(0o644);
      expect(lstatSync(join(out, "bin/x")).mode & 0o777).toBe(0o755);
      expect(readlinkSync(join(out, "l-out"))).toBe("../../../etc/passwd");
      expect(walkAll(out).filter((p) => p.includes(".strata-tmp-"))).toEqual([]);
    } finally {
      process.umask(old);
    }
  });

  it("WS-13 a missing directory is created; one that is a file is an io error", async () => {
    const { store, tree } = await recorded({ a: file("a") });
    const base = tempDir();
    await checkoutWorkspace(tree, join(base, "new", "dir"), store);
    expect(readFileSync(join(base, "new", "dir", "a"), "utf8")).toBe("a");
    writeFileSync(join(base, "plain"), "");
    const err = await checkoutWorkspace(tree, join(base, "plain"), store).catch((e: unknown) => e);
    expect((err as WorkspaceStateError).code).toBe("io");
  });
});

describe("WS-14 never through a link, never over what it does not own", () => {
  it("WS-14 a symlink at or above a path to write is replaced, never followed: the outside stays untouched", async () => {
    const { store, tree } = await recorded({ "a/x": file("inside"), f: file("file") });
    const outside = tempDir();
    writeFileSync(join(outside, "x"), "outside x");
    writeFileSync(join(outside, "target"), "outside target");
    const out = tempDir();
    symlinkSync(outside, join(out, "a"));
    symlinkSync(join(outside, "target"), join(out, "f"));
    await checkoutWorkspace(tree, out, store);
    expect(readFileSync(join(outside, "x"), "utf8")).toBe("outside x");
    expect(readFileSync(join(outside, "target"), "utf8")).toBe("outside target");
    expect(lstatSync(join(out, "a")).isDirectory()).toBe(true);
    expect(readFileSync(join(out, "a/x"), "utf8")).toBe("inside");
    expect(lstatSync(join(out, "f")).isFile()).toBe(true);
  });

  it("WS-14 removals never reach through a link: a tracked file below a replaced directory is not deleted outside", async () => {
    const { session, store, dir, tracker, tree } = await recorded({ "d/keep": file("k"), other: file("o") });
    // `from` says d/keep is tracked; on disk d is now a link to an outside directory with a "keep".
    const outside = tempDir();
    writeFileSync(join(outside, "keep"), "precious");
    rmSync(join(dir, "d"), { recursive: true });
    symlinkSync(outside, join(dir, "d"));
    const next = commitCapture(session, await tracker.capture(tree), "test.capture");
    // `from` tracks d/keep, the target a link d: the removal of d/keep must not go through d.
    await checkoutWorkspace(next, dir, store, { from: tree });
    expect(readFileSync(join(outside, "keep"), "utf8")).toBe("precious");
    expect(readlinkSync(join(dir, "d"))).toBe(outside);
    await checkoutWorkspace(tree, dir, store, { from: next });
    expect(readFileSync(join(outside, "keep"), "utf8")).toBe("precious");
    expect(lstatSync(join(dir, "d")).isDirectory()).toBe(true);
    expect(readFileSync(join(dir, "d/keep"), "utf8")).toBe("k");
  });

  it("WS-14 ignored files are never removed or overwritten; directories holding them stay", async () => {
    const { store, dir, tree } = await recorded({ ".gitignore": file("*.log\ncache/\n"), "src/a": file("a") });
    const out = tempDir();
    put(out, "src/debug.log", file("mine"));
    put(out, "cache/blob", file("mine too"));
    put(out, "stray.txt", file("not ignored: removed"));
    put(out, "old/only/stray", file("removed, and its directories with it"));
    const report = await checkoutWorkspace(tree, out, store);
    expect(report.removed).toBe(2);
    expect(render(readDir(out))).toEqual(
      render(new Map([...readDir(dir), ...readDir(out)].filter(([p]) => !p.startsWith("stray") && !p.startsWith("old")))),
    );
    expect(readFileSync(join(out, "src/debug.log"), "utf8")).toBe("mine");
    expect(readFileSync(join(out, "cache/blob"), "utf8")).toBe("mine too");
    expect(existsSync(join(out, "old"))).toBe(false);
  });

  it("WS-14 a file in the way that the checkout does not own is path-blocked, before anything is written", async () => {
    const { store, tree } = await recorded({ "build/x": file("x"), y: file("y") });
    const out = tempDir();
    put(out, ".gitignore", file("build\n"));
    put(out, "build", file("an ignored file where the record needs a directory"));
    const err = await checkoutWorkspace(tree, out, store).catch((e: unknown) => e);
    expect((err as WorkspaceStateError).code).toBe("path-blocked");
    expect((err as Error).message).toContain('"build"');
    expect(existsSync(join(out, "y"))).toBe(false);
  });

  it("WS-14 a directory in the way of a file gives way only when all it holds is being removed", async () => {
    const { session, store, dir, tracker, tree } = await recorded({ "p/q": file("q") });
    rmSync(join(dir, "p"), { recursive: true });
    put(dir, "p", file("now a file"));
    const next = commitCapture(session, await tracker.capture(tree), "test.capture");
    // Back and forth between "p is a directory" and "p is a file".
    await checkoutWorkspace(tree, dir, store, { from: next });
    expect(readFileSync(join(dir, "p/q"), "utf8")).toBe("q");
    await checkoutWorkspace(next, dir, store, { from: tree });
    expect(readFileSync(join(dir, "p"), "utf8")).toBe("now a file");
    await checkoutWorkspace(tree, dir, store, { from: next });
    put(dir, "p/mine", file("untracked, not ignored"));
    const err = await checkoutWorkspace(next, dir, store, { from: tree }).catch((e: unknown) => e);
    expect((err as WorkspaceStateError).code).toBe("path-blocked");
    expect(readFileSync(join(dir, "p/mine"), "utf8")).toBe("untracked, not ignored");
  });
});

describe("WS-15 incremental checkout", () => {
  it("WS-15 with `from` only the diff is written; without, files already matching are left as they are", async () => {
    const { session, store, dir, tracker, tree } = await recorded(
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, file(`v${i}`)])),
    );
    put(dir, "f3", file("changed"));
    rmSync(join(dir, "f4"));
    const next = commitCapture(session, await tracker.capture(tree), "test.capture");
    const inodeOf = (p: string): number => lstatSync(join(dir, p)).ino;
    const before = inodeOf("f10");
    expect(await checkoutWorkspace(tree, dir, store, { from: next })).toEqual({ written: 2, removed: 0, unchanged: 28 });
    expect(inodeOf("f10")).toBe(before);
    expect(await checkoutWorkspace(next, dir, store)).toEqual({ written: 1, removed: 1, unchanged: 28 });
    expect(await checkoutWorkspace(next, dir, store)).toEqual({ written: 0, removed: 0, unchanged: 29 });
    chmodSync(join(dir, "f5"), 0o755);
    expect(await checkoutWorkspace(next, dir, store)).toEqual({ written: 1, removed: 0, unchanged: 28 });
    expect(lstatSync(join(dir, "f5")).mode & 0o777).toBe(0o644);
  });

  it("WS-15 directories emptied by removals are removed; directories that were empty already stay", async () => {
    const { session, store, dir, tracker, tree } = await recorded({ "a/b/c/f": file("f"), "a/g": file("g") });
    mkdirSync(join(dir, "was-empty"));
    rmSync(join(dir, "a"), { recursive: true });
    const empty = commitCapture(session, await tracker.capture(tree), "test.capture");
    await checkoutWorkspace(tree, dir, store, { from: empty });
    expect(readFileSync(join(dir, "a/b/c/f"), "utf8")).toBe("f");
    await checkoutWorkspace(empty, dir, store, { from: tree });
    expect(existsSync(join(dir, "a"))).toBe(false);
    expect(existsSync(join(dir, "was-empty"))).toBe(true);
  });
});

describe("WS-16 a record that cannot be trusted is refused before anything is written", () => {
  for (const [name, path] of [
    ["escapes the directory", "../evil"],
    ["is absolute", "/tmp/evil"],
    ["writes into .git", ".git/hooks/post-checkout"],
    ["writes into .GIT", "sub/.GIT/config"],
    ["has a dot segment", "a/./b"],
  ] as const)
    it(`WS-16 a path that ${name} is bad-entry`, async () => {
      const { session, store } = newSession();
      const hash = store.putBlob("evil");
      const tree = rawRecord(session, [
        { path: "fine", hash, mode: "644", size: "4" },
        { path, hash, mode: "755", size: "4" },
      ]);
      const out = tempDir();
      const err = await checkoutWorkspace(tree, out, store).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkspaceStateError);
      expect((err as WorkspaceStateError).code).toBe("bad-entry");
      expect(walkAll(out)).toEqual([]);
    });

  it("WS-16 a link and a file below it (which would be written through the link) is bad-entry", async () => {
    const { session, store } = newSession();
    const target = store.putBlob("/etc");
    const hash = store.putBlob("x");
    const tree = rawRecord(session, [
      { path: "l", hash: target, mode: "link", size: "4" },
      { path: "l/passwd", hash, mode: "644", size: "1" },
    ]);
    const err = await checkoutWorkspace(tree, tempDir(), store).catch((e: unknown) => e);
    expect((err as WorkspaceStateError).code).toBe("bad-entry");
  });

  it("WS-16 a blob the store lacks is missing-blob, and nothing is written", async () => {
    const { session, store } = newSession();
    const hash = store.putBlob("present");
    const tree = rawRecord(session, [
      { path: "ok", hash, mode: "644", size: "7" },
      { path: "gone", hash: "f".repeat(64), mode: "644", size: "3" },
    ]);
    const out = tempDir();
    const err = await checkoutWorkspace(tree, out, store).catch((e: unknown) => e);
    expect((err as WorkspaceStateError).code).toBe("missing-blob");
    expect((err as Error).message).toContain("gone");
    expect(walkAll(out)).toEqual([]);
  });
});

describe("WS-17 outsideChanges", () => {
  it("WS-17 lists modified, deleted and new untracked files, not ignored ones; with the tracker only changed files are hashed", async () => {
    const { store, dir, tracker, tree } = await recorded({ ".gitignore": file("*.o\n"), a: file("a"), b: file("b"), c: file("c") });
    put(dir, "a", file("edited outside"));
    rmSync(join(dir, "b"));
    put(dir, "new.txt", file("n"));
    put(dir, "x.o", file("ignored"));
    expect(await outsideChanges(tree, dir, store)).toEqual(["a", "b", "new.txt"]);
    expect(await outsideChanges(tree, dir, store, tracker)).toEqual(["a", "b", "new.txt"]);
    // Stores nothing: the edited bytes are not in the blob store.
    const { createHash } = await import("node:crypto");
    expect(store.hasBlob(createHash("sha256").update("edited outside").digest("hex"))).toBe(false);
    expect(await outsideChanges(tree, tempDir(), store)).toEqual([".gitignore", "a", "b", "c"]);
  });
});
