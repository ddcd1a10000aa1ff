/** RR-1 … RR-3: deterministic re-runs and counterfactuals. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bodyOf, Session } from "@strata/engine";
import { afterEach, describe, expect, it } from "vitest";
import { rerun, runAgent, ToolRegistry, workspaceTools } from "../src/index.ts";
import { cleanup, fileStore, InlineModel, tempDir } from "./agent-kit.ts";

afterEach(cleanup);

async function recorded() {
  const root = tempDir("strata-ws-");
  writeFileSync(join(root, "in.txt"), "alpha");
  const registry = new ToolRegistry(workspaceTools({ root }));
  const { store } = fileStore();
  const s = Session.create(store);
  const model = new InlineModel([
    { text: "reading", calls: [{ name: "read_file", args: { path: "in.txt" } }], usage: [10, 2] },
    { text: "writing", calls: [{ name: "write_file", args: { path: "out.txt", content: "ALPHA" } }] },
    { calls: [{ name: "submit", args: { summary: "done" } }] },
  ]);
  await runAgent(s, { model, registry, task: "copy in.txt upper-cased to out.txt" });
  return { root, registry, s };
}

describe("RR re-runs", () => {
  it("RR-1 reproduces a branch: safe tools re-run, never tools answered from the recording", async () => {
    const { root, registry, s } = await recorded();
    writeFileSync(join(root, "out.txt"), "edited by hand");
    const report = await rerun(s, { registry });
    expect(report).toMatchObject({
      branch: "rerun/main",
      turns: 3,
      calls: 3,
      rerunSafe: 2,
      recordedNever: 1,
      stop: "completed-by-tool",
      divergence: undefined,
    });
    expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("edited by hand"); // write_file did not run again
    expect(s.branch).toBe("main");
    const fork = Session.open(s.store, s.id, { branch: "rerun/main" }).session;
    expect(fork.selectOne("meta > rerun")?.attrs).toMatchObject({ of: "main" });
    expect(fork.select("body call").map((c) => c.attrs.status)).toEqual(["executed", "executed", "executed"]);
    expect((await rerun(s, { registry })).branch).toBe("rerun/main-2");
  });

  it("RR-1 a user turn the recording has no reply to is written without asking the model; a recording without a stop has none to compare", async () => {
    const registry = new ToolRegistry(workspaceTools({ root: tempDir("strata-ws-") }));
    const { store } = fileStore();
    const s = Session.create(store);
    // The first request failed (a failed turn leaves the projection); the task given again was answered.
    await runAgent(s, {
      model: new InlineModel([{ fail: { kind: "protocol", message: "the provider is down" } }]),
      registry,
      task: "count the notes",
    });
    await runAgent(s, { model: new InlineModel([{ text: "There are two." }]), registry, task: "count the notes, please" });
    const report = await rerun(s, { registry });
    expect(report).toMatchObject({ turns: 1, stop: "end-turn", divergence: undefined });
    const fork = Session.open(store, s.id, { branch: report.branch }).session;
    expect(fork.select("body > turn").map((t) => [t.attrs.role, t.attrs.status, t.children.find((c) => c.tag === "text")?.text])).toEqual([
      ["user", undefined, "count the notes"],
      ["user", undefined, "count the notes, please"],
      ["assistant", "complete", "There are two."],
    ]);
    // Without a <stop> of its own (an imported recording) the re-run's stop is not a divergence.
    const bare = Session.create(store);
    bare.commit(
      (d) => void d.appendChild(bodyOf(d.tree).id, { tag: "turn", attrs: { role: "user" }, children: [{ tag: "text", text: "hi" }] }),
      {
        label: "turn.user",
      },
    );
    bare.commit(
      (d) =>
        void d.appendChild(bodyOf(d.tree).id, {
          tag: "turn",
          attrs: { role: "assistant", status: "complete" },
          children: [{ tag: "text", text: "hello" }],
        }),
      { label: "turn.end" },
    );
    expect((await rerun(bare, { registry })).divergence).toBeUndefined();
  });

  it("RR-2 reports the first divergent observation with its events on both branches", async () => {
    const { root, registry, s } = await recorded();
    writeFileSync(join(root, "in.txt"), "beta");
    const report = await rerun(s, { registry });
    const d = report.divergence;
    expect(d).toMatchObject({ what: "observation", before: "alpha", after: "beta" });
    expect(d?.message).toMatch(/call call_0_0 \(read_file\) observed something different/);
    expect(s.store.eventMeta(d?.source.event as never)?.label).toBe("call.outcome");
    expect(s.store.eventMeta(d?.rerun.event as never)?.label).toBe("call.outcome");
  });

  it("RR-3 overrides make a counterfactual branch that records them", async () => {
    const { registry, s } = await recorded();
    const tool = await rerun(s, { registry, overrides: [{ kind: "tool", callId: "call_0_0", content: "gamma" }] });
    expect(tool.branch).toBe("whatif/main");
    expect(tool.divergence).toMatchObject({ what: "observation", before: "alpha", after: "gamma" });
    const fork = Session.open(s.store, s.id, { branch: tool.branch }).session;
    expect(fork.selectOne("meta > rerun > override")?.attrs.target).toBe("tool:call_0_0");
    expect(s.store.getBlob(fork.selectOne("meta > rerun > override")?.attrs.hash as string)?.toString()).toBe("gamma");
    const llm = await rerun(s, {
      registry,
      overrides: [
        {
          kind: "llm",
          callId: "call_1_0",
          content: JSON.stringify({ text: "no, listing", toolCalls: [{ name: "list_dir", arguments: {} }] }),
        },
      ],
    });
    expect(llm.divergence).toMatchObject({ what: "reply" });
    await expect(rerun(s, { registry, overrides: [{ kind: "tool", callId: "nope", content: "" }] })).rejects.toThrow(
      /no call with id nope/,
    );
  });
});
