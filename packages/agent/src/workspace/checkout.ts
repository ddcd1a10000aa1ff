/**
 * Tree → directory (WS-13 … WS-17): make a directory hold exactly what a tree's workspace records,
 * and say where a directory differs from it.
 *
 * `checkoutWorkspace` checks the whole record first (paths safe, no path below another, every
 * blob present, nothing in the way that it does not own) and only then touches the disk. Each
 * file is written to a temporary name in its directory and renamed to its path, so a reader (or a
 * crash of the process) never sees half a file: a path holds the old bytes, nothing, or the new
 * bytes. An old file at the path is unlinked just before the rename rather than replaced by it, as
 * git's checkout does: on ext4 a rename over an existing file starts writeback of the new one
 * (`auto_da_alloc`), which made the rename 70% of a checkout's time. Its mode is set exactly (the
 * umask does not apply). Nothing is ever
 * written through a symlink: a link at or above a path to be written is replaced, never followed,
 * and a link the record holds is recreated as a link whatever it points at. It removes the files
 * the record does not hold — with `from`, exactly the files `from` tracked; without, every file
 * the workspace would track (not ignored, within the cap) — never an ignored file, and removes the
 * directories it emptied. It writes only what differs: with `from`, the diff of the two records
 * (the caller has checked with `outsideChanges` that the disk is `from`); without, each file whose
 * disk copy does not already match (type, mode, size, then hash).
 *
 * Writes are not fsync'ed (as git's checkout): atomic for readers and crashes of the process, not
 * for a power loss.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  type Stats,
  statSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { resolve } from "node:path";
import type { Tree } from "@strata/dom";
import type { AsyncStore, Store } from "@strata/store";
import { errno, ioError, WorkspaceStateError } from "./errors.ts";
import { checkNoNesting, DEFAULT_MAX_FILE_BYTES, diffWorkspaces, type FileEntry, trackedFiles, workspaceCap } from "./files.ts";
import { IgnoreRules, TEMP_PREFIX } from "./ignore.ts";
import { ancestors, byPath, dirOf } from "./paths.ts";
import { readEntry, sha256Hex } from "./read.ts";
import { lstatInside, scan } from "./scan.ts";
import { StatIndex } from "./stat-index.ts";
import { WorkspaceTracker } from "./tracker.ts";

export interface CheckoutReport {
  readonly written: number;
  readonly removed: number;
  readonly unchanged: number;
}

export interface CheckoutOptions {
  /** The record the directory holds now: only the diff to it is written (WS-15). */
  readonly from?: Tree;
}

/** Temporary names: this process's tag and a counter (a random tag per file costs more than the write). */
const TEMP_TAG = `${process.pid.toString(36)}${randomBytes(3).toString("hex")}`;
let tempCount = 0;

/** Blobs are fetched in groups of about this many bytes. */
const FETCH_BYTES = 64 * 1024 * 1024;

/**
 * Paths in `dir` that differ from what `tree` records (WS-17), sorted: modified, deleted, and new
 * files the workspace would track (not ignored, within the cap). Uses `tracker`'s stat index when
 * it tracks `dir` (then only changed files are hashed); stores nothing.
 */
