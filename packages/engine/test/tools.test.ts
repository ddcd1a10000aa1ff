/** TL-1 … TL-16: the tool registry with the seed's semantics, the executor's outcome table, built-in tools. */
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Action,
  DEFAULT_SYNTHETIC,
  RegistryExecutor,
  Session,
  syntheticText,
  ToolEnvironmentError,
  ToolRegistry,
  ToolRegistryError,
  type ToolSpec,
  workspaceTools,
} from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";

afterEach(cleanup);

const echo: ToolSpec = {
  name: "echo",
  description: "Echo a word",
  parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"], additionalProperties: false },
  replayPolicy: "safe",
  handler: async (args) => `echo: ${args.word as string}`,
};
class ParseError extends Error {}
const tools: Record<string, ToolSpec> = {
  echo,
  env: { ...echo, name: "env", handler: async () => Promise.reject(new ToolEnvironmentError("the sandbox is gone")) },
  boom: { ...echo, name: "boom", handler: async () => Promise.reject(new ParseError("cannot parse 'x'")) },
  plain: { ...echo, name: "plain", handler: async () => Promise.reject("a string was thrown") },
  aborts: {
    ...echo,
    name: "aborts",
    handler: (_a, ctx) =>
      new Promise((_r, reject) =>
        ctx.signal.addEventListener("abort", () => reject(new DOMException("stopped", "AbortError")), { once: true }),
      ),
  },
};
const registry = new ToolRegistry(Object.values(tools));
const call = (name: string, args: unknown): Action => ({
  kind: "tool-call",
  call: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
});

describe("TL-1 … TL-4 the registry", () => {
  it("TL-1 get/list keep registration order; bad names, duplicates and bad schemas fail at once", () => {
    expect(registry.list().map((s) => s.name)).toEqual(["echo", "env", "boom", "plain", "aborts"]);
    expect(registry.get("echo")?.replayPolicy).toBe("safe");
    expect(() => new ToolRegistry([echo, echo])).toThrow(/two tools are named echo/);
    expect(() => new ToolRegistry([{ ...echo, name: "no spaces" }])).toThrow(ToolRegistryError);
    expect(() => new ToolRegistry([{ ...echo, parameters: { type: "nonsense" } }])).toThrow(/not a valid JSON Schema/);
  });

  it("TL-2 validate: unknown tool, bad JSON, non-object, schema mismatch (draft 2020-12)", () => {
    expect(registry.validate({ name: "nope", arguments: "{}" })).toMatchObject({ ok: false, reason: "unknown-tool" });
    expect(registry.validate({ name: "echo", arguments: "{bad" })).toMatchObject({ ok: false, reason: "bad-json" });
    expect(registry.validate({ name: "echo", arguments: "[1]" })).toMatchObject({ ok: false, reason: "bad-json" });
    const missing = registry.validate({ name: "echo", arguments: "{}" });
    expect(missing).toMatchObject({ ok: false, reason: "schema" });
    expect(!missing.ok && missing.message).toMatch(/must have required property 'word'/);
    const extra = registry.validate({ name: "echo", arguments: { word: "a", more: 1 } });
    expect(!extra.ok && extra.message).toMatch(/must NOT have additional properties \(`more`\)/);
    // 2020-12 keywords work (prefixItems)
    const tuple = new ToolRegistry([
      { ...echo, parameters: { type: "object", properties: { p: { type: "array", prefixItems: [{ type: "number" }], items: false } } } },
    ]);
    expect(tuple.validate({ name: "echo", arguments: { p: [1] } }).ok).toBe(true);
    expect(tuple.validate({ name: "echo", arguments: { p: [1, 2] } }).ok).toBe(false);
    expect(registry.validate({ name: "echo", arguments: { word: "hi" } })).toMatchObject({ ok: true, args: { word: "hi" } });
  });

  it("TL-3 restrictTo returns a new registry with handlers travelling along; the original is unchanged", async () => {
    const small = registry.restrictTo(["boom", "echo"]);
    expect(small.list().map((s) => s.name)).toEqual(["boom", "echo"]);
    expect(registry.list()).toHaveLength(5);
    expect((await small.executor().execute(call("echo", { word: "x" }), new AbortController().signal)).observation).toBe("echo: x");
    expect(small.validate({ name: "env", arguments: "{}" })).toMatchObject({ ok: false, reason: "unknown-tool" });
    expect(() => registry.restrictTo(["echo", "ghost"])).toThrow(/no tool named ghost/);
  });

  it("TL-4 executor() throws at once naming every spec without a handler; it is a RegistryExecutor holding its registry", () => {
    const r = new ToolRegistry([echo, { ...echo, name: "a", handler: undefined }, { ...echo, name: "b", handler: undefined }]);
    expect(() => r.executor()).toThrow(/no handler.*: a, b$/);
    const ex = registry.executor();
    expect(ex).toBeInstanceOf(RegistryExecutor);
    expect(ex.registry).toBe(registry);
  });
});

