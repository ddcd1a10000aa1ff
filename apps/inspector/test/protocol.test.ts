/**
 * IN-20, IN-21: one protocol for server and page. Every endpoint of `ENDPOINTS` is answered by
 * its route on the real server with its response's shape; the router matches exactly the paths
 * the page builds, and a path no endpoint has is refused as before the table (session, then
 * branch, then `no endpoint`); the page takes only types from the packages; the build follows
 * the protocol module.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  APP_ROOT,
  ENDPOINTS,
  type Endpoint,
  needsBuild,
  PAGE_SOURCES,
  pathOf,
  type Running,
  STATIC_DIR,
  startServer,
} from "../src/index.ts";
import { match, segmentsOf } from "../src/router.ts";
import { type Fixture, recordedSession } from "./fixture.ts";
import { commitFiles } from "./workspace-fixture.ts";

let fx: Fixture;
let srv: Running;
beforeAll(async () => {
  fx = await recordedSession();
  // Only /api/ paths are asked for here: the web app need not be built.
  srv = await startServer({ store: fx.store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
});
afterAll(async () => {
  await srv.close();
  fx.cleanup();
});

/** A raw request (the path is sent as given, not normalized). */
function call(path: string, method = "GET"): Promise<{ status: number; type: string; body: string }> {
  const u = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const r = request({ host: u.hostname, port: u.port, path, method }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body }));
    });
    r.on("error", reject);
    r.end();
  });
}

/** The error message of a JSON answer (undefined for an answer that is not an error). */
const message = (body: string): string | undefined => (JSON.parse(body) as { error?: { message: string } }).error?.message;

