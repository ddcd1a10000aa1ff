/**
 * AG-18 (issue 11 items 3 and 27, driver side): another process moves the branch head under a
 * running driver. Whichever of the loop's writes meets the moved head first — streamed tool output,
 * streamed model text, a call's outcome — `runAgent` rejects with a `HeadConflict`; nothing is
 * thrown anywhere else (no uncaught exception, no unhandled rejection), the tool is stopped, and
 * what was committed before stays, readable and verifiable.
 */
import { join } from "node:path";
import { replayVerify, Session, verifyStore } from "@strata/engine";
import { type EventId, HeadConflict, openStore, type SessionId, type Store } from "@strata/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Model, type ModelEvent, type ModelRequest, runAgent, ToolRegistry } from "../src/index.ts";
import { cleanup, InlineModel, tempDir } from "./agent-kit.ts";

afterEach(cleanup);

// Anything thrown outside runAgent's promise is a failure of this rule.
const stray: unknown[] = [];
const onStray = (e: unknown): void => void stray.push(e);
beforeEach(() => {
  stray.length = 0;
  process.on("uncaughtException", onStray);
  process.on("unhandledRejection", onStray);
});
afterEach(() => {
  process.off("uncaughtException", onStray);
  process.off("unhandledRejection", onStray);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Another process (its own store handle) rewinds the branch to the event before the run's task. */
function rewindElsewhere(path: string, id: SessionId, to: EventId): Store {
  const other = openStore(path);
  const { session } = Session.open(other, id);
  session.rewind(to);
  return other;
}

function setup(): { path: string; store: Store; s: Session; base: EventId } {
  const path = join(tempDir(), "s.db");
  const store = openStore(path);
  const s = Session.create(store);
  s.commit((d) => void d.appendChild(d.tree.root.children[1]?.id as never, { tag: "note", text: "before the run" }));
  return { path, store, s, base: s.head.id };
}

describe("AG-18 a head moved under a running driver ends runAgent with a HeadConflict", () => {
  it("while a tool streams output from a timer callback (like a child process's data events)", async () => {
    const { path, store, s, base } = setup();
    let stopped = false;
    let chunks = 0;
    const registry = new ToolRegistry([
      {
        name: "tail",
        description: "prints forever",
        parameters: { type: "object" },
        handler: (_args, { signal, output }) =>
          new Promise((resolve) => {
            // Output arrives in an event callback, not in the handler's own async flow.
            const timer = setInterval(() => {
              chunks++;
              output?.(`line ${chunks}\n`.repeat(50));
            }, 2);
            signal.addEventListener("abort", () => {
              clearInterval(timer);
              stopped = true;
              resolve("stopped");
            });
          }),
      },
    ]);
    const model = new InlineModel([{ text: "Tailing.", calls: [{ name: "tail", args: {} }] }, { text: "done" }]);
    const running = runAgent(s, { model, registry, task: "tail the log", limits: { call: { inlineChars: 1_000_000 } } });
    // Let the tool stream (its output flushed durably at least once), then move the head elsewhere.
    while (store.log(s.id).filter((e) => e.label === "call.output").length < 3) await sleep(5);
    const other = rewindElsewhere(path, s.id, base);
    await expect(running).rejects.toBeInstanceOf(HeadConflict);
    await sleep(50);
    expect(stray).toEqual([]);
    expect(stopped).toBe(true);
    // What the driver committed stays, on the kept branch: the call running, with its output so far.
    const kept = store.branches(s.id).find((b) => b.origin === "rewind");
    expect(kept).toBeDefined();
    const tree = Session.open(store, s.id, { branch: kept?.name }).session.durableTree;
    const call = Session.open(store, s.id, { branch: kept?.name }).session.selectOne("call");
    expect(call?.attrs.status).toBe("running");
    expect(tree.get(call?.children.find((c) => c.tag === "output")?.id ?? 0)?.text).toMatch(/^line 1\n/);
    expect(store.branch(s.id, "main")?.head).toBe(base);
    expect(verifyStore(store).ok).toBe(true);
    expect(replayVerify(store, s.id, { branch: kept?.name }).ok).toBe(true);
    other.close();
  }, 30_000);

  it("while the model streams text (a timer flush fails, the next write meets the conflict)", async () => {
    const { path, store, s, base } = setup();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const model: Model = {
      id: "scripted:slow",
      async *stream(_r: ModelRequest): AsyncGenerator<ModelEvent> {
        for (let i = 0; i < 5; i++) yield { type: "text", delta: `word ${i} ` };
        await gate;
        for (let i = 0; i < 5; i++) {
          await sleep(60); // past the stream's flush interval
          yield { type: "text", delta: `more ${i} ` };
        }
        yield { type: "tool-call", index: 0, id: "c0", name: "noop" };
        yield { type: "done", finishReason: "tool_calls" };
      },
    };
    const registry = new ToolRegistry([{ name: "noop", description: "no", parameters: { type: "object" }, handler: async () => "ok" }]);
    const running = runAgent(s, { model, registry, task: "talk" });
    while (store.log(s.id).filter((e) => e.label === "turn.text").length < 1) await sleep(5);
    const other = rewindElsewhere(path, s.id, base);
    release();
    await expect(running).rejects.toBeInstanceOf(HeadConflict);
    await sleep(100);
    expect(stray).toEqual([]);
    const kept = store.branches(s.id).find((b) => b.origin === "rewind");
    const turn = Session.open(store, s.id, { branch: kept?.name }).session.selectOne("turn[role=assistant]");
    expect(turn?.attrs.status).toBe("streaming"); // never marked failed: the model did not fail
    expect(verifyStore(store).ok).toBe(true);
    other.close();
  }, 30_000);

  it("while a quiet tool runs (the outcome's commit meets the conflict); nothing is settled", async () => {
    const { path, store, s, base } = setup();
    let started: () => void = () => {};
    const isRunning = new Promise<void>((r) => {
      started = r;
    });
    let finish: () => void = () => {};
    const registry = new ToolRegistry([
      {
        name: "wait",
        description: "waits",
        parameters: { type: "object" },
        handler: () =>
          new Promise((resolve) => {
            started();
            finish = () => resolve("finished");
          }),
      },
    ]);
    const model = new InlineModel([{ calls: [{ name: "wait", args: {} }] }, { text: "done" }]);
    const running = runAgent(s, { model, registry, task: "wait" });
    await isRunning;
    const other = rewindElsewhere(path, s.id, base);
    finish();
    await expect(running).rejects.toBeInstanceOf(HeadConflict);
    expect(stray).toEqual([]);
    const kept = store.branches(s.id).find((b) => b.origin === "rewind");
    expect(Session.open(store, s.id, { branch: kept?.name }).session.selectOne("call")?.attrs.status).toBe("running");
    other.close();
  }, 30_000);
});
