/**
 * WS-30 property: the workspace across branches. Random sequences of file writes, edits,
 * deletes, renames, mode changes, links and ignored build output — made by the real agent loop
 * (`write_file`, `edit_file`, and `run` with real `sh -c` commands: `printf >`, `mv`, `rm`,
 * `chmod ±x`, `ln -s`, `mkdir -p`) or directly on disk and captured by the tracker — across forks
 * at earlier events (each into a directory of its own), rewinds, branch switches and reopens of
 * a real SQLite file. The test keeps its own model: for every event, the files the directory held
 * right after it. After every step: a checkout of each new event, of every branch head and of a
 * rolling sample of older events into a fresh directory is that model byte for byte with modes
 * (WS-13, WS-22); every branch's directory is its head's model plus its ignored files (a change
 * on one branch never reaches another's record or directory); the directory has no outside
 * changes; the live tree is the replayed, snapshot+tail and reopened tree (L1). A rewound head
 * stays a branch whose events still check out (L5); a switch to it gets it a directory. At the
 * end every event is checked out, every branch replayed and reopened. Failing cases are pinned
 * below.
 *
 * WS_BRANCHES_RUNS, WS_BRANCHES_STEPS and WS_BRANCHES_SEED size and replay the property.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toSnapshot } from "@strata/dom";
import { materialize, replayVerify, Session, verifyStore } from "@strata/engine";
import { type EventId, type EventMeta, openStore, type Store } from "@strata/store";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  applyFileChanges,
  changePath,
  checkoutWorkspace,
  LABEL,
  outsideChanges,
  runAgent,
  ToolRegistry,
  WorkspaceTracker,
  WS_LABEL,
  workspaceDir,
  workspaceElement,
  workspaceTools,
  workspaceWork,
} from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import {
  type Act,
  applyAct,
  applyActs,
  applyDirect,
  type CallPlan,
  callArb,
  callOf,
  differing,
  expectedRecord,
  IGNORE_FILE,
  PlanModel,
  recordOf,
  resolve,
} from "./workspace-branches-kit.ts";
import { file, type Model, put, readDir, render } from "./workspace-kit.ts";

afterEach(cleanup);

type Action =
  | { readonly k: "loop"; readonly calls: readonly CallPlan[] }
  | { readonly k: "direct"; readonly calls: readonly CallPlan[] }
  | { readonly k: "fork"; readonly pick: number }
  | { readonly k: "rewind"; readonly pick: number }
  | { readonly k: "switch"; readonly pick: number }
  | { readonly k: "reopen" };

const calls = fc.array(callArb, { minLength: 1, maxLength: 3 });
const loopArb = fc.record({ k: fc.constant("loop" as const), calls });
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: loopArb },
  { weight: 4, arbitrary: fc.record({ k: fc.constant("direct" as const), calls }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("fork" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("rewind" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("switch" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ k: "reopen" as const }) },
);

const RUNS = Number(process.env.WS_BRANCHES_RUNS ?? 10);
/** Snapshots every few events, so materializing goes through snapshot + tail too. */
const SNAPSHOT_EVERY = 9;
/** Older events checked out after each step, in rolling order (all of them at the end). */
const ROLLING = 4;
const SETTLED = new Set(["executed", "not_executed", "env_error", "interrupted"]);

/** What the record at an event holds: `recorded` false before its line's first capture. */
interface Version {
  readonly recorded: boolean;
  readonly files: Model;
}

/** A branch with a working directory of its own. */
interface Line {
  readonly name: string;
  session: Session;
  readonly dir: string;
  tracker: WorkspaceTracker;
  readonly registry: ToolRegistry;
  /** The tracked files the directory holds (the test's model). */
  disk: Model;
  /** The ignored files it holds: never recorded, never touched by a restore. */
  readonly extras: Model;
}

class World {
  readonly root = tempDir("strata-wsbr-");
  readonly path = join(this.root, "s.db");
  store: Store = openStore(this.path);
  readonly lines = new Map<string, Line>();
  current = "main";
  readonly versions = new Map<EventId, Version>();
  readonly order: EventId[] = [];
  /** The acts of each call the scripted model made, by call id (a resume may run one again). */
  readonly acts = new Map<string, readonly Act[]>();
  #dirs = 0;
  #calls = 0;
  #rolling = 0;
  #probes = 0;
  readonly id: Session["id"];

