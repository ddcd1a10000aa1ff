/**
 * WS-20 … WS-28: file effects in the agent loop. A scripted model writes, edits and runs shell
 * commands in a real directory with a real tracker and a real SQLite file; after every call event
 * the tree's workspace is checked out into a fresh directory and compared, byte for byte, with
 * the disk as it was right then. Baselines, outcome events carrying file ops, error outcomes,
 * timeouts, cancels, the size cap, captures that fail, changes made outside the agent, runs
 * without a tracker, and the lifecycle's file restorations.
 */
import { renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Element, toXml } from "@strata/dom";
import { materialize, replayVerify, Session } from "@strata/engine";
import type { EventMeta } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  checkoutWorkspace,
  DIAG,
  DIAG_WORKSPACE_SKIPPED,
  diffWorkspaces,
  type FileChange,
  LABEL,
  rerun,
  runAgent,
  ToolEnvironmentError,
  ToolRegistry,
  type ToolSpec,
  WorkspaceTracker,
  WS_LABEL,
  workspaceElement,
  workspaceFiles,
  workspaceTools,
  workspaceWork,
} from "../src/index.ts";
import { lineFiles } from "../src/rerun-files.ts";
import { cleanup, fileStore, InlineModel, type Turn, tempDir } from "./agent-kit.ts";
import { file, put, readDir, render } from "./workspace-kit.ts";

afterEach(cleanup);

const SETTLED = new Set(["executed", "not_executed", "env_error", "interrupted"]);

/** A session in a file, a workspace directory with a tracker, the built-in tools on it, and `extra` tools. */
function setup(options: { maxFileBytes?: number; extra?: (root: string) => ToolSpec[] } = {}) {
  const { store, path } = fileStore();
  const root = tempDir("strata-wsloop-");
  const tracker = new WorkspaceTracker(root, store, options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes });
  const registry = new ToolRegistry([...workspaceTools({ root }), ...(options.extra?.(root) ?? [])]);
  const session = Session.create(store);
  return { store, path, root, tracker, registry, session };
}

/** What the disk held right after each settled call event (the head then). */
interface Seen {
  readonly head: EventMeta;
  readonly disk: string[];
}

/** `leftOut`: root-level names the record leaves out by design (over the cap), not compared. */
function watcher(session: Session, root: string, leftOut: readonly string[] = []): { seen: Seen[]; onEvent: (e: AgentEvent) => void } {
  const seen: Seen[] = [];
  return {
    seen,
    onEvent: (e) => {
      if (e.type === "call" && SETTLED.has(e.status)) seen.push({ head: session.head, disk: render(readDir(root, [".git", ...leftOut])) });
    },
  };
}

/** Checks out `session`'s tree at each seen head into a fresh directory: it must be the disk as it was then. */
async function expectTreeIsDisk(session: Session, seen: readonly Seen[]): Promise<void> {
  let compared = 0;
  for (const { head, disk } of seen) {
    const tree = session.at(head.id);
    // Before the baseline the tree records no files (only read-only calls ran): nothing to compare.
    if (workspaceElement(tree) === undefined) continue;
    compared++;
    const out = tempDir("strata-wsloop-out-");
    await checkoutWorkspace(tree, out, session.store);
    expect(render(readDir(out)), `the tree after event ${head.id} (${head.label}) against the disk then`).toEqual(disk);
  }
  expect(compared).toBeGreaterThan(0);
}

/** The file changes event `e` made. */
function changesOf(session: Session, e: EventMeta): string[] {
  const before = e.prior === null ? undefined : session.at(e.prior);
  return diffWorkspaces(before, session.at(e.id)).map(show);
}

function show(c: FileChange): string {
  return c.type === "delete" ? `delete ${c.before.path}` : `${c.type} ${c.entry.path} ${c.entry.mode}`;
}

