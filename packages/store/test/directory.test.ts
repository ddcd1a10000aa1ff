/**
 * ST-13: the snapshot page directory format (src/directory.ts, decision 0010) on its own, with no
 * database: format 2 encodes and decodes, format 1 decodes, sparse chunks cost only their pages,
 * and bytes that are not a directory or a chunk are a clear `corrupt` error, whatever they are.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Chunk,
  decodeChunk,
  decodeDirectory,
  encodeChunk,
  encodeDirectory,
  MAX_PAGES,
  PAGES_PER_CHUNK,
  pagesOf,
} from "../src/directory.ts";
import { StoreError, sha256 } from "../src/index.ts";

const hex = (s: string) => sha256(s).toString("hex");
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/** Encodes `pages` as a store does: one chunk blob per 64 pages that hold one, then the directory. */
function encode(pages: readonly (string | null)[]): { dir: Buffer; blobs: Map<string, Buffer> } {
  const blobs = new Map<string, Buffer>();
  const chunkHashes: (string | null)[] = [];
  for (let base = 0; base < pages.length; base += PAGES_PER_CHUNK) {
    const bytes = encodeChunk(pages, base, Math.min(base + PAGES_PER_CHUNK, pages.length));
    if (bytes === undefined) chunkHashes.push(null);
    else {
      const h = sha256(bytes).toString("hex");
      blobs.set(h, bytes);
      chunkHashes.push(h);
    }
  }
  return { dir: encodeDirectory(pages.length, chunkHashes), blobs };
}

/** Decodes a directory and its chunks back into the page list. */
function decode(dir: Buffer, blobs: Map<string, Buffer>): (string | null)[] {
  const chunk = (h: string): Chunk | undefined => {
    const bytes = blobs.get(h);
    return bytes === undefined ? undefined : decodeChunk(bytes, `chunk ${h}`);
  };
  return pagesOf(decodeDirectory(dir, "the test directory"), chunk, "the test directory");
}

/** `f` throws a `corrupt` StoreError whose message matches `why`. */
function corrupt(f: () => unknown, why: RegExp): void {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, String(f)).toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe("corrupt");
  expect((error as StoreError).message).toMatch(why);
}

describe("ST-13 page directory format 2", () => {
  it("has the documented bytes: marker, page count, chunk bitmap, chunk hashes; a chunk is its page bitmap and hashes", () => {
    const [a, b] = [hex("page a"), hex("page b")];
    const pages: (string | null)[] = new Array(130).fill(null);
    pages[0] = a;
    pages[129] = b;
    const { dir, blobs } = encode(pages);
    const chunk0 = Buffer.concat([Buffer.from([0x01, 0, 0, 0, 0, 0, 0, 0]), Buffer.from(a, "hex")]);
    const chunk2 = Buffer.concat([Buffer.from([0x02, 0, 0, 0, 0, 0, 0, 0]), Buffer.from(b, "hex")]);
    expect([...blobs.values()]).toEqual([chunk0, chunk2]);
    expect(dir).toEqual(Buffer.concat([Buffer.from([0x02]), u32(130), Buffer.from([0b101]), sha256(chunk0), sha256(chunk2)]));
    expect(decode(dir, blobs)).toEqual(pages);
  });

  it("a chunk of only null pages is no blob and no hash; a sparse chunk is 8 bytes plus 32 per page it holds", () => {
    expect(encodeChunk(new Array(64).fill(null), 0, 64)).toBeUndefined();
    const pages: (string | null)[] = new Array(64).fill(null);
    pages[63] = hex("last");
    const bytes = encodeChunk(pages, 0, 64) as Buffer;
    expect(bytes.length).toBe(8 + 32);
    expect(bytes[7]).toBe(0x80);
    expect(decodeChunk(bytes, "c")).toEqual({ at: [63], hashes: [pages[63]] });
    // A directory of nothing but nulls: the header and the chunk bitmap.
    const empty = encode(new Array(4096).fill(null));
    expect(empty.blobs.size).toBe(0);
    expect(empty.dir.length).toBe(5 + 64 / 8);
    expect(decode(empty.dir, empty.blobs)).toEqual(new Array(4096).fill(null));
    expect(decode(encode([]).dir, new Map())).toEqual([]);
  });

  it("round-trips any page list, dense or sparse, of any length", () => {
    const page = fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat(50).map((n) => hex(`p${n}`)) });
    fc.assert(
      fc.property(fc.array(page, { maxLength: 700 }), (pages) => {
        const { dir, blobs } = encode(pages);
        expect(decode(dir, blobs)).toEqual(pages);
        const present = new Set(pages.map((p, i) => (p === null ? -1 : Math.floor(i / PAGES_PER_CHUNK))).filter((c) => c >= 0));
        expect(blobs.size, "one blob per distinct chunk that holds a page").toBeLessThanOrEqual(present.size);
        expect(dir.length).toBe(5 + Math.ceil(Math.ceil(pages.length / PAGES_PER_CHUNK) / 8) + 32 * present.size);
      }),
      { numRuns: 300 },
    );
  });
});

