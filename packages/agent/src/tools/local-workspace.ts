/**
 * The default workspace: a directory on this machine, every path confined to it (confine.ts) and
 * every command run under the `run` supervisor (process.ts). Reads are bounded and refuse what is
 * not a regular file; writes are atomic renames of a new file created exclusively.
 */
import { lstat, mkdir, stat, unlink } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { confine, fsError, listDirectory, readConfined, realRoot, replaceFile, shown } from "./confine.ts";
import { runCommand } from "./process.ts";
import { WorkspaceError, type WorkspaceOps, type WorkspaceStat } from "./workspace-ops.ts";

/** The local directory `root` as a workspace (it must exist when a tool runs; it is checked then). */
export function localWorkspace(root: string): WorkspaceOps {
  const base = resolve(root);
  const display = async (abs: string): Promise<string> => shown(await realRoot(base), abs);
  return {
    // Read only what can be shown: a multi-gigabyte file costs `max` bytes of memory.
    read: async (path, max) => readConfined(base, await confine(base, path), path, max),

    write: async (path, content) => {
      const abs = await confine(base, path);
      if ((await stat(abs).catch(() => undefined))?.isDirectory()) throw new WorkspaceError(`${path} is a directory`);
      await mkdir(dirname(abs), { recursive: true }).catch((e: unknown) => {
        // mkdir -p meets a file where a directory should be as EEXIST (or ENOTDIR below it).
        const code = (e as NodeJS.ErrnoException).code;
        throw code === "EEXIST" || code === "ENOTDIR"
          ? new WorkspaceError(`${path} has a part that is a file, not a directory`)
          : fsError(e, path);
      });
      // The parents just made must still be inside (a link may have been swapped in meanwhile).
      const checked = await confine(base, path);
      await replaceFile(checked, content, path);
      return display(checked);
    },

    list: async (path, bounds) => {
      const abs = await confine(base, path);
      return listDirectory(abs, await display(abs), bounds.show, bounds.scan);
    },

    stat: async (path) => {
      const abs = await confine(base, path);
      let s: import("node:fs").Stats;
      try {
        s = await lstat(abs);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw fsError(e, path);
      }
      const kind: WorkspaceStat["kind"] = s.isFile() ? "file" : s.isDirectory() ? "directory" : "other";
      return { kind, size: kind === "file" ? s.size : 0 };
    },

    remove: async (path) => {
      const abs = await confine(base, path);
      if ((await lstat(abs).catch(() => undefined))?.isDirectory()) throw new WorkspaceError(`${path} is a directory`);
      await unlink(abs).catch((e: unknown) => {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw fsError(e, path);
      });
    },

    exec: async (command, options) => {
      // The root is checked first: a missing one would otherwise read as "spawn /bin/sh ENOENT".
      await realRoot(base);
      return runCommand(command, base, options);
    },
  };
}