/** The settle event of call element `call`. */
function settleOf(session: Session, call: Element): EventMeta {
  const e = session.log().findLast((m) => m.by === `e${call.id}` && (m.label === LABEL.callOutcome || m.label === LABEL.callInterrupted));
  if (e === undefined) throw new Error(`call ${call.id} has no settle event`);
  return e;
}

const calls = (s: Session): Element[] => s.select("body call");

/** A tool that may change files, with a handler of the test's. */
function effectTool(name: string, handler: ToolSpec["handler"], extra: Partial<ToolSpec> = {}): ToolSpec {
  return { name, description: name, parameters: { type: "object" }, replayPolicy: "never", effects: "workspace", handler, ...extra };
}

describe("WS-20 tools that may change files", () => {
  it("WS-20 write_file, edit_file and run declare effects, the read-only tools do not; the registry refuses another value; the roster does not record it", () => {
    const tools = workspaceTools({ root: tempDir() });
    expect(tools.filter((t) => t.effects === "workspace").map((t) => t.name)).toEqual(["write_file", "edit_file", "run"]);
    expect(() => new ToolRegistry([{ name: "x", description: "x", parameters: { type: "object" }, effects: "disk" as never }])).toThrow(
      /tool x: effects must be "workspace" \(the tool may change files\) or left out, not "disk"/,
    );
  });

  it("WS-20 the roster a run records is the same with and without effects on the tools", async () => {
    const a = setup();
    await runAgent(a.session, { model: new InlineModel([{ text: "hi" }]), registry: a.registry, task: "t" });
    const stripped = new ToolRegistry(a.registry.list().map(({ effects: _, ...rest }) => rest));
    const b = Session.create(a.store);
    await runAgent(b, { model: new InlineModel([{ text: "hi" }]), registry: stripped, task: "t" });
    const roster = (s: Session) => s.select("meta tools > tool").map((t) => JSON.stringify(t.attrs));
    expect(roster(a.session).length).toBe(7);
    expect(roster(b)).toEqual(roster(a.session));
  });
});

describe("WS-21 the baseline", () => {
  it("WS-21 one event before the first writing call's running: every file, the directory, the cap, a diag per file over the cap", async () => {
    const { session, root, tracker, registry } = setup({ maxFileBytes: 1000 });
    put(root, "a.txt", file("alpha\n"));
    put(root, "src/b.ts", file("export const b = 1;\n"));
    put(root, "big.bin", file(Buffer.alloc(5000, 7)));
    const model = new InlineModel([
      { calls: [{ name: "read_file", args: { path: "a.txt" } }] },
      { calls: [{ name: "write_file", args: { path: "c.txt", content: "gamma" } }] },
      { calls: [{ name: "write_file", args: { path: "d.txt", content: "delta" } }] },
      { text: "done" },
    ]);
    const w = watcher(session, root, ["big.bin"]);
    expect((await runAgent(session, { model, registry, task: "t", workspace: tracker, onEvent: w.onEvent })).stop).toBe("end-turn");
    const log = session.log();
    const labels = log.map((e) => `${e.label}${e.by ? `@${e.by}` : ""}`);
    const [read, write] = calls(session) as [Element, Element];
    const at = labels.indexOf(LABEL.workspaceBaseline);
    expect(labels.filter((l) => l === LABEL.workspaceBaseline)).toHaveLength(1);
    // after the read-only call settled, right before the write's intent to run
    expect(at).toBeGreaterThan(labels.indexOf(`call.outcome@e${read.id}`));
    expect(labels[at + 1]).toBe(`call.start@e${write.id}`);
    const base = session.at((log[at] as EventMeta).id);
    const ws = base.root.children.find((c) => c.tag === "meta")?.children.find((c) => c.tag === "workspace") as Element;
    expect(ws.attrs).toEqual({ dir: root, cap: "1000" });
    expect([...workspaceFiles(base).keys()].sort()).toEqual(["a.txt", "src/b.ts"]);
    const diags = ws.children.filter((c) => c.tag === "diag");
    expect(diags.map((d) => d.attrs)).toEqual([{ kind: DIAG_WORKSPACE_SKIPPED, path: "big.bin", size: "5000", reason: "too-large" }]);
    expect(diags[0]?.text).toMatch(/big\.bin is not in the workspace record: it has 5000 bytes, over the 1000-byte cap/);
    // the loop's vocabulary names the workspace module's strings (AG-19)
    expect([LABEL.workspaceBaseline, DIAG.workspaceSkipped]).toEqual([WS_LABEL.baseline, DIAG_WORKSPACE_SKIPPED]);
    await expectTreeIsDisk(session, w.seen);
  });

  it("WS-21 a run whose calls are all read-only records no baseline", async () => {
    const { session, root, tracker, registry } = setup();
    put(root, "a.txt", file("alpha"));
    const model = new InlineModel([{ calls: [{ name: "read_file", args: { path: "a.txt" } }] }, { text: "done" }]);
    await runAgent(session, { model, registry, task: "t", workspace: tracker });
    expect(session.selectOne("meta > workspace")).toBeUndefined();
    expect(session.log().some((e) => e.label?.startsWith("workspace."))).toBe(false);
  });
});

