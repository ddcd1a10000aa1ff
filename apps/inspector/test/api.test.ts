/** IN-1 … IN-9: the inspector server against a real store and real HTTP. */

import { nodeId, sanitizeText, toSnapshot } from "@strata/dom";
import { decodeSse, type Frame, materialize, Replica, SseDecoder } from "@strata/engine";
import type { EventId } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, needsBuild, type Running, STATIC_DIR, startServer } from "../src/index.ts";
import { type Fixture, HOSTILE, recordedSession } from "./fixture.ts";

let fx: Fixture;
let srv: Running;
beforeAll(async () => {
  fx = await recordedSession();
  if (needsBuild()) await buildApp();
  srv = await startServer({ store: fx.store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
});
afterAll(async () => {
  await srv.close();
  fx.cleanup();
});

const get = (path: string, init?: RequestInit) => fetch(new URL(path, srv.url), init);
const getJson = async <T = Record<string, unknown>>(path: string): Promise<T> => (await (await get(path)).json()) as T;

describe("IN-2 … IN-4 JSON endpoints", () => {
  it("lists sessions, branches with fork points, paged events, event payloads", async () => {
    const { sessions } = await getJson<{ sessions: { id: string; events: number }[] }>("/api/sessions");
    expect(sessions.map((s) => s.id)).toEqual([fx.session.id]);
    const info = await getJson<{ branches: { name: string; origin: string; originEvent: number | null }[] }>(
      `/api/sessions/${fx.session.id}`,
    );
    expect(info.branches.map((b) => b.name).sort()).toEqual(["alt", "main"]);
    expect(info.branches.find((b) => b.name === "alt")?.origin).toBe("fork");
    const page = await getJson<{ total: number; events: { id: number; depth: number }[] }>(
      `/api/sessions/${fx.session.id}/events?offset=5&limit=3`,
    );
    expect(page.total).toBe(fx.session.head.depth);
    expect(page.events.map((e) => e.depth)).toEqual([6, 7, 8]);
    const ev = await getJson<{ ops: unknown[] }>(`/api/sessions/${fx.session.id}/event/${page.events[0]?.id}`);
    expect(Array.isArray(ev.ops)).toBe(true);
  });

  it("the tree at any event as JSON or XML, selector matches, diffs and prompts", async () => {
    const log = fx.session.log();
    const early = log.find((e) => e.label === "turn.user")?.id as number;
    const t = await getJson<{ root: { tag: string }; size: number }>(`/api/sessions/${fx.session.id}/tree?at=${early}`);
    expect(t.root.tag).toBe("session");
    const xmlRes = await get(`/api/sessions/${fx.session.id}/tree?format=xml`);
    expect(xmlRes.headers.get("content-type")).toContain("application/xml");
    expect(await xmlRes.text()).toContain("&lt;img src=x onerror=alert(1)&gt;");
    const m = await getJson<{ matches: number[] }>(
      `/api/sessions/${fx.session.id}/tree?select=${encodeURIComponent("call[status=executed]")}`,
    );
    expect(m.matches).toHaveLength(3);
    const d = await getJson<{ diff: { added: unknown[] } }>(`/api/sessions/${fx.session.id}/diff?from=${early}&to=${fx.session.head.id}`);
    expect(d.diff.added.length).toBeGreaterThan(0);
    const p = await getJson<{ request: { messages: { role: string; content: string }[] } }>(`/api/sessions/${fx.session.id}/prompt`);
    expect(p.request.messages.find((x) => x.role === "tool")?.content).toBe(sanitizeText(HOSTILE));
  });

  it("IN-6 errors are JSON with a status: unknown session, bad event, bad selector, writes refused", async () => {
    expect((await get("/api/sessions/NOPE")).status).toBe(404);
    expect((await get(`/api/sessions/${fx.session.id}/tree?at=abc`)).status).toBe(400);
    expect((await get(`/api/sessions/${fx.session.id}/tree?at=999999`)).status).toBe(404);
    const bad = await get(`/api/sessions/${fx.session.id}/tree?select=${encodeURIComponent("call[")}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/selector/);
    for (const method of ["POST", "PUT", "DELETE", "PATCH"])
      expect((await get(`/api/sessions/${fx.session.id}`, { method })).status).toBe(405);
  });
});

describe("IN-5 the live stream", () => {
  it("sends events after the cursor in the article's framing, then new ones, and honours Last-Event-ID", async () => {
    const ctl = new AbortController();
    const from = fx.session.head.id;
    const res = await get(`/api/sessions/${fx.session.id}/stream?from=${from}`, { signal: ctl.signal });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    fx.session.commit([["ins", nodeId(2), null, { tag: "note", text: "live" }]], { label: "note.add", by: "test" });
    let text = "";
    while (!text.includes("note.add")) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toMatch(
      /: note\.add\nevent: patch@1\nid: \d+\nby: test\ndata: \{"ops":\[\["ins",2,null,\{"tag":"note","text":"live"\}\]\]\}\n\n/,
    );
    const frames = decodeSse(text.replace(/^retry: \d+\n\n/, ""));
    expect(frames.at(-1)).toMatchObject({ type: "event", label: "note.add", by: "test" });
    ctl.abort();
    // reconnect with Last-Event-ID: only what came after it
    const again = await get(`/api/sessions/${fx.session.id}/stream`, {
      headers: { "last-event-id": String(from) },
      signal: AbortSignal.timeout(1500),
    });
    const r2 = (again.body as ReadableStream<Uint8Array>).getReader();
    let t2 = "";
    while (!t2.includes("note.add")) t2 += new TextDecoder().decode((await r2.read()).value);
    expect(t2.match(/event: patch@1/g)).toHaveLength(1);
    await r2.cancel();
  });

  it("IN-18 ?snapshot=1 and a reset after a rewind carry the canonical snapshot a Replica loads", async () => {
    const ctl = new AbortController();
    const start = fx.session.head.id;
    const res = await get(`/api/sessions/${fx.session.id}/stream?snapshot=1`, { signal: ctl.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const frames: Frame[] = [];
    const decoder = new SseDecoder((f) => frames.push(f));
    const until = async (type: string) => {
      while (!frames.some((f) => f.type === type)) decoder.push((await reader.read()).value as Uint8Array);
    };
    await until("snapshot");
    const target = fx.session.log().at(-3)?.id as EventId;
    fx.session.rewind(target);
    await until("reset");
    ctl.abort();
    const replica = new Replica();
    for (const f of frames) replica.apply(f);
    expect(frames.map((f) => f.type)).toEqual(["snapshot", "reset"]);
    expect(frames[0]).toMatchObject({ event: start, tree: toSnapshot(materialize(fx.store, start)) });
    expect(replica.event).toBe(target);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(fx.session.durableTree));
  });

  it("IN-18 a reconnect with Last-Event-ID gets no snapshot and nothing twice, even with ?snapshot=1", async () => {
    const from = fx.session.head.id;
    fx.session.commit([["ins", nodeId(2), null, { tag: "note", text: "after" }]], { label: "note.after" });
    const res = await get(`/api/sessions/${fx.session.id}/stream?snapshot=1`, {
      headers: { "last-event-id": String(from) },
      signal: AbortSignal.timeout(3000),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("note.after")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(decodeSse(text).map((f) => f.type)).toEqual(["event"]);
  });
});

describe("IN-7 … IN-9 static app, headers, tokens", () => {
  it("without a token, only loopback Host names are answered (no DNS rebinding); bad escapes are 400", async () => {
    const { request } = await import("node:http");
    const status = (path: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(srv.url);
        const r = request({ host: u.hostname, port: u.port, path, headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        r.on("error", reject);
        r.end();
      });
    expect(await status("/api/sessions", "evil.example:80")).toBe(403);
    expect(await status("/api/sessions", "localhost:1234")).toBe(200);
    expect(await status("/api/sessions", "[::1]:1234")).toBe(200);
    expect(await status("/%E0%A4%A", "127.0.0.1")).toBe(400);
  });

  it("serves the app with a CSP that forbids inline script, and correct content types", async () => {
    const res = await get("/");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res.text();
    const js = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1] as string;
    expect((await get(`/${js}`)).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await (await get("/..%2f..%2f..%2f..%2fetc%2fpasswd")).text()).not.toContain("root:"); // normalized inside app/
    expect(await (await get("/../../etc/passwd")).text()).not.toContain("root:"); // the URL is normalized: the app's page, not the file
    expect((await get("/nope.js")).status).toBe(404);
  });

  it("off loopback, a token is required on every request", async () => {
    const guarded = await startServer({ store: fx.store, port: 0, host: "127.0.0.1", token: "s3cret-token", staticDir: STATIC_DIR });
    try {
      expect((await fetch(new URL("/api/sessions", guarded.url))).status).toBe(401);
      expect((await fetch(new URL("/api/sessions?token=wrong-token", guarded.url))).status).toBe(401);
      expect((await fetch(new URL("/api/sessions?token=s3cret-token", guarded.url))).status).toBe(200);
      expect((await fetch(new URL("/api/sessions", guarded.url), { headers: { authorization: "Bearer s3cret-token" } })).status).toBe(200);
      // opening the page with ?token= sets a cookie, so its assets load without the query
      const page = await fetch(new URL("/?token=s3cret-token", guarded.url));
      const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0] as string;
      expect(cookie).toBe("strata_token=s3cret-token");
      expect(page.headers.get("set-cookie")).toContain("HttpOnly");
      const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(await page.text())?.[1] as string;
      expect((await fetch(new URL(`/${asset}`, guarded.url))).status).toBe(401);
      expect((await fetch(new URL(`/${asset}`, guarded.url), { headers: { cookie } })).status).toBe(200);
    } finally {
      await guarded.close();
    }
    const open = await startServer({ store: fx.store, port: 0, host: "0.0.0.0", staticDir: STATIC_DIR });
    try {
      expect(open.token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    } finally {
      await open.close();
    }
  });
});

describe("IN-15 large trees arrive windowed", () => {
  it("long child lists are elided and fetched by range; long texts are cut and fetched whole", async () => {
    const big = "x".repeat(5000);
    fx.session.commit(
      [
        [
          "ins",
          nodeId(2),
          null,
          { tag: "log", children: Array.from({ length: 1000 }, (_, i) => ({ tag: "line", attrs: { n: String(i) } })) },
        ],
      ],
      { label: "log.add" },
    );
    fx.session.commit([["ins", nodeId(2), null, { tag: "big", text: big }]], { label: "big.add" });
    const t = await getJson<{ root: { children: { tag: string; children: Record<string, unknown>[] }[] } }>(
      `/api/sessions/${fx.session.id}/tree`,
    );
    const meta = t.root.children.find((c) => c.tag === "meta") as { children: Record<string, unknown>[] };
    const log = meta.children.find((c) => c.tag === "log") as { id: number; children: Record<string, unknown>[] };
    expect(log.children).toHaveLength(221);
    const gap = log.children[20] as { elided: { after: number; before: number } };
    expect(gap.elided.after).toBe((log.children[19] as { id: number }).id);
    expect(gap.elided.before).toBe((log.children[21] as { id: number }).id);
    const more = await getJson<{ children: { attrs: { n: string } }[]; more: boolean }>(
      `/api/sessions/${fx.session.id}/children?id=${log.id}&after=${gap.elided.after}&before=${gap.elided.before}&limit=5`,
    );
    expect(more.children.map((c) => c.attrs.n)).toEqual(["20", "21", "22", "23", "24"]);
    expect(more.more).toBe(true);
    const rest = await getJson<{ children: unknown[]; more: boolean }>(
      `/api/sessions/${fx.session.id}/children?id=${log.id}&after=${gap.elided.after}&before=${gap.elided.before}&limit=2000`,
    );
    expect(rest.children).toHaveLength(780);
    expect(rest.more).toBe(false);
    const bigEl = meta.children.find((c) => c.tag === "big") as { id: number; text: string; textLength: number };
    expect(bigEl.text).toHaveLength(2000);
    expect(bigEl.textLength).toBe(5000);
    expect((await getJson<{ text: string }>(`/api/sessions/${fx.session.id}/text?id=${bigEl.id}`)).text).toBe(big);
  });

  it("a tree wide and deep at once is cut at a per-response element budget; the rest is fetched from /children", async () => {
    const rows = Array.from({ length: 150 }, (_, i) => ({
      tag: "row",
      attrs: { n: String(i) },
      children: Array.from({ length: 150 }, () => ({ tag: "cell" })),
    }));
    fx.session.commit([["ins", nodeId(3), null, { tag: "grid", children: rows }]], { label: "grid.add" });
    const t = await getJson<{ root: Json }>(`/api/sessions/${fx.session.id}/tree`);
    type Json = { id: number; tag: string; children?: (Json | { elided: { after?: number; before: number } })[] };
    let shown = 0;
    const gaps: { parent: number; after?: number; before: number }[] = [];
    const walk = (n: Json) => {
      shown++;
      for (const c of n.children ?? [])
        if ("elided" in c) gaps.push({ parent: n.id, ...c.elided });
        else walk(c);
    };
    walk(t.root);
    expect(shown).toBeLessThanOrEqual(20_000);
    const open = gaps.find((g) => g.before === 0);
    expect(open).toBeDefined();
    const q = new URLSearchParams({ id: String(open?.parent), before: "0", limit: "2000" });
    if (open?.after !== undefined) q.set("after", String(open.after));
    const more = await getJson<{ children: unknown[]; more: boolean }>(`/api/sessions/${fx.session.id}/children?${q}`);
    expect(more.children.length).toBeGreaterThan(0);
    const full = await get(`/api/sessions/${fx.session.id}/tree?full=1`);
    expect(full.status).toBe(200);
  });
});
