/**
 * The inspector on PostgreSQL (issue 15, decision 0038): the same agent run recorded in a SQLite
 * file and in a PostgreSQL schema, served by `startServer` over each store, answers the same
 * sessions, events, tree, prompt, files, file and file diff. Over PostgreSQL the live stream is
 * woken by LISTEN/NOTIFY when another handle (another machine) commits: with the poll set to a
 * minute, the frame still arrives at once.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAgent, ToolRegistry, WorkspaceTracker, workspaceTools } from "@strata/agent";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { type AsyncStore, openStore, type Store } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp, needsBuild, type Running, STATIC_DIR, startServer } from "../src/index.ts";
import { HOSTILE, Scripted } from "./fixture.ts";

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "strata-inspector-pg-"));
  dirs.push(d);
  return d;
};

const tools = (root: string) =>
  new ToolRegistry([
    { name: "fetch", description: "fetch a page", parameters: { type: "object" }, replayPolicy: "safe", handler: async () => HOSTILE },
    ...workspaceTools({ root }),
  ]);

const SCRIPT = [
  { text: "Looking it up.", tool: "fetch", args: { url: "https://example.com" } },
  { text: "Writing it down.", tool: "write_file", args: { path: "notes/page.md", content: "# The page\n\nIt was fetched.\n" } },
  { text: "Finished.", tool: "submit", args: { summary: "noted" } },
];

/** One recorded run in `store`: the id of its session. */
async function record(store: Store | AsyncStore): Promise<string> {
  const root = tempDir();
  writeFileSync(join(root, "README.md"), "the workspace\n");
  const session = await Session.create(store, { title: "inspector on both ports" });
  const r = await runAgent(session, {
    model: new Scripted(SCRIPT),
    registry: tools(root),
    task: "Fetch the page and write notes",
    workspace: new WorkspaceTracker(root, store),
  });
  expect(r.stop).toBe("completed-by-tool");
  await session.close();
  return session.id;
}

/** The answer to `path` (JSON, or the text of an XML answer). */
async function get(srv: Running, path: string): Promise<unknown> {
  const res = await fetch(new URL(path, srv.url));
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  return (res.headers.get("content-type") ?? "").includes("json") ? res.json() : res.text();
}

/** What differs between two recordings of one run: times, ids of sessions and events, directories. */
function comparable(x: unknown): string {
  return JSON.stringify(x)
    .replace(/\b(ts|created|lastActivity|acquired)\\?"\s*[:=]\s*\\?"?[0-9]+/g, "$1:T")
    .replace(/ (ts|dir)=\\"[^"\\]*\\"/g, "")
    .replace(/0[0-9A-HJKMNP-TV-Z]{25}/g, "ID")
    .replace(/strata-inspector-pg-[A-Za-z0-9]{6}/g, "DIR");
}

