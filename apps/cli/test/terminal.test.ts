/**
 * CLI-10 on a terminal: while a tool runs, `run` shows the running call with its elapsed time and
 * the last line of the output it has streamed so far, rewritten in place and cleared when the call
 * settles — tested in a real terminal (a tmux pane; `script`'s pseudo-terminal where tmux is not
 * installed). CLI-3 `-q` prints only what was asked.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cleanEnv, cleanup, script, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A script whose one call prints a line every 0.4 s for about 3 s. */
function slowTicks(dir: string): string {
  return script(dir, "ticks", [
    {
      text: "Counting.",
      toolCalls: [{ name: "run", arguments: { command: "for i in 1 2 3 4 5 6 7 8; do echo tick$i; sleep 0.4; done" } }],
    },
    { text: "Done." },
  ]);
}

/** Screens of a command run in a tmux pane, captured every 150 ms until `done` matches one. */
async function tmuxScreens(dir: string, command: string, done: RegExp): Promise<string[]> {
  const socket = `strata-test-${process.pid}-${Date.now()}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: cleanEnv() });
  tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "40", "-c", dir, `NO_COLOR=1 ${command}; sleep 60`);
  const screens: string[] = [];
  try {
    for (let i = 0; i < 400; i++) {
      await sleep(150);
      const screen = tmux("capture-pane", "-p", "-t", "t");
      screens.push(screen);
      if (done.test(screen)) break;
    }
  } finally {
    tmux("kill-server");
  }
  return screens;
}

/** The same through `script`'s pseudo-terminal: the raw bytes written to it. */
function scriptBytes(dir: string, command: string): string {
  const log = join(dir, "typescript");
  spawnSync("script", ["-qfec", command, log], { cwd: dir, env: { ...cleanEnv(), NO_COLOR: "1" }, stdio: "ignore" });
  return readFileSync(log, "utf8");
}

describe("CLI-10 a running call on a terminal", () => {
  it("shows the tool, its elapsed time and the tail of its output while it runs, and clears the line after", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    const command = `${process.execPath} ${BIN} run count --model ${slowTicks(dir)} --workspace ws`;
    const status = /⋯ run running (\d+\.\d) s │ tick(\d)/;
    if (hasTmux) {
      const screens = await tmuxScreens(dir, command, /■ end-turn/);
      const seen = screens.map((s) => status.exec(s)).filter((m) => m !== null);
      expect(seen.length, screens.at(-1)).toBeGreaterThan(1);
      // it moves: later screens show more time and later output
      const first = seen[0] as RegExpExecArray;
      const last = seen.at(-1) as RegExpExecArray;
      expect(Number(last[1])).toBeGreaterThan(Number(first[1]));
      expect(Number(last[2])).toBeGreaterThan(Number(first[2]));
      const final = screens.at(-1) as string;
      expect(final).toMatch(/✓ run executed/);
      expect(final).not.toMatch(/⋯ run running/);
    } else {
      const raw = scriptBytes(dir, command);
      expect(raw).toMatch(/\r\x1b\[K {4}⋯ run running \d+\.\d s │ tick\d/);
      expect(raw).toMatch(/✓ run executed/);
    }
  }, 120_000);

  it("not on a terminal, nothing but the transcript: no status line, no escape sequences", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    const r = await strata(dir, ["run", "count", "--model", slowTicks(dir), "--workspace", "ws"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/running \d|\x1b/);
    expect(r.stdout).toMatch(/→ run .*\n {2}✓ run executed/);
  }, 120_000);
});

describe("CLI-3 -q prints only what was asked", () => {
  it("run -q prints HANDLE@BRANCH STOP; log -q drops the hint; fork -q the branch; show -q the tree", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    const model = script(dir, "m", [{ text: "Hello." }]);
    const run = await strata(dir, ["run", "hi", "--model", model, "--workspace", "ws", "-q"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^[0-9A-Z]{6}@main end-turn\n$/);
    expect(run.stderr).toBe("");
    const handle = run.stdout.split("@")[0] as string;
    const log = await strata(dir, ["log", handle, "--limit", "2", "-q"]);
    expect(log.stdout.trim().split("\n")).toHaveLength(2);
    expect(log.stdout).not.toMatch(/earlier events/);
    const fork = await strata(dir, ["fork", `${handle}@3`, "--name", "x", "-q"]);
    expect(fork.stdout).toBe("x\n");
    const diff = await strata(dir, ["diff", `${handle}@main`, `${handle}@x`, "-q"]);
    expect(diff.stdout).not.toMatch(/→ event/);
    expect(diff.stdout).toMatch(/^- /m);
  }, 120_000);
});
