/** PR-1, PR-2, PR-5 … PR-9: every run input is in the tree (L4) and the prompt is a projection of it (L8). */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  blobReader,
  DEFAULT_SYNTHETIC,
  type ModelRequest,
  projectRequest,
  readInputs,
  recordInputs,
  renderPrompt,
  runAgent,
  TemplateError,
  ToolRegistry,
  workspaceTools,
} from "../src/index.ts";
import { ProjectionMemo } from "../src/prompt.ts";
import { cleanup, fileStore, InlineModel, providerValid, tempDir } from "./agent-kit.ts";

afterEach(cleanup);

const SYSTEM = `You are a coding agent.
{% if context["AGENTS.md"] %}Project rules:
{{ context["AGENTS.md"] }}
{% endif %}- {{ count(select("todo item[status!=completed]")) }} open items
Tools: {{ join(tools, ", ") }}`;

describe("PR-1, PR-2 recorded inputs", () => {
  it("PR-1 records templates, context files, roster, model and session settings, synthetic texts; bytes go to blobs", () => {
    const { store } = fileStore();
    const s = Session.create(store);
    const tools = workspaceTools({ root: tempDir() });
    const e = recordInputs(s, {
      templates: { system: SYSTEM },
      context: { "AGENTS.md": "Use tabs." },
      tools,
      model: { provider: "openai", model: "gpt-x", temperature: 0.2, maxTokens: 500 },
      settings: { "max-steps": 20, workspace: "/w" },
      synthetic: DEFAULT_SYNTHETIC,
    });
    expect(e?.label).toBe("inputs.record");
    const rec = readInputs(s.tree);
    expect(store.getBlob(rec.templates.get("system") as string)?.toString()).toBe(SYSTEM);
    expect(store.getBlob(rec.context.get("AGENTS.md") as string)?.toString()).toBe("Use tabs.");
    expect(rec.model).toEqual({ provider: "openai", model: "gpt-x", temperature: 0.2, maxTokens: 500 });
    expect(rec.settings).toEqual({ "max-steps": "20", workspace: "/w" });
    expect(rec.tools.map((t) => [t.name, t.replayPolicy, t.completesRun])).toEqual([
      ["read_file", "safe", false],
      ["list_dir", "safe", false],
      ["write_file", "never", false],
      ["edit_file", "never", false],
      ["run", "never", false],
      ["todo", "safe", false],
      ["submit", "safe", true],
    ]);
    expect(JSON.parse(store.getBlob(rec.tools[0]?.schemaHash as string)?.toString() ?? "")).toEqual(tools[0]?.parameters);
    expect(rec.synthetic).toEqual(DEFAULT_SYNTHETIC);
  });

  it("PR-2 an unchanged record appends nothing; a change is one visible patch touching only what changed", () => {
    const s = Session.create(openStore(":memory:"));
    const inputs = { templates: { system: "a" }, context: { "AGENTS.md": "x", "b.md": "y" } };
    recordInputs(s, inputs);
    const head = s.head.id;
    expect(recordInputs(s, inputs)).toBeUndefined();
    expect(s.head.id).toBe(head);
    const e = recordInputs(s, { templates: { system: "a" }, context: { "AGENTS.md": "x2" } });
    expect(e?.label).toBe("inputs.update");
    const ops = s.store.event(e?.id as never);
    const payload = JSON.parse(String(ops?.data)) as { ops: unknown[][] };
    // one hash change, one chars change, and the removal of b.md
    expect(payload.ops.map((o) => o[0]).sort()).toEqual(["rm", "set", "set"]);
  });
});