/** A script that writes, edits, renames, deletes, changes modes and makes links through write_file, edit_file and run. */
const SCRIPT: Turn[] = [
  { calls: [{ name: "write_file", args: { path: "notes/a.md", content: "# A\nfirst\n" } }] },
  { calls: [{ name: "edit_file", args: { path: "notes/a.md", old: "first", new: "second" } }] },
  {
    calls: [
      { name: "run", args: { command: "mkdir -p bin && printf '#!/bin/sh\\necho hi\\n' > bin/hi.sh && chmod +x bin/hi.sh" } },
      { name: "run", args: { command: "mv notes/a.md notes/b.md && ln -s notes/b.md latest && rm old.txt" } },
    ],
  },
  { calls: [{ name: "run", args: { command: "chmod -x bin/hi.sh && printf '\\000\\001\\002' > data.bin && echo nothing >/dev/null" } }] },
  { calls: [{ name: "run", args: { command: "true" } }] },
  { text: "done" },
];

describe("WS-22 file effects with the outcome", () => {
  it("WS-22 each writing call's outcome event carries exactly its file changes; after every call event the tree's workspace is the disk", async () => {
    const { session, root, tracker, registry, store } = setup();
    put(root, "old.txt", file("old"));
    const w = watcher(session, root);
    const r = await runAgent(session, { model: new InlineModel(SCRIPT), registry, task: "t", workspace: tracker, onEvent: w.onEvent });
    expect(r.stop).toBe("end-turn");
    const per = calls(session).map((c) => changesOf(session, settleOf(session, c)));
    expect(per).toEqual([
      ["add notes/a.md 644"],
      ["modify notes/a.md 644"],
      ["add bin/hi.sh 755"],
      ["add latest link", "delete notes/a.md", "add notes/b.md 644", "delete old.txt"],
      ["modify bin/hi.sh 644", "add data.bin 644"],
      [],
    ]);
    // the file ops are in the outcome event itself: no other event after the baseline changes files
    for (const e of session.log())
      if (e.label !== LABEL.callOutcome && e.label !== LABEL.workspaceBaseline) expect(changesOf(session, e), `${e.label}`).toEqual([]);
    await expectTreeIsDisk(session, w.seen);
    // live == replay from genesis == reopened
    expect(replayVerify(store, session.id).ok).toBe(true);
    const live = toXml(session.durableTree);
    expect(toXml(materialize(store, session.head.id, { fromGenesis: true }))).toBe(live);
    expect(toXml(Session.open(store, session.id).session.durableTree)).toBe(live);
  });

  it("WS-22 a call whose outcome is an error still records the files it changed; its staged edits are dropped", async () => {
    const { session, root, tracker, registry } = setup({
      extra: (root) => [
        effectTool("crash", async (_a, ctx) => {
          writeFileSync(join(root, "crash.txt"), "written before the exception");
          ctx.stage?.((d) => void d.set(d.tree.rootId, "staged", "yes"));
          throw new TypeError("the tool fell over");
        }),
        effectTool("broken", async () => {
          writeFileSync(join(root, "env.txt"), "written before the environment broke");
          throw new ToolEnvironmentError("the sandbox is gone");
        }),
      ],
    });
    const model = new InlineModel([
      {
        calls: [
          { name: "crash", args: {} },
          { name: "broken", args: {} },
        ],
      },
      { text: "done" },
    ]);
    const w = watcher(session, root);
    await runAgent(session, { model, registry, task: "t", workspace: tracker, onEvent: w.onEvent });
    const [crash, broken] = calls(session) as [Element, Element];
    expect(crash.attrs).toMatchObject({ status: "executed", error: "TypeError" });
    expect(broken.attrs).toMatchObject({ status: "env_error" });
    expect(changesOf(session, settleOf(session, crash))).toEqual(["add crash.txt 644"]);
    expect(changesOf(session, settleOf(session, broken))).toEqual(["add env.txt 644"]);
    expect(session.tree.root.attrs.staged).toBeUndefined();
    await expectTreeIsDisk(session, w.seen);
  });

  it("WS-22 a run command past its time limit, and one cancelled while it runs, settle with the files they wrote", async () => {
    const { session, root, tracker, registry } = setup();
    const slow = "printf one > one.txt; sleep 30";
    const timed = await runAgent(session, {
      model: new InlineModel([{ calls: [{ name: "run", args: { command: slow } }] }, { text: "done" }]),
      registry,
      task: "t",
      workspace: tracker,
      limits: { call: { timeoutMs: 700, graceMs: 2000 } },
    });
    expect(timed.stop).toBe("end-turn");
    const [first] = calls(session) as [Element];
    expect(first.attrs.error).toBe("TimeoutError");
    expect(changesOf(session, settleOf(session, first))).toEqual(["add one.txt 644"]);

    const ctl = new AbortController();
    const poll = setInterval(() => {
      if (readDir(root).has("two.txt")) ctl.abort();
    }, 20);
    const cancelled = await runAgent(session, {
      // the first run's two replies are in the history: this script's third reply answers
      model: new InlineModel([
        { text: "-" },
        { text: "-" },
        { calls: [{ name: "run", args: { command: "printf two > two.txt; sleep 30" } }] },
      ]),
      registry,
      task: "again",
      workspace: tracker,
      signal: ctl.signal,
    });
    clearInterval(poll);
    expect(cancelled.stop).toBe("cancelled");
    const second = calls(session)[1] as Element;
    expect(second.attrs.status).toBe("interrupted");
    const e = settleOf(session, second);
    expect(e.label).toBe(LABEL.callInterrupted);
    expect(changesOf(session, e)).toEqual(["add two.txt 644"]);
    const out = tempDir();
    await checkoutWorkspace(session.durableTree, out, session.store);
    expect(render(readDir(out))).toEqual(render(readDir(root)));
  }, 30_000);
});

