/** The scripted model (MO-1 … MO-6). */

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelError, type ModelEvent, type ModelRequest } from "@strata/engine";
import { describe, expect, it } from "vitest";
import { createModel, type ModelScript, ScriptError, ScriptedModel } from "../src/index.ts";

const script: ModelScript = {
  name: "t",
  chunk: 4,
  turns: [
    { text: "Hello there", toolCalls: [{ name: "list_dir", arguments: { path: "." } }] },
    { text: "Done.", expect: "a.txt" },
    { fail: { kind: "rate-limit", message: "try later", times: 1 }, text: "after retry" },
  ],
};

function req(assistants: number, last = "a.txt"): ModelRequest {
  const messages: ModelRequest["messages"][number][] = [{ role: "user", content: "go" }];
  for (let i = 0; i < assistants; i++)
    messages.push({ role: "assistant", content: `turn ${i}` }, { role: "user", content: i === assistants - 1 ? last : "next" });
  return { system: "sys", messages, tools: [], settings: { provider: "scripted", model: "t" } };
}

async function run(model: ScriptedModel, r: ModelRequest): Promise<{ events: ModelEvent[]; error?: ModelError }> {
  const events: ModelEvent[] = [];
  try {
    for await (const e of model.stream(r, new AbortController().signal)) events.push(e);
    return { events };
  } catch (error) {
    return { events, error: error as ModelError };
  }
}

describe("ScriptedModel", () => {
  it("MO-1 plays the turn numbered by the assistant messages already in the request, in chunks", async () => {
    const model = new ScriptedModel(script);
    expect(model.id).toBe("scripted:t");
    const first = await run(model, req(0));
    expect(first.events.filter((e) => e.type === "text").map((e) => (e as { delta: string }).delta)).toEqual(["Hell", "o th", "ere"]);
    expect(first.events.filter((e) => e.type === "tool-call")).toEqual([{ type: "tool-call", index: 0, id: "call_0_0", name: "list_dir" }]);
    const args = first.events
      .filter((e) => e.type === "tool-arguments")
      .map((e) => (e as { delta: string }).delta)
      .join("");
    expect(JSON.parse(args)).toEqual({ path: "." });
    expect(first.events.at(-1)).toEqual({ type: "done", finishReason: "tool_calls" });
    // stateless: asking for turn 0 again gives the same reply (a resumed session re-asks)
    expect((await run(model, req(0))).events).toEqual(first.events);
    const second = await run(model, req(1));
    expect(second.events.at(-1)).toEqual({ type: "done", finishReason: "stop" });
  });

  it("MO-2 reports usage deterministically from the request and output sizes", async () => {
    const model = new ScriptedModel(script);
    const usage = (await run(model, req(1))).events.find((e) => e.type === "usage");
    expect(usage).toEqual({ type: "usage", inputTokens: expect.any(Number), outputTokens: 2 });
    expect((await run(model, req(1))).events.find((e) => e.type === "usage")).toEqual(usage);
  });

  it("MO-3 an `expect` guard fails loudly when the conversation is not the scripted one", async () => {
    const { error } = await run(new ScriptedModel(script), req(1, "something else"));
    expect(error).toBeInstanceOf(ModelError);
    expect(error?.kind).toBe("protocol");
    expect(error?.message).toMatch(/expected turn 2 to follow a message containing "a.txt"/);
  });

  it("MO-4 injected failures fail `times` times, then the turn plays", async () => {
    const model = new ScriptedModel(script);
    const a = await run(model, req(2));
    expect(a.error?.kind).toBe("rate-limit");
    expect(a.error?.retryable).toBe(true);
    const b = await run(model, req(2));
    expect(b.error).toBeUndefined();
    expect(b.events[0]).toEqual({ type: "text", delta: "afte" });
  });

  it("MO-5 asking past the end of the script is a clear protocol error", async () => {
    const { error } = await run(new ScriptedModel(script), req(3));
    expect(error?.message).toMatch(/has 3 turns and the session asked for turn 4/);
  });

  it("MO-6 bad scripts and specs are rejected naming the file and field", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-script-"));
    writeFileSync(join(dir, "bad.json"), '{"name":"x","turns":[{"toolCalls":[{"arguments":{}}]}]}');
    writeFileSync(join(dir, "broken.json"), "{");
    expect(() => ScriptedModel.fromFile(join(dir, "bad.json"))).toThrow(/bad\.json: turns\[0\]: toolCalls\[0\] needs a string `name`/);
    expect(() => ScriptedModel.fromFile(join(dir, "broken.json"))).toThrow(ScriptError);
    expect(() => ScriptedModel.fromFile(join(dir, "missing.json"))).toThrow(/cannot read model script/);
    expect(() => createModel("magic:x")).toThrow(/unknown model provider "magic"/);
    expect(() => createModel("scripted:")).toThrow(/needs a script file/);
    writeFileSync(join(dir, "ok.json"), JSON.stringify(script));
    expect(createModel("scripted:ok.json", { cwd: dir }).id).toBe("scripted:t");
    expect(createModel("openai:gpt-x", { env: { OPENAI_BASE_URL: "http://localhost:1/v1" } }).id).toBe("openai:gpt-x");
    expect(() => createModel("openai", { env: {} })).toThrow(/OPENAI_MODEL/);
  });
});
