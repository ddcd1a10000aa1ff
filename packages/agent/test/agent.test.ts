/** AG-1 … AG-9, AG-11 … AG-14: the agent loop — streaming into the tree, outcomes, stop reasons, reconciliation. */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Element, nodeId, select, toXml } from "@strata/dom";
import { replayVerify, Session } from "@strata/engine";
import { type EventId, openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ActionOutcome,
  type AgentEvent,
  type Executor,
  renderPrompt,
  runAgent,
  ToolEnvironmentError,
  ToolRegistry,
  type ToolSpec,
  workspaceTools,
} from "../src/index.ts";
import { cleanup, fileStore, InlineModel, providerValid, tempDir } from "./agent-kit.ts";

afterEach(cleanup);

function workspace(): { root: string; registry: ToolRegistry } {
  const root = tempDir("strata-ws-");
  writeFileSync(join(root, "notes.txt"), "buy milk\n");
  return { root, registry: new ToolRegistry(workspaceTools({ root })) };
}

function calls(s: Session): Element[] {
  return s.select("body call");
}

describe("AG-1 a run streams into the tree and stops when a completes-run tool succeeds", () => {
  it("records turns, calls, outcomes, todo state and the stop; the prompt is a projection", async () => {
    const { store } = fileStore();
    const { root, registry } = workspace();
    const s = Session.create(store);
    const model = new InlineModel([
      {
        text: "Let me look.",
        calls: [
          {
            name: "todo",
            args: {
              items: [
                { text: "read notes", status: "in_progress" },
                { text: "write summary", status: "pending" },
              ],
            },
          },
          { name: "read_file", args: { path: "notes.txt" } },
        ],
        usage: [100, 20],
      },
      { calls: [{ name: "write_file", args: { path: "summary.txt", content: "milk" } }], usage: [150, 10] },
      { text: "Done.", calls: [{ name: "submit", args: { summary: "wrote summary.txt" } }], usage: [200, 5] },
    ]);
    const events: AgentEvent[] = [];
    const result = await runAgent(s, {
      model,
      registry,
      task: "Summarize notes.txt",
      templates: { system: 'You work in a workspace.\n- {{ count(select("todo item[status!=completed]")) }} open items' },
      onEvent: (e) => events.push(e),
    });
    expect(result).toMatchObject({ stop: "completed-by-tool", steps: 3, effective: 4, calls: 4, tokens: 485 });
    expect(readFileSync(join(root, "summary.txt"), "utf8")).toBe("milk");
    expect(calls(s).map((c) => `${c.attrs.tool}:${c.attrs.status}`)).toEqual([
      "todo:executed",
      "read_file:executed",
      "write_file:executed",
      "submit:executed",
    ]);
    expect(s.select("body > turn").map((t) => `${t.attrs.role}:${t.attrs.status ?? ""}`)).toEqual([
      "user:",
      "assistant:complete",
      "assistant:complete",
      "assistant:complete",
    ]);
    expect(s.selectOne("body > stop")?.attrs).toMatchObject({ reason: "completed-by-tool", steps: "3", effective: "4" });
    expect(s.count("meta > todo > item")).toBe(2);
    // the model saw the system template rendered over the tree at that point
    expect(model.requests[0]?.system).toBe("You work in a workspace.\n- 0 open items");
    expect(model.requests[1]?.system).toBe("You work in a workspace.\n- 2 open items");
    // every request is provider-valid and equals the projection re-rendered at its event
    const starts = s.log().filter((e) => e.label === "turn.start");
    expect(starts).toHaveLength(3);
    for (const [i, e] of starts.entries()) {
      expect(providerValid(model.requests[i] as never)).toBeUndefined();
      const prior = s.log().find((x) => x.id === e.prior);
      expect(renderPrompt(s, { at: prior?.id })).toEqual(model.requests[i]);
    }
    expect(
      events
        .filter((e) => e.type === "text")
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe("Let me look.Done.");
    expect(events.at(-1)).toEqual({ type: "stop", reason: "completed-by-tool", detail: "submit completed the run" });
    // L3: replay from genesis reproduces the run with neither the model nor the tools (replayVerify is given neither)
    expect(replayVerify(store, s.id).ok).toBe(true);
    // L1: a reopened session equals the live one
    const again = Session.open(openStore(store.path), s.id).session;
    expect(toXml(again.tree)).toBe(toXml(s.tree));
  });

  it("AG-2 the recorded inputs are in <meta><config> and changes are recorded as a patch", async () => {
    const s = Session.create(openStore(":memory:"));
    const { registry } = workspace();
    const model = new InlineModel([{ text: "hi" }, { text: "again" }]);
    await runAgent(s, { model, registry, task: "hello", templates: { system: "v1" }, context: { "AGENTS.md": "be nice" } });
    expect(s.select("meta > config > tools > tool").map((t) => t.attrs.name)).toEqual([
      "read_file",
      "list_dir",
      "write_file",
      "edit_file",
      "run",
      "todo",
      "submit",
    ]);
    expect(s.selectOne("meta > config > model")?.attrs).toMatchObject({ provider: "scripted", model: "inline" });
    const before = s.head.id;
    await runAgent(s, { model, registry, task: "more", templates: { system: "v2" }, context: { "AGENTS.md": "be nice" } });
    const updates = s.log({ after: before }).filter((e) => e.label === "inputs.update");
    expect(updates).toHaveLength(1);
    expect(model.requests.map((r) => r.system)).toEqual(["v1", "v2"]);
    expect(renderPrompt(s, { at: before }).system).toBe("v1");
  });
});

describe("AG-3 stop reasons", () => {
  it("end-turn: a reply without tool calls", async () => {
    const s = Session.create(openStore(":memory:"));
    const r = await runAgent(s, { model: new InlineModel([{ text: "Hello!" }]), registry: workspace().registry, task: "hi" });
    expect(r.stop).toBe("end-turn");
    expect(s.selectOne("body > stop")?.attrs.reason).toBe("end-turn");
    // continuing without a task has nothing to do
    expect((await runAgent(s, { model: new InlineModel([]), registry: workspace().registry })).stop).toBe("end-turn");
  });

  it("AG-6 max-steps: invalid calls count toward steps, not effective actions", async () => {
    const s = Session.create(openStore(":memory:"));
    const bad = {
      calls: [
        { name: "ghost", args: {} },
        { name: "read_file", args: "{oops" },
        { name: "read_file", args: { path: 3 } },
      ],
    };
    const r = await runAgent(s, {
      model: new InlineModel([bad, bad, bad]),
      registry: workspace().registry,
      task: "x",
      limits: { maxSteps: 2 },
    });
    expect(r).toMatchObject({ stop: "max-steps", steps: 2, effective: 0, calls: 6 });
    expect(calls(s).every((c) => c.attrs.status === "not_executed" && c.attrs.reason !== undefined)).toBe(true);
    const req = renderPrompt(s);
    expect(providerValid(req)).toBeUndefined();
    const toolMsgs = req.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(toolMsgs[0]).toMatch(/^The call to ghost was not executed: there is no tool named "ghost"/);
    expect(toolMsgs[2]).toMatch(/`path` must be string/);
  });

  it("budget: token use past the budget stops before the next model turn", async () => {
    const s = Session.create(openStore(":memory:"));
    const t = { calls: [{ name: "list_dir", args: {} }], usage: [600, 10] as const };
    const r = await runAgent(s, {
      model: new InlineModel([t, t, t]),
      registry: workspace().registry,
      task: "x",
      limits: { budgetTokens: 1000 },
    });
    expect(r).toMatchObject({ stop: "budget", steps: 2, tokens: 1220 });
  });

  it("env-completed is distinct from completed-by-tool (an environment-backed executor)", async () => {
    const s = Session.create(openStore(":memory:"));
    const registry = workspace().registry;
    const inner = registry.executor();
    const env: Executor = {
      async execute(action, signal, ctx): Promise<ActionOutcome> {
        const out = await inner.execute(action, signal, ctx);
        return { ...out, envReportedCompletion: true };
      },
    };
    const r = await runAgent(s, {
      model: new InlineModel([{ calls: [{ name: "list_dir", args: {} }] }]),
      registry,
      executor: env,
      task: "x",
    });
    expect(r.stop).toBe("env-completed");
    expect(s.selectOne("body > stop")?.attrs.reason).toBe("env-completed");
  });

  it("a completes-run tool that throws does not complete the run", async () => {
    const failing: ToolSpec = {
      name: "submit",
      description: "d",
      parameters: { type: "object" },
      completesRun: true,
      handler: async () => Promise.reject(new RangeError("not yet")),
    };
    const s = Session.create(openStore(":memory:"));
    const r = await runAgent(s, {
      model: new InlineModel([{ calls: [{ name: "submit", args: {} }] }, { text: "ok" }]),
      registry: new ToolRegistry([failing]),
      task: "x",
    });
    expect(r.stop).toBe("end-turn");
    expect(calls(s)[0]?.attrs).toMatchObject({ status: "executed", error: "RangeError" });
    expect(renderPrompt(s).messages.find((m) => m.role === "tool")?.content).toBe("RangeError: not yet");
  });

  it("AG-5 model-error and context-overflow are recorded outcomes; resume re-asks the model", async () => {
    const s = Session.create(openStore(":memory:"));
    const registry = workspace().registry;
    const flaky = new InlineModel([
      {
        text: "partial text here",
        calls: [{ name: "list_dir", args: {} }],
        fail: { kind: "network", message: "connection reset", afterEvents: 3 },
      },
    ]);
    const r = await runAgent(s, { model: flaky, registry, task: "x" });
    expect(r).toMatchObject({ stop: "model-error", detail: "connection reset" });
    const failed = s.selectOne("body > turn[role=assistant]");
    expect(failed?.attrs.status).toBe("failed");
    expect(s.selectOne("body > turn[role=assistant] > diag")?.attrs.kind).toBe("model-network");
    expect(providerValid(renderPrompt(s))).toBeUndefined();
    expect(renderPrompt(s).messages).toHaveLength(1); // the failed turn is not in the history
    const good = new InlineModel([{ text: "fine" }]);
    expect((await runAgent(s, { model: good, registry })).stop).toBe("end-turn");
    const over = new InlineModel([
      { fail: { kind: "context-overflow", message: "too long" } },
      { fail: { kind: "context-overflow", message: "too long" } },
    ]);
    expect((await runAgent(s, { model: over, registry, task: "y" })).stop).toBe("context-overflow");
  });

  it("TL-7 a registry and an executor from different registries are refused (the seed's decision four)", async () => {
    const s = Session.create(openStore(":memory:"));
    const a = workspace().registry;
    await expect(
      runAgent(s, { model: new InlineModel([]), registry: a.restrictTo(["read_file"]), executor: a.executor(), task: "x" }),
    ).rejects.toThrow(/derived from a registry with tools/);
    expect(s.count("body > turn")).toBe(0);
  });
});

describe("TL-6 what a handler sees", () => {
  it("only its parsed arguments and {signal, key, output, stage}; output streams into <output>, a staged edit lands with the outcome", async () => {
    const seen: { args: unknown; keys: string[]; aborted: boolean }[] = [];
    const callKeys: (string | undefined)[] = [];
    const probe: ToolSpec = {
      name: "probe",
      description: "d",
      parameters: { type: "object" },
      handler: async (args, ctx) => {
        seen.push({ args, keys: Object.keys(ctx).sort(), aborted: ctx.signal.aborted });
        callKeys.push(ctx.key);
        if (callKeys.length > 1) return "again";
        ctx.output?.("step 1\n");
        ctx.stage?.((d) => void d.appendChild(nodeId(2), { tag: "probed" }));
        return "done";
      },
    };
    const s = Session.create(openStore(":memory:"));
    await runAgent(s, {
      model: new InlineModel([
        {
          calls: [
            { name: "probe", args: { path: "a", n: 2 } },
            { name: "probe", args: { path: "a", n: 2 } },
          ],
        },
        { text: "ok" },
      ]),
      registry: new ToolRegistry([probe]),
      task: "x",
    });
    const sees = { args: { path: "a", n: 2 }, keys: ["key", "output", "signal", "stage"], aborted: false };
    expect(seen).toEqual([sees, sees]);
    // two calls, the same tool and arguments: two keys (a key names a call, not what it does)
    expect(callKeys.every((k) => typeof k === "string" && k.length > 0)).toBe(true);
    expect(new Set(callKeys).size).toBe(2);
    const c = calls(s)[0] as Element;
    expect(c.attrs.status).toBe("executed");
    expect(c.children.find((x) => x.tag === "output")?.text).toBe("step 1\n");
    const outcome = s.log().find((e) => e.label === "call.outcome");
    expect(select(s.at(outcome?.prior as EventId), "meta > probed")).toHaveLength(0);
    expect(select(s.at(outcome?.id as EventId), "meta > probed")).toHaveLength(1);
  });
});

describe("AG-7, AG-8 calls: env errors, limits, cancellation", () => {
  it("TL-5 env_error gets the recorded synthetic observation; the executor's text stays for audit", async () => {
    const broken: ToolSpec = {
      name: "db",
      description: "d",
      parameters: { type: "object" },
      handler: async () => Promise.reject(new ToolEnvironmentError("database unreachable")),
    };
    const s = Session.create(openStore(":memory:"));
    await runAgent(s, {
      model: new InlineModel([{ calls: [{ name: "db", args: {} }] }, { text: "ok" }]),
      registry: new ToolRegistry([broken]),
      task: "x",
    });
    const c = calls(s)[0];
    expect(c?.attrs).toMatchObject({ status: "env_error", reason: "database unreachable" });
    expect(c?.children.find((x) => x.tag === "result")?.text).toBe("database unreachable");
    expect(renderPrompt(s).messages.find((m) => m.role === "tool")?.content).toBe(
      "The call to db failed because the environment is broken, not because of the call: database unreachable",
    );
  });

  it("AG-7 outputs over the inline limit go to a blob with a <diag>; progress is bounded", async () => {
    const big: ToolSpec = {
      name: "big",
      description: "d",
      parameters: { type: "object" },
      replayPolicy: "safe",
      handler: async (_a, ctx) => {
        for (let i = 0; i < 100; i++) ctx.output?.("p".repeat(100));
        return "x".repeat(50_000);
      },
    };
    const { store } = fileStore();
    const s = Session.create(store);
    await runAgent(s, {
      model: new InlineModel([{ calls: [{ name: "big", args: {} }] }, { text: "ok" }]),
      registry: new ToolRegistry([big]),
      task: "x",
      limits: { call: { inlineChars: 1000 } },
    });
    const c = calls(s)[0] as Element;
    const result = c.children.find((x) => x.tag === "result")?.text ?? "";
    expect(result.length).toBeLessThan(1200);
    expect(result).toMatch(/49000 more characters not shown/);
    const blob = c.children.find((x) => x.tag === "diag" && x.attrs.kind === "blob");
    expect(store.getBlob(blob?.attrs.hash as string)?.toString()).toBe("x".repeat(50_000));
    expect(c.children.find((x) => x.tag === "output")?.text).toHaveLength(1000);
    expect(c.children.find((x) => x.tag === "diag" && x.attrs.kind === "output-truncated")?.attrs.dropped).toBe("9000");
  });

  it("AG-7 a call past its time limit is stopped; one that ignores the abort is abandoned after the grace period", async () => {
    const slow: ToolSpec = {
      name: "slow",
      description: "d",
      parameters: { type: "object" },
      handler: (_a, ctx) =>
        new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new DOMException("t", "AbortError")))),
    };
    const deaf: ToolSpec = { name: "deaf", description: "d", parameters: { type: "object" }, handler: () => new Promise(() => {}) };
    const s = Session.create(openStore(":memory:"));
    await runAgent(s, {
      model: new InlineModel([
        {
          calls: [
            { name: "slow", args: {} },
            { name: "deaf", args: {} },
          ],
        },
        { text: "ok" },
      ]),
      registry: new ToolRegistry([slow, deaf]),
      task: "x",
      limits: { call: { timeoutMs: 50, graceMs: 50 } },
    });
    const [a, b] = calls(s);
    expect(a?.attrs).toMatchObject({ status: "executed", error: "TimeoutError" });
    expect(a?.children.find((x) => x.tag === "diag")?.attrs.kind).toBe("timeout");
    expect(b?.children.find((x) => x.tag === "diag")?.attrs.kind).toBe("abandoned");
  });

  it("AG-8 cancelling during a call marks it interrupted, stops as cancelled, and the session resumes", async () => {
    const ctl = new AbortController();
    const waits: ToolSpec = {
      name: "wait",
      description: "d",
      parameters: { type: "object" },
      replayPolicy: "never",
      handler: (_a, ctx) => {
        setTimeout(() => ctl.abort(), 10);
        return new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new DOMException("t", "AbortError"))));
      },
    };
    const s = Session.create(openStore(":memory:"));
    const registry = new ToolRegistry([waits]);
    const model = new InlineModel([{ calls: [{ name: "wait", args: {} }] }, { text: "noted" }]);
    const r = await runAgent(s, { model, registry, task: "x", signal: ctl.signal });
    expect(r.stop).toBe("cancelled");
    expect(calls(s)[0]?.attrs.status).toBe("interrupted");
    expect(providerValid(renderPrompt(s))).toBeUndefined();
    expect(renderPrompt(s).messages.find((m) => m.role === "tool")?.content).toMatch(/was interrupted before it reported a result/);
    expect((await runAgent(s, { model, registry })).stop).toBe("end-turn");
  });
});

