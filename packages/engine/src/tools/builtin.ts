/**
 * Built-in tools for the demo and for users (TL-11 … TL-16): `read_file`, `list_dir` (safe),
 * `write_file`, `edit_file`, `run` (never), `todo` (rewrites `<meta><todo>` from a full list — the
 * pattern that survives rewind, because the list is state in the tree), `submit` (completes the
 * run). Every path is confined to the workspace: `..`, absolute paths elsewhere and symlinks that
 * lead out are rejected with an error the model can read. `run` starts a shell in the workspace;
 * it is bounded (time, captured bytes) but it is not a sandbox.
 */
import { spawn } from "node:child_process";
import { chmod, lstat, mkdir, open, readdir, readFile, realpath, rename, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { NodeId } from "@strata/dom";
import { metaOf } from "../inputs.ts";
import type { ToolSpec } from "./registry.ts";

/** A path the model gave that cannot be used (outside the workspace, missing, a directory …). */
export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
}

export interface WorkspaceOptions {
  /** The directory every tool is confined to. */
  readonly root: string;
  /** Bytes of a file `read_file` returns before it truncates (default 256 KiB). */
  readonly maxReadBytes?: number;
  /** Bytes of output `run` keeps (head and tail; default 256 KiB). The rest is counted, not kept. */
  readonly maxCaptureBytes?: number;
  /** Default time limit of a `run` command (default 60 s). */
  readonly runTimeoutMs?: number;
}

/** Resolves `path` inside `root`, following symlinks of existing parts; throws if it leaves it. */
export async function confine(root: string, path: string): Promise<string> {
  if (typeof path !== "string" || path === "") throw new WorkspaceError("the path is empty");
  if (path.includes("\0")) throw new WorkspaceError("the path contains a NUL character");
  const realRoot = await realpath(root);
  const target = resolve(realRoot, path);
  const outside = (p: string): boolean => p !== realRoot && !p.startsWith(realRoot + sep);
  if (outside(target))
    throw new WorkspaceError(`${JSON.stringify(path)} is outside the workspace; use a path relative to the workspace root`);
  // Follow the deepest existing ancestor: a symlink inside the workspace may point out of it.
  let existing = target;
  const rest: string[] = [];
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch {
      rest.unshift(existing.slice(dirname(existing).length + 1));
      existing = dirname(existing);
    }
  }
  const real = join(await realpath(existing), ...rest);
  if (outside(real)) throw new WorkspaceError(`${JSON.stringify(path)} leads outside the workspace through a symbolic link`);
  return real;
}

function shown(root: string, abs: string): string {
  return relative(root, abs) || ".";
}

const STATUSES = ["pending", "in_progress", "completed"] as const;

/** Writes `content` to `abs` atomically (temp file + rename), keeping an existing file's mode. */
async function replaceFile(abs: string, content: string): Promise<void> {
  const mode = (await stat(abs).catch(() => undefined))?.mode;
  const tmp = `${abs}.strata-${process.pid}.tmp`;
  await writeFile(tmp, content);
  if (mode !== undefined) await chmod(tmp, mode & 0o7777);
  await rename(tmp, abs);
}

