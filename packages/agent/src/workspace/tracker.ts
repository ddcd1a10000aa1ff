/**
 * The workspace tracker (WS-5 … WS-12, decision 0027): what a directory holds, as file changes
 * against a tree, cheaply enough to run after every tool call that may write. It keeps a stat
 * index (stat-index.ts) of what it hashed; a capture re-`lstat`s the tree (scan.ts) and hashes
 * only files whose tuple changed or is racily clean, so a call that touched ten files of ten
 * thousand reads ten files. A fresh process has no index: its first capture hashes every file once
 * (or loads `indexFile`, a cache kept between processes). New bytes go to the blob store, in
 * batched transactions.
 *
 * The tree is the truth: a capture compares the disk with the tree it is given, whatever the
 * tracker saw before, so it is correct for any branch and after any restore.
 */
import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Tree } from "@strata/dom";
import { type AsyncStore, drive, isAsyncStore, type Store, value } from "@strata/store";
import { ioError } from "./errors.ts";
import { DEFAULT_MAX_FILE_BYTES, type FileChange, fileList, type SkippedFile } from "./files.ts";
import { IgnoreRules } from "./ignore.ts";
import { ListingCache } from "./listing.ts";
import { type BlobSink, type ScanStats, scan } from "./scan.ts";
import { StatIndex } from "./stat-index.ts";

export interface TrackerOptions {
  /** Files larger than this are left out with a `skipped` entry (default 16 MiB). */
  readonly maxFileBytes?: number;
  /** More ignore patterns (ignore-file lines, from the root), winning over the workspace's own files. */
  readonly extraIgnores?: readonly string[];
  /** A file to keep the stat index in between processes (a cache: ignored when missing, damaged or for another root). */
  readonly indexFile?: string;
  /** Called with the path of every file whose bytes are read and hashed (tests count them). */
  readonly onHash?: (path: string) => void;
}

export interface Capture {
  /** Sorted by path. */
  readonly changes: FileChange[];
  /** Files left out of the record: the caller writes a `<diag kind="workspace-skipped">` for each. */
  readonly skipped: readonly SkippedFile[];
  /** What the scan cost. */
  readonly stats?: ScanStats;
}

/** Blobs are written in transactions of about this many bytes. */
const BATCH_BYTES = 32 * 1024 * 1024;

/**
 * A sink that stores blobs in batches, each one transaction. Over the asynchronous port a batch is
 * written while the scan goes on (one at a time), and the sink does not ask the store which blobs
 * it has (a round trip per file): a changed file's bytes are written, which the blob table ignores
 * when it has them.
 */
