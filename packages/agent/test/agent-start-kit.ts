/** What the run-start tests (and their child process) drive: a scripted model and one tool. */
import { type RunAgentOptions, ToolRegistry } from "../src/index.ts";
import { InlineModel } from "./agent-kit.ts";

/** A model that answers any task with one call to `note` and then ends its turn. */
export function startOptions(): RunAgentOptions & { model: InlineModel } {
  return {
    model: new InlineModel([{ text: "Noting it.", calls: [{ name: "note", args: { what: "x" } }] }, { text: "Done." }], "start"),
    registry: new ToolRegistry([
      {
        name: "note",
        description: "note something",
        parameters: { type: "object", properties: { what: { type: "string" } }, required: ["what"] },
        replayPolicy: "safe",
        handler: async () => "noted",
      },
    ]),
  };
}
