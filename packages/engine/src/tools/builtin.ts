/**
 * Built-in tools for the demo and for users (TL-11 … TL-16): `read_file`, `list_dir` (safe),
 * `write_file`, `edit_file`, `run` (never), `todo` (rewrites `<meta><todo>` from a full list — the
 * pattern that survives rewind, because the list is state in the tree), `submit` (completes the
 * run). Every path is confined to the workspace: `..`, absolute paths elsewhere and symlinks that
 * lead out are rejected with an error the model can read. `run` starts a shell in the workspace;
 * it is bounded (time, captured bytes) but it is not a sandbox.
 */
import { mkdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { NodeId } from "@strata/dom";
import { metaOf } from "../inputs.ts";
import type { ToolSpec } from "./registry.ts";
import { runCommand } from "./run.ts";
import { confine, fsError, listDirectory, readConfined, realRoot, replaceFile, shown, WorkspaceError } from "./workspace.ts";

export { runCommand } from "./run.ts";
export { confine, WorkspaceError } from "./workspace.ts";

export interface WorkspaceOptions {
  /** The directory every tool is confined to. */
  readonly root: string;
  /** Bytes of a file `read_file` returns before it truncates (default 256 KiB). */
  readonly maxReadBytes?: number;
  /** Bytes of a file `edit_file` reads and writes at most (default 8 MiB). */
  readonly maxEditBytes?: number;
  /** Entries `list_dir` shows (default 1,000) and reads at most (default 100,000). */
  readonly maxListEntries?: number;
  readonly maxScanEntries?: number;
  /** Bytes of output `run` keeps (head and tail; default 256 KiB). The rest is counted, not kept. */
  readonly maxCaptureBytes?: number;
  /** Default time limit of a `run` command (default 60 s). */
  readonly runTimeoutMs?: number;
}

const STATUSES = ["pending", "in_progress", "completed"] as const;

export function workspaceTools(options: WorkspaceOptions): ToolSpec[] {
  const root = resolve(options.root);
  const maxRead = options.maxReadBytes ?? 256 * 1024;
  const maxEdit = options.maxEditBytes ?? 8 * 1024 * 1024;
  const maxList = options.maxListEntries ?? 1000;
  const maxScan = options.maxScanEntries ?? 100_000;
  const maxCapture = options.maxCaptureBytes ?? 256 * 1024;
  const runTimeout = options.runTimeoutMs ?? 60_000;
  const where = async (p: string): Promise<string> => confine(root, p);
  const display = async (abs: string): Promise<string> => shown(await realRoot(root), abs);

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
      const path = args.path as string;
      // Read only what can be shown: a multi-gigabyte file costs maxRead bytes of memory.
      const { bytes, size } = await readConfined(root, await where(path), path, maxRead);
      if (bytes.subarray(0, 8192).includes(0)) return `${path} is a binary file of ${size} bytes; it is not shown`;
      const text = bytes.toString("utf8");
      return size > maxRead ? `${text}\n[… truncated: the file has ${size} bytes, ${maxRead} shown]` : text;
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
      return listDirectory(abs, await display(abs), maxList, maxScan);
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
      const path = args.path as string;
      const abs = await where(path);
      if ((await stat(abs).catch(() => undefined))?.isDirectory()) throw new WorkspaceError(`${path} is a directory`);
      await mkdir(dirname(abs), { recursive: true }).catch((e: unknown) => {
        // mkdir -p meets a file where a directory should be as EEXIST (or ENOTDIR below it).
        const code = (e as NodeJS.ErrnoException).code;
        throw code === "EEXIST" || code === "ENOTDIR"
          ? new WorkspaceError(`${path} has a part that is a file, not a directory`)
          : fsError(e, path);
      });
      // The parents just made must still be inside (a link may have been swapped in meanwhile).
      const checked = await where(path);
      await replaceFile(checked, args.content as string, path);
      return `wrote ${Buffer.byteLength(args.content as string)} bytes to ${await display(checked)}`;
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
      const path = args.path as string;
      const abs = await where(path);
      const { bytes, size } = await readConfined(root, abs, path, maxEdit + 1);
      if (size > maxEdit)
        throw new WorkspaceError(`${path} has ${size} bytes, more than edit_file handles (${maxEdit}); use run with a stream editor`);
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw new WorkspaceError(`${path} is not UTF-8 text; edit_file would corrupt it`);
      }
      const old = args.old as string;
      const replacement = args.new as string;
      const count = text.split(old).length - 1;
      if (count === 0) throw new WorkspaceError(`the text to replace was not found in ${path}`);
      if (count > 1 && args.all !== true)
        throw new WorkspaceError(`the text to replace occurs ${count} times in ${path}; give more context or set all`);
      const replaced = args.all === true ? count : 1;
      // Checked before the string is built: replacing "a" by a long text everywhere could not fit.
      const length = text.length + replaced * (replacement.length - old.length);
      if (length > maxEdit)
        throw new WorkspaceError(`the edited ${path} would have about ${length} characters, more than edit_file writes (${maxEdit})`);
      const next = args.all === true ? text.split(old).join(replacement) : text.replace(old, () => replacement);
      await replaceFile(abs, next, path);
      return `replaced ${replaced} occurrence${replaced > 1 ? "s" : ""} in ${await display(abs)}`;
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
    handler: async (args, ctx) => {
      // The root is checked first: a missing one would otherwise read as "spawn /bin/sh ENOENT".
      await realRoot(root);
      return runCommand(args.command as string, root, {
        timeoutMs: (args.timeout_ms as number | undefined) ?? runTimeout,
        maxCapture,
        signal: ctx.signal,
        output: ctx.output,
      });
    },
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
