/**
 * Writing and reading snapshot page lists as chunk blobs plus a directory (ST-13, decision 0010),
 * for any backend that stores blobs: the format is directory.ts; this module keeps what makes it
 * cheap. A snapshot that changed a few pages writes a few chunks — a chunk equal to the one last
 * written at its position is neither checked nor hashed nor stored again — and decoded chunks
 * (immutable, content-addressed) are cached. Both caches change only through the backend's
 * undoable setters, so a rolled-back transaction takes its entries with it (ST-12).
 */
import { checkPage } from "./checks.ts";
import { type Chunk, decodeChunk, decodeDirectory, encodeChunk, encodeDirectory, PAGES_PER_CHUNK, pagesOf } from "./directory.ts";
import type { EventId } from "./types.ts";

/** Decoded directory chunks kept in memory (they are immutable; the oldest are dropped first). */
const CHUNK_CACHE = 65_536;

/** The last chunk this store wrote at one chunk position: its pages (as given) and its hash (null: all empty). */
interface WrittenChunk {
  readonly pages: readonly (string | null)[];
  readonly hash: string | null;
}

/** What the page directories need from their backend: blobs, and undoable cache changes (ST-12). */
export interface PageHost {
  putBlob(bytes: Buffer): string;
  getBlobs(hashes: readonly string[]): Map<string, Buffer>;
  /** Sets (or, with undefined, forgets) a cache entry, undoably inside a transaction. */
  set<K, V>(map: Map<K, V>, key: K, value: V | undefined): void;
  /** Adds a cache entry for an immutable fact, undoably inside a transaction. */
  remember<K, V>(map: Map<K, V>, key: K, value: V): void;
}

export class PageDirectories {
  /** Directory chunks are immutable content-addressed blobs: cache them. */
  readonly #chunks = new Map<string, Chunk>();
  /**
   * Per chunk position, the chunk last written there: a snapshot whose pages at that position did
   * not change reuses its hash without checking, hashing or storing it again (ST-13).
   */
  readonly #written = new Map<number, WrittenChunk>();

  constructor(private readonly host: PageHost) {}

  /**
   * Forgets which chunks were written (ST-36): after a collection they may be gone, so the next
   * snapshot writes every chunk it names (storing one that is there is free).
   */
  forget(): void {
    this.#written.clear();
    this.#chunks.clear();
  }

  /**
   * The chunk positions `pages` changed since the last snapshot written, with their references
   * checked (`bad-input`: a page that is not a blob hash or null). Writes nothing: call it before
   * the write's transaction, so a refused snapshot leaves no trace.
   */
  changedChunks(pages: readonly (string | null)[]): number[] {
    const chunkCount = Math.ceil(pages.length / PAGES_PER_CHUNK);
    const changed: number[] = [];
    for (let c = 0; c < chunkCount; c++) {
      const base = c * PAGES_PER_CHUNK;
      const end = Math.min(base + PAGES_PER_CHUNK, pages.length);
      const last = this.#written.get(c);
      if (last !== undefined && samePages(last.pages, pages, base, end)) continue;
      for (let i = base; i < end; i++) checkPage(pages[i], i);
      changed.push(c);
    }
    return changed;
  }

  /** Writes the changed chunks as blobs (inside the caller's transaction); returns the directory's bytes. */
  encode(pages: readonly (string | null)[], changed: readonly number[]): Buffer {
    for (const c of changed) {
      const base = c * PAGES_PER_CHUNK;
      const end = Math.min(base + PAGES_PER_CHUNK, pages.length);
      const bytes = encodeChunk(pages, base, end);
      const hash = bytes === undefined ? null : this.host.putBlob(bytes);
      this.host.set(this.#written, c, { pages: pages.slice(base, end), hash });
    }
    const chunkCount = Math.ceil(pages.length / PAGES_PER_CHUNK);
    const chunkHashes = Array.from({ length: chunkCount }, (_, c) => (this.#written.get(c) as WrittenChunk).hash);
    return encodeDirectory(pages.length, chunkHashes);
  }

  /** The page list of the stored directory `bytes` of the snapshot at `event` (format 1 or 2). */
  decode(event: EventId, bytes: unknown): (string | null)[] {
    const where = `the snapshot at event ${event}`;
    const dir = decodeDirectory(bytes, where);
    const missing = dir.chunks.map(([, h]) => h).filter((h) => !this.#chunks.has(h));
    if (missing.length > 0) {
      if (this.#chunks.size + missing.length > CHUNK_CACHE)
        for (const k of [...this.#chunks.keys()].slice(0, this.#chunks.size + missing.length - CHUNK_CACHE)) this.#chunks.delete(k);
      for (const [h, data] of this.host.getBlobs(missing))
        this.host.remember(this.#chunks, h, decodeChunk(data, `${where} uses directory chunk ${h}`));
    }
    return pagesOf(dir, (h) => this.#chunks.get(h), where);
  }
}

/** True when `pages[base, end)` are the pages `last` was written with. */
function samePages(last: readonly (string | null)[], pages: readonly (string | null)[], base: number, end: number): boolean {
  if (last.length !== end - base) return false;
  for (let i = base; i < end; i++) if (last[i - base] !== pages[i]) return false;
  return true;
}
