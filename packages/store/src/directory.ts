/**
 * The snapshot page directory's bytes (ST-13, decision 0010). Format 2: a marker byte, the page
 * count (uint32), a bitmap of the 64-page chunks that hold a page, then those chunks' blob hashes;
 * a chunk blob is a bitmap of its pages, then each present page's hash. Empty pages and chunks cost
 * nothing. Format 1 (every chunk's hash, zero = empty; chunks of 64 hashes) is still read.
 */
import { StoreError } from "./errors.ts";

export const PAGES_PER_CHUNK = 64;
const HASH_BYTES = 32;
const ZERO_HASH = Buffer.alloc(HASH_BYTES);
/** First byte of a format-2 page directory (a format-1 directory starts with a page count < 2^24). */
const DIR_V2 = 0x02;
/** A format-2 directory: marker, page count (uint32), a bitmap of the chunks present, their hashes. */
const DIR_HEAD = 5;
/** A format-2 chunk: a bitmap of its 64 pages, then the hash of each page present. */
const CHUNK_BITMAP = PAGES_PER_CHUNK / 8;
/** The pages of one directory chunk that are not null: positions within the chunk and hashes. */
export interface Chunk {
  readonly at: readonly number[];
  readonly hashes: readonly string[];
}

/** The bytes of chunk `[base, end)` of `pages`, or undefined when all its pages are empty. */
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

/** A format-2 directory of `count` pages whose chunks have these blob hashes (null: empty chunk). */
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

/** The page count and the (chunk position, chunk hash) pairs of a stored directory, format 1 or 2. */
export function decodeDirectory(dir: unknown, bad: (why: string) => never): { count: number; chunks: [number, string][] } {
  if (!Buffer.isBuffer(dir) || dir.length < 4) return bad("too short");
  const chunks: [number, string][] = [];
  let count: number;
  if (dir[0] === DIR_V2) {
    if (dir.length < DIR_HEAD) bad(`length ${dir.length}`);
    count = dir.readUInt32BE(1);
    const chunkCount = Math.ceil(count / PAGES_PER_CHUNK);
    let off = DIR_HEAD + Math.ceil(chunkCount / 8);
    for (let c = 0; c < chunkCount; c++)
      if (((dir[DIR_HEAD + (c >> 3)] as number) >> (c & 7)) & 1) {
        if (off + HASH_BYTES > dir.length) bad(`length ${dir.length} for the chunks its bitmap names`);
        chunks.push([c, dir.toString("hex", off, off + HASH_BYTES)]);
        off += HASH_BYTES;
      }
    if (off !== dir.length) bad(`length ${dir.length} for the chunks its bitmap names`);
  } else {
    count = dir.readUInt32BE(0);
    if ((dir.length - 4) % HASH_BYTES !== 0 || (dir.length - 4) / HASH_BYTES !== Math.ceil(count / PAGES_PER_CHUNK))
      bad(`length ${dir.length} for ${count} pages`);
    for (let off = 4, c = 0; off < dir.length; off += HASH_BYTES, c++)
      if (!dir.subarray(off, off + HASH_BYTES).equals(ZERO_HASH)) chunks.push([c, dir.toString("hex", off, off + HASH_BYTES)]);
  }
  return { count, chunks };
}

/** True when `pages[base, end)` are the pages `last` was written with. */
export function samePages(last: readonly (string | null)[], pages: readonly (string | null)[], base: number, end: number): boolean {
  if (last.length !== end - base) return false;
  for (let i = base; i < end; i++) if (last[i - base] !== pages[i]) return false;
  return true;
}

/** A directory chunk blob: format 2 (bitmap + hashes, 8 + 32k bytes) or format 1 (64 hashes, zero = none). */
export function decodeChunk(data: Buffer, hash: string, event: number): Chunk {
  const at: number[] = [];
  const hashes: string[] = [];
  if (data.length % HASH_BYTES === CHUNK_BITMAP) {
    let off = CHUNK_BITMAP;
    for (let j = 0; j < PAGES_PER_CHUNK; j++)
      if (((data[j >> 3] as number) >> (j & 7)) & 1) {
        if (off + HASH_BYTES > data.length) break;
        at.push(j);
        hashes.push(data.toString("hex", off, off + HASH_BYTES));
        off += HASH_BYTES;
      }
    if (off !== data.length)
      throw new StoreError(
        "corrupt",
        `the snapshot at event ${event} uses directory chunk ${hash}, whose bitmap does not match its length`,
      );
  } else if (data.length % HASH_BYTES === 0 && data.length <= PAGES_PER_CHUNK * HASH_BYTES) {
    for (let off = 0, j = 0; off < data.length; off += HASH_BYTES, j++) {
      const p = data.subarray(off, off + HASH_BYTES);
      if (p.equals(ZERO_HASH)) continue;
      at.push(j);
      hashes.push(p.toString("hex"));
    }
  } else
    throw new StoreError("corrupt", `the snapshot at event ${event} uses directory chunk ${hash}, which has a bad length (${data.length})`);
  return { at, hashes };
}
