/**
 * EN-25 / EN-26: the SSE framing against an independent reader. `eventsource-parser` (a spec
 * implementation nobody on this project wrote) and `SseDecoder` read the same random streams of
 * strata frames — CR, LF and CRLF line ends, a BOM, comments, keep-alives, multi-line data,
 * `retry:`, unknown fields — cut into chunks at random byte positions (inside CRLF pairs and
 * multi-byte characters too), and must agree on every event, id and data; `SseDecoder` must also
 * give back exactly the frames that were encoded, labels and `by` included. Seeded:
 * STRATA_FC_SEED replays a run, STRATA_FC_RUNS sizes it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NodeId, nodeId, type Op, toSnapshot } from "@strata/dom";
import { type EventId, openStore } from "@strata/store";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeSse, decodeSseMessage, decodeSseStream, encodeSse, type Frame, Replica, Session, SseDecoder } from "../src/index.ts";
import { Journal } from "../src/internal.ts";

const RUNS = Number(process.env.STRATA_FC_RUNS ?? 150);
const SEED = process.env.STRATA_FC_SEED === undefined ? 0x5e5 : Number(process.env.STRATA_FC_SEED);
const BODY = nodeId(3);

/** Two real snapshots with text a framing could trip on: line breaks, `data:`, multi-byte characters. */
function snapshots(): string[] {
  const s = Session.create(openStore(":memory:"));
  const first = toSnapshot(s.tree);
  s.commit([["ins", BODY, null, { tag: "out", text: "line 1\nline 2\r\ndata: not a field\n\nevent: reset@1\n: é 😀 \u2028 \ufeff" }]]);
  s.commit([["ins", BODY, null, { tag: "turn", attrs: { role: "user", note: "a\nb:c" }, children: [{ tag: "p", text: "ü" }] }]]);
  return [first, toSnapshot(s.tree)];
}
const SNAPSHOTS = snapshots();

const CHARS = ["a", "z", " ", ":", "\n", "\r", "\t", "é", "😀", "\u2028", "\ufeff", "data: x", "id: 3", "\\", '"', "\u0085"];
const text = fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 20 });
const oneLineText = fc.string({ unit: fc.constantFrom(...CHARS.filter((c) => !/[\r\n]/.test(c))), maxLength: 12 });
const eventId = fc.integer({ min: 1, max: 2 ** 40 }).map((i) => i as EventId);
const node = fc.integer({ min: 1, max: 5000 }).map((i) => i as NodeId);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(node, fc.constantFrom("status", "x-y"), fc.option(text, { nil: null })).map(([id, k, v]): Op => ["set", id, k, v]),
  fc.tuple(node, text).map(([id, t]): Op => ["append", id, t]),
  fc.tuple(node, text).map(([id, t]): Op => ["text", id, t]),
  fc.tuple(node, fc.option(node, { nil: null }), text).map(([p, after, t]): Op => ["ins", p, after, { tag: "out", text: t }]),
  node.map((id): Op => ["rm", id]),
);
const frame: fc.Arbitrary<Frame> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant("event" as const),
      id: eventId,
      label: fc.option(oneLineText, { nil: null }),
      by: fc.option(oneLineText, { nil: null }),
      ops: fc.array(op, { maxLength: 4 }),
    }),
  },
  fc.record({
    type: fc.constantFrom("snapshot" as const, "reset" as const),
    event: eventId,
    branch: oneLineText,
    tree: fc.constantFrom(...SNAPSHOTS),
  }),
  fc.record({ type: fc.constant("chunk" as const), id: node, text }),
  fc.record({ type: fc.constant("lagged" as const), missed: fc.nat() }),
  fc.record({ type: fc.constant("gone" as const), session: fc.option(oneLineText, { nil: null }), branch: oneLineText, message: text }),
  fc.record({
    type: fc.constant("error" as const),
    code: fc.constantFrom("bad-event" as const, "bad-snapshot" as const, "too-large" as const, "internal" as const),
    message: text,
    event: fc.option(eventId, { nil: null }),
  }),
);

/** How one encoded frame is dressed on the wire: what any SSE writer may do without changing it. */
interface Dress {
  readonly keepAliveBefore: boolean;
  readonly retryBefore: number | null;
  /** Pretty-printed JSON: data over several `data:` lines. */
  readonly multiLine: boolean;
  readonly noSpace: boolean;
  /** A comment or unknown field after the `event:` line (never directly above it: that is the label). */
  readonly extraLine: "none" | "comment" | "unknown-field";
}
const dress: fc.Arbitrary<Dress> = fc.record({
  keepAliveBefore: fc.boolean(),
  retryBefore: fc.option(fc.nat({ max: 60_000 }), { nil: null, freq: 4 }),
  multiLine: fc.boolean(),
  noSpace: fc.boolean(),
  extraLine: fc.constantFrom("none" as const, "comment" as const, "unknown-field" as const),
});

