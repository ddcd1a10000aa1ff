/** The `submit` tool (TL-16): the agent declares the task finished; the run ends `completed-by-tool`. */
import type { ToolSpec } from "./registry.ts";

/** `submit`: completes the run (`completesRun`), with a summary. Replay policy `safe`. */
export function createSubmitTool(): ToolSpec {
  return {
    name: "submit",
    description: "Declare the task finished, with a short summary of what was done. Ends the run.",
    parameters: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"], additionalProperties: false },
    replayPolicy: "safe",
    completesRun: true,
    handler: async (args) => `submitted: ${args.summary as string}`,
  };
}
