/**
 * What `collectGarbage` keeps (ST-36, decision 0040): the blobs reachable from what the store
 * holds, for any backend. The store knows no trees, so reachability is conservative and textual:
 * an event's payload, a snapshot's header and a reachable blob's bytes (as `refs` reads them)
 * name every blob whose hash (64 lowercase hex characters) occurs in them; a snapshot's
 * directory names its chunks and they name its pages (directory.ts). A hash that names no blob,
 * or names one by accident, only keeps more; nothing reachable is ever missed, since every blob
 * reference the engine writes is a hash in that form (EN-33) or a page in a directory.
 *
 * A backend feeds a `Reach` the roots it reads (`text`, `blob`, `directory`), then asks `next()`
 * for the blobs to read and hands each back (`read`) until nothing is left.
 */
import { decodeChunk, decodeDirectory } from "./directory.ts";

const HEX = /[0-9a-f]{64,}/g;

/** Calls `found` with every 64-character window of every run of lowercase hex in `text`. */
export function hashesIn(text: string, found: (hash: string) => void): void {
  for (const m of text.matchAll(HEX)) {
    const run = m[0];
    // A run longer than a hash (two hashes side by side, a hash after other hex) may hold one
    // anywhere: every window is a candidate.
    for (let i = 0; i + 64 <= run.length; i++) found(run.slice(i, i + 64));
  }
}

/** The default `refs`: the hashes written in the bytes as text. */
export function textRefs(bytes: Buffer): string[] {
  const out: string[] = [];
  hashesIn(bytes.toString("latin1"), (h) => void out.push(h));
  return out;
}

export class Reach {
  /** Every hash reached (some may name no blob). */
  readonly reached = new Set<string>();
  /** Reached hashes whose bytes are still to be read: as a directory chunk, or traced with `refs`. */
  #chunks: string[] = [];
  #traced: string[] = [];
  readonly #asChunk = new Set<string>();

  constructor(private readonly refs: (bytes: Buffer) => Iterable<string>) {}

  /** An event payload or snapshot header: the hashes it names are reached and traced. */
  text(text: string): void {
    hashesIn(text, (h) => this.#trace(h));
  }

  /** A blob named by reference (a payload stored as a blob): reached and traced. */
  blob(hash: string): void {
    this.#trace(hash);
  }

  /** A snapshot's stored directory: its chunks are reached and read as chunks. Throws `corrupt` when it does not decode. */
  directory(bytes: unknown, where: string): void {
    for (const [, hash] of decodeDirectory(bytes, where).chunks) {
      if (this.#asChunk.has(hash)) continue;
      this.#asChunk.add(hash);
      this.reached.add(hash);
      this.#chunks.push(hash);
    }
  }

  /** The blobs to read next (at most `max`); empty when the walk is done. */
  next(max: number): string[] {
    const out: string[] = [];
    while (out.length < max && this.#chunks.length > 0) out.push(this.#chunks.pop() as string);
    while (out.length < max && this.#traced.length > 0) out.push(this.#traced.pop() as string);
    return out;
  }

  /** The bytes of a blob `next` asked for (undefined: no such blob, nothing to follow). */
  read(hash: string, bytes: Buffer | undefined): void {
    if (bytes === undefined) return;
    if (this.#asChunk.has(hash)) {
      // A chunk names its pages as raw hashes; a chunk that does not decode is damage (`corrupt`).
      for (const page of decodeChunk(bytes, `directory chunk ${hash}`).hashes) this.#trace(page);
      // The same bytes may also be reached as a blob of another kind: traced too, to be sure.
    }
    for (const h of this.refs(bytes)) this.#trace(h);
  }

  #trace(hash: string): void {
    if (this.reached.has(hash)) return;
    this.reached.add(hash);
    this.#traced.push(hash);
  }
}
