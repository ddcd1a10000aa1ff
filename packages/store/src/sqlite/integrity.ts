/**
 * The integrity check on opening a file for writing (ST-22): strata does not write into a file it
 * can see is damaged. Always (cost: a stat and 100 bytes): the header's fixed fields, a file size
 * that is a whole number of pages, and the page count SQLite sees against the file's size. On files
 * of at most {@link QUICK_CHECK_LIMIT} (the main file and its WAL): SQLite's `quick_check`, which
 * reads every page (about 1 ms per MiB with the file in the page cache). Larger files are checked
 * when read: a damaged page met by any read is a `corrupt` error, and `strata verify` checks all.
 */
import type Database from "better-sqlite3";
import { readHead, statOf } from "./inspect.ts";

/** Largest file (main file + WAL, bytes) whose pages are all checked on every open for writing. */
export const QUICK_CHECK_LIMIT = 32 * 1024 * 1024;

/**
 * What is wrong with the file at `path` (opened by `db`), or undefined when it looks whole. The
 * size checks compare several readings of a file that another process may be writing (growing
 * it, checkpointing its WAL): a finding counts only when the file did not change while it was
 * made; a file that keeps changing is left to the reads (its writer's own open checked it).
 */
export function damage(path: string, db: Database.Database): string | undefined {
  return stable(path, (sizes) => damageOnce(path, db, sizes, true));
}

/**
 * The checks of {@link damage} but SQLite's quick check: the header, the file's size and the page
 * count. `verify` runs these (it runs the quick check itself, on every file).
 */
export function shapeDamage(path: string, db: Database.Database): string | undefined {
  return stable(path, (sizes) => damageOnce(path, db, sizes, false));
}

/** One reading of the file and its WAL: their sizes, and a fingerprint that changes when either does. */
interface Reading {
  readonly size: number;
  readonly walSize: number;
  readonly fingerprint: string;
}

/**
 * Runs `check` on the sizes of one reading; a finding counts only when a reading after it matches
 * (the next attempt starts from that later reading). Whole files cost one reading: two stats.
 */
function stable(path: string, check: (sizes: Reading) => string | undefined): string | undefined {
  let before = reading(path);
  for (let attempt = 0; attempt < 5; attempt++) {
    const found = check(before);
    if (found === undefined) return undefined;
    const after = reading(path);
    if (after.fingerprint === before.fingerprint) return found;
    before = after;
  }
  return undefined;
}

/** Size and modification time of the file and its WAL. */
function reading(path: string): Reading {
  const f = statOf(path);
  const w = statOf(`${path}-wal`);
  return {
    size: Number(f?.size ?? 0),
    walSize: Number(w?.size ?? 0),
    fingerprint: `${f?.size}:${f?.mtimeMs}:${w?.size}:${w?.mtimeMs}`,
  };
}

function damageOnce(path: string, db: Database.Database, { size, walSize }: Reading, quick: boolean): string | undefined {
  const frames = walSize > 32; // a WAL header alone holds no frames
  // A store whose first commits are all still in its WAL has an empty main file: SQLite reads the WAL.
  if (size === 0 && frames) return sqliteChecks(db, size, walSize, 0, frames, quick);
  const head = readHead(path, 100);
  if (head.length < 100) return `the file is ${size} bytes, shorter than a SQLite header`;
  const raw = head.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return `its header names page size ${raw}`;
  if (![1, 2].includes(head[18] as number) || ![1, 2].includes(head[19] as number))
    return `its header names file format versions ${head[18]}/${head[19]}`;
  if (head[21] !== 64 || head[22] !== 32 || head[23] !== 32) return "its header's payload fractions are not SQLite's fixed values";
  if (size % pageSize !== 0) return `the file is ${size} bytes, not a whole number of ${pageSize}-byte pages: it was cut short or extended`;
  const headerValid = head.readUInt32BE(24) === head.readUInt32BE(92) && head.readUInt32BE(28) !== 0;
  if (!frames && headerValid && head.readUInt32BE(28) * pageSize !== size)
    return `its header says ${head.readUInt32BE(28)} pages of ${pageSize} bytes, but the file holds ${size / pageSize}: it was cut short or extended`;
  return sqliteChecks(db, size, walSize, pageSize, frames, quick);
}

/** The checks that ask SQLite: the page count (unless `pageSize` is 0: no header to compare), and `quick_check` on small files. */
function sqliteChecks(
  db: Database.Database,
  size: number,
  walSize: number,
  pageSize: number,
  frames: boolean,
  quick: boolean,
): string | undefined {
  try {
    if (pageSize > 0) {
      const pages = db.pragma("page_count", { simple: true }) as number;
      // With frames in the WAL, pages appended since the last checkpoint are only in the WAL.
      if (frames ? pages * pageSize < size : pages * pageSize !== size)
        return `SQLite counts ${pages} pages of ${pageSize} bytes, but the file holds ${size / pageSize}`;
    }
    return quick ? quickCheck(db, size + walSize) : undefined;
  } catch (e) {
    const code = String((e as { code?: unknown }).code);
    if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) return `SQLite cannot read it (${(e as Error).message})`;
    throw e;
  }
}

function quickCheck(db: Database.Database, bytes: number): string | undefined {
  if (bytes > QUICK_CHECK_LIMIT) return undefined;
  let rows: Record<string, unknown>[];
  try {
    rows = db.pragma("quick_check(8)") as Record<string, unknown>[];
  } catch (e) {
    // The check checks FTS5 tables too; one whose own records it cannot read fails it with a plain
    // error ("invalid fts5 file format …"), not a corruption code: the file is damaged all the same.
    if (String((e as { code?: unknown }).code) === "SQLITE_ERROR") return `SQLite's quick check cannot read it (${(e as Error).message})`;
    throw e;
  }
  const problems = rows
    .map((row) => String(Object.values(row)[0]))
    .flatMap((line) => line.split("\n"))
    .filter((line) => line !== "ok" && !line.startsWith("*** in database"));
  if (problems.length === 0) return undefined;
  return `SQLite's quick check found ${problems.length > 3 ? `${problems.slice(0, 3).join("; ")} and more` : problems.join("; ")}`;
}
