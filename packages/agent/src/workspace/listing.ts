/**
 * Directory listings kept between scans (WS-9; git's "untracked cache" idea). Adding, removing or
 * renaming an entry — and so replacing a file by a directory or a link — changes its directory's
 * mtime, so a directory whose `lstat` tuple is unchanged (and not racily clean, by the same rule
 * as files) still lists what it listed: the scan reuses the names and entry types instead of
 * reading the directory again. What is in the entries is still `lstat`ed one by one.
 */
import { type Dirent, readdirSync, type Stats } from "node:fs";
import { entryFor, type IndexEntry, racy, sameStat } from "./stat-index.ts";

/** An entry's type as the listing reports it; `OTHER` is anything else, or a file system that does not say (the scan `lstat`s it to find out). */
export const KIND = Object.freeze({ DIR: 0, FILE: 1, LINK: 2, OTHER: 3 } as const);
export type Kind = (typeof KIND)[keyof typeof KIND];

export interface Listing {
  readonly names: readonly string[];
  readonly kinds: Uint8Array;
  /**
   * Each entry's path from the root. Kept with the listing, the same string objects serve every
   * scan, so the lookups keyed by them do not hash a new string per entry per scan.
   */
  readonly paths: readonly string[];
}

function kindOf(e: Dirent): Kind {
  return e.isDirectory() ? KIND.DIR : e.isFile() ? KIND.FILE : e.isSymbolicLink() ? KIND.LINK : KIND.OTHER;
}

/** Reads directory `rel` at `abs` (throws as `readdirSync` does). */
export function readListing(rel: string, abs: string): Listing {
  const ents = readdirSync(abs, { withFileTypes: true });
  const kinds = new Uint8Array(ents.length);
  const names = ents.map((e, i) => {
    kinds[i] = kindOf(e);
    return e.name;
  });
  return { names, kinds, paths: names.map((n) => (rel === "" ? n : `${rel}/${n}`)) };
}

export class ListingCache {
  readonly #entries = new Map<string, { readonly stat: IndexEntry; readonly listing: Listing }>();

  /** The listing of directory `rel` at `abs`, whose `lstat` is `st`: reused when the directory is unchanged. */
  list(rel: string, abs: string, st: Stats, seenAt: number): Listing {
    const cached = this.#entries.get(rel);
    if (cached !== undefined && sameStat(cached.stat, st) && !racy(cached.stat)) return cached.listing;
    const listing = readListing(rel, abs);
    this.#entries.set(rel, { stat: entryFor(st, "", seenAt), listing });
    return listing;
  }

  /** Drops the listings of directories not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const d of this.#entries.keys()) if (!keep.has(d)) this.#entries.delete(d);
  }

  get size(): number {
    return this.#entries.size;
  }
}