describe("PR-5 … PR-8 renderPrompt", () => {
  it("PR-5 the prompt at every past event is byte-identical to the request sent then, after files on disk changed; the next run records the change", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "system.j2"), SYSTEM);
    writeFileSync(join(dir, "AGENTS.md"), "Rule one.");
    const readDisk = () => ({
      templates: { system: readFileSync(join(dir, "system.j2"), "utf8") },
      context: { "AGENTS.md": readFileSync(join(dir, "AGENTS.md"), "utf8") },
    });
    const { store } = fileStore();
    const s = Session.create(store);
    const registry = new ToolRegistry(workspaceTools({ root: dir }));
    const model = new InlineModel([
      { calls: [{ name: "todo", args: { items: [{ text: "a", status: "pending" }] } }] },
      {
        calls: [
          { name: "list_dir", args: {} },
          { name: "read_file", args: { path: "AGENTS.md" } },
        ],
      },
      { text: "done" },
      { text: "second run" },
    ]);
    await runAgent(s, { model, registry, task: "one", ...readDisk() });
    const log: { at: number; bytes: string }[] = [];
    for (const [i, e] of s
      .log()
      .filter((x) => x.label === "turn.start")
      .entries())
      log.push({ at: e.prior as number, bytes: JSON.stringify(model.requests[i]) });
    expect(log).toHaveLength(3);
    writeFileSync(join(dir, "system.j2"), "CHANGED {{ 1 }}");
    writeFileSync(join(dir, "AGENTS.md"), "Rule two.");
    for (const { at, bytes } of log) expect(JSON.stringify(renderPrompt(s, { at: at as never }))).toBe(bytes);
    // reopened from disk too
    const reopened = Session.open(openStore(store.path), s.id).session;
    for (const { at, bytes } of log) expect(JSON.stringify(renderPrompt(reopened, { at: at as never }))).toBe(bytes);
    const before = s.head.id;
    await runAgent(s, { model, registry, task: "two", ...readDisk() });
    const update = s.log({ after: before }).find((e) => e.label === "inputs.update");
    expect(update).toBeDefined();
    expect(model.requests[3]?.system).toBe("CHANGED 1");
    expect(s.log({ after: before }).findIndex((e) => e.label === "inputs.update")).toBeLessThan(
      s.log({ after: before }).findIndex((e) => e.label === "turn.start"),
    );
  });

  it("PR-6 every event of a session renders a provider-valid request (calls without outcome get the recorded missing text)", async () => {
    const s = Session.create(openStore(":memory:"));
    const registry = new ToolRegistry(workspaceTools({ root: tempDir() }));
    const model = new InlineModel([
      {
        text: "look",
        calls: [
          { name: "list_dir", args: {} },
          { name: "submit", args: { summary: "ok" } },
        ],
      },
    ]);
    await runAgent(s, { model, registry, task: "x" });
    let sawMissing = false;
    for (const e of s.log()) {
      const req = renderPrompt(s, { at: e.id });
      expect(providerValid(req), `at event ${e.id} (${e.label})`).toBeUndefined();
      if (req.messages.some((m) => m.role === "tool" && m.content === "The call to submit has no result yet.")) sawMissing = true;
    }
    expect(sawMissing).toBe(true);
  });

  it("PR-6 a call status this build does not know, whatever its name (Object.prototype's too), has no outcome: the missing text", () => {
    const s = Session.create(openStore(":memory:"));
    const odd = ["constructor", "toString", "__proto__", "hasOwnProperty", "later_status"];
    s.commit([
      ["ins", nodeId(3), null, { tag: "turn", attrs: { role: "user" }, children: [{ tag: "text", text: "go" }] }],
      [
        "ins",
        nodeId(3),
        null,
        {
          tag: "turn",
          attrs: { role: "assistant", status: "complete" },
          children: odd.map((status, i) => ({
            tag: "call",
            attrs: { id: `c${i}`, tool: "t", status },
            children: [{ tag: "args", text: "{}" }],
          })),
        },
      ],
    ]);
    const req = renderPrompt(s);
    expect(providerValid(req)).toBeUndefined();
    expect(req.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(odd.map(() => "The call to t has no result yet."));
  });

  it("PR-7 renderPrompt on another branch, and errors for unknown branches and broken templates", async () => {
    const s = Session.create(openStore(":memory:"));
    recordInputs(s, { templates: { system: "v1 {{ count(select('turn')) }}" } });
    const fork = s.fork(s.head.id, { name: "alt" });
    recordInputs(fork, { templates: { system: "alt" } });
    expect(renderPrompt(s).system).toBe("v1 0");
    expect(renderPrompt(s, { branch: "alt" }).system).toBe("alt");
    expect(() => renderPrompt(s, { branch: "nope" })).toThrow(/no branch named nope/);
    recordInputs(s, { templates: { system: "{{ nothing }}" } });
    expect(() => renderPrompt(s)).toThrow(TemplateError);
  });

  it("PR-8 a <compaction> hides older turns and puts its summary first", async () => {
    const s = Session.create(openStore(":memory:"));
    const model = new InlineModel([{ text: "a1" }, { text: "a2" }, { text: "a3" }]);
    const registry = new ToolRegistry([]);
    await runAgent(s, { model, registry, task: "q1" });
    await runAgent(s, { model, registry, task: "q2" });
    const body = s.tree.get(3);
    const secondUser = body?.children.filter((c) => c.tag === "turn" && c.attrs.role === "user")[1];
    const lastHidden = secondUser?.prevSibling?.id as number;
    s.commit([
      [
        "ins",
        nodeId(2),
        null,
        { tag: "compaction", attrs: { through: String(lastHidden) }, children: [{ tag: "summary", text: "q1 was answered with a1" }] },
      ],
    ]);
    const req: ModelRequest = projectRequest(s.tree, blobReader(s.store));
    expect(req.messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      "user:Summary of the conversation so far:\nq1 was answered with a1",
      "user:q2",
      "assistant:a2",
    ]);
  });
});

