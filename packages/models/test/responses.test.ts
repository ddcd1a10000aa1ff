/**
 * What servers answer besides a clean event stream (MO-9, MO-10, MO-14, MO-17, MO-18), against a
 * real local HTTP server: JSON instead of a stream, error objects in a 200, pages that are not the
 * API, unbounded bodies, redirects, refused parameters, and the OS errors behind a failed connect.
 */
import { ModelError, type ModelEvent, type ModelRequest } from "@strata/agent/model";
import { afterEach, describe, expect, it } from "vitest";
import { networkError } from "../src/errors.ts";
import { describeCause, OpenAICompatibleModel } from "../src/index.ts";
import { chunk, type FakeServer, startFake } from "./fake-openai.ts";

const request: ModelRequest = {
  system: "",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  settings: { provider: "openai", model: "m", maxTokens: 256 },
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

const model = (extra: Partial<ConstructorParameters<typeof OpenAICompatibleModel>[0]> = {}) =>
  new OpenAICompatibleModel({ baseUrl: (fake as FakeServer).url, model: "m", backoffMs: 1, ...extra });

describe("MO-17 HTTP 200 answers that are not an event stream", () => {
  it("a JSON error object in a 200 is classified like the status it names, and not retried when that is auth", async () => {
    fake = await startFake([{ kind: "status", status: 200, body: { error: { message: "Invalid API key provided", code: 401 } } }]);
    const { error } = await collect(model());
    expect(error?.kind).toBe("auth");
    expect(error?.message).toBe(`${fake.url}/chat/completions reported an error in an HTTP 200 response: Invalid API key provided`);
    expect(fake.requests).toHaveLength(1);
  });

  it("a server error object in a 200 before any output is retried", async () => {
    fake = await startFake([
      { kind: "status", status: 200, body: { error: { message: "overloaded", type: "server_error" } } },
      { kind: "stream", chunks: [chunk.text("fine"), chunk.finish("stop")] },
    ]);
    const { events, error } = await collect(model());
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "text", delta: "fine" },
      { type: "done", finishReason: "stop" },
    ]);
    expect(fake.requests).toHaveLength(2);
  });

  it("a whole completion (a server that ignores stream: true) becomes the same events", async () => {
    fake = await startFake([
      {
        kind: "status",
        status: 200,
        body: {
          id: "c",
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: "Reading.",
                reasoning_content: "Need a.txt",
                tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } }],
              },
              finish_reason: "tool_calls",
            },
          ],
          usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
        },
      },
    ]);
    const { events, error } = await collect(model());
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "reasoning", delta: "Need a.txt" },
      { type: "text", delta: "Reading." },
      { type: "tool-call", index: 0, id: "call_1", name: "read_file" },
      { type: "tool-arguments", index: 0, delta: '{"path":"a.txt"}' },
      { type: "usage", inputTokens: 11, outputTokens: 7 },
      { type: "done", finishReason: "tool_calls" },
    ]);
  });

  it("an HTML page is a protocol error that points at OPENAI_BASE_URL, with the page quoted safely", async () => {
    fake = await startFake([
      { kind: "raw", headers: { "content-type": "text/html" }, body: "<!doctype html>\n<title>\u001b]52;c;ZXZpbA==\u0007Login</title>" },
    ]);
    const { error } = await collect(model());
    expect(error?.kind).toBe("protocol");
    expect(error?.message).toMatch(
      /answered HTTP 200 with text\/html instead of an event stream: <!doctype html> <title> ]52;c;ZXZpbA== Login/,
    );
    expect(error?.message).toMatch(/check OPENAI_BASE_URL/);
    expect(error?.message).not.toMatch(/[\u0000-\u001f]/);
    expect(fake.requests).toHaveLength(1);
  });

  it("an event stream labelled text/plain is recognised by its first bytes", async () => {
    fake = await startFake([
      {
        kind: "raw",
        headers: { "content-type": "text/plain; charset=utf-8" },
        body: `\n\ndata: ${JSON.stringify(chunk.text("plain"))}\n\ndata: [DONE]\n\n`,
      },
    ]);
    const { events, error } = await collect(model());
    expect(error).toBeUndefined();
    expect(events).toEqual([
      { type: "text", delta: "plain" },
      { type: "done", finishReason: "stop" },
    ]);
  });
});

