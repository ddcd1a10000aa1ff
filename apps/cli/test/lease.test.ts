/**
 * CLI-12 one driver per branch, with real processes: the lease is a row in the database taken
 * atomically (ST-23); a command that would move a driven branch refuses with exit 3 naming the
 * driver; a holder is judged gone only when its very process is (dead, a zombie, or its pid reused
 * by another process); a driver whose branch was moved or whose lease was taken over stops in one
 * line with exit 3, and what it committed is kept.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { type EventId, openStore, type SessionId } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import { holderGone, LEASE_STALE_MS } from "../src/lease.ts";
import { BIN, cleanEnv, cleanup, json, type Result, script, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

/** A model that runs one slow shell command, then submits. */
function slowModel(dir: string, seconds: number): string {
  return script(dir, "slow", [
    { text: "Running it.", toolCalls: [{ name: "run", arguments: { command: `sleep ${seconds} && echo done` } }] },
    { text: "Done.", toolCalls: [{ name: "submit", arguments: { summary: "ran it" } }] },
  ]);
}

/**
 * A model whose shell command runs until the test writes the file `gate` (at most 100 s), then
 * submits: the test decides when the call ends, whatever the machine's load.
 */
function gatedModel(dir: string, gate: string): string {
  return script(dir, "gated", [
    {
      text: "Running it.",
      toolCalls: [
        {
          name: "run",
          arguments: { command: `i=0; while [ ! -e '${gate}' ] && [ $i -lt 2000 ]; do sleep 0.05; i=$((i+1)); done; echo done` },
        },
      ],
    },
    { text: "Done.", toolCalls: [{ name: "submit", arguments: { summary: "ran it" } }] },
  ]);
}

interface Running {
  readonly child: ChildProcess;
  readonly done: Promise<Result>;
  /** Resolves once stdout matches. */
  until(re: RegExp): Promise<void>;
}

function start(cwd: string, args: readonly string[]): Running {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...cleanEnv(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  child.stdout?.on("data", (c) => {
    stdout += c;
    for (const w of waiters.splice(0))
      if (w.re.test(stdout)) w.resolve();
      else waiters.push(w);
  });
  child.stderr?.on("data", (c) => {
    stderr += c;
  });
  const done = new Promise<Result>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return {
    child,
    done,
    until: (re) =>
      re.test(stdout)
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ re, resolve });
            done.then((r) => reject(new Error(`exited (${r.code}) before ${re}:\n${r.stdout}\n${r.stderr}`)));
          }),
  };
}

function dbOf(dir: string): string {
  return join(dir, ".strata", "strata.db");
}

function sessionOf(dir: string): SessionId {
  const store = openStore(dbOf(dir), { readonly: true });
  try {
    return (store.listSessions()[0] as { id: SessionId }).id;
  } finally {
    store.close();
  }
}

function holder(dir: string, session: SessionId): string | undefined {
  const store = openStore(dbOf(dir), { readonly: true });
  try {
    return store.lease(session, "main")?.owner;
  } finally {
    store.close();
  }
}

function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] as string;
}

function oneLineError(r: Result): void {
  expect(r.stderr).not.toMatch(/\n\s+at |unexpected error|HeadConflict:|LeaseLost:/);
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
}

