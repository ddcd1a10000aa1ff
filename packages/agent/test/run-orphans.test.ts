/**
 * TL-18: the `run` tool's command dies with its driver. A real driver process runs the agent loop
 * with a `run` call (`sleep 2; touch MARKER`, plus a background grandchild that would also
 * write); the test kills the driver with SIGKILL mid-call, waits past the command's duration and
 * checks that no marker appeared and no process of the command's group survived, that the
 * command never held the database open, and that a resume in a new process marks the call
 * interrupted and runs the next command normally.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, tempDir } from "./agent-kit.ts";

afterEach(cleanup);
const DRIVER = join(import.meta.dirname, "run-driver.ts");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The process group of a pid, from /proc (Linux). */
function groupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

/** Live (not zombie) processes of a group. */
function members(group: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === group && fields[0] !== "Z") out.push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

function openFiles(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    });
  } catch {
    return [];
  }
}

function driver(args: string[]): { p: ChildProcess; out: () => string; exited: Promise<{ code: number | null; signal: string | null }> } {
  const p = spawn(process.execPath, ["--import", "tsx", DRIVER, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  p.stdout?.on("data", (c) => {
    out += c;
  });
  p.stderr?.on("data", (c) => {
    out += c;
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => p.on("exit", (code, signal) => r({ code, signal })));
  return { p, out: () => out, exited };
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Starts a driver whose `run` call is `command`, kills it with SIGKILL once the command is
 * running, and checks that the group died and none of `markers` appeared past `ms`.
 */
async function killMidCall(command: string, markers: readonly string[], ms = 3_000): Promise<{ ws: string; db: string; session: string }> {
  const ws = tempDir("strata-orphans-ws-");
  const db = join(tempDir("strata-orphans-db-"), "s.db");
  const d = driver([db, ws, "start", `echo $$ > cmd.pid; ${command}`]);
  await until("the call to run", () => /RUNNING/.test(d.out()) && existsSync(join(ws, "cmd.pid")));
  await until("the pid", () => /^\d+\n$/.test(readFileSync(join(ws, "cmd.pid"), "utf8")));
  const started = Date.now();
  const group = groupOf(Number(readFileSync(join(ws, "cmd.pid"), "utf8"))) as number;
  expect(group).toBeGreaterThan(1);
  const alive = members(group);
  expect(alive.length).toBeGreaterThanOrEqual(3); // supervisor, watcher, command (and its children)
  // The command and its supervisor never hold the session's database (nothing to block a resume).
  for (const m of alive)
    expect(
      openFiles(m).filter((f) => f.startsWith(db)),
      `pid ${m}`,
    ).toEqual([]);

  d.p.kill("SIGKILL");
  expect((await d.exited).signal).toBe("SIGKILL");
  await until("the group to die", () => members(group).length === 0, 5_000);
  await sleep(Math.max(0, ms - (Date.now() - started))); // past the command's own duration
  for (const m of markers) expect(existsSync(join(ws, m)), m).toBe(false);
  expect(members(group)).toEqual([]);
  return { ws, db, session: /SESSION (\S+)/.exec(d.out())?.[1] as string };
}

describe("TL-18 kill -9 of the driver stops the run tool's command", () => {
  it("TL-18 no marker appears, no process of the group survives, and resume marks the call interrupted", { timeout: 60_000 }, async () => {
    const { ws, db, session } = await killMidCall("(sleep 2; touch bg-marker) & sleep 2; touch MARKER", ["MARKER", "bg-marker"]);
    const r = driver([db, ws, "resume", session, "touch AFTER; echo after"]);
    const exit = await r.exited;
    expect(exit.code, r.out()).toBe(0);
    const result = JSON.parse(/RESULT (.*)/.exec(r.out())?.[1] as string) as { stop: string; calls: string[]; results: string[] };
    expect(result.calls).toEqual(["run:interrupted", "run:executed"]);
    expect(result.stop).toBe("end-turn");
    expect(result.results.at(-1)).toMatch(/^exit code 0\nafter/);
    expect(existsSync(join(ws, "AFTER"))).toBe(true);
    expect(existsSync(join(ws, "MARKER"))).toBe(false);
  });

  it("TL-18 commands that ignore hang-ups and terminations, with daemons of their own output, die too", { timeout: 60_000 }, async () => {
    await killMidCall(
      "trap '' HUP INT TERM; (trap '' HUP TERM; sleep 2; touch daemon-marker) >/dev/null 2>&1 </dev/null & nohup sh -c 'sleep 2; touch nohup-marker' >/dev/null 2>&1 & sleep 2; touch MARKER",
      ["MARKER", "daemon-marker", "nohup-marker"],
    );
  });
});