describe("MO-17 bounded bodies", () => {
  it("arguments or an error body nested too deeply to encode are protocol and server errors, not crashes", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const call = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":${deep}}}]}}]}`;
    fake = await startFake([
      { kind: "raw", body: `data: ${call}\n\n` },
      {
        kind: "raw",
        status: 500,
        headers: { "content-type": "application/json" },
        body: `{"error":${deep.slice(0, 30_000)}${deep.slice(-30_000)}}`,
      },
    ]);
    const first = await collect(model({ maxRetries: 0 }));
    expect(first.error?.kind).toBe("protocol");
    expect(first.error?.message).toMatch(/tool-call arguments nested too deeply to encode/);
    const second = await collect(model({ maxRetries: 0 }));
    expect(second.error?.kind).toBe("server");
  });

  it("a response over maxResponseBytes is a protocol error naming the limit, after the output so far", async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `data: ${JSON.stringify(chunk.text(`piece ${i} `))}\n\n`).join("");
    fake = await startFake([{ kind: "raw", body: lines, pieceBytes: 512 }]);
    const { events, error } = await collect(model({ maxResponseBytes: 4096 }));
    expect(error?.kind).toBe("protocol");
    expect(error?.message).toBe(`the response from ${fake.url}/chat/completions is larger than 4096 bytes`);
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(200);
  });

  it("an error body that never ends is read only up to a bound, then classified", async () => {
    fake = await startFake([{ kind: "endless", status: 503, piece: "upstream unavailable ".repeat(100) }]);
    const { error } = await collect(model({ maxRetries: 0, idleTimeoutMs: 30_000 }));
    expect(error?.kind).toBe("server");
    expect(error?.options.status).toBe(503);
    expect(error?.message).toMatch(/answered HTTP 503 \(server error\): upstream unavailable/);
    expect(error?.message.length).toBeLessThan(500);
  }, 20_000);
});

describe("MO-10 more HTTP answers", () => {
  it("a redirect is not followed (a POST would become a GET): the error names where it points", async () => {
    fake = await startFake([
      { kind: "status", status: 308, body: "", headers: { location: "https://api.example.com/v1/chat/completions" } },
    ]);
    const { error } = await collect(model());
    expect(error?.kind).toBe("bad-request");
    expect(error?.message).toMatch(
      /HTTP 308 \(a redirect\): redirected to https:\/\/api\.example\.com\/v1\/chat\/completions; set OPENAI_BASE_URL/,
    );
    expect(fake.requests).toHaveLength(1);
  });

  it("a 404 points at the base URL and the model name", async () => {
    fake = await startFake([
      { kind: "status", status: 404, body: { error: { message: "The model `m` does not exist", code: "model_not_found" } } },
    ]);
    const { error } = await collect(model());
    expect(error?.kind).toBe("bad-request");
    expect(error?.message).toBe(
      `${fake.url}/chat/completions answered HTTP 404 (not found): The model \`m\` does not exist (model_not_found); check OPENAI_BASE_URL (it usually ends in /v1) and the model name`,
    );
  });

  it("a 401 says whether a key was sent", async () => {
    fake = await startFake([
      { kind: "status", status: 401, body: { error: { message: "missing key" } } },
      { kind: "status", status: 401, body: { error: { message: "bad key" } } },
    ]);
    expect((await collect(model())).error?.message).toMatch(/missing key; no key was sent: set OPENAI_API_KEY$/);
    expect((await collect(model({ apiKey: "sk-x" }))).error?.message).toMatch(/bad key; check OPENAI_API_KEY$/);
  });

  it("error bodies in the shapes other servers use are quoted: {error: text}, {detail}, {message}", async () => {
    fake = await startFake([
      { kind: "status", status: 400, body: { error: "model 'llama9' not found, try pulling it first" } },
      { kind: "status", status: 422, body: { detail: [{ loc: ["body", "messages"], msg: "field required" }] } },
      { kind: "status", status: 400, body: { object: "error", message: "temperature must be ≤ 2", type: "BadRequestError", code: 400 } },
    ]);
    expect((await collect(model())).error?.message).toMatch(/\(request rejected\): model 'llama9' not found, try pulling it first$/);
    expect((await collect(model())).error?.message).toMatch(/\(request rejected\): field required$/);
    expect((await collect(model())).error?.message).toMatch(/\(request rejected\): temperature must be ≤ 2$/);
  });

  it("a request that is too large (413) is a context overflow", async () => {
    fake = await startFake([{ kind: "status", status: 413, body: "Request Entity Too Large" }]);
    expect((await collect(model())).error?.kind).toBe("context-overflow");
  });
});