export async function outsideChanges(tree: Tree, dir: string, store: Store | AsyncStore, tracker?: WorkspaceTracker): Promise<string[]> {
  const target = resolve(dir);
  const sameRoot = tracker !== undefined && realOrSelf(tracker.root) === realOrSelf(target);
  const t = sameRoot
    ? tracker
    : new WorkspaceTracker(target, store, { maxFileBytes: workspaceCap(tree) ?? tracker?.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES });
  const { changes } = await t.status(tree);
  return changes.map((c) => (c.type === "delete" ? c.before.path : c.entry.path)).sort(byPath);
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** The directory to check out into, created if missing; `io` when it exists and is not a directory. */
function prepareRoot(dir: string): string {
  const abs = resolve(dir);
  try {
    mkdirSync(abs, { recursive: true });
    const real = realpathSync(abs);
    if (!statSync(real).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    return real;
  } catch (e) {
    throw ioError("preparing the checkout directory", abs, e);
  }
}

function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch (e) {
    if (errno(e) === "ENOTDIR") return undefined;
    throw ioError("examining", p, e);
  }
}

/** Whether the disk copy at `rel` (if its directories are real) already is `e`. */
function matches(root: string, rel: string, e: FileEntry): boolean {
  const st = lstatInside(root, rel);
  if (st === undefined || st === "unreadable") return false;
  const kind = e.mode === "link" ? st.isSymbolicLink() : st.isFile() && ((st.mode & 0o100) !== 0) === (e.mode === "755");
  if (!kind || st.size !== e.size) return false;
  const got = readEntry(`${root}/${rel}`, st, e.size);
  return got.kind === "bytes" && sha256Hex(got.bytes) === e.hash;
}

/**
 * Makes `dir` hold exactly `tree`'s workspace (see the module comment). Creates `dir` if missing.
 * Throws `bad-entry` for an unsafe record, `missing-blob` when the store lacks a file's bytes,
 * `path-blocked` when something it may not remove is in the way — all before writing anything —
 * and `io` when the file system refuses (then the files written so far stay written).
 */
export async function checkoutWorkspace(
  tree: Tree,
  dir: string,
  store: Store | AsyncStore,
  options: CheckoutOptions = {},
): Promise<CheckoutReport> {
  const target = trackedFiles(tree);
  checkNoNesting(target.keys());
  const root = prepareRoot(dir);
  // Files the record holds are never left-out files, whatever cap it was made with.
  let cap = workspaceCap(tree) ?? DEFAULT_MAX_FILE_BYTES;
  for (const e of target.values()) if (e.size > cap) cap = e.size;

  // What to write and what to remove.
  const writes: FileEntry[] = [];
  const removals = new Set<string>();
  let unchanged = 0;
  if (options.from !== undefined) {
    for (const c of diffWorkspaces(options.from, tree)) {
      if (c.type === "delete") removals.add(c.before.path);
      else writes.push(c.entry);
    }
    unchanged = target.size - writes.length;
  } else {
    for (const e of target.values()) {
      if (matches(root, e.path, e)) unchanged++;
      else writes.push(e);
    }
    // Everything the workspace would track that the record does not hold (ignored files are never touched).
    const rules = IgnoreRules.load(root);
    const { changes } = await scan({ root, rules, index: new StatIndex(), cap, tracked: [], pathsOnly: true });
    for (const c of changes) if (c.type === "add" && !target.has(c.entry.path)) removals.add(c.entry.path);
  }
  writes.sort((a, b) => byPath(a.path, b.path));

  // Every blob present, before anything is touched.
  const missing = new Set<string>();
  for (const h of new Set(writes.map((w) => w.hash))) if (!(await store.hasBlob(h))) missing.add(h);
  if (missing.size > 0) {
    const paths = writes.filter((w) => missing.has(w.hash)).map((w) => w.path);
    throw new WorkspaceStateError(
      "missing-blob",
      `the store has no bytes for ${paths.length} file(s) of the record (${paths.slice(0, 5).join(", ")}${paths.length > 5 ? ", …" : ""}); import the bundle with its blobs or check out from the database that recorded it`,
    );
  }
  const present = preflight(root, writes, removals);

  // The writes, in fetch groups (a file in the way of a directory, or a directory holding only
  // removed files in the way of a file, gives way); then the removals.
  const dirs = new Set<string>();
  for (let i = 0; i < writes.length; ) {
    const group: FileEntry[] = [];
    let bytes = 0;
    for (; i < writes.length && (group.length === 0 || bytes < FETCH_BYTES); i++) {
      const w = writes[i] as FileEntry;
      group.push(w);
      bytes += w.size;
    }
    const blobs = await store.getBlobs([...new Set(group.map((w) => w.hash))]);
    for (const w of group) {
      const data = blobs.get(w.hash);
      if (data === undefined)
        throw new WorkspaceStateError("missing-blob", `the store lost the bytes of ${JSON.stringify(w.path)} during the checkout`);
      writeOne(root, w, data, dirs, present.get(w.path));
    }
  }
  // An ignore file the record just wrote may cover a file that looked removable: it stays.
  const after = options.from === undefined ? IgnoreRules.load(root) : undefined;
  let removed = 0;
  const emptied = new Set<string>();
  for (const rel of [...removals].sort(byPath)) {
    if (after?.ignores(rel, false)) continue;
    if (removeFile(root, rel)) {
      removed++;
      for (const a of ancestors(rel)) emptied.add(a);
    }
  }
  // Directories the removals emptied, deepest first (a directory the record still uses is not empty).
  for (const d of [...emptied].sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(`${root}/${d}`);
    } catch {
      // not empty, or already gone: either way not ours to remove
    }
  }
  return { written: writes.length, removed, unchanged };
}

/** What the preflight found at a write's own path (absent paths are not listed). */
type Present = "file" | "dir";

/**
 * `path-blocked` unless every write can happen without removing something the checkout does not
 * own: each directory above a write must be a directory, a symlink (replaced), absent, or a file
 * being removed; the write's own path must not be a directory holding anything not being removed.
 * Returns what is at each write's path ("file" for a file or link, "dir" for a directory).
 */
