/**
 * Which paths the workspace leaves out (WS-7, WS-8): `.gitignore` and `.strataignore` files with
 * git's semantics, read as git reads them (dir.c): one pattern a line, a UTF-8 BOM skipped, CRLF
 * accepted, `#` comments, unescaped trailing spaces trimmed, `!` negation, a trailing `/` for
 * directories only, a `/` at the start or in the middle anchoring the pattern to the file's
 * directory (otherwise it matches a name at any depth below it), `*`, `?`, `[...]` and `**` as in
 * `wildmatch`. Each file applies below its own directory; a deeper file wins over a shallower one,
 * within a file the last matching line wins, and in one directory `.strataignore` wins over
 * `.gitignore`. As in git, nothing below an ignored directory can be re-included, and ignore files
 * that are symlinks are not read. `extra` patterns (the harness's own) are read as a root-level
 * file that wins over all of them. Always left out, whatever the files say: any `.git` (any letter
 * case, at any depth), the root's `.strata`, checkout's temporary files, and the `fixed` paths given (the database file when it
 * lies inside the workspace). Global git configuration (`core.excludesFile`, `.git/info/exclude`)
 * is not read: what a session tracks must not depend on the machine it runs on.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { errno } from "./errors.ts";
import { ancestors, dirOf } from "./paths.ts";
import { wildmatch } from "./wildmatch.ts";

/** The name prefix of checkout's temporary files (checkout.ts). */
export const TEMP_PREFIX = ".strata-tmp-";

/** Ignore file names, in increasing precedence within one directory. */
export const IGNORE_FILES = [".gitignore", ".strataignore"] as const;
/** Ignore files larger than this are not read (git's own limit is 100 MiB). */
const MAX_IGNORE_FILE_BYTES = 8 * 1024 * 1024;
/** Decisions cached at most (then the cache starts over). */
const MAX_DECISIONS = 1 << 18;

interface Pattern {
  readonly bytes: Uint8Array;
  readonly negative: boolean;
  readonly mustBeDir: boolean;
  /** No slash (other than a trailing one): matched against the basename at any depth. */
  readonly noDir: boolean;
  /** `*literal`: a basename suffix test. */
  readonly endsWith: boolean;
  /** Bytes before the first wildcard character. */
  readonly prefix: number;
}

/** The patterns read in one directory, in the order they apply (lowest precedence first). */
interface Frame {
  readonly lists: readonly (readonly Pattern[])[];
  /** Byte length of the directory's path ("" → 0): a path's part below it starts after it and a "/". */
  readonly baseBytes: number;
  /** What each ignore file was when read (`stat key` or "" when absent), to notice edits. */
  readonly keys: readonly string[];
}

const enc = new TextEncoder();
const SPECIAL = new Set([0x2a, 0x3f, 0x5b, 0x5c]); // * ? [ \

function simpleLength(b: Uint8Array): number {
  for (let i = 0; i < b.length; i++) if (SPECIAL.has(b[i] as number)) return i;
  return b.length;
}

/** Removes trailing spaces not escaped by a backslash (git's trim_trailing_spaces). */
function trimTrailingSpaces(line: Uint8Array): Uint8Array {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === 0x20) {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === 0x5c) {
      i++;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else lastSpace = -1;
  }
  return lastSpace < 0 ? line : line.subarray(0, lastSpace);
}

function parsePattern(raw: Uint8Array): Pattern {
  let p = raw;
  const negative = p[0] === 0x21;
  if (negative) p = p.subarray(1);
  const mustBeDir = p.length > 0 && p[p.length - 1] === 0x2f;
  const body = mustBeDir ? p.subarray(0, p.length - 1) : p;
  const noDir = !body.includes(0x2f);
  // git measures the wildcard-free prefix and the "*literal" test on the text before it drops the
  // trailing slash; the prefix is then capped at the pattern's length.
  const prefix = Math.min(simpleLength(p), body.length);
  const endsWith = p[0] === 0x2a && simpleLength(p.subarray(1)) === p.length - 1;
  return { bytes: body, negative, mustBeDir, noDir, endsWith, prefix };
}