describe("IN-20 one protocol, one route table", () => {
  it("every endpoint answers on the real server with its response's keys", async () => {
    // a workspace, so the file endpoints have a file to answer with
    commitFiles(fx.session, [{ path: "a.txt", bytes: "one\n" }], "workspace.baseline");
    commitFiles(fx.session, [{ path: "a.txt", bytes: "two\n" }], "call.end");
    const s = fx.session.id;
    const head = fx.session.head.id;
    const first = fx.session.log()[0]?.id as number;
    // One request per endpoint: a Record over the protocol's endpoints, so a new one needs its line here.
    const cases: Record<Endpoint, { path: string; query?: string; keys: string[] }> = {
      sessions: { path: pathOf("sessions", {}), keys: ["sessions"] },
      session: { path: pathOf("session", { session: s }), keys: ["branches", "created", "id", "metadata", "title"] },
      events: { path: pathOf("events", { session: s }), keys: ["branch", "events", "head", "offset", "total"] },
      event: { path: pathOf("event", { session: s, event: head }), keys: ["by", "depth", "id", "kind", "label", "ops", "prior", "ts"] },
      tree: { path: pathOf("tree", { session: s }), keys: ["event", "hwm", "root", "size"] },
      children: { path: pathOf("children", { session: s }), query: "id=1", keys: ["children", "event", "id", "more"] },
      text: { path: pathOf("text", { session: s }), query: "id=1", keys: ["event", "id", "text"] },
      diff: { path: pathOf("diff", { session: s }), query: `from=${first}`, keys: ["diff", "from", "to"] },
      prompt: { path: pathOf("prompt", { session: s }), keys: ["event", "request"] },
      files: { path: pathOf("files", { session: s }), keys: ["bytes", "dir", "event", "files", "offset", "total", "tracked"] },
      file: { path: pathOf("file", { session: s }), query: "path=a.txt", keys: ["content", "event", "file"] },
      filediff: { path: pathOf("filediff", { session: s }), query: `from=${first}`, keys: ["changes", "from", "offset", "to", "total"] },
      conversation: { path: pathOf("conversation", { session: s }), keys: ["body", "calls", "earlier", "event", "items"] },
      stream: { path: pathOf("stream", { session: s }), keys: [] },
    };
    expect(Object.keys(cases).sort()).toEqual(Object.keys(ENDPOINTS).sort());
    for (const [endpoint, c] of Object.entries(cases)) {
      const path = c.query === undefined ? c.path : `${c.path}?${c.query}`;
      if (endpoint === "stream") {
        // HEAD: the stream's headers without opening it.
        const r = await call(path, "HEAD");
        expect({ endpoint, status: r.status, type: r.type }).toEqual({ endpoint, status: 200, type: "text/event-stream; charset=utf-8" });
        continue;
      }
      const r = await call(path);
      expect({ endpoint, status: r.status, type: r.type }).toEqual({ endpoint, status: 200, type: "application/json; charset=utf-8" });
      expect({ endpoint, keys: Object.keys(JSON.parse(r.body)).sort() }).toEqual({ endpoint, keys: c.keys });
    }
    // The other shapes of the tree endpoint: matches and XML.
    expect(Object.keys(JSON.parse((await call(`${pathOf("tree", { session: s })}?select=call`)).body)).sort()).toEqual([
      "event",
      "matches",
    ]);
    expect((await call(`${pathOf("tree", { session: s })}?format=xml`)).type).toBe("application/xml; charset=utf-8");
  });

  it("the router matches exactly the paths the page builds, decoded, and no path names two endpoints", () => {
    const awkward = { session: "a/b c%é?#", event: 7 };
    for (const e of Object.keys(ENDPOINTS) as Endpoint[]) {
      const path = pathOf(e, awkward);
      const found = match(segmentsOf(path));
      expect(found?.endpoint).toBe(e);
      for (const [name, value] of Object.entries(found?.params ?? {})) expect(value).toBe(String(awkward[name as keyof typeof awkward]));
    }
    // Two paths of one length differ in a segment both have as text: no request can match two.
    const patterns = Object.values(ENDPOINTS).map((x) => segmentsOf(x.path));
    for (const [i, a] of patterns.entries())
      for (const b of patterns.slice(i + 1))
        if (a.length === b.length) expect(a.some((seg, k) => !seg.startsWith(":") && !b[k]?.startsWith(":") && seg !== b[k])).toBe(true);
  });

  it("a path no endpoint has is 404 naming what is missing: the session, the branch, else the endpoint", async () => {
    const s = fx.session.id;
    const cases: [string, number, string][] = [
      ["/api/nope", 404, "no endpoint /api/nope"],
      ["/api/", 404, "no endpoint /api/"],
      ["/api/sessions/NOPE/bogus", 404, "no session NOPE"],
      ["/api/sessions/a%2Fb", 404, "no session a/b"],
      [`/api/sessions/${s}/bogus?branch=nope`, 404, `session ${s} has no branch "nope"`],
      [`/api/sessions/${s}/bogus`, 404, `no endpoint /api/sessions/${s}/bogus`],
      // Exact paths: a segment more or less is no endpoint.
      [`/api/sessions/${s}/events/extra`, 404, `no endpoint /api/sessions/${s}/events/extra`],
      [`/api/sessions/${s}/tree/x`, 404, `no endpoint /api/sessions/${s}/tree/x`],
      [`/api/sessions/${s}/event`, 404, `no endpoint /api/sessions/${s}/event`],
      // The endpoint's own checks, in its order.
      [`/api/sessions/${s}/event/abc`, 400, '"abc" is not an event id'],
      [`/api/sessions/${s}/event/999999`, 404, `event 999999 is not an event of session ${s}`],
      [`/api/sessions/${s}/tree?branch=nope&at=abc`, 404, `session ${s} has no branch "nope"`],
      [`/api/sessions/${s}/tree?at=abc`, 400, '"abc" is not an event id'],
      [`/api/sessions/${s}/diff`, 400, "an event id is required (?at=EVENT)"],
      [`/api/sessions/${s}/text?id=999999`, 404, `no element 999999 at event ${fx.session.head.id}`],
    ];
    for (const [path, status, text] of cases) {
      const r = await call(path);
      expect({ path, status: r.status, type: r.type, message: message(r.body) }).toEqual({
        path,
        status,
        type: "application/json; charset=utf-8",
        message: text,
      });
    }
  });

  it("empty segments and percent-encoded letters name the same endpoint; every method but GET and HEAD is 405 first", async () => {
    const s = fx.session.id;
    for (const path of ["/api/sessions/", "/api//sessions", "/api/%73essions", `/api/sessions/${s}/`, `/api/sessions//${s}/events/`])
      expect({ path, status: (await call(path)).status }).toEqual({ path, status: 200 });
    expect((await call("/api/sessions", "HEAD")).status).toBe(200);
    for (const path of ["/api/sessions", "/api/nope", `/api/sessions/${s}/tree`, "/"]) {
      const r = await call(path, "POST");
      expect({ path, status: r.status, message: message(r.body) }).toEqual({
        path,
        status: 405,
        message: "the inspector is read-only: only GET and HEAD",
      });
    }
  });
});