describe("TL-5 the seed's outcome table", () => {
  const ex = registry.executor();
  const signal = new AbortController().signal;
  const rows: [string, Action, Partial<Record<string, unknown>>][] = [
    ["no tool call in the action (code)", { kind: "code", code: "print(1)" }, { status: "not_executed", observationIsSynthetic: true }],
    ["validate fails (unknown tool)", call("ghost", {}), { status: "not_executed", observationIsSynthetic: true }],
    ["validate fails (schema)", call("echo", { word: 3 }), { status: "not_executed", observationIsSynthetic: true }],
    [
      "handler raises ToolEnvironmentError",
      call("env", { word: "a" }),
      { status: "env_error", observation: "the sandbox is gone", observationIsSynthetic: false },
    ],
    [
      "handler raises another exception",
      call("boom", { word: "a" }),
      { status: "executed", observation: "ParseError: cannot parse 'x'", observationIsSynthetic: false, errorClass: "ParseError" },
    ],
    [
      "handler throws a non-Error",
      call("plain", { word: "a" }),
      { status: "executed", observation: "Error: a string was thrown", observationIsSynthetic: false },
    ],
    [
      "handler returns normally",
      call("echo", { word: "a" }),
      { status: "executed", observation: "echo: a", observationIsSynthetic: false },
    ],
  ];
  for (const [name, action, expected] of rows)
    it(`TL-5 ${name}`, async () => {
      const out = await ex.execute(action, signal);
      expect(out).toMatchObject({ ...expected, envReportedCompletion: false, observationTruncatedChars: 0 });
      expect(out.observation).not.toMatch(/\n\s+at /); // never a stack trace
      expect(out.observation.length).toBeGreaterThan(0);
    });

  it("TL-5 abort propagates with no outcome", async () => {
    const ctl = new AbortController();
    const running = ex.execute(call("aborts", { word: "a" }), ctl.signal);
    ctl.abort();
    await expect(running).rejects.toThrow(/stopped/);
    await expect(ex.execute(call("echo", { word: "a" }), ctl.signal)).rejects.toThrow();
  });
});

describe("TL-10 synthetic observations", () => {
  it("fills {tool} and {detail} and nothing else", () => {
    expect(syntheticText(DEFAULT_SYNTHETIC, "notExecuted", { tool: "echo", detail: "bad {x}" })).toBe(
      "The call to echo was not executed: bad {x}",
    );
    expect(syntheticText({ ...DEFAULT_SYNTHETIC, interrupted: "{tool}/{tool} {nope}" }, "interrupted", { tool: "t" })).toBe("t/t {nope}");
  });
});

