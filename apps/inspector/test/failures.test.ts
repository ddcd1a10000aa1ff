/**
 * The inspector meets what can go wrong and keeps serving (IN-17 … IN-19), against real HTTP:
 * requests from other origins are refused everywhere; a stream whose branch disappears, whose log
 * is damaged, or whose reader never reads ends with a frame every SSE reader decodes (or a JSON
 * error), bounded; a hostile or damaged session's prompt is a JSON error — through the real
 * `strata serve` process, which is still answering afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordInputs } from "@strata/agent";
import { nodeId } from "@strata/dom";
import { decodeSse, decodeSseMessage, type Frame, Session } from "@strata/engine";
import { type EventId, openStore, type SessionId, type Store } from "@strata/store";
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, needsBuild, type Running, STATIC_DIR, startServer } from "../src/index.ts";
import { ROOT, type Served, strataServe } from "./sse-clients.ts";

/** SQLite itself, to damage a file the way a disk or a hand edit does (the store's own dependency). */
type Sql = { prepare(q: string): { run(...a: unknown[]): unknown }; close(): void };
const Database = createRequire(join(ROOT, "packages", "store", "package.json"))("better-sqlite3") as new (path: string) => Sql;

const BODY = nodeId(3);
let dir: string;
const dirs: string[] = [];
beforeAll(async () => {
  if (needsBuild()) await buildApp();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempStore(): { path: string; store: Store } {
  dir = mkdtempSync(join(tmpdir(), "strata-inspector-fail-"));
  dirs.push(dir);
  const path = join(dir, "s.db");
  return { path, store: openStore(path) };
}

function status(url: string, path: string, headers: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, url);
    const r = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        body += c;
        // a stream that was (wrongly) opened: enough to tell
        if ((res.headers["content-type"] ?? "").includes("event-stream")) res.destroy();
      });
      const done = () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body });
      res.on("end", done);
      res.on("close", done);
    });
    r.on("error", reject);
    r.end();
  });
}

/** Reads an SSE response to its end (or `limit` ms), returning the raw text. */
async function readStream(url: string, headers: Record<string, string> = {}, limit = 10_000): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(limit) });
  let text = "";
  try {
    for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) text += new TextDecoder().decode(c);
  } catch (e) {
    if ((e as Error).name !== "TimeoutError") throw e;
    text += "\n<timed out>";
  }
  return { status: res.status, text };
}

/** The frames of an SSE text as eventsource-parser reads them. */
function parsed(text: string): Frame[] {
  const out: Frame[] = [];
  const p = createParser({ onEvent: (m) => out.push(decodeSseMessage(m)) });
  p.feed(text);
  return out;
}

