/**
 * What the agent fleet test (fleet-agent.test.ts) and its workers (fleet-agent-worker.ts) share:
 * the scripted model every worker runs, and the one tool, whose executions each worker reports.
 */
import { type Model, type ModelEvent, type ModelRequest, ToolRegistry } from "@strata/agent";

/** Calls per session: the model asks for `step` this many times, then answers. */
export const STEPS = 6;
export const TASK = "take every step";

/** Turn N (N assistant messages so far) asks for step N+1; after STEPS turns it answers and the run ends. */
export class FleetModel implements Model {
  readonly id = "scripted:fleet";
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const n = request.messages.filter((m) => m.role === "assistant").length;
    yield { type: "text", delta: n < STEPS ? `Step ${n + 1}.` : "All steps taken." };
    if (n < STEPS) {
      yield { type: "tool-call", index: 0, id: `call_${n}`, name: "step" };
      yield { type: "tool-arguments", index: 0, delta: JSON.stringify({ k: n + 1 }) };
    }
    yield { type: "done", finishReason: n < STEPS ? "tool_calls" : "stop" };
  }
}

/**
 * The tool: not safe to repeat (a call a dead driver left running is interrupted, never run
 * again). `onExec(key)` is told before it works, so a call that was run is known even when its
 * driver dies before the outcome is written.
 */
export function fleetRegistry(onExec: (key: string, k: number) => void = () => {}): ToolRegistry {
  return new ToolRegistry([
    {
      name: "step",
      description: "takes one step",
      parameters: { type: "object", properties: { k: { type: "number" } }, required: ["k"] },
      replayPolicy: "never",
      handler: async (args, ctx) => {
        const k = (args as { k: number }).k;
        onExec(ctx.key ?? "", k);
        await new Promise((r) => setTimeout(r, 80 + Math.random() * 80));
        return `step ${k} taken`;
      },
    },
  ]);
}