describe("WS-23, WS-24 files left out, captures that fail", () => {
  it("WS-23 a file over the cap is reported under the call whose capture found it, once, and again when its size changes", async () => {
    const { session, tracker, registry } = setup({ maxFileBytes: 100 });
    const model = new InlineModel([
      { calls: [{ name: "run", args: { command: "head -c 500 /dev/zero > big.bin && printf small > s.txt" } }] },
      { calls: [{ name: "write_file", args: { path: "t.txt", content: "t" } }] },
      { calls: [{ name: "run", args: { command: "head -c 600 /dev/zero > big.bin" } }] },
      { text: "done" },
    ]);
    await runAgent(session, { model, registry, task: "t", workspace: tracker });
    const skipped = calls(session).map((c) =>
      c.children.filter((d) => d.tag === "diag" && d.attrs.kind === DIAG.workspaceSkipped).map((d) => `${d.attrs.path}:${d.attrs.size}`),
    );
    expect(skipped).toEqual([["big.bin:500"], [], ["big.bin:600"]]);
    expect(workspaceFiles(session.durableTree).has("big.bin")).toBe(false);
  });

  it("WS-24 a capture the file system refuses is a workspace-error diag on the call; the outcome is recorded and the next capture records the changes", async () => {
    const { session, root, tracker, registry } = setup({
      extra: (root) => [
        effectTool("hide", async () => {
          writeFileSync(join(root, "h.txt"), "h");
          renameSync(root, `${root}.away`);
          return "hidden";
        }),
        effectTool("unhide", async () => {
          renameSync(`${root}.away`, root);
          return "back";
        }),
      ],
    });
    const model = new InlineModel([
      { calls: [{ name: "write_file", args: { path: "a.txt", content: "a" } }] },
      { calls: [{ name: "hide", args: {} }] },
      { calls: [{ name: "unhide", args: {} }] },
      { text: "done" },
    ]);
    await runAgent(session, { model, registry, task: "t", workspace: tracker });
    const [, hide, unhide] = calls(session) as [Element, Element, Element];
    expect(hide.attrs.status).toBe("executed");
    const diag = hide.children.find((d) => d.tag === "diag" && d.attrs.kind === DIAG.workspaceError);
    expect(diag?.attrs.code).toBe("io");
    expect(diag?.text).toMatch(/the workspace could not be captured after this call, so its file changes are not recorded with it/);
    expect(changesOf(session, settleOf(session, hide))).toEqual([]);
    expect(changesOf(session, settleOf(session, unhide))).toEqual(["add h.txt 644"]);
    rmSync(`${root}.away`, { recursive: true, force: true });
  });
});