describe("MO-18 parameters a server refuses", () => {
  it("a reasoning model's legacy-parameter error re-sends max_completion_tokens once, and remembers it", async () => {
    fake = await startFake([
      {
        kind: "status",
        status: 400,
        body: {
          error: {
            message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            type: "invalid_request_error",
            param: "max_tokens",
            code: "unsupported_parameter",
          },
        },
      },
      { kind: "stream", chunks: [chunk.text("one"), chunk.finish("stop")] },
      { kind: "stream", chunks: [chunk.text("two"), chunk.finish("stop")] },
    ]);
    const m = model({ maxRetries: 0 });
    expect((await collect(m)).error).toBeUndefined();
    expect((await collect(m)).error).toBeUndefined();
    const bodies = fake.requests.map((r) => r.body);
    expect(bodies[0]?.max_tokens).toBe(256);
    expect(bodies[1]?.max_tokens).toBeUndefined();
    expect(bodies[1]?.max_completion_tokens).toBe(256);
    expect(bodies[2]?.max_completion_tokens).toBe(256);
    expect(fake.requests).toHaveLength(3);
  });

  it("a server that refuses stream_options gets the request without it", async () => {
    fake = await startFake([
      { kind: "status", status: 400, body: { error: { message: "Unrecognized request argument supplied: stream_options" } } },
      { kind: "stream", chunks: [chunk.text("ok"), chunk.finish("stop")] },
    ]);
    expect((await collect(model({ maxRetries: 0 }))).error).toBeUndefined();
    expect(fake.requests[1]?.body.stream_options).toBeUndefined();
  });

  it("a refusal that is about something else, or comes again after the adjustment, is a bad-request error", async () => {
    const refusal = {
      kind: "status" as const,
      status: 400,
      body: { error: { message: "Unsupported parameter: 'max_tokens'", param: "max_tokens", code: "unsupported_parameter" } },
    };
    fake = await startFake([
      refusal,
      { ...refusal, body: { error: { message: "Unsupported parameter: 'max_completion_tokens'", param: "max_completion_tokens" } } },
    ]);
    const { error } = await collect(model());
    expect(error?.kind).toBe("bad-request");
    expect(error?.message).toMatch(/Unsupported parameter: 'max_completion_tokens' \(param max_completion_tokens\)$/);
    expect(fake.requests).toHaveLength(2);
  });
});