  constructor() {
    writeFileSync(join(this.root, "outside.txt"), "outside the workspace");
    const session = Session.create(this.store, { snapshotEvery: SNAPSHOT_EVERY });
    this.id = session.id;
    this.record(session.head.id, { recorded: false, files: new Map() });
    const dir = this.newDir();
    const disk: Model = new Map([
      [".gitignore", file(IGNORE_FILE)],
      ["a.txt", file("alpha\n")],
      ["src/c.sh", file("#!/bin/sh\necho c\n", true)],
    ]);
    const extras: Model = new Map([["build.log", file("old build output\n")]]);
    for (const [p, e] of [...disk, ...extras]) put(dir, p, e);
    this.lines.set("main", this.makeLine(session, dir, disk, extras));
  }

  makeLine(session: Session, dir: string, disk: Model, extras: Model): Line {
    return {
      name: session.branch,
      session,
      dir,
      tracker: new WorkspaceTracker(dir, this.store),
      registry: new ToolRegistry(workspaceTools({ root: dir })),
      disk,
      extras,
    };
  }

  get line(): Line {
    return this.lines.get(this.current) as Line;
  }

  newDir(): string {
    const d = join(this.root, `ws-${this.#dirs++}`);
    mkdirSync(d);
    return d;
  }

  newCallId(): string {
    return `c${this.#calls++}`;
  }

  record(event: EventId, v: Version): void {
    expect(this.versions.has(event), `event ${event} is modelled once`).toBe(false);
    this.versions.set(event, v);
    this.order.push(event);
  }

  version(event: EventId): Version {
    const v = this.versions.get(event);
    if (v === undefined) throw new Error(`event ${event} has no model`);
    return v;
  }

