/**
 * The agent loop on every storage port (decision 0038): the same scripted runs on SQLite, on the
 * asynchronous port over SQLite (every promise settled on a later turn, so a forgotten `await`
 * shows) and on PostgreSQL. Each run streams reasoning, text and arguments, runs a tool with
 * progress and an observation stored as a blob, records the files a tool wrote through a tracker
 * on the same store, and stops. The trees are the same on every port, every request equals the
 * prompt rendered again at its event, the log verifies, and a resume from another handle settles
 * what a stopped process left running, while the stopped writer can no longer write (AG-18).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Element, toXml } from "@strata/dom";
import { loadTree, type Port, Session, verifyPort } from "@strata/engine";
import { type AsyncStore, asyncStore, drive, HeadConflict, openStore, type Store } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";
import { afterAll, describe, expect, inject, it } from "vitest";
import { type ModelRequest, renderPrompt, runAgent, ToolRegistry, type ToolSpec, WorkspaceTracker, workspaceTools } from "../src/index.ts";
import { AgentBlobs } from "../src/port.ts";
import { InlineModel, providerValid, type Turn } from "./agent-kit.ts";

interface PortKind {
  readonly name: string;
  /** A new handle on one place, as another process would open it. */
  opener(): () => Promise<Port>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function sqlite(wrap: (s: Store) => Port): () => () => Promise<Port> {
  return () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-agent-port-"));
    const opened: Store[] = [];
    cleanups.push(() => {
      for (const s of opened) if (!s.closed) s.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return async () => {
      const s = openStore(join(dir, "s.db"));
      opened.push(s);
      return wrap(s);
    };
  };
}

let schemas = 0;
const PORTS: readonly PortKind[] = [
  { name: "SQLite", opener: sqlite((s) => s) },
  { name: "the asynchronous port over SQLite", opener: sqlite((s) => asyncStore(s, { defer: true })) },
  {
    name: "PostgreSQL",
    opener() {
      const schema = `a${process.pid}_${Date.now().toString(36)}_${schemas++}`;
      const opened: AsyncStore[] = [];
      cleanups.push(async () => {
        for (const s of opened) if (!s.closed) await s.close();
      });
      return async () => {
        const s = await openPgStore(inject("pgUrl"), { schema, max: 4 });
        opened.push(s);
        return s;
      };
    },
  },
];

/** A tool that streams progress and answers more than fits inline (its observation becomes a blob). */
const report: ToolSpec = {
  name: "report",
  description: "writes a long report",
  parameters: { type: "object", properties: { lines: { type: "number" } } },
  replayPolicy: "safe",
  handler: async (args, ctx) => {
    const n = (args as { lines: number }).lines;
    for (let i = 0; i < n; i++) ctx.output?.(`line ${i}\n`);
    return "r".repeat(5_000);
  },
};

const SCRIPT: Turn[] = [
  {
    reasoning: "First I plan, then I write.",
    text: "Planning the work.",
    calls: [
      { name: "todo", args: { items: [{ text: "write the file", status: "in_progress" }] } },
      { name: "report", args: { lines: 40 } },
    ],
    usage: [120, 30],
  },
  { calls: [{ name: "write_file", args: { path: "out.txt", content: "made by the agent\n" } }], usage: [160, 12] },
  { text: "All done.", calls: [{ name: "submit", args: { summary: "wrote out.txt" } }], usage: [200, 4] },
];

/** The tree with what differs between any two runs (ids of sessions, times, the workspace's directory) left out. */
function comparable(xml: string): string {
  return xml.replace(/ (ts|session|dir|at|started|created)="[^"]*"/g, "");
}

async function scriptedRun(open: () => Promise<Port>): Promise<{ xml: string; requests: ModelRequest[]; root: string }> {
  const store = await open();
  const root = mkdtempSync(join(tmpdir(), "strata-agent-port-ws-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "notes.txt"), "buy milk\n");
  const registry = new ToolRegistry([...workspaceTools({ root }), report]);
  const session = await Session.create(store);
  const model = new InlineModel(SCRIPT);
  const result = await runAgent(session, {
    model,
    registry,
    task: "Write out.txt",
    templates: { system: 'Work carefully. {{ count(select("todo item[status!=completed]")) }} open.' },
    context: { "AGENTS.md": "Be brief." },
    limits: { call: { inlineChars: 1_000 } },
    workspace: new WorkspaceTracker(root, store),
  });
  expect(result).toMatchObject({ stop: "completed-by-tool", steps: 3, calls: 4, effective: 4, tokens: 526 });
  expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("made by the agent\n");
  // Every request equals the prompt rendered again at the event before its turn (PR-15, L3).
  const starts = (await session.log()).filter((e) => e.label === "turn.start");
  expect(starts).toHaveLength(3);
  for (const [i, e] of starts.entries()) {
    expect(providerValid(model.requests[i] as ModelRequest)).toBeUndefined();
    expect(await renderPrompt(session, { at: e.prior as never })).toEqual(model.requests[i]);
  }
  const report_ = session.select("call[tool=report]")[0] as Element;
  const blob = report_.children.find((c) => c.tag === "diag" && c.attrs.kind === "blob")?.attrs.hash as string;
  expect((await store.getBlob(blob))?.toString()).toBe("r".repeat(5_000));
  expect(report_.children.find((c) => c.tag === "output")?.text).toBe(Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(""));
  expect(session.selectOne("turn reasoning")?.text).toBe("First I plan, then I write.");
  expect(
    session
      .select("workspace file")
      .map((f) => f.attrs.path)
      .sort(),
  ).toEqual(["notes.txt", "out.txt"]);
  expect((await verifyPort(store, session.id)).ok).toBe(true);
  const xml = toXml(session.tree);
  // Another handle (a new process) reads the same tree.
  const again = (await Session.open(await open(), session.id)).session;
  expect(toXml(await loadTree(again.durableTree))).toBe(xml);
  return { xml, requests: model.requests, root };
}

const baseline = { xml: "", requests: [] as ModelRequest[] };

describe.each(PORTS)("the agent on $name", (port) => {
  it("AG-1 AG-7 WS-22 a run streams, stores its blobs and files, and stops; the tree is the same on every port", async () => {
    const run = await scriptedRun(port.opener());
    if (baseline.xml === "") Object.assign(baseline, run);
    expect(comparable(run.xml)).toBe(comparable(baseline.xml));
    expect(run.requests).toEqual(baseline.requests);
  });

  it("AG-9 AG-13 AG-18 another handle resumes what a stopped process left running; the stopped writer is refused", async () => {
    const open = port.opener();
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const hang: ToolSpec = {
      name: "hang",
      description: "waits",
      parameters: { type: "object" },
      handler: async () => {
        started();
        await held;
        return "late";
      },
    };
    const registry = new ToolRegistry([hang]);
    const first = await Session.create(await open());
    const model = new InlineModel([{ text: "Waiting.", calls: [{ name: "hang", args: {} }] }, { text: "Resumed." }]);
    const stale = runAgent(first, { model, registry, task: "wait" });
    await running;
    // The process "stops" here: another handle opens the branch and resumes it.
    const { session, work } = await Session.open(await open(), first.id);
    expect(work.spawn.map((w) => w.element.attrs.tool)).toEqual(["hang"]);
    const resumed = await runAgent(session, { model, registry });
    expect(resumed.stop).toBe("end-turn");
    expect(session.selectOne("call[tool=hang]")?.attrs.status).toBe("interrupted");
    expect(session.select("body > turn[role=assistant] > text").map((t) => t.text)).toEqual(["Waiting.", "Resumed."]);
    // The first writer wakes up after the resume: its outcome is refused, nothing of it is stored.
    const head = session.head.id;
    release();
    await expect(stale).rejects.toBeInstanceOf(HeadConflict);
    const check = (await Session.open(await open(), first.id)).session;
    expect(check.head.id).toBe(head);
    expect((await verifyPort(check.store, check.id)).ok).toBe(true);
  });
});

describe("decision 0038 the loop's blobs over the asynchronous port", () => {
  it("a fetch that starts the cache again keeps what the read needs (found by review: a cached template was dropped)", async () => {
    const open = PORTS[1]?.opener() as () => Promise<Port>;
    const store = await open();
    const writer = AgentBlobs.of(store);
    const template = writer.put("the system template");
    for (let i = 0; i < 1_023; i++) writer.put(`part ${i}`);
    await drive(writer.flushSteps());
    const context = (await store.putBlob("a context file")) as string;
    await drive(writer.fetchSteps([template, context]));
    expect(writer.text(template)).toBe("the system template");
    expect(writer.text(context)).toBe("a context file");
    // What was put is written again at the next flush, even if written before (a rolled-back flush wrote nothing).
    writer.put("the system template");
    await drive(writer.flushSteps());
    expect((await store.getBlob(template))?.toString()).toBe("the system template");
  });
});