let sqlite: Store;
let pg: AsyncStore;
let pgUrl: string;
const servers: Running[] = [];
const ids = { sqlite: "", pg: "" };
beforeAll(async () => {
  if (needsBuild()) await buildApp();
  sqlite = openStore(join(tempDir(), "s.db"));
  pgUrl = `${inject("pgUrl")}?schema=inspector_${process.pid}_${Date.now().toString(36)}`;
  pg = await openPgStore(pgUrl, { max: 4 });
  ids.sqlite = await record(sqlite);
  ids.pg = await record(pg);
}, 120_000);
afterAll(async () => {
  for (const s of servers) await s.close();
  sqlite?.close();
  await pg?.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("IN-2 … IN-5, IN-22 … IN-24 the inspector on PostgreSQL answers what it answers on SQLite", () => {
  it("sessions, session, events, an event, the tree (JSON, XML, a selector), text, diff, prompt, files, file and file diff", async () => {
    const a = await startServer({ store: sqlite, port: 0, staticDir: STATIC_DIR });
    const b = await startServer({ store: pg, port: 0, staticDir: STATIC_DIR });
    servers.push(a, b);
    const events = async (srv: Running, id: string) =>
      (await get(srv, `/api/sessions/${id}/events?limit=5000`)) as { events: { id: number; label: string }[] };
    const ea = await events(a, ids.sqlite);
    const eb = await events(b, ids.pg);
    expect(eb.events.map((e) => e.label)).toEqual(ea.events.map((e) => e.label));
    const first = (e: typeof ea, label: string) => e.events.find((x) => x.label === label)?.id as number;
    const baselineA = first(ea, "workspace.baseline");
    const baselineB = first(eb, "workspace.baseline");
    // Element ids are the same on both: the same ops made both trees.
    const text = ((await get(a, `/api/sessions/${ids.sqlite}/tree?select=turn > text`)) as { matches: number[] }).matches[0];
    expect(text).toBeTypeOf("number");
    const paths = (id: string, baseline: number, turn: number) => [
      "/api/sessions",
      `/api/sessions/${id}`,
      `/api/sessions/${id}/event/${turn}`,
      `/api/sessions/${id}/tree`,
      `/api/sessions/${id}/tree?full=1`,
      `/api/sessions/${id}/tree?format=xml`,
      `/api/sessions/${id}/tree?select=call[status=executed]`,
      `/api/sessions/${id}/text?id=${text}`,
      `/api/sessions/${id}/children?id=3`,
      `/api/sessions/${id}/diff?from=${turn}`,
      `/api/sessions/${id}/prompt`,
      `/api/sessions/${id}/prompt?at=${turn}`,
      `/api/sessions/${id}/files`,
      `/api/sessions/${id}/file?path=notes/page.md`,
      `/api/sessions/${id}/filediff?from=${baseline}`,
    ];
    const pa = paths(ids.sqlite, baselineA, first(ea, "turn.end"));
    const pb = paths(ids.pg, baselineB, first(eb, "turn.end"));
    for (const [i, path] of pa.entries()) {
      const x = await get(a, path);
      const y = await get(b, pb[i] as string);
      expect(comparable(y), path).toBe(comparable(x));
    }
    const file = (await get(b, `/api/sessions/${ids.pg}/file?path=notes/page.md`)) as { content: { text: string } };
    expect(file.content.text).toBe("# The page\n\nIt was fetched.\n");
    const diff = (await get(b, `/api/sessions/${ids.pg}/filediff?from=${baselineB}`)) as { changes: { path: string; change: string }[] };
    expect(diff.changes.map((c) => `${c.change} ${c.path}`)).toEqual(["added notes/page.md"]);
  });

  it("IN-5 the live stream is woken by a commit from another handle (LISTEN/NOTIFY), not by its poll", async () => {
    const srv = await startServer({ store: pg, port: 0, staticDir: STATIC_DIR, pollMs: 60_000 });
    servers.push(srv);
    const url = new URL(`/api/sessions/${ids.pg}/stream`, srv.url);
    let received = "";
    let opened = false;
    const req = request(url, (res) => {
      opened = true;
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        received += c;
      });
    });
    req.end();
    try {
      for (let i = 0; i < 100 && !opened; i++) await new Promise((r) => setTimeout(r, 50));
      expect(opened).toBe(true);
      // Let the server's follower set up its LISTEN, then write from another handle, as another machine would.
      await new Promise((r) => setTimeout(r, 1_000));
      const other = await openPgStore(pgUrl, { max: 2 });
      try {
        const s = (await Session.open(other, ids.pg as never)).session;
        await s.commit([["ins", nodeId(3), null, { tag: "note", text: "from elsewhere" }]], { label: "note.add" });
        await s.close();
      } finally {
        await other.close();
      }
      const t0 = Date.now();
      while (!received.includes("note.add") && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
      expect(received).toContain("event: patch@1");
      expect(received).toContain("from elsewhere");
      // The poll is a minute: only the notification can have woken the stream this soon.
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      req.destroy();
    }
  });
});
