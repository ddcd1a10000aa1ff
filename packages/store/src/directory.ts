/**
 * The snapshot page directory's bytes (ST-13, decision 0010): a persisted format, pure functions
 * over bytes (no database). A snapshot's page list is cut into chunks of 64 page references; each
 * chunk that holds a page is stored as a blob, and the directory lists those blobs.
 *
 * Format 2 (written since schema 2):
 *
 *   directory  0x02 ‖ u32 page count ‖ bitmap of the chunks that hold a page ‖ 32-byte hash per such chunk
 *   chunk      bitmap of its 64 pages (8 bytes) ‖ 32-byte hash per page present       (8 + 32k bytes)
 *
 * Format 1 (schema 1, still read):
 *
 *   directory  u32 page count ‖ 32-byte hash per chunk, every chunk (all zeros: an empty chunk)
 *   chunk      32-byte hash per page (all zeros: an empty page), at most 64              (32k bytes)
 *
 * (u32 big-endian; bitmaps little-endian within each byte: bit `i & 7` of byte `i >> 3`.) A
 * format-1 directory's first byte is 0x00 — a page count is below 2^24 (ids are 31-bit, 256 per
 * page) — and the two chunk formats differ in length modulo 32, so both decode from one blob table.
 * Decoding refuses any bytes that are not exactly one of these (a `corrupt` StoreError naming
 * where and why), before allocating anything in proportion to what the bytes claim.
 */
import { StoreError } from "./errors.ts";

export const PAGES_PER_CHUNK = 64;
/**
 * The most pages a directory holds: 2^24. Ids are 31-bit and a page holds 256 of them, so no tree
 * has more than 2^23 pages; a directory that claims more is damage, refused before anything is
 * allocated for it (and `putSnapshot` refuses longer lists, so none is ever written).
 */
export const MAX_PAGES = 2 ** 24;
const HASH_BYTES = 32;
const ZERO_HASH = Buffer.alloc(HASH_BYTES);
/** First byte of a format-2 page directory (a format-1 directory starts with a page count < 2^24). */
const DIR_V2 = 0x02;
/** First byte of a format-1 page directory. */
const DIR_V1 = 0x00;
/** A format-2 directory: marker, page count (uint32), then the bitmap of the chunks present. */
const DIR_HEAD = 5;
/** A format-2 chunk: a bitmap of its 64 pages, then the hash of each page present. */
const CHUNK_BITMAP = PAGES_PER_CHUNK / 8;

/** The pages of one directory chunk that are not null: positions within the chunk and hashes. */
export interface Chunk {
  readonly at: readonly number[];
  readonly hashes: readonly string[];
}

/** A decoded directory: the page count and the (chunk position, chunk blob hash) of every chunk that holds a page. */
export interface Directory {
  readonly count: number;
  readonly chunks: readonly (readonly [number, string])[];
}

const bit = (bytes: Buffer, offset: number, i: number): boolean => ((bytes[offset + (i >> 3)] as number) & (1 << (i & 7))) !== 0;

/** The bytes of chunk `[base, end)` of `pages` (format 2), or undefined when all its pages are null. */
export function encodeChunk(pages: readonly (string | null)[], base: number, end: number): Buffer | undefined {
  let bitmap: Buffer | undefined;
  const hashes: Buffer[] = [];
  for (let i = base; i < end; i++) {
    const p = pages[i];
    if (p === null || p === undefined) continue;
    bitmap ??= Buffer.alloc(CHUNK_BITMAP);
    const j = i - base;
    bitmap[j >> 3] = (bitmap[j >> 3] as number) | (1 << (j & 7));
    hashes.push(Buffer.from(p, "hex"));
  }
  return bitmap === undefined ? undefined : Buffer.concat([bitmap, ...hashes]);
}

/** A format-2 directory of `count` pages whose chunks have these blob hashes (null: an empty chunk, not stored). */
export function encodeDirectory(count: number, chunkHashes: readonly (string | null)[]): Buffer {
  const present = Buffer.alloc(Math.ceil(chunkHashes.length / 8));
  const hashes: Buffer[] = [];
  chunkHashes.forEach((hash, c) => {
    if (hash === null) return;
    present[c >> 3] = (present[c >> 3] as number) | (1 << (c & 7));
    hashes.push(Buffer.from(hash, "hex"));
  });
  const head = Buffer.alloc(DIR_HEAD);
  head[0] = DIR_V2;
  head.writeUInt32BE(count, 1);
  return Buffer.concat([head, present, ...hashes]);
}

/**
 * Decodes a stored directory, format 1 or 2. `where` names it in the error ("the snapshot at
 * event 12"): bytes that are not a directory are a `corrupt` StoreError.
 */