export function workspaceTools(options: WorkspaceOptions): ToolSpec[] {
  const root = resolve(options.root);
  const maxRead = options.maxReadBytes ?? 256 * 1024;
  const maxCapture = options.maxCaptureBytes ?? 256 * 1024;
  const runTimeout = options.runTimeoutMs ?? 60_000;
  const where = async (p: string): Promise<string> => confine(root, p);

  const readFileTool: ToolSpec = {
    name: "read_file",
    description: "Read a text file of the workspace. Returns its content (truncated past a size limit).",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Path relative to the workspace root" } },
      required: ["path"],
      additionalProperties: false,
    },
    replayPolicy: "safe",
    handler: async (args) => {
      const abs = await where(args.path as string);
      const info = await stat(abs).catch(() => undefined);
      if (info === undefined) throw new WorkspaceError(`${args.path} does not exist`);
      if (info.isDirectory()) throw new WorkspaceError(`${args.path} is a directory; use list_dir`);
      // Read only what can be shown: a multi-gigabyte file costs maxRead bytes of memory.
      const fh = await open(abs, "r");
      let bytes: Buffer;
      try {
        const buf = Buffer.alloc(Math.min(maxRead, info.size));
        const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
        bytes = buf.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
      if (bytes.subarray(0, 8192).includes(0)) return `${args.path} is a binary file of ${info.size} bytes; it is not shown`;
      const text = bytes.toString("utf8");
      return info.size > maxRead ? `${text}\n[… truncated: the file has ${info.size} bytes, ${maxRead} shown]` : text;
    },
  };

  const listDir: ToolSpec = {
    name: "list_dir",
    description: "List a directory of the workspace (directories end with /).",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Directory relative to the workspace root (default .)" } },
      additionalProperties: false,
    },
    replayPolicy: "safe",
    handler: async (args) => {
      const abs = await where((args.path as string | undefined) ?? ".");
      const entries = await readdir(abs, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
        throw new WorkspaceError(
          e.code === "ENOTDIR" ? `${args.path} is not a directory` : `${args.path ?? "."} cannot be listed (${e.code})`,
        );
      });
      const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      if (names.length === 0) return `${shown(root, abs)} is empty`;
      return names.length > 1000 ? `${names.slice(0, 1000).join("\n")}\n[… ${names.length - 1000} more entries]` : names.join("\n");
    },
  };

  const writeFileTool: ToolSpec = {
    name: "write_file",
    description: "Create or overwrite a text file of the workspace (parent directories are created).",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
      additionalProperties: false,
    },
    replayPolicy: "never",
    handler: async (args) => {
      const abs = await where(args.path as string);
      if ((await stat(abs).catch(() => undefined))?.isDirectory()) throw new WorkspaceError(`${args.path} is a directory`);
      await mkdir(dirname(abs), { recursive: true });
      await replaceFile(abs, args.content as string);
      return `wrote ${Buffer.byteLength(args.content as string)} bytes to ${shown(root, abs)}`;
    },
  };

  const editFile: ToolSpec = {
    name: "edit_file",
    description: "Replace an exact piece of text in a workspace file. `old` must occur exactly once unless `all` is true.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, old: { type: "string", minLength: 1 }, new: { type: "string" }, all: { type: "boolean" } },
      required: ["path", "old", "new"],
      additionalProperties: false,
    },
    replayPolicy: "never",
    handler: async (args) => {
      const abs = await where(args.path as string);
      const text = await readFile(abs, "utf8").catch(() => {
        throw new WorkspaceError(`${args.path} does not exist or is not a readable file`);
      });
      const old = args.old as string;
      const count = text.split(old).length - 1;
      if (count === 0) throw new WorkspaceError(`the text to replace was not found in ${args.path}`);
      if (count > 1 && args.all !== true)
        throw new WorkspaceError(`the text to replace occurs ${count} times in ${args.path}; give more context or set all`);
      const next = args.all === true ? text.split(old).join(args.new as string) : text.replace(old, () => args.new as string);
      await replaceFile(abs, next);
      return `replaced ${args.all === true ? count : 1} occurrence${count > 1 && args.all === true ? "s" : ""} in ${shown(root, abs)}`;
    },
  };

  const run: ToolSpec = {
    name: "run",
    description: "Run a shell command in the workspace directory. Returns the exit code and the combined output (bounded).",
    parameters: {
      type: "object",
      properties: { command: { type: "string", minLength: 1 }, timeout_ms: { type: "integer", minimum: 1, maximum: 3_600_000 } },
      required: ["command"],
      additionalProperties: false,
    },
    replayPolicy: "never",
    handler: (args, ctx) =>
      runCommand(args.command as string, root, {
        timeoutMs: (args.timeout_ms as number | undefined) ?? runTimeout,
        maxCapture,
        signal: ctx.signal,
        output: ctx.output,
      }),
  };

  const todo: ToolSpec = {
    name: "todo",
    description: "Replace the whole todo list. Send every item each time, with its status (pending, in_progress or completed).",
    parameters: {
      type: "object",
      properties: {
        items: {
          type: "array",
          maxItems: 200,
          items: {
            type: "object",
            properties: { text: { type: "string", minLength: 1, maxLength: 2000 }, status: { enum: [...STATUSES] } },
            required: ["text", "status"],
            additionalProperties: false,
          },
        },
      },
      required: ["items"],
      additionalProperties: false,
    },
    replayPolicy: "safe",
    handler: async (args, ctx) => {
      const items = args.items as { text: string; status: string }[];
      if (ctx.stage === undefined) throw new Error("the todo tool needs a session to write to (ctx.stage)");
      ctx.stage((d) => {
        const meta = metaOf(d.tree);
        const existing = meta.children.find((c) => c.tag === "todo");
        if (existing !== undefined) d.remove(existing.id as NodeId);
        d.appendChild(meta.id, { tag: "todo", children: items.map((i) => ({ tag: "item", attrs: { status: i.status }, text: i.text })) });
      });
      const n = (s: string): number => items.filter((i) => i.status === s).length;
      return `todo list updated: ${items.length} items (${n("completed")} completed, ${n("in_progress")} in progress, ${n("pending")} pending)`;
    },
  };

  const submit: ToolSpec = {
    name: "submit",
    description: "Declare the task finished, with a short summary of what was done. Ends the run.",
    parameters: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"], additionalProperties: false },
    replayPolicy: "safe",
    completesRun: true,
    handler: async (args) => `submitted: ${args.summary as string}`,
  };

  return [readFileTool, listDir, writeFileTool, editFile, run, todo, submit];
}

