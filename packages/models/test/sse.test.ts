/** The event-stream reader (MO-15) on byte streams cut at every possible place. */
import { ModelError } from "@strata/agent/model";
import { describe, expect, it } from "vitest";
import { readSse, type SseEvent } from "../src/index.ts";

async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function read(text: string | Uint8Array, size = Number.MAX_SAFE_INTEGER, max?: number): Promise<SseEvent[]> {
  const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const out: SseEvent[] = [];
  for await (const e of readSse(pieces(bytes, size), max)) out.push(e);
  return out;
}

const ev = (data: string, event = "message", terminated = true): SseEvent => ({ event, data, terminated });

describe("MO-15 readSse", () => {
  const stream =
    '\uFEFF: hello\r\nretry: 10\r\n\r\ndata: {"a":"é🌍"}\r\n\r\nevent: error\ndata: one\ndata: two\n\ndata:no-space\rdata:  two spaces\r\rfield-without-colon\n\ndata\n\n';
  const expected = [ev('{"a":"é🌍"}'), ev("one\ntwo", "error"), ev("no-space\n two spaces"), ev("")];

  it("reads LF, CRLF and lone CR line endings, comments, named events, a BOM, multi-line data", async () => {
    expect(await read(stream)).toEqual(expected);
  });

  it("gives the same events however the bytes are split (CRLF pairs, UTF-8 characters, the BOM)", async () => {
    const bytes = new TextEncoder().encode(stream);
    for (let size = 1; size <= 9; size++) expect(await read(bytes, size)).toEqual(expected);
  });

  it("yields an event the stream ended inside, marked unterminated", async () => {
    expect(await read('data: {"x":1}\n\ndata: [DONE]')).toEqual([ev('{"x":1}'), ev("[DONE]", "message", false)]);
    expect(await read("data: a\n")).toEqual([ev("a", "message", false)]);
    expect(await read("data: a\r")).toEqual([ev("a", "message", false)]);
    expect(await read(": only a comment")).toEqual([]);
  });

  it("a CR at the end of one chunk and LF at the start of the next are one line break", async () => {
    const out: SseEvent[] = [];
    async function* two(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode("data: a\r");
      yield new TextEncoder().encode("\ndata: b\r");
      yield new TextEncoder().encode("\n\r\n");
    }
    for await (const e of readSse(two())) out.push(e);
    expect(out).toEqual([ev("a\nb")]);
  });

  it("bounds a line and an event's data", async () => {
    const long = `data: ${"x".repeat(2000)}`;
    await expect(read(long, 100, 1000)).rejects.toThrow(/longer than 1000 characters/);
    await expect(read(`${"data: xxxxxxxx\n".repeat(200)}\n`, 64, 1000)).rejects.toThrow(ModelError);
  });

  it("is linear: 50 000 small events in one chunk and in 7-byte pieces", async () => {
    const big = 'data: {"choices":[{"delta":{"content":"x"}}]}\n\n'.repeat(50_000);
    expect((await read(big)).length).toBe(50_000);
    expect((await read(big, 7)).length).toBe(50_000);
  }, 20_000);
});