/** The patterns of one ignore file's bytes (git's add_patterns_from_buffer). */
export function parseIgnoreFile(data: Uint8Array): Pattern[] {
  let buf = data;
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
  const out: Pattern[] = [];
  let start = 0;
  for (let i = 0; i <= buf.length; i++) {
    if (i < buf.length && buf[i] !== 0x0a) continue;
    // A missing final newline is supplied, as git does.
    if (i === buf.length && start === buf.length) break;
    let line = buf.subarray(start, i);
    start = i + 1;
    if (line.length === 0 || line[0] === 0x23) continue;
    if (line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    const nul = line.indexOf(0);
    if (nul >= 0) line = line.subarray(0, nul);
    out.push(parsePattern(trimTrailingSpaces(line)));
  }
  return out;
}

function equalBytes(a: Uint8Array, aFrom: number, b: Uint8Array, bFrom: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[aFrom + i] !== b[bFrom + i]) return false;
  return true;
}

function matchBasename(p: Pattern, name: Uint8Array): boolean {
  const pat = p.bytes;
  if (p.prefix === pat.length) return pat.length === name.length && equalBytes(pat, 0, name, 0, pat.length);
  if (p.endsWith) return pat.length - 1 <= name.length && equalBytes(pat, 1, name, name.length - (pat.length - 1), pat.length - 1);
  return wildmatch(pat, name, false);
}

/** git's match_pathname, for a path already known to lie below the pattern's directory. */
function matchPathname(p: Pattern, name: Uint8Array): boolean {
  let pat = p.bytes;
  let prefix = p.prefix;
  if (pat[0] === 0x2f) {
    pat = pat.subarray(1);
    prefix--;
  }
  let rest = name;
  if (prefix > 0) {
    if (prefix > rest.length) return false;
    if (!equalBytes(pat, 0, rest, 0, prefix)) return false;
    pat = pat.subarray(prefix);
    rest = rest.subarray(prefix);
    if (pat.length === 0 && rest.length === 0) return true;
  }
  return wildmatch(pat, rest, true);
}

/** The decision of one frame for a path: true ignored, false re-included, undefined no pattern matched. */
function decideIn(frame: Frame, path: Uint8Array, base: Uint8Array, isDir: boolean): boolean | undefined {
  const below = frame.baseBytes === 0 ? path : path.subarray(frame.baseBytes + 1);
  for (let l = frame.lists.length - 1; l >= 0; l--) {
    const list = frame.lists[l] as readonly Pattern[];
    for (let i = list.length - 1; i >= 0; i--) {
      const p = list[i] as Pattern;
      if (p.mustBeDir && !isDir) continue;
      if (p.noDir ? matchBasename(p, base) : matchPathname(p, below)) return !p.negative;
    }
  }
  return undefined;
}

function statKey(s: { size: number; mtimeMs: number; ctimeMs: number; ino: number }): string {
  return `${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}`;
}

/** Reads an ignore file that is a regular file (never through a symlink); undefined when absent. */
function readIgnoreFile(abs: string): { key: string; data: Uint8Array } | undefined {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined; // absent, a symlink (ELOOP), unreadable: git reads no file either
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_IGNORE_FILE_BYTES) return undefined;
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    return { key: statKey(st), data: buf.subarray(0, n) };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export interface IgnoreOptions {
  /** Patterns (ignore-file lines) that apply from the root and win over every ignore file. */
  readonly extra?: readonly string[];
  /** Paths (relative to the root) always left out, with everything below them. */
  readonly fixed?: readonly string[];
}

export class IgnoreRules {
  readonly #root: string;
  readonly #extra: Frame;
  readonly #fixed: ReadonlySet<string>;
  readonly #frames = new Map<string, Frame>();
  /** Decisions already made ("path" for files, "path/" for directories), valid until any rules change. */
  #decided = new Map<string, boolean>();

  private constructor(root: string, options: IgnoreOptions) {
    this.#root = root;
    const extra = parseIgnoreFile(enc.encode((options.extra ?? []).join("\n")));
    this.#extra = { lists: [extra], baseBytes: 0, keys: [] };
    this.#fixed = new Set(options.fixed ?? []);
  }