function preflight(root: string, writes: readonly FileEntry[], removals: ReadonlySet<string>): Map<string, Present> {
  const present = new Map<string, Present>();
  const checked = new Set<string>();
  const blocked = (rel: string, why: string): never => {
    throw new WorkspaceStateError(
      "path-blocked",
      `cannot write ${JSON.stringify(rel)}: ${why}; move it away (or add it to the record) and try again`,
    );
  };
  for (const w of writes) {
    for (const a of ancestors(w.path)) {
      if (checked.has(a)) continue;
      checked.add(a);
      const st = lstatOrUndefined(`${root}/${a}`);
      if (st === undefined || st.isDirectory() || st.isSymbolicLink() || removals.has(a)) continue;
      blocked(w.path, `${JSON.stringify(a)} is a file the workspace does not track`);
    }
    const st = lstatOrUndefined(`${root}/${w.path}`);
    if (st?.isDirectory()) {
      const stray = firstStray(root, w.path, removals);
      if (stray !== undefined) blocked(w.path, `it is a directory holding ${JSON.stringify(stray)}`);
      present.set(w.path, "dir");
    } else if (st !== undefined) present.set(w.path, "file");
  }
  return present;
}

/** The first entry below directory `rel` that is not a file being removed (directories count only through their contents). */
function firstStray(root: string, rel: string, removals: ReadonlySet<string>): string | undefined {
  const stack = [rel];
  while (stack.length > 0) {
    const d = stack.pop() as string;
    for (const e of readdirSync(`${root}/${d}`, { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) stack.push(p);
      else if (!removals.has(p)) return p;
    }
  }
  return undefined;
}

/** Removes the file or link at `rel` if it is one and its directories are real; true if it did. */
function removeFile(root: string, rel: string): boolean {
  const st = lstatInside(root, rel);
  if (st === undefined || st === "unreadable" || st.isDirectory()) return false;
  try {
    unlinkSync(`${root}/${rel}`);
    return true;
  } catch (e) {
    if (errno(e) === "ENOENT") return false;
    throw ioError("removing", rel, e);
  }
}

/** Makes every directory above `rel` a real directory: a symlink or a (removed-or-untracked) file in the way is replaced. */
function ensureDirs(root: string, rel: string, dirs: Set<string>): void {
  for (const a of ancestors(rel)) {
    if (dirs.has(a)) continue;
    const abs = `${root}/${a}`;
    const st = lstatOrUndefined(abs);
    if (st !== undefined && !st.isDirectory()) {
      try {
        unlinkSync(abs); // a link is replaced, never followed
      } catch (e) {
        throw ioError("replacing", a, e);
      }
    }
    if (st === undefined || !st.isDirectory()) {
      try {
        mkdirSync(abs);
      } catch (e) {
        if (errno(e) !== "EEXIST") throw ioError("creating directory", a, e);
      }
    }
    dirs.add(a);
  }
}

/**
 * Writes one entry: a temp file (or link) in the same directory, renamed to the path. `present` is
 * what the preflight found there: an old file is unlinked first (see the module comment), an
 * empty directory (checked by the preflight) removed, since a rename never replaces one. A path
 * whose directories `ensureDirs` just replaced holds nothing, whatever the preflight saw.
 */
function writeOne(root: string, e: FileEntry, data: Buffer, dirs: Set<string>, present: Present | undefined): void {
  ensureDirs(root, e.path, dirs);
  const parent = dirOf(e.path);
  // Unique in this process; O_EXCL (and symlink's EEXIST) catch anyone else's file of that name.
  const tmp = `${root}/${parent === "" ? "" : `${parent}/`}${TEMP_PREFIX}${TEMP_TAG}-${(tempCount++).toString(36)}`;
  const abs = `${root}/${e.path}`;
  try {
    if (e.mode === "link") symlinkSync(data, tmp);
    else {
      const mode = e.mode === "755" ? 0o755 : 0o644;
      const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
      try {
        for (let n = 0; n < data.length; ) n += writeSync(fd, data, n, data.length - n);
        fchmodSync(fd, mode);
      } finally {
        closeSync(fd);
      }
    }
    if (present === "dir") rmSync(abs, { recursive: true, force: true });
    else if (present === "file") unlinkIfThere(abs);
    renameSync(tmp, abs);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw ioError("writing", e.path, err);
  }
}

/** Unlinks `abs`; a path already gone (or below a directory replaced meanwhile) is fine. */
function unlinkIfThere(abs: string): void {
  try {
    unlinkSync(abs);
  } catch (e) {
    const code = errno(e);
    if (code === "EISDIR" || code === "EPERM") {
      // A directory appeared since the preflight: the rename below fails with a clear error.
      return;
    }
    if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
  }
}
