/** The `write_file` tool (TL-12, TL-19): create or overwrite a text file of the workspace. */
import { localWorkspace } from "./local-workspace.ts";
import type { ToolSpec } from "./registry.ts";
import type { WorkspaceOps } from "./workspace-ops.ts";

/** `write_file` over `workspace` (a directory: the local, confined workspace there). Replay policy `never`; it changes files (`effects`). */
export function createWriteFileTool(workspace: string | WorkspaceOps): ToolSpec {
  const ws = typeof workspace === "string" ? localWorkspace(workspace) : workspace;
  return {
    name: "write_file",
    description: "Create or overwrite a text file of the workspace (parent directories are created).",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
      additionalProperties: false,
    },
    replayPolicy: "never",
    effects: "workspace",
    handler: async (args) => {
      const content = args.content as string;
      const shown = await ws.write(args.path as string, content);
      return `wrote ${Buffer.byteLength(content)} bytes to ${shown}`;
    },
  };
}
