/**
 * Reading OpenCode's files (IM-17 … IM-19): what a path is (a directory, a file, a legacy storage
 * directory, a SQLite database), directory listings and file bytes whose failures are `unreadable`
 * ImportErrors naming the path, and JSON texts whose errors are problems with the line they are on.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { ImportError, type ImportProblem, isObject } from "./foreign.ts";
import type { Source } from "./import.ts";

export type Found = { sources: Source[]; problems: ImportProblem[] };

export const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};
export const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** A directory laid out as OpenCode's legacy storage: `session/` beside `message/` or `project/`. */
export const isStorage = (dir: string): boolean =>
  isDir(join(dir, "session")) && (isDir(join(dir, "message")) || isDir(join(dir, "project")));

export function unreadable(path: string, e: unknown): ImportError {
  return new ImportError("unreadable", `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, path);
}

export function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw unreadable(dir, e);
  }
}

export function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw unreadable(path, e);
  }
}

/** True when the file starts with SQLite's header. */
export function isSqlite(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(16);
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString("latin1") === "SQLite format 3\u0000";
  } catch (e) {
    throw unreadable(path, e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * A JSON text's value; a problem when it is not JSON — with the line of the error when the text is
 * the file's (`inFile`), not a column of a database.
 */
export function parseJson(
  text: string,
  where: { file: string; line: number },
  what: string,
  problems: ImportProblem[],
  inFile = true,
): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    const line = inFile ? errorLine(text, e) : 0;
    problems.push({ ...where, line, message: `${what}: not JSON (${(e as Error).message}); kept in the source blob only` });
    return undefined;
  }
}

/** A JSON text as an object; a problem (with the line of the error) when it is not one. */
export function parseObject(
  text: string,
  where: { file: string; line: number },
  what: string,
  problems: ImportProblem[],
  inFile = true,
): Record<string, unknown> | undefined {
  const parsed = parseJson(text, where, what, problems, inFile);
  if (parsed === undefined) return undefined;
  const v = parsed.value;
  if (!isObject(v)) {
    problems.push({
      ...where,
      message: `${what}: a JSON ${Array.isArray(v) ? "array" : typeof v}, not a record; kept in the source blob only`,
    });
    return undefined;
  }
  return v;
}

/** The 1-based line of a JSON.parse error in `text` (0 when the message names no position). */
export function errorLine(text: string, e: unknown): number {
  const message = (e as Error).message;
  const m = /line (\d+)/.exec(message);
  if (m !== null) return Number(m[1]);
  // A text cut short: the error is at its end.
  if (/end of JSON input/.test(message)) return text.trimEnd().split("\n").length;
  const p = /position (\d+)/.exec(message);
  if (p === null) return 0;
  let line = 1;
  for (let i = 0; i < Number(p[1]) && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

export function newlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
}