describe("MO-7 the endpoint", () => {
  it("keeps a query (Azure's api-version) and uses a base URL that already ends in /chat/completions as is", async () => {
    fake = await startFake([
      { kind: "stream", chunks: [chunk.finish("stop")] },
      { kind: "stream", chunks: [chunk.finish("stop")] },
    ]);
    await collect(model({ baseUrl: `${fake.url}/?api-version=2024-10-21` }));
    await collect(model({ baseUrl: `${fake.url}/chat/completions` }));
    expect(fake.requests.map((r) => r.url)).toEqual(["/v1/chat/completions?api-version=2024-10-21", "/v1/chat/completions"]);
  });

  it("refuses a key or header that HTTP cannot carry when constructed, not as a retried network error", () => {
    expect(() => new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:1/v1", model: "m", apiKey: "sk-a\nb" })).toThrow(
      /HTTP cannot carry/,
    );
    expect(() => new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:1/v1", model: "m", apiKey: "sk-…" })).toThrow(/HTTP cannot carry/);
    expect(() => new OpenAICompatibleModel({ baseUrl: "ftp://x/v1", model: "m" })).toThrow(/must start with http/);
  });
});

describe("MO-14 network failures", () => {
  it("describeCause digs the OS error out of fetch's cause chain, AggregateError included", () => {
    const refused = (address: string, port: number) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}:${port}`), {
        code: "ECONNREFUSED",
        errno: -111,
        syscall: "connect",
        address,
        port,
      });
    const aggregate = Object.assign(new AggregateError([refused("::1", 8080), refused("127.0.0.1", 8080)], ""), { code: "ECONNREFUSED" });
    const fetchFailed = new TypeError("fetch failed", { cause: aggregate });
    expect(describeCause(fetchFailed).text).toBe("ECONNREFUSED ::1:8080, ECONNREFUSED 127.0.0.1:8080");
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND api.nowhere.invalid"), {
      code: "ENOTFOUND",
      hostname: "api.nowhere.invalid",
    });
    expect(describeCause(new TypeError("fetch failed", { cause: dns })).text).toBe("ENOTFOUND api.nowhere.invalid");
    const socket = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
    expect(describeCause(new TypeError("terminated", { cause: socket })).text).toBe("UND_ERR_SOCKET: other side closed");
  });

  it("a server that closes the connection before answering is a network error naming the URL and the cause", async () => {
    const { createServer } = await import("node:net");
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    try {
      const m = new OpenAICompatibleModel({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "m", maxRetries: 0 });
      const { error } = await collect(m);
      expect(error?.kind).toBe("network");
      expect(error?.message).toBe(`cannot reach http://127.0.0.1:${port}/v1/chat/completions: UND_ERR_SOCKET: other side closed`);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("https to a plain-http server is named with a hint and not retried", async () => {
    fake = await startFake([]);
    const port = new URL(fake.url).port;
    const m = new OpenAICompatibleModel({ baseUrl: `https://127.0.0.1:${port}/v1`, model: "m", maxRetries: 3, backoffMs: 5000 });
    const { error } = await collect(m);
    expect(error?.kind).toBe("network");
    expect(error?.retryable).toBe(false);
    expect(error?.message).toMatch(
      new RegExp(
        `^cannot reach https://127\\.0\\.0\\.1:${port}/v1/chat/completions: ERR_SSL_WRONG_VERSION_NUMBER: .*\\(is the server plain http\\? then use http://\\)$`,
      ),
    );
  });

  it("a host name that does not resolve is not retried", () => {
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND api.nowhere.invalid"), {
      code: "ENOTFOUND",
      hostname: "api.nowhere.invalid",
    });
    const e = networkError("https://api.nowhere.invalid/v1/chat/completions", new TypeError("fetch failed", { cause: dns }), "connect");
    expect(e.message).toBe("cannot reach https://api.nowhere.invalid/v1/chat/completions: ENOTFOUND api.nowhere.invalid");
    expect(e.retryable).toBe(false);
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(networkError("http://x/v1/chat/completions", new TypeError("fetch failed", { cause: reset }), "connect").retryable).toBe(true);
  });

  it("MO-13 a cancel during a Retry-After wait ends the wait as cancelled", async () => {
    fake = await startFake([{ kind: "status", status: 503, body: "busy", headers: { "retry-after": "50" } }]);
    const ctl = new AbortController();
    const pending = collect(model({ maxRetryAfterMs: 120_000 }), ctl.signal);
    // abort once the server has answered the first request (the client is then waiting)
    while (fake.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    ctl.abort();
    const { error } = await pending;
    expect(error?.kind).toBe("cancelled");
    expect(fake.requests).toHaveLength(1);
  });
});