  /**
   * The rules of the workspace at `root`. Each directory's ignore files are read the first time a
   * path below it is asked about (and, during a tracker's scan, again whenever they changed).
   */
  static load(root: string, options: IgnoreOptions = {}): IgnoreRules {
    return new IgnoreRules(root, options);
  }

  /**
   * True when `relPath` (POSIX, relative to the root; `isDir` says whether it is a directory) is
   * left out of the workspace — by a pattern, by an ignored directory above it, or always.
   */
  ignores(relPath: string, isDir: boolean): boolean {
    const path = relPath.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
    if (path === "" || path === ".") return false;
    for (const dir of ancestors(path)) if (this.ignoredEntry(dirOf(dir), dir, true)) return true;
    return this.ignoredEntry(dirOf(path), path, isDir);
  }

  /**
   * Whether entry `path` of directory `dir` is ignored, given that `dir` itself is not. Reads the
   * ignore files of `dir` and its ancestors if not yet read. (The scan's entry point.)
   */
  ignoredEntry(dir: string, path: string, isDir: boolean): boolean {
    const key = isDir ? `${path}/` : path;
    const known = this.#decided.get(key);
    if (known !== undefined) return known;
    const decided = this.#decide(dir, path, isDir);
    // Bounded: a long session's churn of temporary names must not grow it without end.
    if (this.#decided.size >= MAX_DECISIONS) this.#decided = new Map();
    this.#decided.set(key, decided);
    return decided;
  }

  #decide(dir: string, path: string, isDir: boolean): boolean {
    const name = dir === "" ? path : path.slice(dir.length + 1);
    if (name.toLowerCase() === ".git") return true;
    if (dir === "" && name === ".strata") return true;
    // A checkout's temporary files (left only by a crash mid-write) are never workspace files.
    if (name.startsWith(TEMP_PREFIX)) return true;
    if (this.#fixed.has(path)) return true;
    const bytes = enc.encode(path);
    const own = this.#frame(dir);
    const base = dir === "" ? bytes : bytes.subarray(own.baseBytes + 1);
    const fromExtra = decideIn(this.#extra, bytes, base, isDir);
    if (fromExtra !== undefined) return fromExtra;
    // Deepest directory first: the first frame with a matching pattern decides.
    for (let d: string | undefined = dir; d !== undefined; d = d === "" ? undefined : dirOf(d)) {
      const decided = decideIn(this.#frame(d), bytes, base, isDir);
      if (decided !== undefined) return decided;
    }
    return false;
  }

  /**
   * Re-reads `dir`'s ignore files if they changed since they were read; `present` says which of
   * them the directory listing holds (so absent ones cost no system call). Returns true when the
   * rules of `dir` changed (then cached decisions below it are stale).
   */
  refresh(dir: string, present: ReadonlySet<string>): boolean {
    const old = this.#frames.get(dir);
    const keys = IGNORE_FILES.map((f) => {
      if (!present.has(f)) return "";
      try {
        const st = lstatSync(join(this.#root, dir, f));
        return st.isFile() ? statKey(st) : "";
      } catch (e) {
        if (errno(e) === "ENOENT") return "";
        return "?";
      }
    });
    if (old?.keys.every((k, i) => k === keys[i] && k !== "?")) return false;
    const next = this.#read(dir);
    this.#frames.set(dir, next);
    // Changed rules may change any decision already made below `dir` (a first read cannot: the
    // rules of a directory are read before anything below it is decided).
    if (old !== undefined) this.#decided = new Map();
    return old !== undefined;
  }

  #frame(dir: string): Frame {
    let f = this.#frames.get(dir);
    if (f === undefined) {
      f = this.#read(dir);
      this.#frames.set(dir, f);
    }
    return f;
  }

  #read(dir: string): Frame {
    const lists: Pattern[][] = [];
    const keys: string[] = [];
    for (const name of IGNORE_FILES) {
      const file = readIgnoreFile(join(this.#root, dir, name));
      keys.push(file?.key ?? "");
      lists.push(file === undefined ? [] : parseIgnoreFile(file.data));
    }
    return { lists, baseBytes: enc.encode(dir).length, keys };
  }
}
