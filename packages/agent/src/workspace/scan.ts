/**
 * One pass over a workspace directory (WS-5 … WS-12): what the disk holds compared with what a
 * tree records, hashing only what the stat index cannot vouch for.
 *
 * The walk lists each directory (`readdir` with entry types), leaves out ignored entries before
 * any `lstat` (an ignored directory is never entered), `lstat`s the rest and never follows a
 * symlink — a link is an entry of its own, recorded with its target as its bytes. Tracked paths
 * the walk did not reach (now ignored, or below an ignored directory) are looked up one by one, so
 * a file once tracked stays tracked until it is deleted, as in git. Entries that vanish between
 * the listing and the read are simply not there; one that changes kind is looked at again.
 * Special files (FIFOs, sockets, devices) are not workspace files. Files over the cap are left
 * out and reported; so are unreadable ones and names a tree cannot carry.
 *
 * The walk runs synchronously in slices and yields to the event loop between them, so a capture
 * of a large tree does not stall timers and streams (and synchronous `lstat` is several times
 * faster than its promise form).
 */
import { lstatSync, type Stats } from "node:fs";
import { type NodeId, sanitizeText } from "@strata/dom";
import { errno, ioError } from "./errors.ts";
import { duplicate, type FileChange, type FileEntry, type SkippedFile } from "./files.ts";
import { IGNORE_FILES, type IgnoreRules } from "./ignore.ts";
import { KIND, type Kind, type Listing, type ListingCache, readListing } from "./listing.ts";
import { ancestors, byPath, nameOk } from "./paths.ts";
import { readEntry, sha256Hex } from "./read.ts";
import { entryFor, type IndexEntry, racy, type StatIndex, sameStat } from "./stat-index.ts";

/** Where the bytes of new content go (the blob store); absent for a comparison that stores nothing. */
export interface BlobSink {
  has(hash: string): boolean;
  /** A promise when the sink wants the scan to wait (a batch being written over the network). */
  put(bytes: Buffer, hash: string): void | Promise<void>;
}

export interface ScanInput {
  readonly root: string;
  readonly rules: IgnoreRules;
  readonly index: StatIndex;
  readonly cap: number;
  /** The tree's files (the truth compared against), e.g. `fileList(tree)`. */
  readonly tracked: readonly (FileEntry & { readonly id?: NodeId })[];
  readonly sink?: BlobSink;
  /** Hash every file whatever the index says (a baseline). */
  readonly rehashAll?: boolean;
  readonly onHash?: (path: string) => void;
  /** Directory listings kept between scans (the tracker's); without, every directory is read. */
  readonly listings?: ListingCache;
  /**
   * Only say which paths the workspace would track, reading no file: every file found is an add
   * with an empty hash (what a checkout without a record of the directory may remove).
   */
  readonly pathsOnly?: boolean;
}

export interface ScanStats {
  /** Entries `lstat`ed. */
  readonly statted: number;
  /** Files whose bytes were read and hashed. */
  readonly hashed: number;
  readonly bytesHashed: number;
}

export interface ScanResult {
  readonly changes: FileChange[];
  readonly skipped: SkippedFile[];
  readonly stats: ScanStats;
}

/** Entries handled between two yields to the event loop. */
const SLICE = 2048;
/** How often an entry that keeps changing kind while it is read is looked at again. */
const MAX_RELOOKS = 3;
/** Stale index entries tolerated before they are dropped. */
const RETAIN_SLACK = 1024;
const yieldNow = (): Promise<void> => new Promise((r) => setImmediate(r));

const modeOf = (st: Stats): FileEntry["mode"] => (st.isSymbolicLink() ? "link" : (st.mode & 0o100) !== 0 ? "755" : "644");

