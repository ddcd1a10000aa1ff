/** The OpenAI-compatible client against a real local HTTP server that speaks the protocol (MO-7 … MO-14). */
import { ModelError, type ModelEvent, type ModelRequest } from "@strata/agent/model";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAICompatibleModel, toWireRequest } from "../src/index.ts";
import { chunk, type FakeServer, startFake } from "./fake-openai.ts";

const request: ModelRequest = {
  system: "You are terse.",
  messages: [
    { role: "user", content: "list the files" },
    { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "list_dir", arguments: '{"path":"."}' }] },
    { role: "tool", toolCallId: "call_1", content: "a.txt\nb.txt" },
  ],
  tools: [{ name: "list_dir", description: "List a directory", parameters: { type: "object", properties: { path: { type: "string" } } } }],
  settings: { provider: "openai", model: "m1", temperature: 0 },
};

let fake: FakeServer | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function collect(
  model: OpenAICompatibleModel,
  signal = new AbortController().signal,
): Promise<{ events: ModelEvent[]; error?: ModelError }> {
  const events: ModelEvent[] = [];
  try {
    for await (const e of model.stream(request, signal)) events.push(e);
    return { events };
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    return { events, error };
  }
}

describe("OpenAICompatibleModel", () => {
  it("MO-7 sends the mapped request with the key and streams text, tool calls and usage", async () => {
    fake = await startFake([
      {
        kind: "stream",
        chunks: [
          chunk.role(),
          chunk.text("Two "),
          chunk.text("files."),
          chunk.call(0, "call_a", "read_file", '{"pa'),
          chunk.call(1, "call_b", "read_file"),
          chunk.args(0, 'th":"a.txt"}'),
          chunk.args(1, '{"path":"b.txt"}'),
          chunk.finish("tool_calls"),
          chunk.usage(120, 30),
        ],
      },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, apiKey: "sk-test", model: "m1" });
    const { events, error } = await collect(model);
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "text", delta: "Two " },
      { type: "text", delta: "files." },
      { type: "tool-call", index: 0, id: "call_a", name: "read_file" },
      { type: "tool-arguments", index: 0, delta: '{"pa' },
      { type: "tool-call", index: 1, id: "call_b", name: "read_file" },
      { type: "tool-arguments", index: 0, delta: 'th":"a.txt"}' },
      { type: "tool-arguments", index: 1, delta: '{"path":"b.txt"}' },
      { type: "usage", inputTokens: 120, outputTokens: 30 },
      { type: "done", finishReason: "tool_calls" },
    ]);
    expect(fake.requests).toHaveLength(1);
    const sent = fake.requests[0] as FakeServer["requests"][number];
    expect(sent.headers.authorization).toBe("Bearer sk-test");
    expect(sent.body).toEqual(toWireRequest(request, "m1"));
    expect(sent.body.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "list the files" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "list_dir", arguments: '{"path":"."}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "a.txt\nb.txt" },
    ]);
    expect(sent.body.stream).toBe(true);
    expect(sent.body.temperature).toBe(0);
    expect((sent.body.tools as unknown[])[0]).toEqual({ type: "function", function: request.tools[0] });
  });

  it("MO-8 retries 429 and 500 with backoff, then succeeds", async () => {
    fake = await startFake([
      { kind: "status", status: 429, body: { error: { message: "slow down" } } },
      { kind: "status", status: 500, body: { error: { message: "boom" } } },
      { kind: "stream", chunks: [chunk.text("ok"), chunk.finish("stop")] },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 5 });
    const { events, error } = await collect(model);
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(["text", "done"]);
    expect(fake.requests).toHaveLength(3);
  });

  // Each Retry-After form asks for about a second against a 1 ms backoff; the gap between the
  // requests' arrivals at the server shows which one the client waited for.
  const asked: [string, () => Record<string, string>][] = [
    ["delay-seconds", () => ({ "retry-after": "1" })],
    // an HTTP-date has whole seconds: 3 s ahead, cut to the second, is 2 to 3 s ahead
    ["an HTTP-date", () => ({ "retry-after": new Date(Date.now() + 3000).toUTCString() })],
    ["retry-after-ms", () => ({ "retry-after-ms": "1000", "retry-after": "0" })],
  ];
  for (const [form, headers] of asked)
    it(`MO-8 waits as long as Retry-After says, given as ${form}`, async () => {
      fake = await startFake([
        { kind: "status", status: 429, body: { error: { message: "slow down" } }, headers: headers() },
        { kind: "stream", chunks: [chunk.text("ok"), chunk.finish("stop")] },
      ]);
      const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 1 });
      expect((await collect(model)).error).toBeUndefined();
      const [first, second] = fake.requests;
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
    });

  it("MO-8 a Retry-After longer than maxRetryAfterMs is not waited for: the error says how long the server asked", async () => {
    fake = await startFake([
      { kind: "status", status: 429, body: { error: { message: "daily limit" } }, headers: { "retry-after": "3600" } },
      { kind: "stream", chunks: [chunk.text("too early"), chunk.finish("stop")] },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 1, maxRetryAfterMs: 5000 });
    const { error } = await collect(model);
    expect(error?.kind).toBe("rate-limit");
    expect(error?.retryable).toBe(false);
    expect(error?.message).toMatch(/asks to wait 3600 s, longer than the 5 s/);
    expect(fake.requests).toHaveLength(1);
  });

  it("MO-8 a 429 for an exhausted quota is not retried", async () => {
    fake = await startFake([
      {
        kind: "status",
        status: 429,
        body: { error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } },
      },
    ]);
    const { error } = await collect(new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 1 }));
    expect(error?.kind).toBe("rate-limit");
    expect(error?.message).toMatch(/quota is used up/);
    expect(fake.requests).toHaveLength(1);
  });

  it("MO-9 gives up after maxRetries with a recorded, classified ModelError", async () => {
    fake = await startFake(Array.from({ length: 5 }, () => ({ kind: "status" as const, status: 503, body: "upstream down" })));
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", maxRetries: 2, backoffMs: 1 });
    const { events, error } = await collect(model);
    expect(events).toEqual([]);
    expect(error?.kind).toBe("server");
    expect(error?.options.status).toBe(503);
    expect(error?.message).toMatch(/HTTP 503.*upstream down/);
    expect(fake.requests).toHaveLength(3);
  });

  it("MO-10 does not retry auth, bad-request or context-overflow errors", async () => {
    fake = await startFake([
      { kind: "status", status: 401, body: { error: { message: "bad key" } } },
      {
        kind: "status",
        status: 400,
        body: { error: { message: "This model's maximum context length is 8192 tokens", code: "context_length_exceeded" } },
      },
      { kind: "status", status: 400, body: { error: { message: "tools[0] is invalid" } } },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 1 });
    expect((await collect(model)).error?.kind).toBe("auth");
    expect((await collect(model)).error?.kind).toBe("context-overflow");
    const bad = (await collect(model)).error;
    expect(bad?.kind).toBe("bad-request");
    expect(bad?.message).toContain("tools[0] is invalid");
    expect(fake.requests).toHaveLength(3);
  });

  it("MO-11 a connection dropped mid-stream is a network error after the partial output, never retried", async () => {
    fake = await startFake([
      { kind: "drop", chunks: [chunk.text("Half a "), chunk.call(0, "call_x", "write_file", '{"path":')] },
      { kind: "stream", chunks: [chunk.text("should not be requested"), chunk.finish("stop")] },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 1 });
    const { events, error } = await collect(model);
    expect(events).toEqual([
      { type: "text", delta: "Half a " },
      { type: "tool-call", index: 0, id: "call_x", name: "write_file" },
      { type: "tool-arguments", index: 0, delta: '{"path":' },
    ]);
    expect(error).toBeInstanceOf(ModelError);
    expect(error?.kind).toBe("network");
    expect(fake.requests).toHaveLength(1);
  });

  it("MO-11 a stream that ends without [DONE] or a finish reason is a network error", async () => {
    fake = await startFake([{ kind: "stream", chunks: [chunk.text("cut")], noDone: true }]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", maxRetries: 0 });
    const { events, error } = await collect(model);
    expect(events).toEqual([{ type: "text", delta: "cut" }]);
    expect(error?.kind).toBe("network");
  });

  it("MO-12 a chunk that is not JSON is a protocol error", async () => {
    fake = await startFake([{ kind: "stream", chunks: [chunk.text("a"), { raw: "{not json" }] }]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1" });
    const { events, error } = await collect(model);
    expect(events).toEqual([{ type: "text", delta: "a" }]);
    expect(error?.kind).toBe("protocol");
    expect(error?.message).toContain("{not json");
    expect(fake.requests).toHaveLength(1);
  });

  it("MO-13 abort cancels an in-flight stream and a silent server times out", async () => {
    fake = await startFake([
      { kind: "hang", chunks: [chunk.text("waiting")] },
      { kind: "hang", chunks: [] },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", maxRetries: 0 });
    const ctl = new AbortController();
    const aborted: { events: ModelEvent[]; error?: ModelError } = { events: [] };
    try {
      for await (const e of model.stream(request, ctl.signal)) {
        aborted.events.push(e);
        setTimeout(() => ctl.abort(), 20); // the server now stays silent: cancel while it does
      }
    } catch (error) {
      aborted.error = error as ModelError;
    }
    expect(aborted.events).toEqual([{ type: "text", delta: "waiting" }]);
    expect(aborted.error?.kind).toBe("cancelled");
    const quick = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", maxRetries: 0, idleTimeoutMs: 100 });
    const silent = await collect(quick);
    expect(silent.error?.kind).toBe("network");
    expect(silent.error?.message).toMatch(/silent for 100 ms/);
  });

  it("MO-14 an unreachable server is a network error after bounded retries, naming the URL and the OS error", async () => {
    const port = await closedPort();
    const model = new OpenAICompatibleModel({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "m1", maxRetries: 1, backoffMs: 1 });
    const { error } = await collect(model);
    expect(error?.kind).toBe("network");
    expect(error?.message).toBe(`cannot reach http://127.0.0.1:${port}/v1/chat/completions: ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("MO-14 a port fetch refuses to use is named as such, and not retried", async () => {
    const model = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "m1", maxRetries: 3, backoffMs: 2000 });
    const { error } = await collect(model);
    expect(error?.kind).toBe("network");
    expect(error?.retryable).toBe(false);
    expect(error?.message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions: fetch refuses port 9/);
  });
});

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe("MO-11 with the agent loop", () => {
  it("a mid-stream disconnect leaves a recorded, resumable state", async () => {
    const { openStore } = await import("@strata/store");
    const { Session } = await import("@strata/engine");
    const { ToolRegistry, runAgent, renderPrompt } = await import("@strata/agent");
    fake = await startFake([
      { kind: "drop", chunks: [chunk.text("Reading "), chunk.call(0, "call_1", "echo", '{"wo')] },
      { kind: "stream", chunks: [chunk.call(0, "call_2", "echo", '{"word":"hi"}'), chunk.finish("tool_calls"), chunk.usage(50, 5)] },
      { kind: "stream", chunks: [chunk.text("Said hi."), chunk.finish("stop")] },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1", backoffMs: 1 });
    const registry = new ToolRegistry([
      {
        name: "echo",
        description: "echo",
        parameters: { type: "object", properties: { word: { type: "string" } } },
        replayPolicy: "safe",
        handler: async (a) => String(a.word),
      },
    ]);
    const s = Session.create(openStore(":memory:"));
    const first = await runAgent(s, { model, registry, task: "say hi" });
    expect(first.stop).toBe("model-error");
    expect(s.select("body > turn[role=assistant]").map((t) => t.attrs.status)).toEqual(["failed"]);
    expect(s.selectOne("body call")?.attrs.status).toBe("interrupted");
    const second = await runAgent(s, { model, registry });
    expect(second.stop).toBe("end-turn");
    const req = renderPrompt(s);
    expect(req.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    // the request after the failure did not include the failed turn
    expect(fake.requests[1]?.body.messages).toEqual([{ role: "user", content: "say hi" }]);
  });
});

describe("MO-7 servers that omit tool-call indexes", () => {
  it("each named delta starts a new call; missing ids are unique per reply", async () => {
    const noIndex = (id: string | undefined, name: string | undefined, args: string) => ({
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ ...(id ? { id } : {}), type: "function", function: { ...(name ? { name } : {}), arguments: args } }] },
          finish_reason: null,
        },
      ],
    });
    fake = await startFake([
      {
        kind: "stream",
        chunks: [noIndex("a", "f1", '{"x":1}'), noIndex("b", "f2", "{"), noIndex(undefined, undefined, "}"), chunk.finish("tool_calls")],
      },
      { kind: "stream", chunks: [noIndex(undefined, "f3", "{}"), chunk.finish("tool_calls")] },
      { kind: "stream", chunks: [noIndex(undefined, "f3", "{}"), chunk.finish("tool_calls")] },
    ]);
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m1" });
    const { events } = await collect(model);
    expect(events.filter((e) => e.type === "tool-call")).toEqual([
      { type: "tool-call", index: 0, id: "a", name: "f1" },
      { type: "tool-call", index: 1, id: "b", name: "f2" },
    ]);
    expect(
      events
        .filter((e) => e.type === "tool-arguments" && e.index === 1)
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe("{}");
    const one = (await collect(model)).events.find((e) => e.type === "tool-call") as { id: string };
    const two = (await collect(model)).events.find((e) => e.type === "tool-call") as { id: string };
    expect(one.id).not.toBe(two.id);
  });
});