  /** The next `n` older events in rolling order. */
  rolling(n: number): EventId[] {
    const out: EventId[] = [];
    for (let i = 0; i < n && this.order.length > 0; i++) out.push(this.order[this.#rolling++ % this.order.length] as EventId);
    return out;
  }

  /** Checks out `event`'s tree (by `session.at` or `materialize`, alternately) into a fresh directory: exactly its model. */
  async checkEvent(event: EventId, why: string): Promise<void> {
    const v = this.version(event);
    const tree = this.#probes++ % 2 === 0 ? this.line.session.at(event) : materialize(this.store, event);
    expect(recordOf(tree), `${why}: the record at event ${event}`).toEqual(expectedRecord(v.files));
    if (!v.recorded) expect(workspaceElement(tree), `${why}: event ${event} precedes the baseline`).toBeUndefined();
    const out = mkdtempSync(join(this.root, "out-"));
    try {
      await checkoutWorkspace(tree, out, this.store);
      expect(render(readDir(out)), `${why}: a checkout of event ${event}`).toEqual(render(v.files));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
}

/** Resolves a call's prims one after the other against `disk` (a copy: the model moves when the call has run). */
function plan(line: Line, c: CallPlan): Act[] {
  const disk = new Map(line.disk);
  const extras = new Map(line.extras);
  const acts: Act[] = [];
  for (const p of c.prims) {
    const a = resolve(p, disk, extras);
    if (a === undefined) continue;
    applyAct(disk, extras, a);
    acts.push(a);
  }
  return acts;
}

/** The calls of a plan: a shell plan is one command, any other prim is a call (or a capture) of its own. */
const units = (plans: readonly CallPlan[]): CallPlan[] =>
  plans.flatMap((c) => (c.shell ? [c] : c.prims.map((p) => ({ prims: [p], shell: false }))));

/** A run of the real loop whose calls make the acts; returns its events. */
async function loopStep(w: World, given: readonly CallPlan[], step: number): Promise<EventId[]> {
  const plans = units(given);
  const line = w.line;
  const s = line.session;
  const before = s.head.id;
  const atStart = new Map(line.disk);
  const settled = new Map<EventId, Model>();
  const failed: string[] = [];
  let ran = false;
  const model = new PlanModel((n) => {
    const c = plans[n];
    if (c === undefined) return undefined;
    const id = w.newCallId();
    const acts = plan(line, c);
    w.acts.set(id, acts);
    return callOf(id, acts, c.shell);
  });
  const onEvent = (e: AgentEvent): void => {
    if (e.type !== "call" || !SETTLED.has(e.status)) return;
    const call = s.durableTree.get(e.element);
    const acts = w.acts.get(call?.attrs.id ?? "");
    if (e.status === "executed" && acts !== undefined) {
      ran = true;
      // a call of this run, or a pending one of the line's history that the resume ran now (its acts, on the same tracked files)
      const ok = applyActs(line.disk, line.extras, acts);
      const result = call?.children.find((r) => r.tag === "result")?.text ?? "";
      const failedNow = call?.attrs.error !== undefined || (e.tool === "run" && !result.startsWith("exit code 0"));
      if (failedNow === ok)
        failed.push(`${call?.attrs.id} ${e.tool}: expected ${ok ? "success" : "a failure"}: ${call?.attrs.error ?? ""} ${result}`);
    }
    settled.set(s.head.id, new Map(line.disk));
  };
  const r = await runAgent(s, { model, registry: line.registry, task: `step ${step}`, workspace: line.tracker, onEvent });
  expect(failed, `step ${step}: calls that failed`).toEqual([]);
  expect(r.stop).toBe("end-turn");
  // WS-25: a run that wrote records the directory it wrote in (a fork's own, after its first run)
  if (ran) expect(workspaceDir(s.durableTree), `step ${step}: the directory recorded on ${line.name}`).toBe(line.dir);
  const events: EventId[] = [];
  let v = w.version(before);
  for (const m of s.log({ after: before })) {
    expect(m.label, `step ${step}: no change outside the agent`).not.toBe(WS_LABEL.outside);
    if (m.label === WS_LABEL.baseline) v = { recorded: true, files: atStart };
    const after = settled.get(m.id);
    if (after !== undefined) v = { recorded: true, files: after };
    w.record(m.id, v);
    events.push(m.id);
  }
  return events;
}

/**
 * The acts done directly on disk, each call's captured and committed as one event (when it
 * changed a tracked file), as a program outside the loop would with the tracker.
 */
async function directStep(w: World, plans: readonly CallPlan[], step: number): Promise<EventId[]> {
  const line = w.line;
  // A call left open by a rewind or fork runs when the loop resumes, on the files of its own
  // time: those are settled first (a run without calls), so it does not run on changed files.
  const events: EventId[] = line.session.live.size > 0 ? await loopStep(w, [], step) : [];
  for (const c of units(plans)) {
    for (const a of plan(line, c)) {
      applyDirect(line.dir, a);
      applyAct(line.disk, line.extras, a);
    }
    const capture = await line.tracker.capture(line.session.durableTree);
    expect(capture.skipped, `step ${step}: nothing left out`).toEqual([]);
    if (capture.changes.length === 0) continue;
    const m = line.session.commit((d) => applyFileChanges(d, capture.changes), { label: "test.files" });
    w.record(m.id, { recorded: true, files: new Map(line.disk) });
    events.push(m.id);
  }
  return events;
}

/** Events of the current branch whose record holds files (WS-28: before the baseline a record says nothing). */
function recordedEvents(w: World): EventId[] {
  return w.line.session
    .log()
    .map((m) => m.id)
    .filter((id) => w.version(id).recorded);
}

/** A fork at an earlier event, into a new directory checked out from the fork point. */
async function forkStep(w: World, pick: number): Promise<void> {
  const choices = recordedEvents(w);
  const target = choices[pick % choices.length] as EventId;
  const fork = w.line.session.fork(target);
  const v = w.version(target);
  expect(fork.head.id).toBe(target);
  // WS-28: into an empty directory every file is written
  const work = workspaceWork(undefined, fork.durableTree);
  expect(work.restore.every((c) => c.type === "add")).toBe(true);
  expect(work.restore.map(changePath).sort()).toEqual([...v.files.keys()].sort());
  const dir = w.newDir();
  await checkoutWorkspace(fork.durableTree, dir, w.store);
  w.lines.set(fork.branch, w.makeLine(fork, dir, new Map(v.files), new Map()));
  w.current = fork.branch;
}

/** A rewind of the current branch to an earlier event: the directory checked for outside changes, then restored incrementally. */
async function rewindStep(w: World, pick: number): Promise<void> {
  const line = w.line;
  const s = line.session;
  const choices = recordedEvents(w).filter((id) => id !== s.head.id);
  if (choices.length === 0) return;
  const target = choices[pick % choices.length] as EventId;
  const from = s.durableTree;
  expect(await outsideChanges(from, line.dir, w.store, line.tracker), "no outside change before a restore").toEqual([]);
  const abandoned = s.head.id;
  s.rewind(target);
  // L5: the abandoned head stays a branch (its events are checked out like any other)
  expect(w.store.branches(w.id).some((b) => b.head === abandoned && b.name !== line.name)).toBe(true);
  const to = s.durableTree;
  const v = w.version(target);
  const work = workspaceWork(from, to);
  expect(work.recorded).toBe(true);
  expect(work.restore.map(changePath).sort(), "WS-28: the restorations are the files that differ").toEqual(differing(line.disk, v.files));
  await checkoutWorkspace(to, line.dir, w.store, { from });
  line.disk = new Map(v.files);
}

/** Makes another branch current; a branch without a directory yet (a kept rewound head) gets one, checked out from its head. */
async function switchStep(w: World, pick: number): Promise<void> {
  const names = w.store
    .branches(w.id)
    .map((b) => b.name)
    .sort();
  const name = names[pick % names.length] as string;
  if (!w.lines.has(name)) {
    const session = Session.open(w.store, w.id, { branch: name, snapshotEvery: SNAPSHOT_EVERY }).session;
    const v = w.version(session.head.id);
    expect(v.recorded, `the head of ${name} records files`).toBe(true);
    const dir = w.newDir();
    await checkoutWorkspace(session.durableTree, dir, w.store);
    w.lines.set(name, w.makeLine(session, dir, new Map(v.files), new Map()));
  }
  w.current = name;
}

/** Closes the store and opens it again: every branch reopened, every tracker new (a new process has no stat index). */
function reopenStep(w: World): void {
  w.store.close();
  w.store = openStore(w.path);
  for (const line of w.lines.values()) {
    line.session = Session.open(w.store, w.id, { branch: line.name, snapshotEvery: SNAPSHOT_EVERY }).session;
    line.tracker = new WorkspaceTracker(line.dir, w.store);
  }
}

/** L1 for one branch: live == durable == replay from genesis == snapshot + tail == a reopened store's. */
function expectOneAuthority(w: World, branch: string, live: string, why: string): void {
  const head = (w.store.branch(w.id, branch) as { head: EventId }).head;
  expect(toSnapshot(materialize(w.store, head, { fromGenesis: true })), `${why}: replay of ${branch} from genesis`).toBe(live);
  expect(toSnapshot(materialize(w.store, head)), `${why}: snapshot + tail of ${branch}`).toBe(live);
  const other = openStore(w.path);
  try {
    expect(toSnapshot(Session.open(other, w.id, { branch }).session.tree), `${why}: ${branch} reopened`).toBe(live);
  } finally {
    other.close();
  }
}

/** The checks after every step (see the module comment). */
async function check(w: World, fresh: readonly EventId[], why: string): Promise<void> {
  const cur = w.line;
  const live = toSnapshot(cur.session.tree);
  expect(toSnapshot(cur.session.durableTree)).toBe(live);
  expectOneAuthority(w, cur.name, live, why);
  for (const line of w.lines.values()) {
    expect(render(readDir(line.dir)), `${why}: the directory of ${line.name}`).toEqual(render(new Map([...line.disk, ...line.extras])));
    const v = w.version(line.session.head.id);
    expect(v.recorded, `${why}: the head of ${line.name} records files`).toBe(true);
    expect(render(v.files), `${why}: the model of ${line.name}'s head is its directory`).toEqual(render(line.disk));
  }
  expect(await outsideChanges(cur.session.durableTree, cur.dir, w.store, cur.tracker), `${why}: outside changes`).toEqual([]);
  const heads = [...w.lines.values()].map((l) => l.session.head.id);
  for (const e of new Set([...fresh, ...heads, ...w.rolling(ROLLING)])) await w.checkEvent(e, why);
}

/** The checks at the end: every event of every branch, every branch replayed and reopened, the store verified. */
async function finalCheck(w: World): Promise<void> {
  const all = new Set<EventId>();
  for (const b of w.store.branches(w.id)) for (const m of w.store.log(w.id, { branch: b.name })) all.add(m.id);
  expect(
    [...all].filter((e) => !w.versions.has(e)),
    "every event of the session is modelled",
  ).toEqual([]);
  for (const e of w.order) await w.checkEvent(e, "at the end");
  for (const b of w.store.branches(w.id)) {
    const line = w.lines.get(b.name);
    const live = toSnapshot(line?.session.tree ?? materialize(w.store, b.head));
    expectOneAuthority(w, b.name, live, "at the end");
    expect(replayVerify(w.store, w.id, { branch: b.name }).ok, `replay of ${b.name}`).toBe(true);
  }
  expect(verifyStore(w.store).ok).toBe(true);
}

/** Performs one action on the world, then the checks after every step. */
async function step(w: World, a: Action, i: number): Promise<void> {
  const why = `step ${i} (${a.k} on ${w.current})`;
  let fresh: EventId[] = [];
  switch (a.k) {
    case "loop":
      fresh = await loopStep(w, a.calls, i);
      break;
    case "direct":
      fresh = await directStep(w, a.calls, i);
      break;
    case "fork":
      await forkStep(w, a.pick);
      break;
    case "rewind":
      await rewindStep(w, a.pick);
      break;
    case "switch":
      await switchStep(w, a.pick);
      break;
    case "reopen":
      reopenStep(w);
      break;
    default:
      a satisfies never;
  }
  await check(w, fresh, why);
}

/** A fresh world for `fn`, checked whole at the end, removed after. */
async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const w = new World();
  try {
    await fn(w);
    await finalCheck(w);
  } finally {
    w.store.close();
    rmSync(w.root, { recursive: true, force: true });
  }
}

const runActions = (first: Action, actions: readonly Action[]): Promise<void> =>
  withWorld(async (w) => {
    for (const [i, a] of [first, ...actions].entries()) await step(w, a, i);
  });

describe("WS-30 property: files across forks, rewinds, switches and reopens", () => {
  it(
    "WS-30 WS-13 WS-22 WS-28 L1 L2 L5 random file effects by the loop's tools, shell commands and direct writes across branches: every event checks out to its model, live == replay == reopened (seeded)",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          loopArb,
          fc.array(actionArb, { minLength: 4, maxLength: Number(process.env.WS_BRANCHES_STEPS ?? 14) }),
          (first, actions) => runActions(first, actions),
        ),
        { numRuns: RUNS, seed: Number(process.env.WS_BRANCHES_SEED ?? 3013) },
      );
    },
    Math.max(600_000, RUNS * 60_000),
  );

  // Pinned counterexamples (each once failed).
  it("AG-9 WS-30 pinned: a rewind to a pending call, files changed and captured, then a resume: the call runs on the files of its time", async () => {
    const edit = { p: "edit", pick: 0, at: 0, len: 1, text: "" } as const;
    await runActions({ k: "loop", calls: [{ prims: [edit], shell: false }] }, [
      { k: "rewind", pick: 1127718235 },
      { k: "direct", calls: [{ prims: [{ p: "rename", pick: 0, to: 72129 }], shell: false }] },
      { k: "loop", calls: [{ prims: [{ p: "write", path: 0, bytes: new Uint8Array(), tool: false }], shell: false }] },
      { k: "rewind", pick: 0 },
      { k: "fork", pick: 0 },
    ]);
  }, 120_000);

  it("AG-9 WS-7 WS-30 pinned: a call moves an ignored file over a tracked one; a rewind before it (the ignored file stays gone); the resume runs it: it fails, nothing changes", async () => {
    await runActions(
      {
        k: "loop",
        calls: [
          { prims: [{ p: "rename", pick: 2, to: 0 }], shell: false },
          { prims: [{ p: "rename", pick: 0, to: 0 }], shell: false },
        ],
      },
      [
        { k: "rewind", pick: 0 },
        { k: "direct", calls: [{ prims: [{ p: "edit", pick: 0, at: 0, len: 1, text: "" }], shell: false }] },
        { k: "reopen" },
        { k: "loop", calls: [{ prims: [{ p: "log", path: 0, bytes: new Uint8Array() }], shell: false }] },
      ],
    );
  }, 120_000);

  // Found by this property: LoopWorkspace.prepare returned early for a resumed call (`own`), so a
  // run that started by settling a running call never recorded `workspace.dir`; the fork's record
  // kept naming its parent's directory until its next run that wrote.
  it("WS-25 WS-26 WS-30 pinned: a fork at a running call, resumed in the fork's own directory, records that directory", async () => {
    const write = (text: string): Action => ({
      k: "loop",
      calls: [{ prims: [{ p: "write", path: 0, bytes: new Uint8Array(Buffer.from(text)), tool: true }], shell: false }],
    });
    await withWorld(async (w) => {
      await step(w, write("one"), 0);
      // the fork point: the write's call.start (the call is running there; the resume marks it interrupted)
      const running = w.line.session.log().find((m) => m.label === LABEL.callStart) as EventMeta;
      await step(w, { k: "fork", pick: recordedEvents(w).indexOf(running.id) }, 1);
      expect(w.line.session.live.size).toBe(1);
      await step(w, write("two"), 2);
      // the files are right (checked by the step), and so is the record's directory
      expect(workspaceDir(w.line.session.durableTree), "the directory recorded on the fork").toBe(w.line.dir);
    });
  }, 120_000);
});