describe("IN-17 requests from other origins are refused on every endpoint", () => {
  let srv: Running;
  let sid: SessionId;
  beforeAll(async () => {
    const { store } = tempStore();
    const s = Session.create(store);
    sid = s.id;
    srv = await startServer({ store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
  });
  afterAll(() => srv.close());

  it("a foreign Origin, Origin null, or Sec-Fetch-Site cross-site/same-site gets 403; the server's own origin and plain clients pass", async () => {
    const own = new URL(srv.url).origin;
    const port = new URL(srv.url).port;
    const paths = ["/api/sessions", `/api/sessions/${sid}`, `/api/sessions/${sid}/stream`, `/api/sessions/${sid}/prompt`, "/", "/#/s/x"];
    for (const path of paths) {
      const refused: Record<string, string>[] = [
        { origin: "http://evil.example" },
        { origin: "null" },
        { origin: `http://localhost:${port}` }, // another origin, though a loopback one
        { origin: `${own}/path` },
        { "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
        { "sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "script" },
      ];
      for (const headers of refused) {
        const r = await status(srv.url, path, headers);
        expect({ path, headers, status: r.status }).toEqual({ path, headers, status: 403 });
        expect(r.type).toContain("application/json");
        expect(JSON.parse(r.body).error.message).toMatch(/cross-origin requests are refused/);
      }
      const allowed: Record<string, string>[] = [{}, { origin: own }, { "sec-fetch-site": "same-origin" }, { "sec-fetch-site": "none" }];
      for (const headers of allowed) {
        const r = await status(srv.url, path, headers);
        expect({ path, headers, status: r.status }).toEqual({ path, headers, status: 200 });
      }
    }
    // A link the user follows from elsewhere opens the app's page; it cannot open the API.
    const nav = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
    expect((await status(srv.url, "/", nav)).status).toBe(200);
    expect((await status(srv.url, "/api/sessions", nav)).status).toBe(403);
  });
});

describe("IN-18 every way a stream ends is a frame every reader decodes", () => {
  it("a branch that disappears mid-stream: gone@1, then the stream ends; reconnecting gets a JSON 404", async () => {
    const { path, store } = tempStore();
    const s = Session.create(store);
    s.fork(s.head.id, { name: "doomed" });
    const srv = await startServer({ store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
    try {
      const url = new URL(`/api/sessions/${s.id}/stream?branch=doomed&snapshot=1`, srv.url).href;
      const reading = readStream(url);
      await new Promise((r) => setTimeout(r, 150));
      const sql = new Database(path);
      sql.prepare("DELETE FROM branches WHERE session = ? AND name = ?").run(s.id, "doomed");
      sql.close();
      const { status: code, text } = await reading;
      expect({ code, text: text.slice(0, 300) }).toMatchObject({ code: 200 });
      expect(text).not.toContain("<timed out>");
      const frames = decodeSse(text);
      expect(frames.map((f) => f.type)).toEqual(["snapshot", "gone"]);
      expect(parsed(text)).toEqual(frames.map((f) => (f.type === "event" ? { ...f, label: null, by: null } : f)));
      expect(frames[1]).toMatchObject({ type: "gone", branch: "doomed", session: s.id });
      const again = await status(srv.url, `/api/sessions/${s.id}/stream?branch=doomed`, {});
      expect(again.status).toBe(404);
      expect(again.type).toContain("application/json");
    } finally {
      await srv.close();
    }
  });

  it("a damaged event: the events before it, then error@1 naming it (and a slow retry); a reconnect at it gets a JSON 500", async () => {
    const { path, store } = tempStore();
    const s = Session.create(store);
    const from = s.head.id;
    const ids: EventId[] = [];
    for (let i = 0; i < 4; i++) ids.push(s.commit([["ins", BODY, null, { tag: "turn", text: `t${i}` }]], { label: "turn.add" }).id);
    const bad = ids[2] as EventId;
    const sql = new Database(path);
    sql.prepare("UPDATE events SET data = ?, blob = NULL WHERE id = ?").run('{"ops":[["nope"]]}', bad);
    sql.close();
    const srv = await startServer({ store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
    try {
      const { status: code, text } = await readStream(new URL(`/api/sessions/${s.id}/stream?from=${from}&snapshot=1`, srv.url).href);
      expect(code).toBe(200);
      expect(text).not.toContain("<timed out>");
      expect(text).toMatch(/retry: 30000\n\nevent: error@1\n/);
      const frames = decodeSse(text);
      expect(frames.map((f) => f.type)).toEqual(["snapshot", "event", "event", "error"]);
      expect(frames.at(-1)).toMatchObject({ type: "error", code: "bad-event", event: bad });
      expect(parsed(text)).toHaveLength(4);
      const again = await status(srv.url, `/api/sessions/${s.id}/stream`, { "last-event-id": String(ids[1]) });
      expect(again.status).toBe(500);
      expect(JSON.parse(again.body).error.message).toMatch(/the stream cannot start/);
    } finally {
      await srv.close();
    }
  });

  it("a reader that never reads is not buffered without bound: it is let go, and the server keeps serving", async () => {
    const { store } = tempStore();
    const s = Session.create(store);
    const srv = await startServer({ store, port: 0, staticDir: STATIC_DIR, pollMs: 10, maxBufferBytes: 64 * 1024, stallMs: 300 });
    try {
      const u = new URL(srv.url);
      const sock = connect(Number(u.port), u.hostname);
      sock.pause(); // never reads
      sock.write(`GET /api/sessions/${s.id}/stream HTTP/1.1\r\nHost: 127.0.0.1:${u.port}\r\n\r\n`);
      await new Promise((r) => setTimeout(r, 100));
      const big = "y".repeat(256 * 1024);
      let written = 0;
      for (let i = 0; i < 80; i++) {
        s.commit([["ins", BODY, null, { tag: "out", text: `${i}${big}` }]]);
        written += big.length;
        await new Promise((r) => setTimeout(r, 15));
      }
      await new Promise((r) => setTimeout(r, 800));
      // Now read what was sent: the connection has been closed by the server, far short of all of it.
      let got = 0;
      const ended = new Promise<void>((resolve) => {
        sock.on("data", (c: Buffer) => {
          got += c.length;
        });
        sock.on("close", () => resolve());
        sock.on("error", () => resolve());
      });
      sock.resume();
      await Promise.race([
        ended,
        new Promise((_, ko) => setTimeout(() => ko(new Error("the server kept the stalled stream open")), 10_000)),
      ]);
      expect(got).toBeLessThan(written / 2);
      expect((await fetch(new URL("/api/sessions", srv.url))).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});

describe("IN-19 a hostile or damaged session's prompt is one JSON error; strata serve keeps serving", () => {
  let served: Served;
  const sessions: Record<string, SessionId> = {};
  beforeAll(async () => {
    const { path, store } = tempStore();
    const templates: Record<string, string> = {
      runtime: "You are helpful.\n  {{ nope(1) }}",
      listDoubling: `{% set l = [1,2,3,4,5,6,7,8] %}\n${"{% set l = l + l %}".repeat(24)}{{ l | length }}`,
      stringDoubling: `{% set s = "xxxxxxxx" %}\n${"{% set s = s ~ s %}".repeat(27)}{{ s | length }}`,
      fine: 'Open items: {{ count(select("turn")) }}',
    };
    for (const [name, source] of Object.entries(templates)) {
      const s = Session.create(store, { title: name });
      recordInputs(s, { templates: { system: source }, tools: [{ name: "t", description: "a tool", parameters: { type: "object" } }] });
      s.commit([["ins", BODY, null, { tag: "turn", attrs: { role: "user" }, text: "hi" }]], { label: "turn.user" });
      sessions[name] = s.id;
    }
    // A damaged store: a tool schema blob that is not JSON (the renderer meets a SyntaxError).
    const damaged = Session.create(store, { title: "damaged" });
    recordInputs(damaged, { templates: { system: "ok" }, tools: [{ name: "t", description: "d", parameters: { type: "object", x: 1 } }] });
    sessions.damaged = damaged.id;
    store.close();
    const sql = new Database(path);
    sql.prepare("UPDATE blobs SET data = ? WHERE data = ?").run(Buffer.from("{not json"), Buffer.from('{"type":"object","x":1}'));
    sql.close();
    served = await strataServe(path);
  }, 120_000);
  afterAll(() => served?.stop());

  const get = async (path: string) => {
    const res = await fetch(new URL(path, served.url));
    return { status: res.status, body: (await res.json()) as { error?: Record<string, unknown> } };
  };

  it("a template that fails or builds a huge value is a 422 naming the template's line and column", async () => {
    for (const name of ["runtime", "listDoubling", "stringDoubling"]) {
      const r = await get(`/api/sessions/${sessions[name]}/prompt`);
      expect({ name, status: r.status }).toEqual({ name, status: 422 });
      expect(r.body.error).toMatchObject({ status: 422, code: "template-error", template: "system" });
      expect(r.body.error?.line).toEqual(expect.any(Number));
      expect(r.body.error?.column).toEqual(expect.any(Number));
      expect(String(r.body.error?.message)).toMatch(/system template cannot be rendered here: system:\d+:\d+: /);
      expect((await get("/api/sessions")).status).toBe(200);
    }
    const runtime = (await get(`/api/sessions/${sessions.runtime}/prompt`)).body.error;
    expect(runtime).toMatchObject({ line: 2, reason: "render" });
    for (const name of ["listDoubling", "stringDoubling"])
      expect((await get(`/api/sessions/${sessions[name]}/prompt`)).body.error).toMatchObject({
        reason: "limit",
        limit: expect.any(String),
      });
    expect(served.proc.exitCode).toBe(null);
  }, 60_000);

  it("an unexpected failure is a 500 JSON with a message, and the next request is answered", async () => {
    const r = await get(`/api/sessions/${sessions.damaged}/prompt`);
    expect(r.status).toBe(500);
    expect(String(r.body.error?.message)).toMatch(/internal error: SyntaxError/);
    const fine = await fetch(new URL(`/api/sessions/${sessions.fine}/prompt`, served.url));
    expect(fine.status).toBe(200);
    expect(((await fine.json()) as { request: { system: string } }).request.system).toBe("Open items: 1");
    expect(served.proc.exitCode).toBe(null);
  });
});