function dressed(f: Frame, d: Dress): string[] {
  const lines = encodeSse(f).split("\n").slice(0, -2);
  const out: string[] = [];
  if (d.keepAliveBefore) out.push(": keep-alive", "");
  if (d.retryBefore !== null) out.push(`retry: ${d.retryBefore}`, "");
  for (const line of lines) {
    if (line.startsWith("data: ") && d.multiLine) {
      for (const l of JSON.stringify(JSON.parse(line.slice(6)), null, 1).split("\n")) out.push(`data: ${l}`);
      continue;
    }
    // `field:value` reads as `field: value` unless the value itself starts with a space.
    out.push(d.noSpace && !line.startsWith(":") ? line.replace(/^([a-z]+): (?! )/, "$1:") : line);
    if (line.startsWith("event: ") && d.extraLine === "comment") out.push(": a comment, not a label");
    if (line.startsWith("event: ") && d.extraLine === "unknown-field") out.push("x-unknown: ignored");
  }
  out.push("");
  return out;
}

const EOL = { lf: "\n", cr: "\r", crlf: "\r\n" } as const;
const stream = fc.record({
  frames: fc.array(fc.tuple(frame, dress), { minLength: 1, maxLength: 12 }),
  eol: fc.constantFrom("lf" as const, "cr" as const, "crlf" as const, "mixed" as const),
  mix: fc.array(fc.constantFrom("\n", "\r", "\r\n"), { minLength: 1, maxLength: 7 }),
  bom: fc.boolean(),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }),
});

interface Stream {
  readonly frames: readonly (readonly [Frame, Dress])[];
  readonly eol: "lf" | "cr" | "crlf" | "mixed";
  readonly mix: readonly string[];
  readonly bom: boolean;
}

function wire(s: Stream): string {
  const lines = s.frames.flatMap(([f, d]) => dressed(f, d));
  // Ends with a keep-alive block, so a reader that waits for what follows a final CR has it.
  lines.push(": end", "");
  let i = 0;
  let prev = "";
  const eol = (line: string): string => {
    let e = s.eol === "mixed" ? (s.mix[i++ % s.mix.length] as string) : EOL[s.eol];
    // CR then an empty line ended by LF is one CRLF: the empty line would vanish.
    if (prev === "\r" && line === "" && e.startsWith("\n")) e = "\r";
    prev = e;
    return e;
  };
  return (s.bom ? "\ufeff" : "") + lines.map((l) => l + eol(l)).join("");
}