describe("AG-11 … AG-13 reconciliation on resume (same file, the first process abandoned)", () => {
  async function crashAt(status: "pending" | "running", policy: "safe" | "never") {
    const { store, path } = fileStore();
    const { registry: ws } = workspace();
    let runs = 0;
    const spec: ToolSpec = {
      name: "act",
      description: "d",
      parameters: { type: "object" },
      replayPolicy: policy,
      handler: async () => {
        runs++;
        return "acted";
      },
    };
    const registry = new ToolRegistry([spec, ...ws.list()]);
    const s = Session.create(store);
    const model = new InlineModel([
      {
        calls: [
          { name: "list_dir", args: {} },
          { name: "act", args: {} },
        ],
      },
      { text: "all good" },
    ]);
    // drive the loop by hand to the crash point: user turn, model turn with both calls pending, first call done
    const hang: ToolSpec = { ...spec, handler: () => new Promise(() => {}) };
    const hanging = new ToolRegistry([hang, ...ws.list()]);
    let reached = (): void => undefined;
    const crashPoint = new Promise<void>((r) => {
      reached = r;
    });
    const first = runAgent(s, {
      model,
      registry: hanging,
      task: "go",
      onEvent: (e) => {
        if (e.type !== "call" || e.tool !== "act" || e.status !== status) return;
        reached();
        throw new Error("crash");
      },
    }).catch(() => "crashed");
    // the crash point is reached (its event committed, then reported), whatever the machine's load
    await crashPoint;
    await new Promise((r) => setImmediate(r));
    expect(await Promise.race([first, Promise.resolve("pending")])).toBeDefined();
    const { session: resumed, work } = Session.open(openStore(path), s.id);
    expect(work.spawn.map((e) => e.element.attrs.tool)).toEqual(status === "pending" ? ["list_dir", "act"] : ["act"]);
    const events: AgentEvent[] = [];
    const r = await runAgent(resumed, { model, registry, onEvent: (e) => events.push(e) });
    return { r, runs, resumed, events };
  }

  it("AG-11 a call that never started runs", async () => {
    const { r, runs, resumed, events } = await crashAt("pending", "never");
    expect(runs).toBe(1);
    expect(events.filter((e) => e.type === "reconcile")).toMatchObject([
      { tool: "list_dir", action: "run" },
      { tool: "act", action: "run" },
    ]);
    expect(r.stop).toBe("end-turn");
    expect(calls(resumed).map((c) => c.attrs.status)).toEqual(["executed", "executed"]);
  });

  it("AG-12 a started safe call re-runs (attempt 2)", async () => {
    const { runs, resumed, events } = await crashAt("running", "safe");
    expect(runs).toBe(1);
    expect(events[0]).toMatchObject({ action: "rerun" });
    expect(calls(resumed)[1]?.attrs).toMatchObject({ status: "executed", attempt: "2" });
    expect(resumed.log().some((e) => e.label === "call.retry")).toBe(true);
  });

  it("TL-6 AG-12 the re-run of a safe call whose handler had started gets the key the first attempt got", async () => {
    const { store, path } = fileStore();
    const keys: (string | undefined)[] = [];
    let started = (): void => undefined;
    const handlerStarted = new Promise<void>((r) => {
      started = r;
    });
    const spec: ToolSpec = { name: "act", description: "d", parameters: { type: "object" }, replayPolicy: "safe" };
    const hanging: ToolSpec = {
      ...spec,
      handler: (_args, ctx) => {
        keys.push(ctx.key);
        started();
        return new Promise(() => {}); // the effect is under way when the process "dies"
      },
    };
    const finishing: ToolSpec = {
      ...spec,
      handler: async (_args, ctx) => {
        keys.push(ctx.key);
        return "acted";
      },
    };
    const s = Session.create(store);
    const model = new InlineModel([{ calls: [{ name: "act", args: { to: "ops" } }] }, { text: "done" }]);
    const stop = new AbortController();
    const first = runAgent(s, { model, registry: new ToolRegistry([hanging]), task: "go", signal: stop.signal }).catch(() => "ended");
    await handlerStarted;
    const { session: resumed } = Session.open(openStore(path), s.id);
    expect((await runAgent(resumed, { model, registry: new ToolRegistry([finishing]) })).stop).toBe("end-turn");
    expect(calls(resumed)[0]?.attrs).toMatchObject({ status: "executed", attempt: "2" });
    // one call, two attempts, one key: an external service told the key does the effect once
    expect(keys).toHaveLength(2);
    expect(typeof keys[0]).toBe("string");
    expect(keys[1]).toBe(keys[0]);
    // opaque: it names neither the tool nor what the call does
    expect(keys[0]).not.toMatch(/act|ops/);
    stop.abort();
    await first;
  });

  it("AG-13 a started never call becomes interrupted and the model sees the synthetic observation", async () => {
    const { runs, resumed, events } = await crashAt("running", "never");
    expect(runs).toBe(0);
    expect(events[0]).toMatchObject({ action: "interrupted" });
    const req = renderPrompt(resumed);
    expect(providerValid(req)).toBeUndefined();
    expect(req.messages.filter((m) => m.role === "tool").map((m) => m.content)[1]).toMatch(/interrupted before it reported a result/);
    expect(resumed.log().some((e) => e.label === "call.interrupted")).toBe(true);
  });
});

