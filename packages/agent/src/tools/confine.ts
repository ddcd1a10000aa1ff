/**
 * Confinement to a local workspace directory (TL-12, TL-17, TL-19): the file-system primitives of
 * `localWorkspace` (local-workspace.ts). A path from the model is
 * resolved inside the root, following the symbolic links of the parts that exist; one that leaves
 * the root — by `..`, by an absolute path, or through a link — is a `WorkspaceError` the model can
 * read. What is read is checked again once it is open (the file actually opened must be a regular
 * file inside the root, the one that was checked), so a link swapped in between the check and the
 * read, a FIFO that would block forever or a device are refused, not followed. Writes go to a new
 * temporary file created exclusively (never through a link planted at its name) and are renamed
 * into place.
 *
 * A process racing the tools inside the workspace can still swap a parent directory between the
 * check and a write's rename: Node has no `openat`/`renameat`. Such a process can only have been
 * started by `run`, which is bounded, not sandboxed, and could write there itself.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { chmod, type FileHandle, lstat, open, opendir, readlink, realpath, rename, stat, unlink } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { type Listing, type ReadResult, WorkspaceError } from "./workspace-ops.ts";

const inside = (root: string, p: string): boolean => p === root || p.startsWith(root + sep);

/** The workspace root with its links resolved; a WorkspaceError when it does not exist. */
export async function realRoot(root: string): Promise<string> {
  try {
    return await realpath(root);
  } catch (e) {
    throw new WorkspaceError(`the workspace ${root} cannot be used (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** Resolves `path` inside `root`, following symlinks of existing parts; throws if it leaves it. */
export async function confine(root: string, path: string): Promise<string> {
  if (typeof path !== "string" || path === "") throw new WorkspaceError("the path is empty");
  if (path.includes("\0")) throw new WorkspaceError("the path contains a NUL character");
  const base = await realRoot(root);
  // `..` is resolved by the name, before any link: `escape/../a` is `a` of the workspace.
  const target = resolve(base, path);
  if (!inside(base, target))
    throw new WorkspaceError(`${JSON.stringify(path)} is outside the workspace; use a path relative to the workspace root`);
  // Follow the deepest existing ancestor: a symlink inside the workspace may point out of it.
  let existing = target;
  const rest: string[] = [];
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw new WorkspaceError(`${JSON.stringify(path)} goes through a symbolic link that leads nowhere or loops`);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw fsError(e, path);
      rest.unshift(existing.slice(dirname(existing).length + 1));
      existing = dirname(existing);
    }
  }
  let real: string;
  try {
    real = join(await realpath(existing), ...rest);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP")
      throw new WorkspaceError(`${JSON.stringify(path)} goes through a symbolic link that leads nowhere or loops`);
    throw fsError(e, path);
  }
  if (!inside(base, real)) throw new WorkspaceError(`${JSON.stringify(path)} leads outside the workspace through a symbolic link`);
  return real;
}

/** A file-system failure as an error the model can act on. */
export function fsError(e: unknown, path: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const what: Record<string, string> = {
    ENOENT: "does not exist",
    ENOTDIR: "has a part that is a file, not a directory",
    EISDIR: "is a directory",
    EACCES: "cannot be accessed (permission denied)",
    EPERM: "cannot be accessed (operation not permitted)",
    ELOOP: "is, or changed into, a symbolic link; use the path it points to",
    ENOSPC: "cannot be written: the disk is full",
    EROFS: "cannot be written: the file system is read-only",
    ENAMETOOLONG: "is too long a name",
  };
  const reason = code === undefined ? undefined : what[code];
  return reason === undefined ? (e as Error) : new WorkspaceError(`${path} ${reason}`);
}

/** The kind of a non-regular file, for messages. */
function kind(s: import("node:fs").Stats): string {
  if (s.isDirectory()) return "a directory";
  if (s.isFIFO()) return "a named pipe (FIFO)";
  if (s.isSocket()) return "a socket";
  if (s.isCharacterDevice() || s.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Reads at most `max` bytes of the regular file `abs` (a path `confine` returned inside `root`).
 * Refuses what is not a regular file before opening it, opens without following a link and
 * without blocking, and checks that what it opened is that same file, inside the workspace.
 */
export async function readConfined(root: string, abs: string, path: string, max: number): Promise<ReadResult> {
  const before = await stat(abs).catch((e: unknown) => {
    throw fsError(e, path);
  });
  if (!before.isFile())
    throw new WorkspaceError(`${path} is ${kind(before)}${before.isDirectory() ? "; use list_dir" : "; only regular files are read"}`);
  let fh: FileHandle;
  try {
    fh = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    throw fsError(e, path);
  }
  try {
    const now = await fh.stat();
    if (!now.isFile() || now.ino !== before.ino || now.dev !== before.dev)
      throw new WorkspaceError(`${path} changed while it was being opened; try again`);
    await checkOpened(fh, await realRoot(root), path);
    const buf = Buffer.alloc(Math.min(max, now.size));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { bytes: buf.subarray(0, got), size: now.size };
  } finally {
    await fh.close();
  }
}

/** Where the kernel says an open file is (Linux); must be inside the workspace. */
async function checkOpened(fh: FileHandle, base: string, path: string): Promise<void> {
  let where: string;
  try {
    where = await readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    return; // no /proc: the inode comparison in readConfined is the check
  }
  if (!inside(base, where.replace(/ \(deleted\)$/, "")))
    throw new WorkspaceError(`${path} changed while it was being opened and now leads outside the workspace`);
}

/**
 * Writes `content` to `abs` atomically: a new temporary file beside it, created exclusively
 * (`wx`: never through a link or file planted at its name), then renamed over `abs` (which
 * replaces a link or hard link rather than writing through it). An existing file's mode is kept.
 */
export async function replaceFile(abs: string, content: string, path: string): Promise<void> {
  const mode = (await stat(abs).catch(() => undefined))?.mode;
  const tmp = `${abs}.strata-${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fh = await open(tmp, "wx", 0o666);
    try {
      await fh.writeFile(content);
    } finally {
      await fh.close();
    }
    if (mode !== undefined) await chmod(tmp, mode & 0o7777);
    await rename(tmp, abs);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw fsError(e, path);
  }
}

/**
 * The entries of a directory, sorted, directories ending in `/`: at most `show` of them, the
 * first by name among at most `scan` read (a directory of millions costs bounded memory and
 * time). Names with control characters are shown quoted, so one entry is always one line.
 * `path` is the directory as shown to the model.
 */
export async function listDirectory(abs: string, path: string, show: number, scan: number): Promise<Listing> {
  let dir: import("node:fs").Dir;
  try {
    dir = await opendir(abs, { bufferSize: 256 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new WorkspaceError(code === "ENOTDIR" ? `${path} is not a directory` : `${path} cannot be listed (${code ?? "error"})`);
  }
  let kept: string[] = [];
  let seen = 0;
  let more = false;
  try {
    for await (const d of dir) {
      if (seen === scan) {
        more = true;
        break;
      }
      seen++;
      const name = /[\u0000-\u001f\u007f]/.test(d.name) ? JSON.stringify(d.name) : d.name;
      kept.push(d.isDirectory() ? `${name}/` : name);
      if (kept.length >= 2 * show) kept = kept.sort().slice(0, show);
    }
  } finally {
    await dir.close().catch(() => {});
  }
  return { shown: path, entries: kept.sort().slice(0, show), seen, more };
}

/** How a path is shown back to the model: relative to the workspace root. */
export function shown(base: string, abs: string): string {
  return relative(base, abs) || ".";
}