describe("CLI-12 one driver per branch", () => {
  it("rewind, a second resume and a second run of a driven branch exit 3 naming the driver; afterwards they work", async () => {
    const dir = tempDir();
    const gate = join(dir, ".strata", "release");
    const model = gatedModel(dir, gate);
    const driver = start(dir, ["run", "slow it down", "--model", model]);
    await driver.until(/→ run/);
    const session = sessionOf(dir);
    expect(JSON.parse(holder(dir, session) as string)).toMatchObject({ pid: driver.child.pid, command: "run" });

    const rw = await strata(dir, ["rewind", session, "--to", "head~1"]);
    expect(rw.code).toBe(3);
    expect(rw.stderr).toContain(`pid ${driver.child.pid}`);
    expect(rw.stderr).toContain("strata run");
    oneLineError(rw);
    const again = await strata(dir, ["resume", session]);
    expect(again.code).toBe(3);
    expect(again.stdout).toBe(""); // refused before printing any plan
    const more = await strata(dir, ["run", "more", "--session", session, "--model", model]);
    expect(more.code).toBe(3);

    writeFileSync(gate, ""); // the driver's call ends now
    const r = await driver.done;
    expect(r.code).toBe(0);
    expect(holder(dir, session)).toBeUndefined();
    const after = await strata(dir, ["rewind", session, "--to", "head~1", "--json"]);
    expect(after.code).toBe(0);
  }, 120_000);

  it("a lease left by kill -9 is taken over by resume", async () => {
    const dir = tempDir();
    const driver = start(dir, ["run", "slow", "--model", slowModel(dir, 30)]);
    await driver.until(/→ run/);
    driver.child.kill("SIGKILL");
    await driver.done;
    const session = sessionOf(dir);
    expect(holder(dir, session)).toBeDefined(); // the row names a dead process
    const r = await strata(dir, ["resume", session]);
    expect(r.stdout).toContain("marked interrupted");
    expect(r.code).toBe(0);
    expect(holder(dir, session)).toBeUndefined();
  }, 120_000);

  it("a holder whose pid now belongs to another process, a zombie holder and garbage owner text are gone; a live one is not", async () => {
    const dir = tempDir();
    const done = await strata(dir, ["run", "quick", "--model", script(dir, "q", [{ text: "Nothing to do." }])]);
    expect(done.code).toBe(0);
    const session = sessionOf(dir);
    const owner = (pid: number, start: string) =>
      JSON.stringify({
        pid,
        host: hostname(),
        boot: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
        start,
        command: "run",
        since: 0,
      });
    // A zombie: `sleep 0.1` exits under a parent (`exec sleep 30`) that never reaps it.
    const parent = spawn("sh", ["-c", "sleep 0.1 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
    const zombie = await new Promise<number>((resolve) => parent.stdout?.once("data", (c) => resolve(Number(String(c).trim()))));
    const zombieStart = startTime(zombie);
    for (let i = 0; i < 100 && !readFileSync(`/proc/${zombie}/stat`, "utf8").includes(") Z "); i++)
      await new Promise((r) => setTimeout(r, 50));
    const live = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const cases: [string, string, number][] = [
        ["a live process", owner(live.pid as number, startTime(live.pid as number)), 3],
        ["a reused pid (same pid, other start time)", owner(live.pid as number, "1"), 0],
        ["a zombie", owner(zombie, zombieStart), 0],
        ["garbage", "not json", 0],
      ];
      for (const [what, text, code] of cases) {
        const store = openStore(dbOf(dir));
        const taken = store.acquireLease(session, "main", text, () => true);
        store.close();
        expect(taken.ok, what).toBe(true);
        const r = await strata(dir, ["rewind", session, "--to", "head~1", "--json"]);
        expect(r.code, `${what}: ${r.stderr}`).toBe(code);
        if (code === 3) expect(r.stderr).toContain(`pid ${live.pid}`);
      }
    } finally {
      live.kill("SIGKILL");
      parent.kill("SIGKILL");
    }
  }, 120_000);

  it("six resumes started together: exactly one drives, the others exit 3", async () => {
    const dir = tempDir();
    const model = script(dir, "twice", [
      { text: "First.", toolCalls: [{ name: "run", arguments: { command: "sleep 30" } }] },
      { text: "Second.", toolCalls: [{ name: "run", arguments: { command: "sleep 6" } }] },
      { text: "Done.", toolCalls: [{ name: "submit", arguments: { summary: "ran them" } }] },
    ]);
    const killed = start(dir, ["run", "slow", "--model", model]);
    await killed.until(/→ run/);
    killed.child.kill("SIGKILL");
    await killed.done;
    const session = sessionOf(dir);
    const results = await Promise.all(Array.from({ length: 6 }, () => strata(dir, ["resume", session])));
    const drove = results.filter((r) => r.stdout.includes("marked interrupted"));
    expect(drove).toHaveLength(1);
    expect(drove[0]?.code).toBe(0);
    const refused = results.filter((r) => !r.stdout.includes("marked interrupted"));
    expect(refused.map((r) => r.code)).toEqual([3, 3, 3, 3, 3]);
    for (const r of refused) oneLineError(r);
  }, 180_000);

  it("a driver whose head is moved under it, or whose lease is taken over, stops in one line with exit 3; its commits are kept", async () => {
    for (const how of ["moved head", "lease taken"] as const) {
      const dir = tempDir();
      const gate = join(dir, ".strata", "release");
      const driver = start(dir, ["run", "slow", "--model", gatedModel(dir, gate)]);
      await driver.until(/→ run/);
      const session = sessionOf(dir);
      const store = openStore(dbOf(dir));
      let head: EventId;
      try {
        const main = store.branch(session, "main");
        head = main?.head as EventId;
        if (how === "moved head") store.moveHead(session, "main", store.eventMeta(head)?.prior as EventId);
        else expect(store.acquireLease(session, "main", "an operator", () => true).ok).toBe(true);
      } finally {
        store.close();
      }
      writeFileSync(gate, ""); // the call ends; the driver's next commit meets the change
      const r = await driver.done;
      expect(r.code, `${how}: ${r.stderr}`).toBe(3);
      oneLineError(r);
      expect(r.stderr).toMatch(how === "moved head" ? /another writer moved it/ : /took it over/);
      const check = openStore(dbOf(dir), { readonly: true });
      try {
        // what the driver committed before it stopped is still addressable (L5)
        expect(check.eventMeta(head)).toBeDefined();
      } finally {
        check.close();
      }
      const v = json<{ ok: boolean }>(await strata(dir, ["verify", "--json"]));
      expect(v.ok).toBe(true);
    }
  }, 180_000);
});

describe("CLI-12 a driver on another host (decision 0038)", () => {
  it("on PostgreSQL: live while it renews its lease, gone once it has not for LEASE_STALE_MS; a holder here is judged by its process", () => {
    const now = 1_000_000_000;
    const lease = (host: string, renewed: number) => ({
      session: "S" as SessionId,
      branch: "main",
      token: 7,
      owner: JSON.stringify({ pid: 1, host, boot: null, start: null, command: "run", since: 0 }),
      acquired: renewed - 60_000,
      renewed,
    });
    expect(holderGone(lease("elsewhere", now - 1_000), now)).toBe(false);
    expect(holderGone(lease("elsewhere", now - LEASE_STALE_MS + 1), now)).toBe(false);
    expect(holderGone(lease("elsewhere", now - LEASE_STALE_MS - 1), now)).toBe(true);
    // pid 1 on this host is alive (init): renewing or not, it is not gone
    expect(holderGone(lease(hostname(), now - 10 * LEASE_STALE_MS), now)).toBe(false);
    // On SQLite drivers do not renew: a holder on another host is never judged gone (as before)
    expect(holderGone(lease("elsewhere", now - 10 * LEASE_STALE_MS), now, false)).toBe(false);
  });
});
