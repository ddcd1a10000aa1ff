/**
 * AG-16, AG-17, EN-34 (issue 11 item 26): a session's creation, its run's inputs and the user's
 * task are one atomic group, and a run continued without a task refuses a branch that has none.
 * Real processes are killed between the steps of the old sequence and inside the new one; resume
 * must never run a task the user did not give.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { toSnapshot } from "@strata/dom";
import { EngineError, Session } from "@strata/engine";
import { openStore, type SessionId } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { recordInputs, runAgent, runState, startRun } from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import { startOptions } from "./agent-start-kit.ts";

afterEach(cleanup);
const child = join(import.meta.dirname, "agent-start-child.ts");

/** Runs the child in `mode` and kills it (SIGKILL) when it says it is at its point; returns its session id, if it printed one. */
function killAt(db: string, mode: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", child, db, mode], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stderr.on("data", (c) => {
      err += c;
    });
    p.stdout.on("data", (c) => {
      out += c;
      if (/^AT /m.test(out)) p.kill("SIGKILL");
    });
    p.on("exit", (_code, signal) => {
      if (signal === "SIGKILL") resolve(/SESSION (\S+)/.exec(out)?.[1]);
      else reject(new Error(`the child ended without being killed (${signal}):\n${out}\n${err}`));
    });
  });
}

/** What a resume (runAgent without a task) does with the session: its result, or the error it refuses with. */
async function resume(db: string, id: string): Promise<{ error?: EngineError; requests: number; log: number; after: number }> {
  const store = openStore(db);
  try {
    const { session } = Session.open(store, id as SessionId);
    const log = session.log().length;
    const options = startOptions();
    try {
      await runAgent(session, options);
      return { requests: options.model.requests.length, log, after: session.log().length };
    } catch (e) {
      if (!(e instanceof EngineError)) throw e;
      return { error: e, requests: options.model.requests.length, log, after: session.log().length };
    }
  } finally {
    store.close();
  }
}

describe("AG-17 a resume never runs a task the user did not give", () => {
  it("killed right after creation (genesis only): resume refuses with no-task and writes nothing", async () => {
    const db = join(tempDir(), "s.db");
    const id = await killAt(db, "genesis");
    expect(id).toBeDefined();
    const r = await resume(db, id as string);
    expect(r.error?.code).toBe("no-task");
    expect(r.error?.message).toMatch(/has no task to continue: it has no user turn/);
    expect(r.requests).toBe(0);
    expect(r.after).toBe(r.log);
  }, 60_000);

  it("killed after the inputs were recorded, before the task: resume refuses with no-task and writes nothing", async () => {
    const db = join(tempDir(), "s.db");
    const id = await killAt(db, "inputs");
    const r = await resume(db, id as string);
    expect(r.log).toBe(2); // genesis + inputs.record
    expect(r.error?.code).toBe("no-task");
    expect(r.requests).toBe(0);
    expect(r.after).toBe(r.log);
  }, 60_000);

  it("runState says what a branch has to continue; a fork made before the task has none", async () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    expect(runState(s)).toEqual({ kind: "no-task" });
    const options = startOptions();
    recordInputs(s, { tools: options.registry.list() });
    expect(runState(s)).toEqual({ kind: "no-task" });
    const beforeTask = s.head.id;
    await runAgent(s, { ...options, task: "note x" });
    expect(runState(s)).toEqual({ kind: "finished", stop: "end-turn" });
    const fork = s.fork(beforeTask, { name: "early" });
    await expect(runAgent(fork, startOptions())).rejects.toMatchObject({ code: "no-task" });
    expect(fork.log().at(-1)?.id).toBe(beforeTask);
  });
});

describe("AG-16 EN-34 creation, inputs and task are one atomic group", () => {
  it("killed inside Session.create({ init }) after startRun: the store has no session at all", async () => {
    const db = join(tempDir(), "s.db");
    await killAt(db, "atomic");
    const store = openStore(db);
    expect(store.listSessions()).toEqual([]);
    store.close();
  }, 60_000);

  it("killed after Session.create({ init }) returned: resume runs the user's task, which the first request carries", async () => {
    const db = join(tempDir(), "s.db");
    const id = await killAt(db, "started");
    const store = openStore(db);
    const { session } = Session.open(store, id as SessionId);
    expect(session.log().map((e) => e.label)).toEqual(["session.start", "inputs.record", "turn.user"]);
    expect(runState(session)).toEqual({ kind: "resumable", lastStop: undefined });
    const options = startOptions();
    const events: string[] = [];
    const result = await runAgent(session, { ...options, onEvent: (e) => void (e.type === "turn" && events.push(e.role)) });
    expect(result.stop).toBe("end-turn");
    expect(options.model.requests[0]?.messages[0]).toEqual({ role: "user", content: "the user's task" });
    // The unanswered task is announced to the UI as the run continues it.
    expect(events[0]).toBe("user");
    store.close();
  }, 60_000);

  it("an init that throws leaves nothing stored, and the object it was given is closed", () => {
    const store = openStore(":memory:");
    let made: Session | undefined;
    expect(() =>
      Session.create(store, {
        init: (s) => {
          made = s;
          startRun(s, { ...startOptions(), task: "t" });
          throw new Error("the caller changed its mind");
        },
      }),
    ).toThrow(/changed its mind/);
    expect(store.listSessions()).toEqual([]);
    expect(() => made?.commit([])).toThrow(/was closed/);
    expect(() => Session.create(store, { init: (async () => {}) as never })).toThrow(/must be synchronous/);
    expect(store.listSessions()).toEqual([]);
  });

  it("startRun records inputs and task as one group commit; runAgent without a task continues it", async () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const options = startOptions();
    startRun(s, { ...options, task: "the task" });
    expect(s.log().map((e) => e.label)).toEqual(["session.start", "inputs.record", "turn.user"]);
    const [, inputs, task] = s.log();
    expect(task?.prior).toBe(inputs?.id);
    // A started run is continued by runAgent without a task; the inputs are not recorded again.
    const before = toSnapshot(s.durableTree);
    expect(before).toContain("the task");
    const r = await runAgent(s, options);
    expect(r.stop).toBe("end-turn");
    expect(s.log().filter((e) => e.label?.startsWith("inputs.")).length).toBe(1);
  });

  it("startRun refuses a branch with open work: runAgent with the task settles it first, then records the task", async () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const options = startOptions();
    startRun(s, { ...options, task: "first" });
    // A call decided and never started (as a crash leaves it).
    s.commit((d) => {
      const t = d.appendChild(d.tree.root.children[1]?.id as never, {
        tag: "turn",
        attrs: { role: "assistant", status: "complete", model: options.model.id },
      });
      d.appendChild(t, { tag: "text", text: "noting" });
      const c = d.appendChild(t, { tag: "call", attrs: { id: "c0", tool: "note", index: "0", replay: "safe", status: "pending" } });
      d.appendChild(c, { tag: "args", text: '{"what":"y"}' });
    });
    expect(() => startRun(s, { ...options, task: "second" })).toThrow(/has open work \(1 call/);
    const again = startOptions();
    const r = await runAgent(s, { ...again, task: "second" });
    expect(r.stop).toBe("end-turn");
    const labels = s.log().map((e) => e.label);
    expect(labels.indexOf("call.outcome")).toBeLessThan(labels.lastIndexOf("turn.user"));
    expect(again.model.requests[0]?.messages.at(-1)).toEqual({ role: "user", content: "second" });
  });
});