/** The page's modules: web/ and the protocol module it imports. */
function pageModules(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith(".ts")) out.push(join(dir, e.name));
  };
  walk(join(APP_ROOT, "web"));
  return [...out, join(APP_ROOT, "src", "protocol.ts")];
}

describe("IN-21 the page takes only types from the packages", () => {
  it("every import of a strata package in the page is `import type`; no Node.js module or global; relative imports stay in web/ or are the protocol", () => {
    const modules = pageModules();
    expect(modules.length).toBeGreaterThan(10);
    for (const file of modules) {
      const source = readFileSync(file, "utf8");
      const imports = [
        ...source.matchAll(/^\s*import\s+([^'"]*?)["']([^"']+)["']/gm),
        ...source.matchAll(/^\s*export\s+([^'"=]*?\sfrom\s+)["']([^"']+)["']/gm),
      ];
      for (const [, clause, spec] of imports) {
        const at = `${relative(APP_ROOT, file)}: ${spec}`;
        if (spec?.startsWith("@strata/")) expect({ at, clause }).toEqual({ at, clause: expect.stringMatching(/^type\s/) });
        expect({ at, node: spec?.startsWith("node:") }).toEqual({ at, node: false });
        if (spec?.startsWith(".")) {
          const target = relative(APP_ROOT, join(dirname(file), spec as string));
          expect({ at, target }).toEqual({ at, target: expect.stringMatching(/^(web\/|src\/protocol\.ts$)/) });
        }
      }
      if (file.endsWith("protocol.ts")) for (const [, clause] of imports) expect(clause).toMatch(/^type\s/);
      // The page's type-check sees Node's types through the store's (better-sqlite3's), so it would
      // not refuse Node's globals: this does.
      const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
      const node = /\b(Buffer|process|require|__dirname|__filename|setImmediate)\b/.exec(code)?.[0];
      expect({ at: relative(APP_ROOT, file), node }).toEqual({ at: relative(APP_ROOT, file), node: undefined });
    }
  });
});

describe("IN-9 the build follows every page source", () => {
  it("app/ is stale when web/, the Vite config or the protocol module is newer", () => {
    const root = mkdtempSync(join(tmpdir(), "strata-inspector-build-"));
    try {
      const files = ["web/main.ts", "web/views/tree.ts", "vite.config.ts", "src/protocol.ts", "src/server.ts", "app/index.html"];
      for (const f of files) {
        mkdirSync(dirname(join(root, f)), { recursive: true });
        writeFileSync(join(root, f), "");
        utimesSync(join(root, f), 1000, 1000);
      }
      utimesSync(join(root, "app/index.html"), 2000, 2000);
      expect(needsBuild(root)).toBe(false);
      // the server's own modules are not the page's
      utimesSync(join(root, "src/server.ts"), 3000, 3000);
      expect(needsBuild(root)).toBe(false);
      for (const f of ["web/views/tree.ts", "vite.config.ts", "src/protocol.ts"]) {
        utimesSync(join(root, f), 3000, 3000);
        expect({ f, stale: needsBuild(root) }).toEqual({ f, stale: true });
        utimesSync(join(root, f), 1000, 1000);
      }
      expect(PAGE_SOURCES).toContain("src/protocol.ts");
      rmSync(join(root, "app/index.html"));
      expect(needsBuild(root)).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
