/**
 * AG-15 (issue 11 item 19, engine side): a model's reasoning (`reasoning_content`, thinking
 * parts) is recorded deliberately — streamed into a `<reasoning>` child of its assistant turn,
 * coalesced like text — and never projected back into a later request.
 */
import { toSnapshot } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  type Model,
  type ModelEvent,
  type ModelRequest,
  renderPrompt,
  rerun,
  runAgent,
  ToolRegistry,
} from "../src/index.ts";

/** Thinks in many small pieces, then answers; the second reply thinks and ends the turn. */
class ThinkingModel implements Model {
  readonly id = "scripted:thinking";
  readonly requests: ModelRequest[] = [];
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.requests.push(request);
    const n = request.messages.filter((m) => m.role === "assistant").length;
    for (let i = 0; i < 200; i++) yield { type: "reasoning", delta: `step ${n}.${i}; ` };
    yield { type: "reasoning", delta: "" }; // an empty part changes nothing
    if (n === 0) {
      yield { type: "text", delta: "Looking it up." };
      yield { type: "tool-call", index: 0, id: "c0", name: "look" };
      yield { type: "tool-arguments", index: 0, delta: "{}" };
      yield { type: "done", finishReason: "tool_calls" };
    } else {
      yield { type: "text", delta: "It is 42." };
      yield { type: "done", finishReason: "stop" };
    }
  }
}

describe("AG-15 reasoning is recorded, never sent back", () => {
  it("streams into <reasoning> (coalesced), before the turn's text; later requests carry no reasoning", async () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const model = new ThinkingModel();
    const registry = new ToolRegistry([{ name: "look", description: "look", parameters: { type: "object" }, handler: async () => "42" }]);
    const seen: AgentEvent[] = [];
    const r = await runAgent(s, { model, registry, task: "what is it?", onEvent: (e) => void seen.push(e) });
    expect(r.stop).toBe("end-turn");
    const turns = s.select("body > turn[role=assistant]");
    expect(turns).toHaveLength(2);
    for (const [n, turn] of turns.entries()) {
      expect(turn.children.map((c) => c.tag).slice(0, 3)).toEqual(["request", "reasoning", "text"]);
      const reasoning = turn.children.find((c) => c.tag === "reasoning");
      expect(reasoning?.text).toBe(Array.from({ length: 200 }, (_, i) => `step ${n}.${i}; `).join(""));
    }
    // Coalesced: 400 deltas became a handful of events, not one row each.
    const flushes = s.log().filter((e) => e.label === "turn.reasoning").length;
    expect(flushes).toBeGreaterThanOrEqual(2);
    expect(flushes).toBeLessThan(20);
    expect(seen.filter((e) => e.type === "reasoning")).toHaveLength(400);
    // Nothing of it reaches a request: not the second one sent, not one rendered at the head.
    const second = JSON.stringify(model.requests[1]);
    expect(second).not.toContain("step 0.");
    expect(second).toContain("Looking it up.");
    expect(JSON.stringify(renderPrompt(s))).not.toContain("step 1.");
    // A reopened session has the same tree, reasoning included (L1).
    expect(toSnapshot(Session.open(store, s.id).session.tree)).toBe(toSnapshot(s.tree));
    // A re-run replays the recorded reasoning too (RR-1): the fork reads the same.
    const report = await rerun(s, { registry });
    expect(report.divergence).toBeUndefined();
    const fork = Session.open(store, s.id, { branch: report.branch }).session;
    expect(fork.select("body > turn[role=assistant] > reasoning").map((r) => r.text)).toEqual(
      s.select("body > turn[role=assistant] > reasoning").map((r) => r.text),
    );
  });
});