describe("WS-25 changes made outside the agent, another directory", () => {
  it("WS-25 edits between runs are their own workspace.outside event before the next writing call, which records only its own", async () => {
    const { session, root, tracker, registry } = setup();
    const write = (path: string, content: string): Turn => ({ calls: [{ name: "write_file", args: { path, content } }] });
    await runAgent(session, { model: new InlineModel([write("a.txt", "a"), { text: "done" }]), registry, task: "one", workspace: tracker });
    put(root, "b.txt", file("edited by hand"));
    put(root, "a.txt", file("a, edited by hand"));
    // a fresh tracker (a new process): its first capture primes the index
    const again = new WorkspaceTracker(root, session.store);
    const w = watcher(session, root);
    await runAgent(session, {
      model: new InlineModel([write("a.txt", "a"), { text: "done" }, write("c.txt", "c"), write("d.txt", "d"), { text: "done" }]),
      registry,
      task: "two",
      workspace: again,
      onEvent: w.onEvent,
    });
    const log = session.log();
    const outside = log.filter((e) => e.label === LABEL.workspaceOutside);
    expect(outside).toHaveLength(1);
    expect(changesOf(session, outside[0] as EventMeta)).toEqual(["modify a.txt 644", "add b.txt 644"]);
    const c = calls(session)[1] as Element;
    const start = log.findIndex((e) => e.label === LABEL.callStart && e.by === `e${c.id}`);
    expect(log[start - 1]?.id).toBe(outside[0]?.id);
    expect(changesOf(session, settleOf(session, c))).toEqual(["add c.txt 644"]);
    expect(changesOf(session, settleOf(session, calls(session)[2] as Element))).toEqual(["add d.txt 644"]);
    await expectTreeIsDisk(session, w.seen);
    expect(WS_LABEL.outside).toBe(LABEL.workspaceOutside);
  });

  it("WS-25 a run in another directory holding the same files records that directory (workspace.dir), no file change", async () => {
    const { session, root, tracker, registry, store } = setup();
    put(root, "a.txt", file("a"));
    const write = (path: string): Turn => ({ calls: [{ name: "write_file", args: { path, content: path } }] });
    await runAgent(session, { model: new InlineModel([write("b.txt"), { text: "done" }]), registry, task: "one", workspace: tracker });
    const other = tempDir("strata-wsloop-other-");
    await checkoutWorkspace(session.durableTree, other, store);
    await runAgent(session, {
      model: new InlineModel([write("b.txt"), { text: "done" }, write("c.txt"), { text: "done" }]),
      registry: new ToolRegistry(workspaceTools({ root: other })),
      task: "two",
      workspace: new WorkspaceTracker(other, store),
    });
    const moved = session.log().filter((e) => e.label === LABEL.workspaceDir);
    expect(moved).toHaveLength(1);
    expect(changesOf(session, moved[0] as EventMeta)).toEqual([]);
    expect(session.selectOne("meta > workspace")?.attrs.dir).toBe(other);
    const prior = (moved[0] as EventMeta).prior as EventMeta["id"];
    expect(
      session
        .at(prior)
        .root.children.find((c) => c.tag === "meta")
        ?.children.find((c) => c.tag === "workspace")?.attrs.dir,
    ).toBe(root);
    const out = tempDir();
    await checkoutWorkspace(session.durableTree, out, store);
    expect(render(readDir(out))).toEqual(render(readDir(other)));
    expect([...workspaceFiles(session.durableTree).keys()].sort()).toEqual(["a.txt", "b.txt", "c.txt"]);
  });
});

