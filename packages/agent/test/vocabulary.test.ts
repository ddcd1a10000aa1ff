/**
 * AG-19: the loop's persisted vocabulary has one home (vocabulary.ts). Sessions that go through
 * every kind of outcome — executed, refused, environment errors, a blob observation, a timeout, a
 * cancel, a model failure, a completing call with calls after it, a resume — hold only its names
 * and values, and the calls a resume reconciles are exactly those the session core treats as live.
 */
import { type Element, walkTree } from "@strata/dom";
import { isLifecycle, Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  ATTR,
  CALL,
  DIAG,
  LABEL,
  OPEN_CALL,
  ROLE,
  runAgent,
  STOP,
  TAG,
  ToolEnvironmentError,
  ToolRegistry,
  type ToolSpec,
  TURN,
} from "../src/index.ts";
import { cleanup, InlineModel } from "./agent-kit.ts";

afterEach(cleanup);

const tool = (name: string, handler: ToolSpec["handler"], extra: Partial<ToolSpec> = {}): ToolSpec => ({
  name,
  description: name,
  parameters: { type: "object" },
  replayPolicy: "never",
  handler,
  ...extra,
});

/** A session that has been through every outcome the loop records. */
async function everything(): Promise<Session> {
  const s = Session.create(openStore(":memory:"));
  const ctl = new AbortController();
  const registry = new ToolRegistry([
    tool("echo", async () => "echoed"),
    tool("broken", async () => Promise.reject(new ToolEnvironmentError("the sandbox is gone"))),
    tool("big", async () => "x".repeat(5000)),
    tool("slow", (_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stopped"))))),
    tool("cancel", (_a, ctx) => {
      setTimeout(() => ctl.abort(), 10);
      return new Promise((_r, reject) => ctx.signal.addEventListener("abort", () => reject(new DOMException("t", "AbortError"))));
    }),
    tool("done", async () => "finished", { completesRun: true, replayPolicy: "safe" }),
  ]);
  const limits = { call: { timeoutMs: 50, graceMs: 50, inlineChars: 1000 } };
  // executed, not_executed (unknown tool), env_error, a blob observation, a timeout; then a model failure
  const first = new InlineModel([
    {
      text: "Trying everything.",
      calls: [
        { name: "echo", args: {} },
        { name: "ghost", args: {} },
        { name: "broken", args: {} },
        { name: "big", args: {} },
        { name: "slow", args: {} },
      ],
      usage: [10, 5],
    },
    { text: "Half a repl", fail: { kind: "server", message: "the server fell over", afterEvents: 2 } },
  ]);
  expect((await runAgent(s, { model: first, registry, task: "go", limits })).stop).toBe(STOP.modelError);
  // cancelled while a call runs
  const second = new InlineModel([{ text: "nothing" }, { calls: [{ name: "cancel", args: {} }] }]);
  expect((await runAgent(s, { model: second, registry, signal: ctl.signal, limits })).stop).toBe(STOP.cancelled);
  // resumed, then a completing call settles the one after it
  const third = new InlineModel([
    { text: "nothing" },
    { text: "nothing" },
    {
      calls: [
        { name: "done", args: {} },
        { name: "echo", args: {} },
      ],
    },
  ]);
  expect((await runAgent(s, { model: third, registry, limits })).stop).toBe(STOP.completedByTool);
  return s;
}

const values = (o: object): string[] => Object.values(o) as string[];

describe("AG-19 the loop writes only its vocabulary", () => {
  it("every tag, status, role, stop reason, diag kind and event label of a session is one vocabulary.ts names", async () => {
    const s = await everything();
    const tree = s.durableTree;
    const body = tree.root.children.find((c) => c.tag === "body") as Element;
    const seen = { tags: new Set<string>(), calls: new Set<string>(), turns: new Set<string>(), diags: new Set<string>() };
    walkTree(tree, body.id, (r) => {
      if (r.id === body.id) return;
      seen.tags.add(r.tag);
      if (r.tag === TAG.call) seen.calls.add(r.attrs[ATTR.status] ?? "");
      if (r.tag === TAG.turn) seen.turns.add(`${r.attrs[ATTR.role]}:${r.attrs[ATTR.status] ?? ""}`);
      if (r.tag === TAG.diag) seen.diags.add(r.attrs[ATTR.kind] ?? "");
      if (r.tag === TAG.stop) expect(values(STOP)).toContain(r.attrs[ATTR.reason]);
    });
    for (const t of seen.tags) expect(values(TAG)).toContain(t);
    for (const c of seen.calls) expect(values(CALL)).toContain(c);
    for (const t of seen.turns) {
      const [role, status] = t.split(":") as [string, string];
      expect(values(ROLE)).toContain(role);
      if (role === ROLE.assistant) expect(values(TURN)).toContain(status);
    }
    for (const k of seen.diags) expect(k.startsWith("model-") || values(DIAG).includes(k), k).toBe(true);
    // The session went through what the test claims (so the checks above saw each kind).
    expect([...seen.calls].sort()).toEqual([CALL.envError, CALL.executed, CALL.interrupted, CALL.notExecuted].sort());
    expect(seen.turns).toEqual(new Set([`${ROLE.user}:`, `${ROLE.assistant}:${TURN.complete}`, `${ROLE.assistant}:${TURN.failed}`]));
    expect(seen.diags).toEqual(new Set([DIAG.blob, DIAG.timeout, "model-server"]));
    const labels = new Set(s.log().map((e) => e.label ?? ""));
    // `session.*` labels are the session core's own (its genesis, its transitions).
    for (const l of labels) if (!l.startsWith("session.")) expect(values(LABEL), l).toContain(l);
    for (const l of [
      LABEL.turnUser,
      LABEL.turnStart,
      LABEL.turnEnd,
      LABEL.turnFailed,
      LABEL.callOutcome,
      LABEL.callInterrupted,
      LABEL.runStop,
    ])
      expect(labels).toContain(l);
  });

  it("the open call statuses are exactly the calls the session core's lifecycle treats as live (L7)", () => {
    for (const status of values(CALL)) expect(isLifecycle(TAG.call, { [ATTR.status]: status }), status).toBe(OPEN_CALL.has(status));
    expect([...OPEN_CALL].sort()).toEqual([CALL.arguments, CALL.pending, CALL.running].sort());
  });
});