function cut(bytes: Uint8Array, at: readonly number[]): Uint8Array[] {
  const points = [...new Set(at.map((x) => Math.floor(x * bytes.length)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  return out;
}

/** eventsource-parser's reading of the chunks, as strata frames (it drops labels and `by`). */
function reference(chunks: readonly Uint8Array[]): { frames: Frame[]; retry: number | undefined } {
  const messages: EventSourceMessage[] = [];
  let retry: number | undefined;
  const parser = createParser({ onEvent: (m) => messages.push(m), onRetry: (r) => (retry = r) });
  const utf8 = new TextDecoder(); // drops the BOM, as a browser's decoder does
  for (const c of chunks) parser.feed(utf8.decode(c, { stream: true }));
  parser.feed(utf8.decode());
  return { frames: messages.map((m) => decodeSseMessage(m)), retry };
}

const plain = (f: Frame): Frame => (f.type === "event" ? { ...f, label: null, by: null } : f);

describe("EN-25 SSE framing read as the standard reads it", () => {
  it("every frame kind round-trips, gone@1 and error@1 included, and a leading BOM is dropped", () => {
    const frames: Frame[] = [
      { type: "snapshot", event: 4 as EventId, branch: "main", tree: SNAPSHOTS[1] as string },
      { type: "event", id: 5 as EventId, label: "todo.done", by: "e41", ops: [["set", nodeId(412), "status", "completed"]] },
      { type: "chunk", id: nodeId(9), text: "a\r\nb" },
      { type: "lagged", missed: 3 },
      { type: "reset", event: 4 as EventId, branch: "main", tree: SNAPSHOTS[0] as string },
      { type: "gone", session: "01ABC", branch: "main", message: "branch main of session 01ABC no longer exists" },
      { type: "error", code: "bad-event", message: "event 7 does not decode", event: 7 as EventId },
    ];
    const text = frames.map(encodeSse).join("");
    expect(decodeSse(text)).toEqual(frames);
    expect(decodeSse(`\ufeff${text}`)).toEqual(frames);
    expect(decodeSse(text.replace(/\n/g, "\r\n"))).toEqual(frames);
    expect(decodeSse(text.replace(/\n/g, "\r"))).toEqual(frames);
    // Only the stream's first character may be a BOM: a second one starts an unknown field.
    expect(() => decodeSse(`\ufeff\ufeff${encodeSse(frames[2] as Frame)}`)).toThrow(/kind "message"/);
  });

  it("a snapshot frame's tree is the canonical snapshot, byte for byte, even sent over many data: lines", () => {
    const f: Frame = { type: "reset", event: 9 as EventId, branch: "main", tree: SNAPSHOTS[1] as string };
    const pretty = encodeSse(f).replace(/^data: ([^\n]*)$/m, (_, json: string) =>
      JSON.stringify(JSON.parse(json), null, 2)
        .split("\n")
        .map((l) => `data: ${l}`)
        .join("\n"),
    );
    expect(pretty.match(/^data:/gm)?.length).toBeGreaterThan(10);
    expect(decodeSse(pretty)).toEqual([f]);
  });

  it("decodeSseStream keeps the raw unfinished block, CR and all, to prepend to the next read", () => {
    const a = encodeSse({ type: "lagged", missed: 1 }).replace(/\n/g, "\r\n");
    const b = encodeSse({ type: "chunk", id: nodeId(2), text: "x" }).replace(/\n/g, "\r\n");
    for (let i = 0; i <= (a + b).length; i++) {
      const first = decodeSseStream((a + b).slice(0, i));
      const second = decodeSseStream(first.rest + (a + b).slice(i));
      expect([...first.frames, ...second.frames]).toEqual(decodeSse(a + b));
      expect(second.rest).toBe("");
    }
  });

  it("a frame that cannot be read throws, naming it; the frames before it are handed out and reading goes on after it", () => {
    const good = encodeSse({ type: "lagged", missed: 2 });
    const got: Frame[] = [];
    const d = new SseDecoder((f) => got.push(f));
    expect(() => d.push(`${good}event: patch@1\nid: 4\ndata: {"ops":[["nope"]]}\n\n${good}`)).toThrow(/patch@1.*id 4.*do not decode/);
    expect(got).toHaveLength(1);
    d.push("");
    expect(got).toHaveLength(2);
    expect(() => decodeSse("event: ping@9\ndata: {}\n\n")).toThrow(/kind "ping@9"/);
    expect(() => decodeSse("event: chunk@1\ndata: {}\n\n")).toThrow(/element id/);
    expect(() => decodeSse("event: error@1\ndata: []\n\n")).toThrow(/not a JSON object/);
  });

  it("a frame longer than maxFrameChars is refused instead of buffered without end", () => {
    const d = new SseDecoder(() => undefined, { maxFrameChars: 1000 });
    expect(() => d.push(`data: ${"x".repeat(2000)}`)).toThrow(/longer than 1000 characters/);
    expect(() => {
      for (let i = 0; i < 30; i++) d.push(`data: ${"y".repeat(50)}\n`);
    }).toThrow(/longer than 1000/);
  });

  it("reading is linear however the stream is cut: a 4 MB frame in 1 KB pieces", () => {
    const big: Frame = { type: "chunk", id: nodeId(2), text: "é".repeat(2_000_000) };
    const bytes = new TextEncoder().encode(encodeSse(big));
    const got: Frame[] = [];
    const d = new SseDecoder((f) => got.push(f));
    for (let i = 0; i < bytes.length; i += 1000) d.push(bytes.subarray(i, i + 1000));
    expect(got).toEqual([big]);
  }, 20_000);

  it("agrees with eventsource-parser on random frame streams cut at random byte positions", () => {
    fc.assert(
      fc.property(stream, (s) => {
        const bytes = new TextEncoder().encode(wire(s));
        const chunks = cut(bytes, s.cuts);
        const got: Frame[] = [];
        const d = new SseDecoder((f) => got.push(f));
        for (const c of chunks) d.push(c);
        d.end();
        const ref = reference(chunks);
        expect(got.map(plain)).toEqual(ref.frames);
        expect(got).toEqual(s.frames.map(([f]) => f));
        expect(d.retry).toBe(ref.retry);
        const ids = s.frames.map(([f]) => (f.type === "event" ? f.id : f.type === "snapshot" || f.type === "reset" ? f.event : null));
        expect(d.lastEventId).toBe(String(ids.filter((x) => x !== null).at(-1) ?? ""));
        // The same stream as text in one piece, and decodeSse on it.
        expect(decodeSse(wire(s))).toEqual(got);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("a connection cut mid-frame drops that frame; the next connection is a new stream", () => {
    const f: Frame = { type: "chunk", id: nodeId(3), text: "😀" };
    const bytes = new TextEncoder().encode(`\ufeff${encodeSse(f)}`);
    for (let i = 1; i < bytes.length - 1; i++) {
      const got: Frame[] = [];
      const d = new SseDecoder((x) => got.push(x));
      d.push(bytes.subarray(0, i));
      d.end();
      d.push(bytes);
      expect(got).toEqual([f]);
    }
  });
});

describe("EN-26 a replica reads a stream's end", () => {
  it("gone@1 and error@1 leave the replica's tree as it was and say why the stream ended", () => {
    const s = Session.create(openStore(":memory:"));
    const r = new Replica();
    const d = new SseDecoder((f) => r.apply(f));
    d.push(encodeSse({ type: "snapshot", event: s.head.id, branch: "main", tree: toSnapshot(s.tree) }));
    const before = toSnapshot(r.tree);
    d.push(encodeSse({ type: "error", code: "bad-event", message: "event 9 does not decode", event: 9 as EventId }));
    expect(toSnapshot(r.tree)).toBe(before);
    expect(r.ended).toMatchObject({ type: "error", event: 9 });
    d.push(encodeSse({ type: "reset", event: s.head.id, branch: "main", tree: toSnapshot(s.tree) }));
    expect(r.ended).toBeUndefined();
    d.push(encodeSse({ type: "gone", session: s.id, branch: "main", message: "gone" }));
    expect(r.ended?.type).toBe("gone");
  });
});

describe("EN-24 a subscription that cannot read the log from its cursor ends with an error frame", () => {
  it("its frames so far, then error (decodable, applied by a Replica as the stream's end), then done", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-sub-"));
    try {
      const path = join(dir, "s.db");
      const s = Session.create(openStore(path));
      const from = s.head.id;
      const ids: EventId[] = [];
      for (let i = 0; i < 3; i++) ids.push(s.commit([["ins", BODY, null, { tag: "t", text: `${i}` }]]).id);
      const Database = createRequire(join(import.meta.dirname, "..", "..", "store", "package.json"))("better-sqlite3");
      const sql = new Database(path);
      sql.prepare("UPDATE events SET data = ?, blob = NULL WHERE id = ?").run('{"ops":[["nope"]]}', ids[1]);
      sql.close();
      const sub = s.subscribe({ from });
      const frames: Frame[] = [];
      for (;;) {
        const r = await sub.next();
        if (r.done) break;
        frames.push(r.value);
      }
      expect(frames.map((f) => f.type)).toEqual(["snapshot", "error"]);
      expect(frames[1]).toMatchObject({ type: "error", code: "bad-event" });
      expect(decodeSse(frames.map(encodeSse).join(""))).toEqual(frames);
      const r = new Replica();
      for (const f of frames) r.apply(f);
      expect(r.event).toBe(from);
      expect(r.ended?.type).toBe("error");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("EN-25 SSE keep-alives and line breaks", () => {
  const frame: Frame = { type: "event", id: 9 as EventId, label: "x", by: null, ops: [] };

  it("skips blocks without data and ignores comment lines that are not directly above event:", () => {
    const wire = encodeSse(frame);
    expect(decodeSse(`: keep-alive\n\n${wire}:\n\n`)).toEqual([frame]);
    expect(decodeSse(`: ping\n${wire}`)).toEqual([frame]);
    const unlabeled: Frame = { type: "event", id: 8 as EventId, label: null, by: null, ops: [] };
    expect(decodeSse(encodeSse(unlabeled).replace("id:", ": ping\nid:"))).toEqual([unlabeled]);
    const leading: Frame = { type: "event", id: 7 as EventId, label: " leading", by: "", ops: [] };
    expect(decodeSse(encodeSse(leading))).toEqual([leading]);
  });

  it("a label or by with a line break is rejected at commit, and cannot be framed", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    expect(() => s.commit([["ins", BODY, null, { tag: "a" }]], { label: "tool.call\nsecond" })).toThrow(/one line of text/);
    expect(() => s.commit([["ins", BODY, null, { tag: "a" }]], { by: "e41\r" })).toThrow(/one line of text/);
    expect(() => Journal.open(store, s.id).commit({ ops: [], label: "a\nb" })).toThrow(/one line of text/);
    expect(s.log()).toHaveLength(1);
    expect(() => encodeSse({ ...frame, label: "a\nb" })).toThrow(/line break/);
  });
});