describe("WS-27 runs without a workspace", () => {
  it("WS-27 record no baseline and capture nothing: the same events as a run with one, without the workspace's", async () => {
    const plain = setup();
    put(plain.root, "old.txt", file("old"));
    await runAgent(plain.session, { model: new InlineModel(SCRIPT), registry: plain.registry, task: "t" });
    expect(plain.session.selectOne("meta > workspace")).toBeUndefined();
    expect(plain.session.select("diag")).toEqual([]);
    const tracked = setup();
    put(tracked.root, "old.txt", file("old"));
    await runAgent(tracked.session, { model: new InlineModel(SCRIPT), registry: tracked.registry, task: "t", workspace: tracked.tracker });
    const labels = (s: Session) => s.log().map((e) => e.label);
    expect(labels(plain.session)).toEqual(labels(tracked.session).filter((l) => l !== LABEL.workspaceBaseline));
    const observations = (s: Session) => calls(s).map((c) => c.children.find((r) => r.tag === "result")?.text);
    expect(observations(plain.session)).toEqual(observations(tracked.session));
  });
});

describe("WS-28 the files a rewind or fork restores", () => {
  it("WS-28 workspaceWork lists the restorations between two events; applying them reproduces the target; before the baseline nothing is deleted", async () => {
    const { session, root, tracker, registry, store } = setup();
    put(root, "old.txt", file("old"));
    await runAgent(session, { model: new InlineModel(SCRIPT), registry, task: "t", workspace: tracker });
    const head = session.durableTree;
    const second = settleOf(session, calls(session)[1] as Element);
    const target = session.at(second.id);
    const work = workspaceWork(head, target);
    expect(work.recorded).toBe(true);
    expect(work.dir).toBe(root);
    expect(work.restore.map(show)).toEqual([
      "delete bin/hi.sh",
      "delete data.bin",
      "delete latest",
      "add notes/a.md 644",
      "delete notes/b.md",
      "add old.txt 644",
    ]);
    await checkoutWorkspace(target, root, store, { from: head });
    const expected = tempDir();
    await checkoutWorkspace(target, expected, store);
    expect(render(readDir(root))).toEqual(render(readDir(expected)));
    // a rewind's lifecycle work and its file work come from the same two trees
    const before = session.durableTree;
    session.rewind(second.id);
    expect(workspaceWork(before, session.durableTree).restore).toEqual(work.restore);
    // an event before the baseline records no files: nothing to restore, never "delete everything"
    const first = session.log().find((e) => e.label === LABEL.turnUser) as EventMeta;
    expect(workspaceWork(head, session.at(first.id))).toEqual({ restore: [], dir: undefined, recorded: false });
    // from nothing (a resume into an empty directory): every file is written
    expect(workspaceWork(undefined, target).restore.every((c) => c.type === "add")).toBe(true);
  });
});