/**
 * Runs `command` with `sh -c` in `cwd`: output streams to `output` and is kept bounded (first and
 * last halves of `maxCapture` bytes), so a command that writes gigabytes costs bounded memory.
 * The process group is killed on abort or timeout.
 */
export function runCommand(
  command: string,
  cwd: string,
  options: { timeoutMs: number; maxCapture: number; signal: AbortSignal; output?: ((chunk: string) => void) | undefined },
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    options.signal.throwIfAborted();
    const child = spawn("/bin/sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const half = Math.floor(options.maxCapture / 2);
    let head = "";
    let tail = "";
    let total = 0;
    let timedOut = false;
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const onAbort = (): void => kill();
    options.signal.addEventListener("abort", onAbort, { once: true });
    const take = (buf: Buffer): void => {
      const s = buf.toString("utf8");
      total += buf.length;
      options.output?.(s);
      if (head.length < half) {
        const room = half - head.length;
        head += s.slice(0, room);
        if (s.length > room) tail = (tail + s.slice(room)).slice(-half);
      } else tail = (tail + s).slice(-half);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (e) => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      reject(e);
    });
    // Done when the shell exits: output still in the pipes drains for a moment, then anything it
    // left running in the background (holding the pipes open) is killed with its group.
    let finished = false;
    child.on("exit", () => {
      setTimeout(() => {
        if (finished) return;
        kill();
        child.stdout.destroy();
        child.stderr.destroy();
        child.emit("close", child.exitCode, child.signalCode);
      }, 200).unref();
    });
    child.on("close", (code, signal) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      if (options.signal.aborted) return reject(options.signal.reason ?? new DOMException("aborted", "AbortError"));
      const kept = head.length + tail.length;
      const body =
        total > kept + 16
          ? `${head}\n[… ${total - Buffer.byteLength(head) - Buffer.byteLength(tail)} bytes of output not kept …]\n${tail}`
          : head + tail;
      const status = timedOut
        ? `killed after ${options.timeoutMs} ms (time limit)`
        : code !== null
          ? `exit code ${code}`
          : `killed by ${signal}`;
      resolvePromise(`${status}\n${body}`);
    });
  });
}
