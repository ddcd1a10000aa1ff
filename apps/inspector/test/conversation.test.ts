/**
 * IN-26, IN-27 the conversation endpoint on the real server: a window of the body's children at
 * an event, the same element JSON the tree answers (no second model of the session), paged
 * backwards by `before=`, with each shown call's settle event and — when that event changed
 * files — the two ends of its file diff; bounded on a session of 10,000 steps (timed next to the
 * tree endpoint).
 */
import { byCall, LABEL } from "@strata/agent";
import { type NodeId, nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { type EventMeta, openStore } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConversationResponse, FileDiffResponse, NodeJson, TreeResponse } from "../src/index.ts";
import { type Running, STATIC_DIR, startServer } from "../src/index.ts";
import { type ConversationFixture, conversationSession } from "./conversation-fixture.ts";

let fx: ConversationFixture;
let srv: Running;

beforeAll(async () => {
  fx = await conversationSession();
  srv = await startServer({ store: fx.store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
}, 60_000);

afterAll(async () => {
  await srv?.close();
  fx?.cleanup();
});

async function get<T>(path: string): Promise<{ status: number; body: T }> {
  const r = await fetch(new URL(path, srv.url));
  return { status: r.status, body: (await r.json()) as T };
}

const conv = async (query = "", session = fx.session.id): Promise<ConversationResponse> => {
  const r = await get<ConversationResponse>(`/api/sessions/${session}/conversation${query}`);
  expect(r.status).toBe(200);
  return r.body;
};

/** The calls of some items, by tool name then status. */
function calls(items: readonly NodeJson[]): { id: number; tool: string; status: string }[] {
  const out: { id: number; tool: string; status: string }[] = [];
  const walk = (n: NodeJson) => {
    if (n.tag === "call") out.push({ id: n.id, tool: n.attrs.tool ?? "", status: n.attrs.status ?? "" });
    for (const c of n.children ?? []) if (!("elided" in c)) walk(c);
  };
  items.forEach(walk);
  return out;
}

describe("IN-26 the conversation at an event", () => {
  it("is the body's children as the tree answers them, in order, at the head by default", async () => {
    const c = await conv();
    const t = (await get<TreeResponse>(`/api/sessions/${fx.session.id}/tree`)).body;
    expect(c.event).toBe(fx.session.head.id);
    const body = (t.root.children ?? []).find((n): n is NodeJson => !("elided" in n) && n.tag === "body") as NodeJson;
    expect(c.body).toBe(body.id);
    // the same elements, the same JSON: one state, read the same way
    expect(c.items).toEqual(body.children);
    expect(c.earlier).toBe(false);
    expect(c.items.map((n) => `${n.tag}:${n.attrs.role ?? n.attrs.reason ?? ""}`)).toEqual([
      "turn:user",
      "turn:assistant",
      "turn:assistant",
      "turn:assistant",
      "turn:assistant",
      "turn:assistant",
      "stop:completed-by-tool",
      "turn:user",
      "turn:assistant",
      "stop:cancelled",
    ]);
    expect(calls(c.items).map((x) => `${x.tool} ${x.status}`)).toEqual([
      "read_file executed",
      "edit_file executed",
      "write_file executed",
      "run executed",
      "deploy not_executed",
      "read_file not_executed",
      "fetch_page executed",
      "lint executed",
      "submit executed",
      "run interrupted",
    ]);
  });

  it("pages backwards with before= and says when more precede; limit and before are checked", async () => {
    const all = await conv();
    const last3 = await conv("?limit=3");
    expect(last3.items.map((n) => n.id)).toEqual(all.items.slice(-3).map((n) => n.id));
    expect(last3.earlier).toBe(true);
    const before = await conv(`?limit=4&before=${last3.items[0]?.id}`);
    expect(before.items.map((n) => n.id)).toEqual(all.items.slice(-7, -3).map((n) => n.id));
    expect(before.earlier).toBe(true);
    const first = await conv(`?limit=500&before=${before.items[0]?.id}`);
    expect(first.items.map((n) => n.id)).toEqual(all.items.slice(0, -7).map((n) => n.id));
    expect(first.earlier).toBe(false);
    for (const q of ["?limit=0", "?limit=501", "?limit=x", "?before=-1"]) {
      const r = await get<{ error: { message: string } }>(`/api/sessions/${fx.session.id}/conversation${q}`);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
    }
    const turnText = calls(all.items)[0]?.id as number; // a call: not a child of <body>
    const r = await get<{ error: { message: string } }>(`/api/sessions/${fx.session.id}/conversation?before=${turnText}`);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("is not a child of <body>");
    expect((await get(`/api/sessions/${fx.session.id}/conversation?branch=nope`)).status).toBe(404);
    expect((await get("/api/sessions/nope/conversation")).status).toBe(404);
  });

  it("at an earlier event shows the conversation as it was there; another branch its own", async () => {
    const log = fx.session.log();
    const start = log.find((e) => e.label === LABEL.turnEnd) as EventMeta;
    const c = await conv(`?at=${start.id}`);
    expect(c.event).toBe(start.id);
    // the first reply ended: its call is pending, not settled yet
    expect(calls(c.items).map((x) => `${x.tool} ${x.status}`)).toEqual(["read_file pending"]);
    expect(c.calls).toEqual({});
    const alt = await conv("?branch=alt");
    const texts = JSON.stringify(alt.items);
    expect(texts).toContain("ALT-BRANCH");
    expect(texts).not.toContain("Run the slow tests.");
  });
});

describe("IN-27 what the log says of each call", () => {
  it("every settled call names its settle event; the calls that changed files carry the ends of their file diff", async () => {
    const c = await conv();
    const log = fx.session.log();
    for (const call of calls(c.items)) {
      const settle = log.findLast((e) => e.by === byCall(call.id) && (e.label === LABEL.callOutcome || e.label === LABEL.callInterrupted));
      expect({ call: call.tool, settled: c.calls[String(call.id)]?.settled }).toEqual({
        call: call.tool,
        settled: { id: settle?.id, depth: settle?.depth, label: settle?.label },
      });
    }
    const withFiles = calls(c.items).filter((x) => c.calls[String(x.id)]?.files !== undefined);
    expect(withFiles.map((x) => x.tool)).toEqual(["edit_file", "write_file"]);
    const edit = c.calls[String(withFiles[0]?.id)]?.files as { from: number; to: number };
    const d = (await get<FileDiffResponse>(`/api/sessions/${fx.session.id}/filediff?from=${edit.from}&to=${edit.to}`)).body;
    expect(d.changes.map((x) => `${x.change} ${x.path}`)).toEqual(["modified src/greet.ts"]);
    expect(d.changes[0]?.delta).toMatchObject({ kind: "text", added: 1, removed: 1 });
    const write = c.calls[String(withFiles[1]?.id)]?.files as { from: number; to: number };
    const w = (await get<FileDiffResponse>(`/api/sessions/${fx.session.id}/filediff?from=${write.from}&to=${write.to}`)).body;
    expect(w.changes.map((x) => `${x.change} ${x.path}`)).toEqual(["added CHANGES.md"]);
  });
});

describe("IN-26 large sessions", () => {
  it("a session of 10,000 steps answers one bounded window, in time comparable to the tree's", async () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { title: "10,000 steps" });
    const body = nodeId(3);
    const t0 = performance.now();
    let last: NodeId | null = null;
    for (let i = 0; i < 10_000; i++) {
      const turn = s.commit(
        [
          [
            "ins",
            body,
            last,
            {
              tag: "turn",
              attrs: { role: "assistant", status: "complete" },
              children: [
                { tag: "text", text: `step ${i}: reading module ${i % 97}` },
                {
                  tag: "call",
                  attrs: { id: `c${i}`, tool: "read_file", status: "pending", index: "0" },
                  children: [{ tag: "args", text: JSON.stringify({ path: `src/m${i % 97}.ts` }) }],
                },
              ],
            },
          ],
        ],
        { label: LABEL.turnEnd },
      );
      void turn;
      const turnEl = s.tree.get(body)?.lastChild;
      const call = turnEl?.lastChild?.id as NodeId;
      s.commit([["set", call, "status", "running"]], { label: LABEL.callStart, by: byCall(call) });
      s.commit(
        [
          ["set", call, "status", "executed"],
          ["ins", call, null, { tag: "result", text: `contents of m${i % 97}\n`.repeat(20) }],
        ],
        { label: LABEL.callOutcome, by: byCall(call) },
      );
      last = (turnEl?.id ?? null) as NodeId | null;
    }
    const built = performance.now() - t0;
    const big = await startServer({ store, port: 0, staticDir: STATIC_DIR });
    try {
      const time = async (path: string): Promise<{ ms: number; bytes: number; json: unknown }> => {
        const a = performance.now();
        const r = await fetch(new URL(path, big.url));
        const text = await r.text();
        expect(r.status).toBe(200);
        return { ms: performance.now() - a, bytes: text.length, json: JSON.parse(text) };
      };
      const head = s.head.id;
      const mid = head - 15_000;
      const base = `/api/sessions/${s.id}`;
      // first requests: the conversation also indexes the line's settle events (once)
      const tree1 = await time(`${base}/tree?at=${head}`);
      const conv1 = await time(`${base}/conversation?at=${head}`);
      const tree2 = await time(`${base}/tree?at=${mid}`);
      const conv2 = await time(`${base}/conversation?at=${mid}`);
      const conv3 = await time(`${base}/conversation?at=${head}`);
      const page = conv3.json as ConversationResponse;
      expect(page.items).toHaveLength(40);
      expect(page.earlier).toBe(true);
      expect(Object.keys(page.calls)).toHaveLength(40);
      const older = await time(`${base}/conversation?at=${head}&before=${page.items[0]?.id}&limit=200`);
      expect((older.json as ConversationResponse).items).toHaveLength(200);
      console.log(
        [
          `10,000 steps (${head} events) built in ${Math.round(built)} ms`,
          `tree at head: ${tree1.ms.toFixed(1)} ms, ${tree1.bytes} B`,
          `conversation at head (first, indexes the line): ${conv1.ms.toFixed(1)} ms, ${conv1.bytes} B`,
          `tree at an earlier event: ${tree2.ms.toFixed(1)} ms`,
          `conversation at that event: ${conv2.ms.toFixed(1)} ms`,
          `conversation at head again: ${conv3.ms.toFixed(1)} ms`,
          `200 earlier items: ${older.ms.toFixed(1)} ms, ${older.bytes} B`,
        ].join("\n"),
      );
      expect(conv3.bytes).toBeLessThan(tree1.bytes);
    } finally {
      await big.close();
      store.close();
    }
  }, 300_000);
});
