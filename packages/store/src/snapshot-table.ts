/**
 * Snapshot page directories (ST-13, decision 0010): how a snapshot's page list is written as
 * chunk blobs plus a directory row, and read back. Format 2: chunks of 64 page hashes are blobs
 * themselves — a bitmap of the chunk's pages, then the hash of each page present — and the
 * directory is a bitmap of the chunks that hold a page, then their hashes. A snapshot that changed
 * a few pages writes a few chunks; empty pages and chunks cost nothing; a chunk equal to the one
 * last written at its position is neither checked nor hashed nor stored again.
 */
import { show } from "./checks.ts";
import { type Chunk, decodeChunk, decodeDirectory, encodeChunk, encodeDirectory, PAGES_PER_CHUNK, samePages } from "./directory.ts";
import { StoreError } from "./errors.ts";
import { isHash } from "./hash.ts";
import type { Row } from "./rows.ts";
import type { Statements } from "./statements.ts";
import type { EventId, SnapshotRecord } from "./types.ts";

/** Decoded directory chunks kept in memory (they are immutable; the oldest are dropped first). */
const CHUNK_CACHE = 65_536;

/** The last chunk this store wrote at one chunk position: its pages (as given) and its hash (null: all empty). */
interface WrittenChunk {
  readonly pages: readonly (string | null)[];
  readonly hash: string | null;
}

/** What the table needs from its store: statements, blobs, and undoable cache changes (ST-12). */
export interface SnapshotHost {
  readonly st: Statements;
  putBlob(bytes: Buffer): string;
  getBlobs(hashes: readonly string[]): Map<string, Buffer>;
  set<K, V>(map: Map<K, V>, key: K, value: V | undefined): void;
  remember<K, V>(map: Map<K, V>, key: K, value: V): void;
}

export class SnapshotTable {
  /** Directory chunks are immutable content-addressed blobs: cache them. */
  readonly #chunks = new Map<string, Chunk>();
  /**
   * Per chunk position, the chunk last written there: a snapshot whose pages at that position did
   * not change reuses its hash without checking, hashing or storing it again (ST-13).
   */
  readonly #written = new Map<number, WrittenChunk>();

  constructor(private readonly host: SnapshotHost) {}

  /** The chunk positions `pages` changed since the last snapshot written; checks their references (nothing is written). */
  changedChunks(pages: readonly (string | null)[]): number[] {
    const chunkCount = Math.ceil(pages.length / PAGES_PER_CHUNK);
    const changed: number[] = [];
    for (let c = 0; c < chunkCount; c++) {
      const base = c * PAGES_PER_CHUNK;
      const end = Math.min(base + PAGES_PER_CHUNK, pages.length);
      const last = this.#written.get(c);
      if (last !== undefined && samePages(last.pages, pages, base, end)) continue;
      for (let i = base; i < end; i++) {
        const p = pages[i];
        if (p !== null && !isHash(p))
          throw new StoreError(
            "bad-input",
            `putSnapshot: page ${i} is ${show(p)}, not a blob hash (64 lowercase hex characters returned by putBlob) or null; nothing was written`,
          );
      }
      changed.push(c);
    }
    return changed;
  }

  /** Writes the snapshot of `event` (inside the caller's transaction): the changed chunks, then the directory row. */
  write(
    event: EventId,
    segment: number,
    depth: number,
    header: string,
    pages: readonly (string | null)[],
    changed: readonly number[],
  ): void {
    for (const c of changed) {
      const base = c * PAGES_PER_CHUNK;
      const end = Math.min(base + PAGES_PER_CHUNK, pages.length);
      const bytes = encodeChunk(pages, base, end);
      const hash = bytes === undefined ? null : this.host.putBlob(bytes);
      this.host.set(this.#written, c, { pages: pages.slice(base, end), hash });
    }
    const chunkCount = Math.ceil(pages.length / PAGES_PER_CHUNK);
    const chunkHashes = Array.from({ length: chunkCount }, (_, c) => (this.#written.get(c) as WrittenChunk).hash);
    this.host.st.insertSnapshot.run(event, segment, depth, header, encodeDirectory(pages.length, chunkHashes));
  }

  /** Decodes a stored directory row, format 1 (every chunk, zero hash = empty) or 2 (only chunks with pages). */
  decode(row: Row): SnapshotRecord {
    const event = Number(row.event);
    const bad = (why: string): never => {
      throw new StoreError("corrupt", `the snapshot at event ${event} has a damaged page directory (${why}); run \`strata verify\``);
    };
    const { count, chunks } = decodeDirectory(row.pages, bad);
    const missing = chunks.map(([, h]) => h).filter((h) => !this.#chunks.has(h));
    if (missing.length > 0) {
      if (this.#chunks.size + missing.length > CHUNK_CACHE)
        for (const k of [...this.#chunks.keys()].slice(0, this.#chunks.size + missing.length - CHUNK_CACHE)) this.#chunks.delete(k);
      for (const [h, data] of this.host.getBlobs(missing)) this.host.remember(this.#chunks, h, decodeChunk(data, h, event));
    }
    const pages: (string | null)[] = new Array(count).fill(null);
    for (const [c, h] of chunks) {
      const chunk = this.#chunks.get(h);
      if (chunk === undefined)
        throw new StoreError("corrupt", `the snapshot at event ${event} names a missing page directory chunk ${h}; run \`strata verify\``);
      const base = c * PAGES_PER_CHUNK;
      for (let k = 0; k < chunk.at.length; k++) {
        const i = base + (chunk.at[k] as number);
        if (i < count) pages[i] = chunk.hashes[k] as string;
      }
    }
    return { event: event as EventId, depth: Number(row.depth), header: row.header as string, pages };
  }
}