describe("TL-11 … TL-16 built-in tools", () => {
  function setup() {
    const root = tempDir("strata-ws-");
    const outside = tempDir("strata-out-");
    writeFileSync(join(root, "a.txt"), "alpha\nbeta\nbeta\n");
    mkdirSync(join(root, "sub"));
    writeFileSync(join(outside, "secret.txt"), "secret");
    symlinkSync(outside, join(root, "escape"));
    symlinkSync(join(root, "a.txt"), join(root, "link.txt"));
    const reg = new ToolRegistry(workspaceTools({ root, runTimeoutMs: 5_000, maxCaptureBytes: 1000 }));
    return { root, outside, reg, ex: reg.executor() };
  }
  const signal = new AbortController().signal;

  it("TL-11 read_file and list_dir read inside the workspace (symlinks inside are fine)", async () => {
    const { ex } = setup();
    expect((await ex.execute(call("read_file", { path: "a.txt" }), signal)).observation).toBe("alpha\nbeta\nbeta\n");
    expect((await ex.execute(call("read_file", { path: "link.txt" }), signal)).observation).toBe("alpha\nbeta\nbeta\n");
    expect((await ex.execute(call("list_dir", {}), signal)).observation).toBe("a.txt\nescape\nlink.txt\nsub/");
    expect((await ex.execute(call("read_file", { path: "nope.txt" }), signal)).observation).toBe("WorkspaceError: nope.txt does not exist");
  });

  it("TL-12 traversal, absolute paths and symlinks out of the workspace are rejected clearly", async () => {
    const { ex, outside } = setup();
    for (const path of ["../x", "/etc/passwd", join(outside, "secret.txt"), "sub/../../x"]) {
      const out = await ex.execute(call("read_file", { path }), signal);
      expect(out.status).toBe("executed");
      expect(out.observation).toMatch(/^WorkspaceError: .* is outside the workspace/);
    }
    for (const [tool, args] of [
      ["read_file", { path: "escape/secret.txt" }],
      ["write_file", { path: "escape/new.txt", content: "x" }],
      ["list_dir", { path: "escape" }],
    ] as const) {
      const out = await ex.execute(call(tool, args), signal);
      expect(out.observation).toMatch(/leads outside the workspace through a symbolic link/);
    }
  });

  it("TL-13 write_file and edit_file change files atomically; edit needs a unique match", async () => {
    const { ex, root } = setup();
    expect((await ex.execute(call("write_file", { path: "new/dir/b.txt", content: "hello" }), signal)).observation).toBe(
      "wrote 5 bytes to new/dir/b.txt",
    );
    expect(readFileSync(join(root, "new/dir/b.txt"), "utf8")).toBe("hello");
    expect((await ex.execute(call("edit_file", { path: "a.txt", old: "beta", new: "gamma" }), signal)).observation).toMatch(
      /occurs 2 times/,
    );
    expect((await ex.execute(call("edit_file", { path: "a.txt", old: "alpha", new: "$& A" }), signal)).observation).toBe(
      "replaced 1 occurrence in a.txt",
    );
    expect((await ex.execute(call("edit_file", { path: "a.txt", old: "beta", new: "b", all: true }), signal)).observation).toBe(
      "replaced 2 occurrences in a.txt",
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("$& A\nb\nb\n");
  });

  it("TL-14 run streams output, reports the exit code, bounds what it keeps and honours time limits", async () => {
    const { ex } = setup();
    const chunks: string[] = [];
    const ok = await ex.execute(call("run", { command: "echo hi; echo err >&2; exit 3" }), signal, { output: (c) => chunks.push(c) });
    expect(ok.observation).toMatch(/^exit code 3\n/);
    expect(ok.observation).toContain("hi");
    expect(chunks.join("")).toContain("err");
    const big = await ex.execute(call("run", { command: "head -c 5000000 /dev/zero | tr '\\0' x" }), signal);
    expect(big.observation.length).toBeLessThan(1200);
    expect(big.observation).toMatch(/bytes of output not kept/);
    const slow = await ex.execute(call("run", { command: "sleep 5", timeout_ms: 100 }), signal);
    expect(slow.observation).toMatch(/^killed after 100 ms/);
  });

  it("TL-15 todo stages a full rewrite of <meta><todo>; submit completes the run", async () => {
    const { reg } = setup();
    expect(reg.get("submit")?.completesRun).toBe(true);
    expect(reg.get("todo")?.replayPolicy).toBe("safe");
    const s = Session.create(openStore(":memory:"));
    const staged: ((d: import("@strata/dom").TreeDraft) => void)[] = [];
    const out = await reg.executor().execute(
      call("todo", {
        items: [
          { text: "a", status: "completed" },
          { text: "b", status: "pending" },
        ],
      }),
      signal,
      { stage: (e) => staged.push(e) },
    );
    expect(out.observation).toBe("todo list updated: 2 items (1 completed, 0 in progress, 1 pending)");
    s.commit((d) => {
      for (const e of staged) e(d);
    });
    expect(s.count("todo item[status!=completed]")).toBe(1);
  });
});

describe("TL-17 built-in tool edges", () => {
  it("read_file reads only what it shows; write/edit keep the file mode; run returns when the shell exits", async () => {
    const root = tempDir("strata-ws-");
    writeFileSync(join(root, "big.txt"), "y".repeat(10_000));
    writeFileSync(join(root, "build.sh"), "echo a\n", { mode: 0o755 });
    const ex = new ToolRegistry(workspaceTools({ root, maxReadBytes: 100, runTimeoutMs: 5_000 })).executor();
    const signal = new AbortController().signal;
    const big = await ex.execute(call("read_file", { path: "big.txt" }), signal);
    expect(big.observation).toMatch(/^y{100}\n\[… truncated: the file has 10000 bytes, 100 shown\]$/);
    await ex.execute(call("edit_file", { path: "build.sh", old: "echo a", new: "echo b" }), signal);
    await ex.execute(call("write_file", { path: "build.sh", content: "echo c\n" }), signal);
    expect(statSync(join(root, "build.sh")).mode & 0o777).toBe(0o755);
    const t0 = Date.now();
    const bg = await ex.execute(call("run", { command: "(sleep 3 &) ; echo started" }), signal);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(bg.observation).toMatch(/^exit code 0\nstarted/);
  });
});
