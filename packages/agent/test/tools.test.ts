/** TL-1 … TL-7, TL-10 … TL-19: the tool registry with the seed's semantics, the executor's outcome table, built-in tools. */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Action,
  DEFAULT_SYNTHETIC,
  RegistryExecutor,
  syntheticText,
  ToolEnvironmentError,
  ToolRegistry,
  ToolRegistryError,
  type ToolSpec,
  workspaceTools,
} from "../src/index.ts";
import { confine, readConfined } from "../src/internal.ts";
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

  it('TL-2 a tool of free-text input (input: "text") takes any arguments as {input: TEXT}; the handler gets that', async () => {
    const patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch";
    const seen: unknown[] = [];
    const text = new ToolRegistry([
      {
        ...echo,
        name: "apply_patch",
        input: "text",
        handler: async (args) => {
          seen.push(args);
          return "applied";
        },
      },
    ]);
    expect(text.validate({ name: "apply_patch", arguments: patch })).toMatchObject({ ok: true, args: { input: patch } });
    expect(text.validate({ name: "apply_patch", arguments: "" })).toMatchObject({ ok: true, args: { input: "" } });
    expect(text.validate({ name: "apply_patch", arguments: { a: 1 } })).toMatchObject({ ok: true, args: { input: '{"a":1}' } });
    expect((await text.executor().execute(call("apply_patch", patch), new AbortController().signal)).status).toBe("executed");
    expect(seen).toEqual([{ input: patch }]);
    // a JSON tool still refuses the same text
    expect(registry.validate({ name: "echo", arguments: patch })).toMatchObject({ ok: false, reason: "bad-json" });
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

  it("TL-13 edit_file changes only the text it replaces: a byte-order mark stays", async () => {
    const { ex, root } = setup();
    writeFileSync(join(root, "bom.txt"), Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from("one\ntwo\n")]));
    await ex.execute(call("edit_file", { path: "bom.txt", old: "two", new: "three" }), signal);
    expect([...readFileSync(join(root, "bom.txt"))]).toEqual([0xef, 0xbb, 0xbf, ...Buffer.from("one\nthree\n")]);
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

describe("TL-18 the run tool's processes", () => {
  const signal = new AbortController().signal;
  /** Live processes whose process group is `group` (Linux /proc). */
  const members = (group: number): number[] =>
    readdirSync("/proc")
      .filter((n) => /^\d+$/.test(n))
      .filter((n) => {
        try {
          const stat = readFileSync(`/proc/${n}/stat`, "utf8");
          const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          return Number(fields[2]) === group && fields[0] !== "Z";
        } catch {
          return false;
        }
      })
      .map(Number);
  const groupFile = "echo $(cut -d' ' -f5 /proc/$$/stat) > group;";
  const groupIn = (root: string): number => Number(readFileSync(join(root, "group"), "utf8"));
  const settled = async (group: number): Promise<number[]> => {
    for (let i = 0; i < 100 && members(group).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    return members(group);
  };
  const setup = () => {
    const root = tempDir("strata-run-");
    return { root, ex: new ToolRegistry(workspaceTools({ root, runTimeoutMs: 10_000 })).executor() };
  };

  it("TL-18 a normal exit leaves nothing of the group behind (the watcher is released)", async () => {
    const { root, ex } = setup();
    const out = await ex.execute(call("run", { command: `${groupFile} echo hi` }), signal);
    expect(out.observation).toBe("exit code 0\nhi\n");
    expect(await settled(groupIn(root))).toEqual([]);
  });

  it("TL-18 a time limit kills the whole group, background children included", async () => {
    const { root, ex } = setup();
    const out = await ex.execute(call("run", { command: `${groupFile} (sleep 30; touch late) & sleep 30`, timeout_ms: 300 }), signal);
    expect(out.observation).toMatch(/^killed after 300 ms \(time limit\)/);
    expect(await settled(groupIn(root))).toEqual([]);
  });

  it("TL-18 an abort kills the whole group and rejects", async () => {
    const { root, ex } = setup();
    const ctl = new AbortController();
    const running = ex.execute(call("run", { command: `${groupFile} (sleep 30 &); sleep 30` }), ctl.signal);
    for (let i = 0; i < 200 && !existsSync(join(root, "group")); i++) await new Promise((r) => setTimeout(r, 10));
    ctl.abort();
    await expect(running).rejects.toThrow();
    expect(await settled(groupIn(root))).toEqual([]);
  });

  it("TL-18 background processes holding the output are killed after the drain; ones with their own output outlive the call", async () => {
    const { root, ex } = setup();
    const held = await ex.execute(call("run", { command: `${groupFile} (sleep 30 &) ; echo started` }), signal);
    expect(held.observation).toBe("exit code 0\nstarted\n");
    expect(await settled(groupIn(root))).toEqual([]);
    const own = await ex.execute(call("run", { command: `${groupFile} sleep 30 >/dev/null 2>&1 & echo $! > daemon` }), signal);
    expect(own.observation).toBe("exit code 0\n");
    const daemon = Number(readFileSync(join(root, "daemon"), "utf8"));
    try {
      // The daemon, and no watcher (released when the call ended; it exits a moment later).
      for (let i = 0; i < 100 && members(groupIn(root)).length > 1; i++) await new Promise((r) => setTimeout(r, 20));
      expect(members(groupIn(root))).toEqual([daemon]);
    } finally {
      process.kill(daemon, "SIGKILL");
    }
  });

  it("TL-18 the command cannot see the lifeline; stdin is empty; a signal death is named", async () => {
    const { ex } = setup();
    expect(
      (await ex.execute(call("run", { command: "cat 2>/dev/null <&3 || echo no-lifeline; cat; echo read-stdin" }), signal)).observation,
    ).toBe("exit code 0\nno-lifeline\nread-stdin\n");
    expect((await ex.execute(call("run", { command: "kill -9 $$" }), signal)).observation).toBe("exit code 137 (killed by SIGKILL)\n");
    expect((await ex.execute(call("run", { command: "-n" }), signal)).observation).toMatch(/^exit code 127\n.*-n: not found/s);
  });

  it("TL-14 a character split across two reads of the pipe arrives whole", async () => {
    const { ex } = setup();
    const chunks: string[] = [];
    const out = await ex.execute(call("run", { command: "printf '\\342\\202'; sleep 0.2; printf '\\254\\n'" }), signal, {
      output: (c) => chunks.push(c),
    });
    expect(out.observation).toBe("exit code 0\n€\n");
    expect(chunks.join("")).toBe("€\n");
  });

  it("TL-14 the kept head and tail are bounded in bytes, cut at character boundaries", async () => {
    const root = tempDir("strata-run-");
    const ex = new ToolRegistry(workspaceTools({ root, maxCaptureBytes: 100 })).executor();
    const out = await ex.execute(call("run", { command: "i=0; while [ $i -lt 200 ]; do printf '€'; i=$((i+1)); done" }), signal);
    const [head, tail] = out.observation.replace(/^exit code 0\n/, "").split(/\n\[… \d+ bytes of output not kept …\]\n/);
    expect(Buffer.byteLength(head as string)).toBeLessThanOrEqual(50);
    expect(Buffer.byteLength(tail as string)).toBeLessThanOrEqual(50);
    expect(`${head}${tail}`).toMatch(/^€+$/);
    expect(out.observation).toMatch(/\[… 504 bytes of output not kept …\]/);
  });
});

describe("TL-19 confinement edges of the file tools", () => {
  const signal = new AbortController().signal;
  function setup(options: Partial<Parameters<typeof workspaceTools>[0]> = {}) {
    const root = tempDir("strata-ws-");
    const outside = tempDir("strata-out-");
    writeFileSync(join(outside, "victim.txt"), "original");
    return { root, outside, ex: new ToolRegistry(workspaceTools({ root, ...options })).executor() };
  }

  it("TL-19 read_file and edit_file refuse a FIFO at once instead of blocking forever", { timeout: 10_000 }, async () => {
    const { root, ex } = setup();
    execFileSync("mkfifo", [join(root, "pipe")]);
    expect((await ex.execute(call("read_file", { path: "pipe" }), signal)).observation).toBe(
      "WorkspaceError: pipe is a named pipe (FIFO); only regular files are read",
    );
    expect((await ex.execute(call("edit_file", { path: "pipe", old: "a", new: "b" }), signal)).observation).toMatch(/named pipe/);
  });

  it("TL-19 a link planted at a temporary file's name is never written through", async () => {
    const { root, outside, ex } = setup();
    writeFileSync(join(root, "a.txt"), "mine");
    // The name the old writer used for its temporary file, planted as a link out of the workspace.
    symlinkSync(join(outside, "victim.txt"), join(root, `a.txt.strata-${process.pid}.tmp`));
    expect((await ex.execute(call("write_file", { path: "a.txt", content: "new" }), signal)).observation).toBe("wrote 3 bytes to a.txt");
    expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("original");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("new");
  });

  it("TL-19 writes replace a hard link instead of writing through it", async () => {
    const { root, outside, ex } = setup();
    linkSync(join(outside, "victim.txt"), join(root, "hard.txt"));
    await ex.execute(call("write_file", { path: "hard.txt", content: "replaced" }), signal);
    await ex.execute(call("edit_file", { path: "hard.txt", old: "replaced", new: "edited" }), signal);
    expect(readFileSync(join(root, "hard.txt"), "utf8")).toBe("edited");
    expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("original");
  });

  it("TL-19 a dangling or looping link, and a file used as a directory, are clear errors", async () => {
    const { root, ex } = setup();
    symlinkSync(join(root, "missing-target"), join(root, "dangling"));
    symlinkSync(join(root, "loop"), join(root, "loop"));
    writeFileSync(join(root, "f.txt"), "x");
    expect((await ex.execute(call("write_file", { path: "dangling", content: "x" }), signal)).observation).toMatch(
      /^WorkspaceError: "dangling" goes through a symbolic link that leads nowhere or loops$/,
    );
    expect((await ex.execute(call("read_file", { path: "loop/x" }), signal)).observation).toMatch(/leads nowhere or loops/);
    expect((await ex.execute(call("write_file", { path: "f.txt/inner", content: "x" }), signal)).observation).toMatch(
      /^WorkspaceError: f\.txt\/inner has a part that is a file, not a directory$/,
    );
  });

  it("TL-19 what is opened is checked again: a link or a parent swapped in after the check is refused", async () => {
    const { root, outside } = setup();
    mkdirSync(join(root, "d"));
    writeFileSync(join(root, "d", "victim.txt"), "inside");
    writeFileSync(join(root, "f.txt"), "inside");
    const file = await confine(root, "f.txt");
    rmSync(join(root, "f.txt"));
    symlinkSync(join(outside, "victim.txt"), join(root, "f.txt"));
    await expect(readConfined(root, file, "f.txt", 100)).rejects.toThrow(/changed while it was being opened|symbolic link/);
    const nested = await confine(root, "d/victim.txt");
    renameSync(join(root, "d"), join(root, "d-old"));
    symlinkSync(outside, join(root, "d"));
    await expect(readConfined(root, nested, "d/victim.txt", 100)).rejects.toThrow(/now leads outside the workspace/);
  });

  it("TL-19 a workspace root that is gone is named, for the file tools and for run", async () => {
    const gone = join(tempDir("strata-gone-"), "missing");
    const ex = new ToolRegistry(workspaceTools({ root: gone })).executor();
    for (const [tool, args] of [
      ["read_file", { path: "a" }],
      ["run", { command: "true" }],
    ] as const)
      expect((await ex.execute(call(tool, args), signal)).observation).toBe(
        `WorkspaceError: the workspace ${gone} cannot be used (ENOENT)`,
      );
  });

  it("TL-19 list_dir is bounded in what it reads and shows; one entry is one line", async () => {
    const { root, ex } = setup({ maxListEntries: 5, maxScanEntries: 50 });
    for (let i = 0; i < 30; i++) writeFileSync(join(root, `f${String(i).padStart(2, "0")}`), "");
    writeFileSync(join(root, "a\nb"), "");
    const listed = (await ex.execute(call("list_dir", {}), signal)).observation.split("\n");
    expect(listed).toEqual(['"a\\nb"', "f00", "f01", "f02", "f03", "[… 26 more entries]"]);
    for (let i = 30; i < 60; i++) writeFileSync(join(root, `f${i}`), "");
    expect((await ex.execute(call("list_dir", {}), signal)).observation).toMatch(
      /\n\[… the directory has more than 50 entries; these are the first 5 by name of 50 read\]$/,
    );
  });

  it("TL-19 edit_file refuses files too large to edit, text that is not UTF-8, and results past the limit", async () => {
    const { root, ex } = setup({ maxEditBytes: 1000 });
    writeFileSync(join(root, "big.txt"), "x".repeat(2000));
    writeFileSync(join(root, "bin.dat"), Buffer.from([0x61, 0xff, 0xfe, 0x62]));
    writeFileSync(join(root, "a.txt"), "a".repeat(100));
    expect((await ex.execute(call("edit_file", { path: "big.txt", old: "x", new: "y", all: true }), signal)).observation).toMatch(
      /big\.txt has 2000 bytes, more than edit_file handles \(1000\)/,
    );
    expect((await ex.execute(call("edit_file", { path: "bin.dat", old: "a", new: "c" }), signal)).observation).toMatch(/is not UTF-8 text/);
    expect((await ex.execute(call("edit_file", { path: "a.txt", old: "a", new: "bbbbbbbbbbbb", all: true }), signal)).observation).toMatch(
      /would have about 1200 characters, more than edit_file writes \(1000\)/,
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a".repeat(100));
    expect(readFileSync(join(root, "bin.dat"))).toEqual(Buffer.from([0x61, 0xff, 0xfe, 0x62]));
  });
});
