/**
 * The stat index (WS-9, WS-10, decision 0027): git's index idea. For each file the tracker has
 * hashed it keeps the `lstat` tuple seen just before the bytes were read — size, mtime, ctime,
 * inode, mode — with the hash and the wall-clock time of that `lstat`. A later scan trusts the
 * hash only while the tuple is unchanged AND the entry is not "racily clean": a file whose mtime
 * lies within the file system's timestamp granularity (plus the kernel's coarse-clock lag) of the
 * moment it was looked at may be written again in the same tick without its tuple changing, so
 * such an entry is hashed again until its mtime is safely in the past. (As in git, mtime alone:
 * every write moves it; what moves only ctime — chmod, rename, utimes — changes the tuple.)
 *
 * Times are milliseconds as doubles (Node's non-bigint `Stats`): about 0.25 µs of resolution
 * today, which the racy rule makes sufficient, and a quarter cheaper per `lstat` than bigints.
 *
 * The index is a cache (L1): the tree is the truth and the disk is what is compared. It may be
 * kept in a file between processes (`save`/`load`); a missing, damaged or foreign file is just an
 * empty index, and a fresh process primes it by hashing once.
 */
import { readFileSync, renameSync, rmSync, type Stats, writeFileSync } from "node:fs";
import type { FileEntry } from "./files.ts";

export interface IndexEntry {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  /** `st_mode`: file type and permission bits. */
  readonly mode: number;
  readonly hash: string;
  /** Wall-clock ms taken just before the `lstat` whose tuple this is. */
  readonly seenAt: number;
  // Bookkeeping of the scan in progress (memory only), so that one lookup by path serves both the
  // disk's side and the tree's: the scan that last found the file on disk, and the tree entry the
  // scan numbered `trackedIn` compares it with.
  seen: number;
  trackedIn: number;
  tracked: FileEntry | undefined;
}

/** Extra slack for the kernel's coarse clock, which stamps files up to a tick (≤ 10 ms) behind `Date.now()`. */
const CLOCK_SLACK_MS = 20;

/**
 * The timestamp granularity a file system evidently has, from one of its timestamps: whole seconds
 * suggest a 1–2 s file system (FAT's 2 s is the coarsest), whole 100/10 ms steps suggest those;
 * anything finer is treated as 1 ms. A fine file system's timestamp that happens to be round only
 * costs one more hash.
 */
function granularityMs(t: number): number {
  if (t % 1000 === 0) return 2000;
  if (t % 100 === 0) return 100;
  if (t % 10 === 0) return 10;
  return 1;
}

/** True when the entry's tuple cannot be trusted yet (see the module comment). */
export function racy(e: IndexEntry): boolean {
  return e.mtimeMs + granularityMs(e.mtimeMs) + CLOCK_SLACK_MS > e.seenAt;
}

/** True when `st` has the tuple recorded in `e`. */
export function sameStat(e: IndexEntry, st: Stats): boolean {
  return e.size === st.size && e.mtimeMs === st.mtimeMs && e.ctimeMs === st.ctimeMs && e.ino === st.ino && e.mode === st.mode;
}

/** An entry for bytes hashed after `st` was taken at `seenAt`. */
export function entryFor(st: Stats, hash: string, seenAt: number): IndexEntry {
  return {
    size: st.size,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
    ino: st.ino,
    mode: st.mode,
    hash,
    seenAt,
    seen: 0,
    trackedIn: 0,
    tracked: undefined,
  };
}

const FORMAT = "strata-stat-index@1";
type Row = [string, number, number, number, number, number, string, number];

function isRow(r: unknown): r is Row {
  return (
    Array.isArray(r) &&
    r.length === 8 &&
    typeof r[0] === "string" &&
    r.slice(1, 6).every((n) => typeof n === "number" && Number.isFinite(n)) &&
    typeof r[6] === "string" &&
    /^[0-9a-f]{64}$/.test(r[6]) &&
    typeof r[7] === "number"
  );
}

export class StatIndex {
  readonly #entries = new Map<string, IndexEntry>();
  #dirty = false;
  #scans = 0;

  /** A new scan number (entries marked with it were found or compared by that scan). */
  nextScan(): number {
    return ++this.#scans;
  }

  get size(): number {
    return this.#entries.size;
  }
  get(path: string): IndexEntry | undefined {
    return this.#entries.get(path);
  }
  set(path: string, e: IndexEntry): void {
    this.#entries.set(path, e);
    this.#dirty = true;
  }
  /** Drops every entry that scan `scan` did not find on disk (files gone). */
  retainSeen(scan: number): void {
    for (const [p, e] of this.#entries)
      if (e.seen !== scan) {
        this.#entries.delete(p);
        this.#dirty = true;
      }
  }
  clear(): void {
    if (this.#entries.size > 0) this.#dirty = true;
    this.#entries.clear();
  }
  get dirty(): boolean {
    return this.#dirty;
  }

  /** The index kept in `file` for workspace `root`; empty when the file is missing, damaged or for another root. */
  static load(file: string, root: string): StatIndex {
    const index = new StatIndex();
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      return index;
    }
    const d = doc as { format?: unknown; root?: unknown; entries?: unknown };
    if (d === null || typeof d !== "object" || d.format !== FORMAT || d.root !== root || !Array.isArray(d.entries)) return index;
    for (const r of d.entries) {
      if (!isRow(r)) return new StatIndex();
      const [path, size, mtimeMs, ctimeMs, ino, mode, hash, seenAt] = r;
      index.#entries.set(path, { size, mtimeMs, ctimeMs, ino, mode, hash, seenAt, seen: 0, trackedIn: 0, tracked: undefined });
    }
    return index;
  }

  /** Writes the index to `file` atomically (temp + rename); a failure leaves the old file (it is only a cache). */
  save(file: string, root: string): void {
    const entries: Row[] = [];
    for (const [p, e] of this.#entries) entries.push([p, e.size, e.mtimeMs, e.ctimeMs, e.ino, e.mode, e.hash, e.seenAt]);
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify({ format: FORMAT, root, entries }));
      renameSync(tmp, file);
      this.#dirty = false;
    } catch {
      rmSync(tmp, { force: true });
    }
  }
}
