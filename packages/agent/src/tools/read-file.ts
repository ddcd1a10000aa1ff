/** The `read_file` tool (TL-12, TL-19): a text file of the workspace, truncated past a size limit. */
import { localWorkspace } from "./local-workspace.ts";
import type { ToolSpec } from "./registry.ts";
import type { WorkspaceOps } from "./workspace-ops.ts";

export interface ReadFileOptions {
  /** Bytes of a file returned before it truncates (default 256 KiB). */
  readonly maxReadBytes?: number;
}

/** `read_file` over `workspace` (a directory: the local, confined workspace there). Replay policy `safe`. */
export function createReadFileTool(workspace: string | WorkspaceOps, options: ReadFileOptions = {}): ToolSpec {
  const ws = typeof workspace === "string" ? localWorkspace(workspace) : workspace;
  const maxRead = options.maxReadBytes ?? 256 * 1024;
  return {
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
      const { bytes, size } = await ws.read(path, maxRead);
      if (bytes.subarray(0, 8192).includes(0)) return `${path} is a binary file of ${size} bytes; it is not shown`;
      const text = bytes.toString("utf8");
      return size > maxRead ? `${text}\n[… truncated: the file has ${size} bytes, ${maxRead} shown]` : text;
    },
  };
}