describe("AG-3, AG-8, AG-9 settling calls: after a completing call, a timeout, a prompt error, a cancellation, a cut-off reply", () => {
  it("AG-3 a completing call settles the calls after it as not executed; nothing reopens after the stop", async () => {
    const { root, registry } = workspace();
    const s = Session.create(openStore(":memory:"));
    const r = await runAgent(s, {
      model: new InlineModel([
        {
          calls: [
            { name: "submit", args: { summary: "done" } },
            { name: "write_file", args: { path: "late.txt", content: "x" } },
          ],
        },
      ]),
      registry,
      task: "x",
    });
    expect(r.stop).toBe("completed-by-tool");
    expect(calls(s).map((c) => `${c.attrs.tool}:${c.attrs.status}`)).toEqual(["submit:executed", "write_file:not_executed"]);
    expect(calls(s)[1]?.attrs.reason).toBe("the run completed before this call");
    expect(s.live.size).toBe(0);
    const again = await runAgent(s, { model: new InlineModel([]), registry });
    expect(again.stop).toBe("completed-by-tool");
    expect(readdirSync(root)).not.toContain("late.txt");
    expect(providerValid(renderPrompt(s))).toBeUndefined();
  });

  it("AG-8 a timed-out or abandoned handler's staged edits are dropped", async () => {
    const stager: ToolSpec = {
      name: "stage",
      description: "d",
      parameters: { type: "object" },
      handler: (_a, ctx) => {
        ctx.stage?.((d) => void d.appendChild(nodeId(2), { tag: "deployed" }));
        return new Promise(() => {});
      },
    };
    const s = Session.create(openStore(":memory:"));
    await runAgent(s, {
      model: new InlineModel([{ calls: [{ name: "stage", args: {} }] }, { text: "ok" }]),
      registry: new ToolRegistry([stager]),
      task: "x",
      limits: { call: { timeoutMs: 30, graceMs: 30 } },
    });
    expect(calls(s)[0]?.attrs.error).toBe("TimeoutError");
    expect(s.count("meta > deployed")).toBe(0);
  });

  it("AG-3 a template that does not render stops the run as prompt-error instead of throwing", async () => {
    const s = Session.create(openStore(":memory:"));
    const r = await runAgent(s, {
      model: new InlineModel([{ text: "hi" }]),
      registry: new ToolRegistry([]),
      task: "x",
      templates: { system: "{{ missing_variable }}" },
    });
    expect(r.stop).toBe("prompt-error");
    expect(r.detail).toMatch(/system:1:4: .*undefined/);
    expect(s.selectOne("body > stop")?.attrs.reason).toBe("prompt-error");
  });

  it("AG-8 cancelling between calls leaves the calls that never started pending; resume runs them", async () => {
    const ctl = new AbortController();
    let second = 0;
    const first: ToolSpec = {
      name: "first",
      description: "d",
      parameters: { type: "object" },
      handler: async () => {
        ctl.abort();
        return "one";
      },
    };
    const next: ToolSpec = { name: "second", description: "d", parameters: { type: "object" }, handler: async () => `two ${++second}` };
    const s = Session.create(openStore(":memory:"));
    const registry = new ToolRegistry([first, next]);
    const model = new InlineModel([
      {
        calls: [
          { name: "first", args: {} },
          { name: "second", args: {} },
        ],
      },
      { text: "ok" },
    ]);
    expect((await runAgent(s, { model, registry, task: "x", signal: ctl.signal })).stop).toBe("cancelled");
    expect(calls(s).map((c) => c.attrs.status)).toEqual(["executed", "pending"]);
    expect((await runAgent(s, { model, registry })).stop).toBe("end-turn");
    expect(second).toBe(1);
    expect(calls(s).map((c) => c.attrs.status)).toEqual(["executed", "executed"]);
  });

  it("AG-9 a new task after a cut-off reply: the cut-off turn is settled before the user turn", async () => {
    const s = Session.create(openStore(":memory:"));
    s.commit((d) => {
      d.appendChild(nodeId(3), { tag: "turn", attrs: { role: "user" }, children: [{ tag: "text", text: "first" }] });
      d.appendChild(nodeId(3), {
        tag: "turn",
        attrs: { role: "assistant", status: "streaming" },
        children: [{ tag: "text", text: "half a rep" }],
      });
    });
    await runAgent(s, { model: new InlineModel([{ text: "answer" }]), registry: new ToolRegistry([]), task: "second" });
    expect(s.select("body > turn").map((t) => `${t.attrs.role}:${t.attrs.status ?? ""}`)).toEqual([
      "user:",
      "assistant:interrupted",
      "user:",
      "assistant:complete",
    ]);
  });

  it("TL-5 a handler's own AbortError (the run was not aborted) is an executed failure, per the seed's table", async () => {
    const own: ToolSpec = {
      name: "own",
      description: "d",
      parameters: { type: "object" },
      handler: async () => Promise.reject(new DOMException("inner fetch aborted", "AbortError")),
    };
    const s = Session.create(openStore(":memory:"));
    await runAgent(s, {
      model: new InlineModel([{ calls: [{ name: "own", args: {} }] }, { text: "ok" }]),
      registry: new ToolRegistry([own]),
      task: "x",
    });
    expect(calls(s)[0]?.attrs).toMatchObject({ status: "executed", error: "DOMException" });
  });
});
