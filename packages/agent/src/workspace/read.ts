/**
 * Reading one workspace entry's bytes, bounded and without following links (WS-5, WS-6, WS-11).
 * A regular file is opened with O_NOFOLLOW (a file swapped for a symlink after its `lstat` is
 * never read through) and O_NONBLOCK (one swapped for a FIFO never blocks the scan), checked with
 * `fstat` to be the same file, and read in chunks up to the cap: a file that grows past the cap
 * while it is read is reported too large, so memory stays bounded by the cap whatever the disk
 * holds. A symlink's bytes are its target, read with `readlink` (never followed).
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, type Stats } from "node:fs";
import { errno } from "./errors.ts";

export type ReadOutcome =
  | { readonly kind: "bytes"; readonly bytes: Buffer }
  /** Gone between the listing and the read: not there. */
  | { readonly kind: "vanished" }
  /** Over the cap (`size` as seen). */
  | { readonly kind: "too-large"; readonly size: number }
  /** Not the kind of entry its `lstat` said any more (a file became a link or a directory …): look again. */
  | { readonly kind: "changed" }
  | { readonly kind: "unreadable"; readonly code: string };

const CHUNK = 1024 * 1024;
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** sha256 (hex) of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function failed(e: unknown): ReadOutcome {
  const code = errno(e) ?? "error";
  if (code === "ENOENT" || code === "ENOTDIR") return { kind: "vanished" };
  if (code === "ELOOP" || code === "EINVAL" || code === "EISDIR" || code === "ENXIO") return { kind: "changed" };
  return { kind: "unreadable", code };
}

/** The bytes of the entry at `abs`, which `st` (its `lstat`) says is a regular file or a symlink. */
export function readEntry(abs: string, st: Stats, cap: number): ReadOutcome {
  if (st.isSymbolicLink()) {
    try {
      const bytes = readlinkSync(abs, { encoding: "buffer" });
      return bytes.length > cap ? { kind: "too-large", size: bytes.length } : { kind: "bytes", bytes };
    } catch (e) {
      return failed(e);
    }
  }
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS);
  } catch (e) {
    return failed(e);
  }
  try {
    const now = fstatSync(fd);
    if (!now.isFile() || now.ino !== st.ino) return { kind: "changed" };
    if (now.size > cap) return { kind: "too-large", size: now.size };
    // Sized for what fstat says, grown in chunks if the file grows, never past cap + 1 bytes.
    let buf = Buffer.allocUnsafe(Math.min(cap + 1, Math.max(now.size + 1, 1)));
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (buf.length > cap) return { kind: "too-large", size: n };
        const bigger = Buffer.allocUnsafe(Math.min(cap + 1, buf.length + CHUNK));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const r = readSync(fd, buf, n, Math.min(buf.length - n, CHUNK), n);
      if (r === 0) break;
      n += r;
    }
    if (n > cap) return { kind: "too-large", size: n };
    return { kind: "bytes", bytes: n === buf.length ? buf : buf.subarray(0, n) };
  } catch (e) {
    return failed(e);
  } finally {
    closeSync(fd);
  }
}