export function decodeDirectory(dir: unknown, where: string): Directory {
  const bad = (why: string): never => {
    throw new StoreError("corrupt", `${where} has a damaged page directory (${why}); run \`strata verify\``);
  };
  if (!Buffer.isBuffer(dir)) return bad(`not bytes but ${typeof dir}`);
  if (dir.length < 4) return bad(`${dir.length} bytes, too short`);
  const chunks: [number, string][] = [];
  if (dir[0] === DIR_V2) {
    if (dir.length < DIR_HEAD) bad(`length ${dir.length}`);
    const count = dir.readUInt32BE(1);
    if (count > MAX_PAGES) bad(`${count} pages, more than any tree has (${MAX_PAGES})`);
    const chunkCount = Math.ceil(count / PAGES_PER_CHUNK);
    const hashesAt = DIR_HEAD + Math.ceil(chunkCount / 8);
    // The bitmap must be there before it is read: a hostile count cannot make the walk long.
    if (hashesAt > dir.length) bad(`length ${dir.length}, too short for the bitmap of ${count} pages`);
    let off = hashesAt;
    for (let c = 0; c < chunkCount; c++)
      if (bit(dir, DIR_HEAD, c)) {
        if (off + HASH_BYTES > dir.length) bad(`length ${dir.length} for the chunks its bitmap names`);
        chunks.push([c, dir.toString("hex", off, off + HASH_BYTES)]);
        off += HASH_BYTES;
      }
    if (off !== dir.length) bad(`length ${dir.length} for the chunks its bitmap names`);
    return { count, chunks };
  }
  if (dir[0] !== DIR_V1) return bad(`unknown format: first byte 0x${(dir[0] as number).toString(16).padStart(2, "0")}`);
  const count = dir.readUInt32BE(0);
  if ((dir.length - 4) % HASH_BYTES !== 0 || (dir.length - 4) / HASH_BYTES !== Math.ceil(count / PAGES_PER_CHUNK))
    bad(`length ${dir.length} for ${count} pages`);
  for (let off = 4, c = 0; off < dir.length; off += HASH_BYTES, c++)
    if (!dir.subarray(off, off + HASH_BYTES).equals(ZERO_HASH)) chunks.push([c, dir.toString("hex", off, off + HASH_BYTES)]);
  return { count, chunks };
}

/**
 * Decodes a directory chunk blob: format 2 (bitmap + hashes, 8 + 32k bytes) or format 1 (up to 64
 * hashes, zeros for none). `where` names the chunk in the error.
 */
export function decodeChunk(data: Buffer, where: string): Chunk {
  const at: number[] = [];
  const hashes: string[] = [];
  if (data.length % HASH_BYTES === CHUNK_BITMAP) {
    let off = CHUNK_BITMAP;
    for (let j = 0; j < PAGES_PER_CHUNK; j++)
      if (bit(data, 0, j)) {
        at.push(j);
        off += HASH_BYTES;
      }
    // Exactly one hash per page the bitmap names: no fewer, no more.
    if (off !== data.length) throw new StoreError("corrupt", `${where}: its bitmap does not match its length (${data.length} bytes)`);
    // One hex conversion for the whole chunk, cut into hashes: a conversion per hash cost most of
    // a cold snapshot read (issue 14).
    const hex = data.toString("hex", CHUNK_BITMAP);
    for (let k = 0; k < at.length; k++) hashes.push(hex.slice(k * 2 * HASH_BYTES, (k + 1) * 2 * HASH_BYTES));
  } else if (data.length % HASH_BYTES === 0 && data.length <= PAGES_PER_CHUNK * HASH_BYTES) {
    for (let off = 0, j = 0; off < data.length; off += HASH_BYTES, j++) {
      const p = data.subarray(off, off + HASH_BYTES);
      if (p.equals(ZERO_HASH)) continue;
      at.push(j);
      hashes.push(p.toString("hex"));
    }
  } else throw new StoreError("corrupt", `${where}: it has a bad length (${data.length})`);
  return { at, hashes };
}

/**
 * The page list of a decoded directory, its chunks looked up by hash. A chunk that cannot be found
 * is a `corrupt` StoreError; positions past the page count are ignored (a chunk may be shared by a
 * longer list).
 */
export function pagesOf(dir: Directory, chunk: (hash: string) => Chunk | undefined, where: string): (string | null)[] {
  const pages: (string | null)[] = new Array(dir.count).fill(null);
  for (const [c, h] of dir.chunks) {
    const found = chunk(h);
    if (found === undefined) throw new StoreError("corrupt", `${where} names a missing page directory chunk ${h}; run \`strata verify\``);
    const base = c * PAGES_PER_CHUNK;
    for (let k = 0; k < found.at.length; k++) {
      const i = base + (found.at[k] as number);
      if (i < dir.count) pages[i] = found.hashes[k] as string;
    }
  }
  return pages;
}
