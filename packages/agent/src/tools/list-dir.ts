/** The `list_dir` tool (TL-12, TL-19): a directory of the workspace, bounded. */
import { localWorkspace } from "./local-workspace.ts";
import type { ToolSpec } from "./registry.ts";
import type { WorkspaceOps } from "./workspace-ops.ts";

export interface ListDirOptions {
  /** Entries shown (default 1,000). */
  readonly maxListEntries?: number;
  /** Entries read at most (default 100,000): a directory of millions costs bounded work. */
  readonly maxScanEntries?: number;
}

/** `list_dir` over `workspace` (a directory: the local, confined workspace there). Replay policy `safe`. */
export function createListDirTool(workspace: string | WorkspaceOps, options: ListDirOptions = {}): ToolSpec {
  const ws = typeof workspace === "string" ? localWorkspace(workspace) : workspace;
  const show = options.maxListEntries ?? 1000;
  const scan = options.maxScanEntries ?? 100_000;
  return {
    name: "list_dir",
    description: "List a directory of the workspace (directories end with /).",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Directory relative to the workspace root (default .)" } },
      additionalProperties: false,
    },
    replayPolicy: "safe",
    handler: async (args) => {
      const listing = await ws.list((args.path as string | undefined) ?? ".", { show, scan });
      if (listing.seen === 0) return `${listing.shown} is empty`;
      const hidden = listing.seen - listing.entries.length;
      const notes: string[] = [];
      if (hidden > 0 || listing.more)
        notes.push(
          listing.more
            ? `[… the directory has more than ${scan} entries; these are the first ${listing.entries.length} by name of ${scan} read]`
            : `[… ${hidden} more entries]`,
        );
      return [...listing.entries, ...notes].join("\n");
    },
  };
}