// a symlink pointing out of the workspace, made by a shell command, is recorded as a link and never followed
describe("WS-22 links made by a command", () => {
  it("WS-22 a link out of the workspace is recorded as a link (its target text), and checkout recreates it as a link", async () => {
    const { session, root, tracker, registry, store } = setup();
    const outside = tempDir("strata-wsloop-outside-");
    writeFileSync(join(outside, "secret.txt"), "not the workspace's");
    symlinkSync(join(outside, "secret.txt"), join(root, "pre-link"));
    const model = new InlineModel([{ calls: [{ name: "run", args: { command: `ln -s ${outside} out-dir` } }] }, { text: "done" }]);
    await runAgent(session, { model, registry, task: "t", workspace: tracker });
    const files = workspaceFiles(session.durableTree);
    expect(files.get("out-dir")?.mode).toBe("link");
    expect(files.get("pre-link")?.mode).toBe("link");
    expect([...files.keys()].some((p) => p.startsWith("out-dir/"))).toBe(false);
    const out = tempDir();
    await checkoutWorkspace(session.durableTree, out, store);
    expect(render(readDir(out))).toEqual(render(readDir(root)));
  });
});

describe("WS-29 re-runs compare file effects", () => {
  it("WS-29 each call's file effects read back from its event's ops are the diff of the records either side (also for an event that drops the record)", async () => {
    const { session, root, tracker, registry, store } = setup();
    put(root, "old.txt", file("old"));
    await runAgent(session, { model: new InlineModel(SCRIPT), registry, task: "t", workspace: tracker });
    const last = calls(session).at(-1) as Element;
    // an event of another writer that removes the whole record (not plain <file> edits): the full diff is used
    const ws = session.selectOne("meta > workspace") as Element;
    session.commit((d) => d.remove(ws.id), { label: LABEL.callOutcome, by: `e${last.id}` });
    const start = session.log()[0] as EventMeta;
    const line = await lineFiles(store, session.head.id, start.id);
    expect(line.recorded).toBe(true);
    expect(store.eventMeta(line.baseline?.event as never)?.label).toBe(LABEL.workspaceBaseline);
    const expected = new Map<number, string[]>();
    for (const e of session.log()) {
      if (e.label !== LABEL.callOutcome || e.by === null) continue;
      const changes = changesOf(session, e);
      if (changes.length > 0) expected.set(Number(e.by.slice(1)), changes);
    }
    expect(expected.get(last.id)).toEqual(["delete bin/hi.sh", "delete data.bin", "delete latest", "delete notes/b.md"]);
    expect(new Map([...line.calls].map(([id, r]) => [id, r.changes.map(show)]))).toEqual(expected);
  });

  const stamp = (dir: string, value: string): ToolSpec =>
    effectTool(
      "stamp",
      async () => {
        writeFileSync(join(dir, "stamp.txt"), value);
        return "stamped";
      },
      { replayPolicy: "safe" },
    );
  const registryFor = (dir: string, value: string) => new ToolRegistry([...workspaceTools({ root: dir }), stamp(dir, value)]);

  /** A recorded run that reads, writes, runs a command that deletes what was read, and stamps (a safe tool with effects). */
  async function recorded() {
    const { session, root, tracker, store } = setup();
    put(root, "in.txt", file("alpha"));
    const model = new InlineModel([
      { calls: [{ name: "read_file", args: { path: "in.txt" } }] },
      { calls: [{ name: "write_file", args: { path: "x.txt", content: "v1" } }] },
      { calls: [{ name: "read_file", args: { path: "x.txt" } }] },
      { calls: [{ name: "run", args: { command: "printf two > y.txt && rm in.txt" } }] },
      { calls: [{ name: "stamp", args: {} }] },
      { calls: [{ name: "submit", args: { summary: "done" } }] },
    ]);
    await runAgent(session, { model, registry: registryFor(root, "1"), task: "t", workspace: tracker });
    return { session, root, store };
  }

  it("WS-29 in a directory of its own the re-run starts from the recorded files, replays recorded writes, runs safe tools there: no divergence", async () => {
    const { session, root, store } = await recorded();
    const scratch = join(tempDir(), "rerun");
    const report = await rerun(session, { registry: registryFor(scratch, "1"), workspace: new WorkspaceTracker(scratch, store) });
    expect(report.divergence).toBeUndefined();
    expect(report.files).toBe(true);
    expect(report.stop).toBe("completed-by-tool");
    // the re-run's branch records the same files, in its own directory, and its directory holds them
    const fork = Session.open(store, session.id, { branch: report.branch }).session;
    expect(diffWorkspaces(session.durableTree, fork.durableTree)).toEqual([]);
    expect(fork.selectOne("meta > workspace")?.attrs.dir).toBe(scratch);
    expect(render(readDir(scratch))).toEqual(render(readDir(root)));
    // a safe tool's effect was captured by the re-run's own tracker, in the stamp call's outcome
    const stampCall = calls(fork).find((c) => c.attrs.tool === "stamp") as Element;
    expect(changesOf(fork, settleOf(fork, stampCall))).toEqual(["add stamp.txt 644"]);
  });

  it("WS-29 a safe tool that writes something else in the re-run is a files divergence naming the path; without a directory files are not compared", async () => {
    const { session, store } = await recorded();
    const scratch = join(tempDir(), "rerun");
    const report = await rerun(session, { registry: registryFor(scratch, "2"), workspace: new WorkspaceTracker(scratch, store) });
    const d = report.divergence;
    expect(d).toMatchObject({ what: "files", path: "stamp.txt" });
    expect(d?.before).toMatch(/^mode 644, 1 bytes, sha256 /);
    expect(d?.before).not.toBe(d?.after);
    expect(d?.message).toMatch(/call call_4_0 \(stamp\) left stamp\.txt different/);
    expect(store.eventMeta(d?.source.event as never)?.label).toBe(LABEL.callOutcome);
    expect(store.eventMeta(d?.rerun.event as never)?.label).toBe(LABEL.callOutcome);
    // without a directory the tools act where they are bound (here an empty directory: in.txt is not there); files are not compared
    const plain = await rerun(session, { registry: registryFor(tempDir(), "2") });
    expect(plain.files).toBe(false);
    expect(plain.divergence?.what).toBe("observation");
  });

  it("WS-29 a re-run whose baseline records other files (a smaller cap leaves one out) diverges at the baseline, naming the path", async () => {
    const { session, store } = await recorded();
    const scratch = join(tempDir(), "rerun");
    const report = await rerun(session, {
      registry: registryFor(scratch, "1"),
      workspace: new WorkspaceTracker(scratch, store, { maxFileBytes: 2 }),
    });
    const d = report.divergence;
    expect(d).toMatchObject({ what: "files", path: "in.txt", after: "not recorded", source: { element: null }, rerun: { element: null } });
    expect(d?.before).toMatch(/^mode 644, 5 bytes/);
    expect(d?.message).toMatch(/the re-run's workspace baseline differs from the recording's at in\.txt/);
    expect(store.eventMeta(d?.source.event as never)?.label).toBe(LABEL.workspaceBaseline);
    expect(store.eventMeta(d?.rerun.event as never)?.label).toBe(LABEL.workspaceBaseline);
  });

  it("WS-29 a directory that is not empty is refused before anything is written", async () => {
    const { session, store } = await recorded();
    const scratch = tempDir();
    put(scratch, "mine.txt", file("the user's"));
    const branches = session.branches().length;
    await expect(rerun(session, { registry: registryFor(scratch, "1"), workspace: new WorkspaceTracker(scratch, store) })).rejects.toThrow(
      /the re-run's workspace .* is not empty; give a new or empty directory/,
    );
    expect(session.branches().length).toBe(branches);
    expect(render(readDir(scratch))).toEqual(render(new Map([["mine.txt", file("the user's")]])));
  });
});
