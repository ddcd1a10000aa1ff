/**
 * Recorded-format streams (MO-19 … MO-21): every fixture in `fixtures/models/streams/` — written by
 * this project in the formats real providers' recordings use — is served by a real local HTTP server,
 * once whole and once in 1- and 3-byte writes (splitting `data:` lines, CRLF pairs and UTF-8
 * characters across network chunks), and must decode to the events in its `.expected.json`.
 *
 * `.chunks.txt`: one chunk's JSON a line, served as `data: <line>\n\n` each, then `data: [DONE]\n\n`.
 * `.sse`: served byte for byte.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ModelError, type ModelEvent, type ModelRequest } from "@strata/agent/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAICompatibleModel } from "../src/index.ts";
import { type FakeServer, startFake } from "./fake-openai.ts";

const DIR = join(import.meta.dirname, "../../../fixtures/models/streams");

interface Expected {
  readonly events: ModelEvent[];
  readonly error?: { readonly kind: string; readonly message: string };
}

const request: ModelRequest = {
  system: "",
  messages: [{ role: "user", content: "go" }],
  tools: [],
  settings: { provider: "openai", model: "m" },
};

function body(file: string): string {
  const text = readFileSync(join(DIR, file), "utf8");
  if (file.endsWith(".sse")) return text;
  return `${text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => `data: ${l}\n\n`)
    .join("")}data: [DONE]\n\n`;
}

/** Generated ids (`call_<reply>_<n>`) differ per reply; the expectation writes them `<generated>`. */
function normalize(events: ModelEvent[]): ModelEvent[] {
  return events.map((e) => (e.type === "tool-call" && /^call_[0-9a-f]{8}_\d+$/.test(e.id) ? { ...e, id: "<generated>" } : e));
}

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith(".sse") || f.endsWith(".chunks.txt"))
  .sort();

let fake: FakeServer;
beforeAll(async () => {
  fake = await startFake();
});
afterAll(async () => {
  await fake.close();
});

async function play(file: string, pieceBytes?: number): Promise<{ events: ModelEvent[]; error?: ModelError }> {
  fake.replies = [{ kind: "raw", body: body(file), ...(pieceBytes !== undefined ? { pieceBytes } : {}) }];
  const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m", maxRetries: 0 });
  const events: ModelEvent[] = [];
  try {
    for await (const e of model.stream(request, new AbortController().signal)) events.push(e);
    return { events };
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    return { events, error };
  }
}

describe("MO-19 recorded stream shapes decode to the expected events", () => {
  it("every fixture has an expectation, and there are fixtures of both formats", () => {
    expect(fixtures.filter((f) => f.endsWith(".sse")).length).toBeGreaterThan(3);
    expect(fixtures.filter((f) => f.endsWith(".chunks.txt")).length).toBeGreaterThan(10);
    for (const f of fixtures) expect(readdirSync(DIR)).toContain(f.replace(/\.(sse|chunks\.txt)$/, ".expected.json"));
  });

  for (const file of fixtures) {
    const expected = JSON.parse(readFileSync(join(DIR, file.replace(/\.(sse|chunks\.txt)$/, ".expected.json")), "utf8")) as Expected;
    for (const pieces of [undefined, 1, 3])
      it(`${file}${pieces === undefined ? "" : ` in ${pieces}-byte writes`}`, async () => {
        const { events, error } = await play(file, pieces);
        expect(normalize(events)).toEqual(expected.events);
        if (expected.error === undefined) expect(error).toBeUndefined();
        else {
          expect(error?.kind).toBe(expected.error.kind);
          expect(error?.message).toContain(expected.error.message);
          expect(error?.message).toContain(fake.url);
        }
      });
  }
});

describe("MO-19 with the agent loop", () => {
  it("Mistral's content parts: the loop records the reasoning and the whole answer, and never sends the reasoning back", async () => {
    const { openStore } = await import("@strata/store");
    const { Session } = await import("@strata/engine");
    const { ToolRegistry, runAgent } = await import("@strata/agent");
    fake.replies = [
      { kind: "raw", body: body("content-parts-thinking.chunks.txt"), pieceBytes: 5 },
      { kind: "raw", body: body("placeholder-first-chunk.chunks.txt") },
    ];
    const model = new OpenAICompatibleModel({ baseUrl: fake.url, model: "m", maxRetries: 0 });
    const s = Session.create(openStore(":memory:"));
    const registry = new ToolRegistry([]);
    expect((await runAgent(s, { model, registry, task: "12 * 12?" })).stop).toBe("end-turn");
    const turn = s.selectOne("body > turn[role=assistant]");
    expect(turn?.children.find((c) => c.tag === "text")?.text).toBe("144");
    expect(turn?.children.find((c) => c.tag === "reasoning")?.text).toBe("Twelve times twelve is 144.");
    expect((await runAgent(s, { model, registry, task: "thanks" })).stop).toBe("end-turn");
    const sent = JSON.stringify(fake.requests.at(-1)?.body);
    expect(sent).toContain('"content":"144"');
    expect(sent).not.toContain("Twelve times");
  });
});
