/**
 * The `run` tool (TL-14, TL-17, TL-18): a shell command in the workspace root, bounded in time and
 * captured output, tied to its driver (the local workspace runs it under process.ts's supervisor).
 * It is bounded, not a sandbox.
 */
import { localWorkspace } from "./local-workspace.ts";
import type { ToolSpec } from "./registry.ts";
import type { WorkspaceOps } from "./workspace-ops.ts";

export interface RunToolOptions {
  /** Bytes of output kept (head and tail; default 256 KiB). The rest is counted, not kept. */
  readonly maxCaptureBytes?: number;
  /** Default time limit of a command (default 60 s); a call may ask for its own `timeout_ms`. */
  readonly runTimeoutMs?: number;
}

/** `run` over `workspace` (a directory: the local workspace there). Replay policy `never`; it may change any file (`effects`). */
export function createRunTool(workspace: string | WorkspaceOps, options: RunToolOptions = {}): ToolSpec {
  const ws = typeof workspace === "string" ? localWorkspace(workspace) : workspace;
  const maxCapture = options.maxCaptureBytes ?? 256 * 1024;
  const runTimeout = options.runTimeoutMs ?? 60_000;
  return {
    name: "run",
    description: "Run a shell command in the workspace directory. Returns the exit code and the combined output (bounded).",
    parameters: {
      type: "object",
      properties: { command: { type: "string", minLength: 1 }, timeout_ms: { type: "integer", minimum: 1, maximum: 3_600_000 } },
      required: ["command"],
      additionalProperties: false,
    },
    replayPolicy: "never",
    effects: "workspace",
    handler: async (args, ctx) =>
      ws.exec(args.command as string, {
        timeoutMs: (args.timeout_ms as number | undefined) ?? runTimeout,
        maxCapture,
        signal: ctx.signal,
        output: ctx.output,
      }),
  };
}
