/**
 * AG-14: real processes, killed with SIGKILL at three points of a call's life, then resumed:
 * (a) a safe call running → it re-runs once; (b) a never call running → interrupted, and the model
 * sees the synthetic observation; (c) between intent and start → it runs. In every case every
 * event's prompt is provider-valid.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, tempDir } from "./agent-kit.ts";

afterEach(cleanup);
const child = join(import.meta.dirname, "agent-child.ts");

function start(db: string, runs: string, mode: string, until: RegExp): Promise<{ session: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", child, db, runs, "start", mode], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let session = "";
    p.stderr.on("data", (c) => {
      err += c;
    });
    p.stdout.on("data", (c) => {
      out += c;
      session = /SESSION (\S+)/.exec(out)?.[1] ?? session;
      if (until.test(out)) p.kill("SIGKILL");
    });
    p.on("exit", (_code, signal) => {
      if (signal === "SIGKILL" && session !== "") resolve({ session });
      else reject(new Error(`the child ended without being killed (${signal}):\n${out}\n${err}`));
    });
  });
}

function resume(db: string, runs: string, session: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", child, db, runs, "resume", session], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (c) => {
      out += c;
    });
    p.stderr.on("data", (c) => {
      err += c;
    });
    p.on("exit", (code) => {
      const m = /RESULT (.*)/.exec(out);
      if (code === 0 && m) resolve(JSON.parse(m[1] as string));
      else reject(new Error(`resume failed (${code}):\n${out}\n${err}`));
    });
  });
}

const runsOf = (file: string): string[] => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : []);

describe("AG-14 kill -9 mid-call, then resume", () => {
  it("(a) a safe call running when killed re-runs once", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const runs = join(dir, "runs");
    const { session } = await start(db, runs, "safe", /RUNNING fetch/);
    expect(runsOf(runs)).toEqual(["fetch"]);
    const r = await resume(db, runs, session);
    expect(r.spawn).toEqual(["fetch:running", "deploy:pending"]);
    expect(runsOf(runs)).toEqual(["fetch", "fetch", "deploy"]);
    expect(r.calls).toEqual(["fetch:executed:2", "deploy:executed:1"]);
    expect(r.stop).toBe("end-turn");
    expect(r.invalid).toEqual([]);
  }, 60_000);

  it("(b) a never call running when killed becomes interrupted; the model sees the synthetic observation", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const runs = join(dir, "runs");
    const { session } = await start(db, runs, "never", /RUNNING deploy/);
    const r = await resume(db, runs, session);
    expect(r.spawn).toEqual(["deploy:running"]);
    expect(runsOf(runs)).toEqual(["fetch", "deploy"]);
    expect(r.calls).toEqual(["fetch:executed:1", "deploy:interrupted:1"]);
    expect((r.observations as string[])[1]).toMatch(/^The call to deploy was interrupted before it reported a result/);
    expect(r.labels).toContain("call.interrupted");
    expect(r.stop).toBe("end-turn");
    expect(r.invalid).toEqual([]);
  }, 60_000);

  it("(c) killed between intent and start: the call runs on resume", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const runs = join(dir, "runs");
    const { session } = await start(db, runs, "intent", /PENDING deploy/);
    expect(runsOf(runs)).toEqual([]);
    const r = await resume(db, runs, session);
    expect(r.spawn).toEqual(["fetch:pending", "deploy:pending"]);
    expect(runsOf(runs)).toEqual(["fetch", "deploy"]);
    expect(r.calls).toEqual(["fetch:executed:1", "deploy:executed:1"]);
    expect(r.invalid).toEqual([]);
  }, 60_000);
});