class BatchedSink implements BlobSink {
  #pending: Buffer[] = [];
  #bytes = 0;
  readonly #queued = new Set<string>();
  #writing: Promise<void> = Promise.resolve();
  #failed: { error: unknown } | undefined;
  constructor(private readonly store: Store | AsyncStore) {}
  has(hash: string): boolean {
    if (this.#queued.has(hash)) return true;
    return isAsyncStore(this.store) ? false : this.store.hasBlob(hash);
  }
  put(bytes: Buffer, hash: string): void | Promise<void> {
    this.#queued.add(hash);
    this.#pending.push(bytes);
    this.#bytes += bytes.length;
    if (this.#bytes < BATCH_BYTES) return;
    if (!isAsyncStore(this.store)) return this.#write();
    // One batch in memory while another is written: the scan waits for the one before.
    const before = this.#writing;
    this.#write();
    return before;
  }
  /** Writes what is pending; answers once every batch is written (throws the first failure). */
  async flush(): Promise<void> {
    this.#write();
    await this.#writing;
    if (this.#failed !== undefined) throw this.#failed.error;
    this.#queued.clear();
  }
  #write(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    this.#bytes = 0;
    const store = this.store;
    if (!isAsyncStore(store)) {
      store.transaction(() => {
        for (const b of batch) store.putBlob(b);
      });
      this.#queued.clear();
      return;
    }
    // As steps: over a synchronous store behind the port the body must finish synchronously.
    function* write(): Generator<unknown, void, unknown> {
      for (const b of batch) yield* value(store.putBlob(b));
    }
    this.#writing = this.#writing
      .then(() => store.transaction(() => drive(write())))
      .catch((error: unknown) => {
        this.#failed ??= { error };
      });
  }
}

/** `target` relative to `root` when it lies inside it (POSIX separators), else undefined. */
function inside(root: string, target: string): string | undefined {
  const rel = relative(root, target);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

/** `path` with its directory resolved through symlinks (the file itself may not exist yet). */
function realish(path: string): string {
  const abs = resolve(path);
  try {
    return join(realpathSync(dirname(abs)), abs.slice(dirname(abs).length + 1));
  } catch {
    return abs;
  }
}

export class WorkspaceTracker {
  /** The directory as given (resolved to an absolute path). */
  readonly root: string;
  readonly maxFileBytes: number;
  readonly #store: Store | AsyncStore;
  readonly #options: TrackerOptions;
  #index: StatIndex | undefined;
  #listings = new ListingCache();
  #rules: IgnoreRules | undefined;
  #realRoot: string | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(root: string, store: Store | AsyncStore, options: TrackerOptions = {}) {
    this.root = resolve(root);
    this.#store = store;
    this.#options = options;
    const cap = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (!Number.isSafeInteger(cap) || cap < 0)
      throw new RangeError(`maxFileBytes must be a non-negative integer, got ${String(options.maxFileBytes)}`);
    this.maxFileBytes = cap;
  }

  /** Files in the stat index (0 before the first capture of this process without an index file). */
  get indexSize(): number {
    return this.#index?.size ?? 0;
  }

  /** Full scan: every file hashed and stored; the changes against `tree` (all adds when it has no workspace yet). */
  baseline(tree: Tree): Promise<Capture> {
    return this.#run(tree, { store: true, rehashAll: true });
  }

  /** What changed on disk since `tree` (see the module comment); new bytes are stored. */
  capture(tree: Tree): Promise<Capture> {
    return this.#run(tree, { store: true, rehashAll: false });
  }

  /** What differs between the disk and `tree`, storing nothing (outsideChanges uses it). */
  status(tree: Tree): Promise<Capture> {
    return this.#run(tree, { store: false, rehashAll: false });
  }

  /** Runs one scan at a time: two captures never race on the index. */
  #run(tree: Tree, how: { store: boolean; rehashAll: boolean }): Promise<Capture> {
    const next = this.#queue.then(() => this.#scan(tree, how));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #scan(tree: Tree, how: { store: boolean; rehashAll: boolean }): Promise<Capture> {
    const tracked = fileList(tree);
    const root = this.#resolveRoot();
    const index = this.#index as StatIndex;
    const sink = how.store ? new BatchedSink(this.#store) : undefined;
    const result = await scan({
      root,
      rules: this.#rules as IgnoreRules,
      index,
      cap: this.maxFileBytes,
      tracked,
      rehashAll: how.rehashAll,
      listings: this.#listings,
      ...(sink === undefined ? {} : { sink }),
      ...(this.#options.onHash === undefined ? {} : { onHash: this.#options.onHash }),
    });
    await sink?.flush();
    const file = this.#options.indexFile;
    if (file !== undefined && index.dirty) index.save(file, root);
    return result;
  }

  /** The real root directory; (re)builds the rules and loads the index the first time or after it moved. */
  #resolveRoot(): string {
    let real: string;
    try {
      real = realpathSync(this.root);
      if (!statSync(real).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    } catch (e) {
      throw ioError("opening the workspace directory", this.root, e);
    }
    if (real !== this.#realRoot || this.#rules === undefined || this.#index === undefined) {
      this.#realRoot = real;
      this.#rules = IgnoreRules.load(real, { extra: this.#options.extraIgnores ?? [], fixed: this.#fixedIgnores(real) });
      const file = this.#options.indexFile;
      this.#index = file === undefined ? new StatIndex() : StatIndex.load(file, real);
      this.#listings = new ListingCache();
    }
    return real;
  }

  /** The database (and its sidecars), its fork directories and the index file, when they lie inside the workspace. */
  #fixedIgnores(real: string): string[] {
    const out: string[] = [];
    const path = this.#store.path;
    if (path !== "" && path !== ":memory:") {
      const db = realish(path);
      for (const p of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`, join(dirname(db), "workspaces")]) {
        const rel = inside(real, p);
        if (rel !== undefined) out.push(rel);
      }
    }
    if (this.#options.indexFile !== undefined) {
      const idx = realish(this.#options.indexFile);
      for (const p of [idx, `${idx}.${process.pid}.tmp`]) {
        const rel = inside(real, p);
        if (rel !== undefined) out.push(rel);
      }
    }
    return out;
  }
}
