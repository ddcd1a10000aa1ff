/** The `edit_file` tool (TL-13, TL-19): replace an exact piece of text in a workspace file. */
import { localWorkspace } from "./local-workspace.ts";
import type { ToolSpec } from "./registry.ts";
import { WorkspaceError, type WorkspaceOps } from "./workspace-ops.ts";

export interface EditFileOptions {
  /** Bytes of a file read and written at most (default 8 MiB). */
  readonly maxEditBytes?: number;
}

/** `edit_file` over `workspace` (a directory: the local, confined workspace there). Replay policy `never`; it changes files (`effects`). */
export function createEditFileTool(workspace: string | WorkspaceOps, options: EditFileOptions = {}): ToolSpec {
  const ws = typeof workspace === "string" ? localWorkspace(workspace) : workspace;
  const maxEdit = options.maxEditBytes ?? 8 * 1024 * 1024;
  return {
    name: "edit_file",
    description: "Replace an exact piece of text in a workspace file. `old` must occur exactly once unless `all` is true.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, old: { type: "string", minLength: 1 }, new: { type: "string" }, all: { type: "boolean" } },
      required: ["path", "old", "new"],
      additionalProperties: false,
    },
    replayPolicy: "never",
    effects: "workspace",
    handler: async (args) => {
      const path = args.path as string;
      const { bytes, size } = await ws.read(path, maxEdit + 1);
      if (size > maxEdit)
        throw new WorkspaceError(`${path} has ${size} bytes, more than edit_file handles (${maxEdit}); use run with a stream editor`);
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes); // a BOM is kept
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
      const shown = await ws.write(path, next);
      return `replaced ${replaced} occurrence${replaced > 1 ? "s" : ""} in ${shown}`;
    },
  };
}