describe("PR-9 one contribution function", () => {
  it("streaming, failed and interrupted turns contribute nothing; a memo gives the request a fresh projection gives, version after version", async () => {
    const s = Session.create(openStore(":memory:"));
    const registry = new ToolRegistry(workspaceTools({ root: tempDir() }));
    await runAgent(s, {
      model: new InlineModel([{ text: "looking", calls: [{ name: "list_dir", args: {} }] }, { text: "a1" }]),
      registry,
      task: "q1",
      templates: { system: "turns: {{ count(select('turn')) }}" },
    });
    // The memo is kept across versions of the live tree, which share unchanged records (as in the loop).
    const blob = blobReader(s.store);
    const memo = new ProjectionMemo();
    const project = (): string[] => {
      const fresh = projectRequest(s.tree, blob);
      expect(projectRequest(s.tree, blob, readInputs(s.tree), memo), `after ${s.head.label}`).toEqual(fresh);
      return fresh.messages.map((m) => m.content);
    };
    project();
    const body = nodeId(3);
    const last = () => nodeId(s.tree.rec(3)?.last as number);
    s.commit([["ins", body, last(), { tag: "turn", attrs: { role: "user" }, children: [{ tag: "text", text: "q2" }] }]], { label: "q2" });
    expect(project()).toContain("q2");
    for (const status of ["streaming", "failed", "interrupted"]) {
      const turn = { tag: "turn", attrs: { role: "assistant", status }, children: [{ tag: "text", text: `hidden ${status}` }] };
      s.commit([["ins", body, last(), turn]], { label: status });
      expect(project()).not.toContain(`hidden ${status}`);
    }
    // A grandchild of a turn changes (a call's result): the memo must not keep the old observation.
    const result = nodeId(s.select("call > result")[0]?.id as number);
    s.commit([["text", result, "rewritten observation"]], { label: "rewrite" });
    expect(project()).toContain("rewritten observation");
    // A turn's own attribute changes: the streaming turn completes, and now contributes.
    s.commit([["set", nodeId(s.select("turn[status=streaming]")[0]?.id as number), "status", "complete"]], { label: "complete" });
    const now = project();
    expect(now).toContain("hidden streaming");
    expect(now).not.toContain("hidden failed");
    expect(now).not.toContain("hidden interrupted");
  });
});