export async function scan(input: ScanInput): Promise<ScanResult> {
  const { root, rules, index, cap, tracked, sink, listings } = input;
  const seenAt = Date.now();
  const scanNo = index.nextScan();
  // The tree's side, hung on the index entries (one lookup by path serves both sides later);
  // tracked paths the index does not know yet wait in `orphans`.
  const orphans = new Map<string, FileEntry>();
  for (const e of tracked) {
    const idx = index.get(e.path);
    if (idx === undefined) {
      const twice = orphans.get(e.path) as (FileEntry & { id?: NodeId }) | undefined;
      if (twice !== undefined) throw duplicate(e.path, twice.id ?? (0 as NodeId), e.id ?? (0 as NodeId));
      orphans.set(e.path, e);
    } else {
      if (idx.trackedIn === scanNo) throw duplicate(e.path, (idx.tracked as { id?: NodeId }).id ?? (0 as NodeId), e.id ?? (0 as NodeId));
      idx.trackedIn = scanNo;
      idx.tracked = e;
    }
  }
  const trackedOf = (rel: string, idx: IndexEntry | undefined): FileEntry | undefined =>
    idx === undefined ? (orphans.size === 0 ? undefined : orphans.get(rel)) : idx.trackedIn === scanNo ? idx.tracked : undefined;
  /** How many tracked paths were found on disk (the rest are deletes, or kept). */
  let present = 0;
  /** Tracked paths reached but not present (skipped, vanished): not to be looked up again. */
  const handled = new Set<string>();
  /** Tracked paths whose state could not be read (unreadable): left as recorded. */
  const keep = new Set<string>();
  /** Directories listed (the listing cache keeps these). */
  const dirs = new Set<string>();
  const skipped: SkippedFile[] = [];
  const changes: FileChange[] = [];
  let statted = 0;
  let hashed = 0;
  let bytesHashed = 0;
  const abs = (rel: string): string => (rel === "" ? root : `${root}/${rel}`);
  const isPresent = (path: string): boolean => index.get(path)?.seen === scanNo;

  /**
   * Records `rel` (whose `lstat` is `first`, whose index entry is `idx`, which the tree records as
   * `before`) as the disk holds it, looking again (a bounded number of times) if it changes kind.
   */
  // What the sink asked the scan to wait for, awaited after the visit that asked.
  let wait: Promise<void> | undefined;
  const settle = async (): Promise<void> => {
    const w = wait;
    wait = undefined;
    if (w !== undefined) await w;
  };
  const visit = (rel: string, first: Stats, idx: IndexEntry | undefined, before: FileEntry | undefined): void => {
    let st = first;
    for (let attempt = 0; ; attempt++) {
      if (!st.isFile() && !st.isSymbolicLink()) break;
      if (st.size > cap) {
        skipped.push({ path: rel, size: st.size });
        break;
      }
      const mode = modeOf(st);
      if (input.pathsOnly) {
        changes.push({ type: "add", entry: { path: rel, hash: "", mode, size: st.size } });
        return;
      }
      let hash: string | undefined;
      if (idx !== undefined && !input.rehashAll && sameStat(idx, st) && !racy(idx)) {
        hash = idx.hash;
        // The hot path: unchanged and recorded as it is.
        if (before !== undefined && before.hash === hash && before.mode === mode && before.size === st.size) {
          idx.seen = scanNo;
          present++;
          return;
        }
      }
      let bytes: Buffer | undefined;
      let size = st.size;
      // Not vouched for by the index, or vouched for but the store lacks the bytes a new record would name.
      if (hash === undefined || (sink !== undefined && before?.hash !== hash && !sink.has(hash))) {
        const got = readEntry(abs(rel), st, cap);
        if (got.kind === "vanished") break;
        if (got.kind === "too-large") {
          skipped.push({ path: rel, size: got.size });
          break;
        }
        if (got.kind === "unreadable") {
          skipped.push({ path: rel, size: st.size, reason: "unreadable" });
          if (before !== undefined) keep.add(rel);
          break;
        }
        if (got.kind === "changed") {
          const again = attempt < MAX_RELOOKS ? lstatSync(abs(rel), { throwIfNoEntry: false }) : undefined;
          if (again === undefined) break;
          st = again;
          statted++;
          continue;
        }
        bytes = got.bytes;
        size = bytes.length;
        hash = sha256Hex(bytes);
        hashed++;
        bytesHashed += size;
        const fresh = entryFor(st, hash, seenAt);
        fresh.trackedIn = scanNo;
        fresh.tracked = before;
        index.set(rel, fresh);
        idx = fresh;
        input.onHash?.(rel);
      }
      (idx as IndexEntry).seen = scanNo;
      if (before !== undefined) present++;
      if (before !== undefined && before.hash === hash && before.mode === mode && before.size === size) return;
      if (sink !== undefined && before?.hash !== hash && !sink.has(hash)) wait = sink.put(bytes as Buffer, hash) ?? wait;
      const entry: FileEntry = { path: rel, hash, mode, size };
      changes.push(before === undefined ? { type: "add", entry } : { type: "modify", before: plain(before), entry });
      return;
    }
    if (before !== undefined) handled.add(rel);
  };

  /** The listing of directory `dir`, or undefined when it is gone (or, reported, unreadable). */
  const list = (dir: string): Listing | undefined => {
    try {
      if (listings === undefined) return readListing(dir, abs(dir));
      const st = lstatSync(abs(dir), { throwIfNoEntry: false });
      statted++;
      if (st === undefined || !st.isDirectory()) {
        if (dir === "") throw Object.assign(new Error("it is not a directory"), { code: "ENOTDIR" });
        return undefined;
      }
      dirs.add(dir);
      return listings.list(dir, abs(dir), st, seenAt);
    } catch (e) {
      if (dir === "") throw ioError("listing the workspace directory", root, e);
      const code = errno(e);
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        skipped.push({ path: dir, size: 0, reason: "unreadable" });
        // What is tracked below an unreadable directory is left as recorded.
        for (const t of tracked) if (t.path.startsWith(`${dir}/`)) keep.add(t.path);
      }
      return undefined;
    }
  };

  const stack: string[] = [""];
  let sinceYield = 0;
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    const listing = list(dir);
    if (listing === undefined) continue;
    const { names, kinds, paths } = listing;
    const ignoreFiles = new Set<string>();
    for (const n of names) if (n === IGNORE_FILES[0] || n === IGNORE_FILES[1]) ignoreFiles.add(n);
    rules.refresh(dir, ignoreFiles);
    for (let i = 0; i < names.length; i++) {
      if (++sinceYield >= SLICE) {
        sinceYield = 0;
        await yieldNow();
      }
      const name = names[i] as string;
      const kind = kinds[i] as Kind;
      const rel = paths[i] as string;
      // Directories go by the listing's type, without an lstat (a directory is not a record).
      if (kind === KIND.DIR) {
        if (rules.ignoredEntry(dir, rel, true)) continue;
        if (nameOk(name)) stack.push(rel);
        else skipped.push({ path: sanitizeText(rel), size: 0, reason: "bad-name" });
        continue;
      }
      const idx = index.get(rel);
      const before = trackedOf(rel, idx);
      // A tracked path stays tracked whatever the rules say (as in git); others go by the rules, before any lstat.
      const typed = kind !== KIND.OTHER;
      if (before === undefined && typed && rules.ignoredEntry(dir, rel, false)) continue;
      // A name a tree cannot carry (not even reachable through a string path when it is not UTF-8).
      if (!nameOk(name)) {
        if (kind !== KIND.OTHER) skipped.push({ path: sanitizeText(rel), size: 0, reason: "bad-name" });
        continue;
      }
      let st: Stats | undefined;
      try {
        st = lstatSync(abs(rel), { throwIfNoEntry: false });
      } catch {
        if (before !== undefined) keep.add(rel);
        if (before !== undefined || !rules.ignoredEntry(dir, rel, false))
          skipped.push({ path: sanitizeText(rel), size: 0, reason: "unreadable" });
        continue;
      }
      statted++;
      if (st === undefined) continue; // vanished since the listing
      const isDir = st.isDirectory();
      if (isDir || !typed || (kind === KIND.LINK) !== st.isSymbolicLink()) {
        // Replaced since the listing (or a file system that does not type its entries): decide again.
        if (isDir) {
          if (!rules.ignoredEntry(dir, rel, true)) stack.push(rel);
          continue;
        }
        if (before === undefined && rules.ignoredEntry(dir, rel, false)) continue;
      }
      visit(rel, st, idx, before);
      if (wait !== undefined) await settle();
    }
  }

  // Tracked paths the walk did not reach: below an ignored directory, or gone.
  if (present + handled.size + keep.size < tracked.length)
    for (const e of tracked) {
      if (isPresent(e.path) || handled.has(e.path) || keep.has(e.path)) continue;
      const st = lstatInside(root, e.path);
      if (st === "unreadable") keep.add(e.path);
      else if (st !== undefined) {
        statted++;
        visit(e.path, st, index.get(e.path), e);
        if (wait !== undefined) await settle();
      }
    }
  // (`keep` holds tracked paths only, so this counts exactly the deletes.)
  if (present + keep.size < tracked.length)
    for (const e of tracked) if (!isPresent(e.path) && !keep.has(e.path)) changes.push({ type: "delete", before: plain(e) });
  // Entries of files gone from the disk are only stale (a tuple never matches again); drop them now and then.
  if (index.size > present + changes.length + RETAIN_SLACK) index.retainSeen(scanNo);
  if (listings !== undefined && listings.size > dirs.size + RETAIN_SLACK) listings.retain(dirs);
  changes.sort((a, b) => byPath(a.type === "delete" ? a.before.path : a.entry.path, b.type === "delete" ? b.before.path : b.entry.path));
  skipped.sort((a, b) => byPath(a.path, b.path));
  return { changes, skipped, stats: { statted, hashed, bytesHashed } };
}

/** An entry without the element id a tree's entries carry. */
function plain(e: FileEntry): FileEntry {
  return { path: e.path, hash: e.hash, mode: e.mode, size: e.size };
}

/**
 * The `lstat` of `rel` if every directory above it is a real directory (never through a link),
 * undefined when it is not there, "unreadable" when the system refused to say.
 */
export function lstatInside(root: string, rel: string): Stats | undefined | "unreadable" {
  try {
    for (const dir of ancestors(rel)) {
      const st = lstatSync(`${root}/${dir}`, { throwIfNoEntry: false });
      if (st === undefined || !st.isDirectory()) return undefined;
    }
    return lstatSync(`${root}/${rel}`, { throwIfNoEntry: false });
  } catch (e) {
    const code = errno(e);
    return code === "ENOENT" || code === "ENOTDIR" ? undefined : "unreadable";
  }
}
