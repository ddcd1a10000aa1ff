/**
 * What a workspace path may be (WS-2). Paths in `<file path>` are POSIX, relative to the
 * workspace root, with no empty, `.` or `..` segment, never absolute, never inside `.git` (at any
 * depth, in any letter case: checkout must never write a repository's hooks or config) or the
 * root's `.strata`, and made of characters XML can carry. Everything that reads a path out of a
 * tree checks it here before touching the disk, so a hostile bundle cannot write outside the
 * directory it is checked out to.
 */
import { invalidCharIndex } from "@strata/dom";

/** Longest path accepted, in UTF-16 code units (Linux PATH_MAX is 4096 bytes). */
export const MAX_PATH_LENGTH = 4096;

/** Why `path` cannot be a workspace path, or undefined when it can. */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return "the path is empty";
  if (path.length > MAX_PATH_LENGTH) return `the path is ${path.length} characters long (limit ${MAX_PATH_LENGTH})`;
  if (path.startsWith("/")) return "the path is absolute; workspace paths are relative to the workspace root";
  if (path.includes("\\")) return 'the path contains "\\"; workspace paths are POSIX and a backslash is not allowed';
  if (path.includes("\0")) return "the path contains a NUL character";
  if (invalidCharIndex(path) >= 0) return "the path contains a character XML cannot carry";
  if (path.includes("\uFFFD")) return "the path contains U+FFFD (a file name that is not valid UTF-8)";
  const segments = path.split("/");
  for (const s of segments) {
    if (s === "") return "the path has an empty segment (a doubled or trailing '/')";
    if (s === "." || s === "..") return `the path has a "${s}" segment`;
    if (s.toLowerCase() === ".git") return 'the path is inside ".git", which the workspace never holds';
  }
  if (segments[0] === ".strata") return 'the path is inside the root\'s ".strata", which the workspace never holds';
  return undefined;
}

/** True when a directory entry called `name` can be part of a workspace path. */
export function nameOk(name: string): boolean {
  return name.length > 0 && name !== "." && name !== ".." && !name.includes("\\") && !name.includes("\uFFFD") && invalidCharIndex(name) < 0;
}

/** The directory part of `path` ("" at the root). */
export function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** `dir/name`, or `name` at the root. */
export function joinRel(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** Each proper ancestor directory of `path`, shallowest first (`a/b/c` → `a`, `a/b`). */
export function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) out.push(path.slice(0, i));
  return out;
}

/** Compares paths in code-unit order: the order every change list and report uses. */
export function byPath(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