describe("ST-13 page directory format 1 (schema 1) still reads", () => {
  it("a page count, then every chunk's hash (zeros: empty); chunks of up to 64 hashes (zeros: null)", () => {
    const [a, b] = [hex("page a"), hex("page b")];
    const zero = Buffer.alloc(32);
    const chunk1 = Buffer.concat([Buffer.from(a, "hex"), ...new Array(63).fill(zero)]);
    const chunk3 = Buffer.concat([zero, Buffer.from(b, "hex")]);
    const blobs = new Map([
      [sha256(chunk1).toString("hex"), chunk1],
      [sha256(chunk3).toString("hex"), chunk3],
    ]);
    const dir = Buffer.concat([u32(130), sha256(chunk1), zero, sha256(chunk3)]);
    const expected: (string | null)[] = new Array(130).fill(null);
    expected[0] = a;
    expected[129] = b;
    expect(decode(dir, blobs)).toEqual(expected);
    expect(decodeDirectory(dir, "d")).toEqual({
      count: 130,
      chunks: [
        [0, sha256(chunk1).toString("hex")],
        [2, sha256(chunk3).toString("hex")],
      ],
    });
    expect(decodeDirectory(u32(0), "d")).toEqual({ count: 0, chunks: [] });
  });
});

describe("ST-13 damaged directories and chunks", () => {
  const good = (() => {
    const pages: (string | null)[] = new Array(200).fill(null);
    pages[3] = hex("x");
    pages[150] = hex("y");
    return encode(pages);
  })();

  it("each kind of damage is a corrupt error that says where and what", () => {
    const where = /the test directory has a damaged page directory/;
    corrupt(() => decodeDirectory("bytes", "the test directory"), /not bytes but string/);
    corrupt(() => decodeDirectory(Buffer.from([2, 0, 0]), "the test directory"), /3 bytes, too short/);
    corrupt(() => decodeDirectory(Buffer.from([7, 0, 0, 0, 0]), "the test directory"), /unknown format: first byte 0x07/);
    corrupt(() => decodeDirectory(Buffer.from([2, 0, 0, 0]), "the test directory"), where);
    corrupt(
      () => decodeDirectory(Buffer.from([2, 0xff, 0xff, 0xff, 0xff]), "the test directory"),
      /4294967295 pages, more than any tree has/,
    );
    // A page count a tree may have, but no bitmap for it: refused before the bitmap is walked.
    corrupt(
      () => decodeDirectory(Buffer.concat([Buffer.from([2]), u32(MAX_PAGES), Buffer.alloc(4)]), "the test directory"),
      /too short for the bitmap of 16777216 pages/,
    );
    corrupt(() => decodeDirectory(good.dir.subarray(0, good.dir.length - 1), "the test directory"), /for the chunks its bitmap names/);
    corrupt(() => decodeDirectory(Buffer.concat([good.dir, Buffer.alloc(1)]), "the test directory"), /for the chunks its bitmap names/);
    corrupt(() => decodeDirectory(Buffer.concat([u32(130), Buffer.alloc(32)]), "the test directory"), /length 36 for 130 pages/);
    corrupt(() => decodeChunk(Buffer.alloc(8 + 31), "chunk c"), /chunk c: it has a bad length \(39\)/);
    corrupt(() => decodeChunk(Buffer.alloc(65 * 32), "chunk c"), /bad length \(2080\)/);
    corrupt(
      () => decodeChunk(Buffer.concat([Buffer.from([3, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(32)]), "chunk c"),
      /its bitmap does not match its length/,
    );
    corrupt(
      () => decodeChunk(Buffer.concat([Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(64)]), "chunk c"),
      /its bitmap does not match/,
    );
    corrupt(() => decode(good.dir, new Map()), /names a missing page directory chunk [0-9a-f]{64}/);
  });

  it("every truncation and every extension of a directory is refused", () => {
    for (let n = 0; n < good.dir.length; n++) corrupt(() => decodeDirectory(good.dir.subarray(0, n), "d"), /damaged page directory/);
    for (let extra = 1; extra <= 40; extra++)
      corrupt(() => decodeDirectory(Buffer.concat([good.dir, Buffer.alloc(extra, 0xaa)]), "d"), /damaged page directory/);
  });

  it("arbitrary bytes decode to a directory or a chunk, or are a corrupt StoreError — never another error", () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.tuple(fc.constantFrom(0, 2), fc.uint8Array({ maxLength: 200 })).map(([b, rest]) => Uint8Array.from([b, ...rest])),
      fc.uint8Array({ minLength: 1, maxLength: 12 }).map((rest) => Uint8Array.from([2, 0, 0, 0, ...rest])),
    );
    fc.assert(
      fc.property(bytes, (raw) => {
        const b = Buffer.from(raw);
        for (const f of [() => decodeDirectory(b, "d"), () => decodeChunk(b, "c")]) {
          let result: unknown;
          try {
            result = f();
          } catch (e) {
            expect(e).toBeInstanceOf(StoreError);
            expect((e as StoreError).code).toBe("corrupt");
            continue;
          }
          expect(typeof result).toBe("object");
        }
        // A directory that decodes names only chunks within its page count, each once.
        try {
          const d = decodeDirectory(b, "d");
          expect(d.count).toBeLessThanOrEqual(MAX_PAGES);
          for (const [c] of d.chunks) expect(c * PAGES_PER_CHUNK).toBeLessThan(Math.max(d.count, 1));
          expect(new Set(d.chunks.map(([c]) => c)).size).toBe(d.chunks.length);
        } catch (e) {
          expect((e as StoreError).code).toBe("corrupt");
        }
      }),
      { numRuns: 2000 },
    );
  });
});
