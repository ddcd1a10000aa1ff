/**
 * The built-in tools for the demo and for users (TL-11 … TL-16), one file each: `read_file`,
 * `list_dir` (safe), `write_file`, `edit_file`, `run` (never), `todo` (rewrites `<meta><todo>` from
 * a full list), `submit` (completes the run). The workspace ones act through a `WorkspaceOps`
 * (workspace-ops.ts): by default the local directory `root`, every path confined to it — `..`,
 * absolute paths elsewhere and symlinks that lead out are rejected with an error the model can
 * read. `run` starts a shell in the workspace; it is bounded (time, captured bytes) but it is not
 * a sandbox.
 */
import { createEditFileTool } from "./edit-file.ts";
import { createListDirTool } from "./list-dir.ts";
import { localWorkspace } from "./local-workspace.ts";
import { createReadFileTool } from "./read-file.ts";
import type { ToolSpec } from "./registry.ts";
import { createRunTool } from "./run.ts";
import { createSubmitTool } from "./submit.ts";
import { createTodoTool } from "./todo.ts";
import type { WorkspaceOps } from "./workspace-ops.ts";
import { createWriteFileTool } from "./write-file.ts";

export interface WorkspaceOptions {
  /** The directory every tool is confined to. */
  readonly root: string;
  /**
   * What the tools do their work through (default: `localWorkspace(root)`): a remote or sandboxed
   * workspace, or a wrapper that records each effect, without changing a tool.
   */
  readonly operations?: WorkspaceOps;
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

/** The seven built-in tools, in the order the roster records them. */
export function workspaceTools(options: WorkspaceOptions): ToolSpec[] {
  const ws = options.operations ?? localWorkspace(options.root);
  return [
    createReadFileTool(ws, options),
    createListDirTool(ws, options),
    createWriteFileTool(ws),
    createEditFileTool(ws, options),
    createRunTool(ws, options),
    createTodoTool(),
    createSubmitTool(),
  ];
}
