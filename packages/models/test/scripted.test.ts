/** The scripted model (MO-1 … MO-6). */

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelError, type ModelEvent, type ModelRequest } from "@strata/agent/model";
import { describe, expect, it } from "vitest";
import { createModel, DEFAULT_SCRIPT_LIMITS, loadScript, type ModelScript, ScriptError, ScriptedModel } from "../src/index.ts";

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

  it("MO-2 reports usage deterministically from the request and output sizes (4 characters a token)", async () => {
    const model = new ScriptedModel(script);
    // request text: "sys" + "go" + "turn 0" + "a.txt" = 16 characters = 4 tokens; output "Done." = 5 = 2 tokens
    const usage = (await run(model, req(1))).events.find((e) => e.type === "usage");
    expect(usage).toEqual({ type: "usage", inputTokens: 4, outputTokens: 2 });
    // "sys" + "go" + "turn 0" + "next" + "turn 1" + "a.txt" = 26 characters = 7 tokens (rounded up)
    const third = new ScriptedModel({ name: "u", turns: [{ text: "" }, { text: "" }, { text: "abcd" }] });
    expect((await run(third, req(2))).events.find((e) => e.type === "usage")).toEqual({
      type: "usage",
      inputTokens: 7,
      outputTokens: 1,
    });
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
    expect(() => ScriptedModel.fromFile(join(dir, "bad.json"))).toThrow(
      /bad\.json: turns\[0\] \(turn 1\): toolCalls\[0\] needs a string `name`/,
    );
    expect(() => ScriptedModel.fromFile(join(dir, "broken.json"))).toThrow(ScriptError);
    expect(() => ScriptedModel.fromFile(join(dir, "missing.json"))).toThrow(/missing\.json does not exist/);
    expect(() => createModel("magic:x")).toThrow(/unknown model provider "magic"/);
    expect(() => createModel("scripted:")).toThrow(/needs a script file/);
    writeFileSync(join(dir, "ok.json"), JSON.stringify(script));
    expect(createModel("scripted:ok.json", { cwd: dir }).id).toBe("scripted:t");
    expect(createModel("openai:gpt-x", { env: { OPENAI_BASE_URL: "http://localhost:1/v1" } }).id).toBe("openai:gpt-x");
    expect(() => createModel("openai", { env: {} })).toThrow(/OPENAI_MODEL/);
  });

  it("MO-6 every field is checked: ids, finish reasons, fail counts, delays", () => {
    const bad =
      (turn: unknown, extra: Record<string, unknown> = {}) =>
      () =>
        new ScriptedModel({ name: "x", turns: [turn], ...extra } as ModelScript);
    expect(bad({ text: "a", finishReason: 3 })).toThrow(/turns\[0\] \(turn 1\): `finishReason` must be a string/);
    expect(bad({ toolCalls: [{ name: "f", id: 7 }] })).toThrow(/toolCalls\[0\]\.id must be a non-empty string/);
    expect(bad({ fail: { kind: "server", message: "m", times: -1 } })).toThrow(/`fail\.times` must be a whole number/);
    expect(bad({ fail: { kind: "server", message: "m", afterChunks: 1.5 } })).toThrow(/`fail\.afterChunks` must be a whole number/);
    expect(bad({ fail: "boom" })).toThrow(/`fail` must be an object/);
    expect(bad({ text: "a" }, { delayMs: 1e12 })).toThrow(/`delayMs` must be a number from 0 to 60,000/);
    expect(bad({ text: "a" }, { delayMs: Number.NaN })).toThrow(/`delayMs`/);
  });

  it("MO-6 a script file may start with a BOM", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-script-"));
    writeFileSync(join(dir, "bom.json"), `\uFEFF${JSON.stringify(script)}`);
    expect(ScriptedModel.fromFile(join(dir, "bom.json")).id).toBe("scripted:t");
  });

  it("MO-1 a turn's reasoning streams before its text, as reasoning events", async () => {
    const model = new ScriptedModel({ name: "r", chunk: 5, turns: [{ reasoning: "think it over", text: "ok" }] });
    const { events } = await run(model, req(0));
    expect(events.slice(0, 4)).toEqual([
      { type: "reasoning", delta: "think" },
      { type: "reasoning", delta: " it o" },
      { type: "reasoning", delta: "ver" },
      { type: "text", delta: "ok" },
    ]);
  });
});

describe("MO-22 size limits of scripts", () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-limits-"));
  const MiB = 1024 * 1024;

  it("a reply's text over 1 MiB is refused, naming the file, the turn and the limit", () => {
    const path = join(dir, "long-text.json");
    writeFileSync(path, JSON.stringify({ name: "big", turns: [{ text: "ok" }, { text: "é".repeat(MiB / 2 + 1) }] }));
    let error: unknown;
    try {
      ScriptedModel.fromFile(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).code).toBe("too-large");
    expect((error as ScriptError).path).toBe(path);
    expect((error as ScriptError).message).toBe(
      `${path}: turns[1] (turn 2): \`text\` is 1,048,578 bytes, over the 1,048,576-byte limit for one reply; shorten it`,
    );
  });

  it("a tool call's arguments over 1 MiB are refused, also when built in code", () => {
    const path = join(dir, "long-args.json");
    writeFileSync(path, JSON.stringify({ name: "big", turns: [{ toolCalls: [{ name: "w", arguments: { text: "x".repeat(MiB) } }] }] }));
    expect(() => ScriptedModel.fromFile(path)).toThrow(
      /long-args\.json: turns\[0\] \(turn 1\): toolCalls\[0\]\.arguments are 1,048,587 bytes, over the 1,048,576-byte limit/,
    );
    expect(() => new ScriptedModel({ name: "c", turns: [{ toolCalls: [{ name: "w", arguments: "y".repeat(MiB + 1) }] }] })).toThrow(
      /script c: turns\[0\] \(turn 1\): toolCalls\[0\]\.arguments are 1,048,577 bytes/,
    );
  });

  it("a script file over 16 MiB is refused before it is parsed", () => {
    const path = join(dir, "huge.json");
    const turns = Array.from({ length: 17 }, () => ({ text: "z".repeat(MiB - 64) }));
    writeFileSync(path, JSON.stringify({ name: "huge", turns }));
    expect(() => loadScript(path)).toThrow(
      new RegExp(
        `^the model script ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is [0-9,]+ bytes, over the 16,777,216-byte limit for a script$`,
      ),
    );
  });

  it("arguments nested too deeply to encode are a script error, not a crash", () => {
    const path = join(dir, "deep.json");
    const depth = 200_000;
    writeFileSync(path, `{"name":"deep","turns":[{"toolCalls":[{"name":"w","arguments":${"[".repeat(depth)}${"]".repeat(depth)}}]}]}`);
    let error: unknown;
    try {
      loadScript(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).message).toMatch(
      /deep\.json: turns\[0\] \(turn 1\): toolCalls\[0\]\.arguments cannot be written as JSON/,
    );
  });

  it("limits can be set lower", () => {
    expect(() => new ScriptedModel({ name: "s", turns: [{ text: "12345" }] }, { ...DEFAULT_SCRIPT_LIMITS, maxTextBytes: 4 })).toThrow(
      /`text` is 5 bytes, over the 4-byte limit/,
    );
  });
});
