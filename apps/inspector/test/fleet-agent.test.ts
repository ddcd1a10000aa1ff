/**
 * The agent fleet (issue 15, decision 0038; L1, L7, AG-9, AG-13, ST-23): 8 worker processes
 * (fleet-agent-worker.ts) run the agent loop (`runAgent`) on 40 sessions of one PostgreSQL server,
 * each session by whichever worker holds its lease, every commit fenced by the token — while
 * `strata serve --db postgres://…` in another process streams four of them to SSE followers that
 * rebuild them with a `Replica`. One worker is killed with SIGKILL in the middle of a tool call,
 * another paused (SIGSTOP) in the middle of one until the others have taken its sessions over,
 * then let go on (SIGCONT): a stale driver, whose commits the fence refuses. The others resume
 * those sessions: `runAgent` reconciles the call left running (not safe to repeat: interrupted,
 * never run again) and goes on.
 *
 * Afterwards: every session finished its run and asked for every step; every call was executed at
 * most once in the whole fleet, no step twice, and every call executed and not interrupted has its
 * one outcome (a reply cut off by a dead driver is asked for again: its step gets a second call); each session was driven
 * by one worker at a time; the store verifies; the followers' replicas are the heads' trees, byte
 * for byte.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { startRun } from "@strata/agent";
import { toSnapshot } from "@strata/dom";
import { loadTree, materialize, Session, verifyPort } from "@strata/engine";
import type { EventId, SessionId } from "@strata/store";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import { afterAll, describe, expect, inject, it } from "vitest";
import { buildApp, needsBuild } from "../src/index.ts";
import { FleetModel, fleetRegistry, STEPS, TASK } from "./fleet-agent-kit.ts";
import { type Follower, ROOT, rawFollower, type Served, strataServe } from "./sse-clients.ts";

const url = inject("pgUrl");
const SESSIONS = 40;
const WORKERS = 8;
const FOLLOWED = 4;

interface Worker {
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<void>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

function worker(schema: string, name: string): Worker {
  const script = join(import.meta.dirname, "fleet-agent-worker.ts");
  const child = spawn(process.execPath, ["--conditions=@strata/source", "--import", "tsx", script, url, schema, name], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (d: Buffer) => {
    const parts = (buffer + d.toString()).split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  return { name, child, lines, exited: new Promise((resolve) => child.once("close", () => resolve())) };
}

const until = async (what: string, test: () => boolean | Promise<boolean>, ms = 90_000, every = 25) => {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
};

describe("the agent fleet: 8 workers run 40 agent sessions on PostgreSQL, an inspector follows, one worker killed and one paused mid-call", () => {
  it("every run finishes; no call runs twice anywhere; one driver at a time; the followers' replicas are the heads", async () => {
    if (needsBuild()) await buildApp();
    const schema = `afleet_${process.pid}_${Date.now().toString(36)}`;
    const db = `${url}?schema=${schema}`;
    const store: PgStore = await openPgStore(db, { max: 4 });
    const model = new FleetModel();
    const registry = fleetRegistry();
    let served: Served | undefined;
    const followers: Follower[] = [];
    try {
      const made: SessionId[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const s = await Session.create(store, {
          title: `s${i}`,
          init: async (x) => void (await startRun(x, { model, registry, task: TASK })),
        });
        made.push(s.id);
        await s.close();
      }
      served = await strataServe(db);
      const base = served.url;
      for (const s of made.slice(0, FOLLOWED))
        followers.push(rawFollower(new URL(`api/sessions/${s}/stream?branch=main&snapshot=1`, base).href, "strata"));
      const workers = Array.from({ length: WORKERS }, (_, i) => worker(schema, `worker-${i}`));
      const execs = (w: Worker) => w.lines.filter((l) => l.startsWith("exec "));
      // Stop each of two workers right after its tool started (the tool takes 80–160 ms): mid-call.
      const victim = workers[0] as Worker;
      const sleeper = workers[1] as Worker;
      await until("the first worker to start a call", () => execs(victim).length > 0, 90_000, 2);
      victim.child.kill("SIGKILL");
      await until("the second worker to start a call", () => execs(sleeper).length > 0, 90_000, 2);
      sleeper.child.kill("SIGSTOP");
      await victim.exited;
      const took = (w: Worker) => new Set(w.lines.filter((l) => l.startsWith("took ")).map((l) => l.slice(5)));
      const sleeperHeld = [...took(sleeper)].filter((s) => !sleeper.lines.some((l) => l.startsWith(`done ${s}`)));
      expect(sleeperHeld.length, "the paused worker was driving sessions").toBeGreaterThan(0);
      await until("the paused worker's sessions to be taken over", async () => {
        for (const s of sleeperHeld) if ((await store.lease(s as SessionId, "main"))?.owner === sleeper.name) return false;
        return true;
      });
      sleeper.child.kill("SIGCONT");
      await Promise.all(workers.filter((w) => w !== victim).map((w) => w.exited));
      // (Whether the paused worker had a commit left to be refused depends on where it was paused:
      // what it must never do — write after the takeover — is checked below, per session.)

      // Every execution of the tool in the whole fleet, by call key (session.element).
      const ran = new Map<string, string[]>();
      for (const w of workers)
        for (const l of execs(w)) {
          const [, key, , by] = l.split(" ");
          ran.set(key as string, [...(ran.get(key as string) ?? []), by as string]);
        }
      const twice = [...ran].filter(([, by]) => by.length > 1);
      expect(twice, "a call executed twice").toEqual([]);
      let interrupted = 0;
      for (const id of made) {
        expect((await store.getSession(id))?.metadata.done, `session ${id} finished`).toBe("end-turn");
        const { session } = await Session.open(store, id);
        const tree = await session.load();
        expect(toSnapshot(await loadTree(await materialize(store, session.head.id, { fromGenesis: true }))), `session ${id}: L1`).toBe(
          toSnapshot(tree),
        );
        const calls = session.select("call").map((c) => ({
          id: c.id,
          step: Number((JSON.parse(c.children.find((x) => x.tag === "args")?.text || "{}") as { k?: number }).k),
          status: c.attr("status"),
          result: c.children.filter((x) => x.tag === "result").length,
        }));
        // Every step was asked for; a reply a dead driver left cut off is asked for again, so a step
        // may have more than one call, but at most one of them executed. A call cut off before its
        // arguments arrived (the driver killed between the two events) names no step: it never ran.
        for (const c of calls) if (Number.isNaN(c.step)) expect(c.status, `session ${id}: ${JSON.stringify(c)}`).toBe("interrupted");
        expect(new Set(calls.filter((c) => !Number.isNaN(c.step)).map((c) => c.step)), `session ${id}: every step asked for`).toEqual(
          new Set(Array.from({ length: STEPS }, (_, i) => i + 1)),
        );
        const executedSteps = calls.filter((c) => c.status === "executed").map((c) => c.step);
        expect(new Set(executedSteps).size, `session ${id}: no step executed twice`).toBe(executedSteps.length);
        for (const c of calls) {
          expect(["executed", "interrupted"], JSON.stringify(c)).toContain(c.status);
          const key = `${id}.${c.id}`;
          // Executed: run once, its one outcome recorded. Interrupted: a dead driver had started it (run at most once).
          if (c.status === "executed") expect({ key, runs: ran.get(key)?.length, results: c.result }).toEqual({ key, runs: 1, results: 1 });
          else {
            interrupted++;
            expect(ran.get(key)?.length ?? 0, key).toBeLessThanOrEqual(1);
          }
        }
        // One driver at a time: the workers that ran its calls, in order, never return (no A … B … A).
        const drivers = calls
          .map((c) => ran.get(`${id}.${c.id}`)?.[0])
          .filter((b): b is string => b !== undefined)
          .filter((b, i, all) => i === 0 || b !== all[i - 1]);
        expect(new Set(drivers).size, JSON.stringify(drivers)).toBe(drivers.length);
        expect((await verifyPort(store, id)).ok, `session ${id} verifies`).toBe(true);
        await session.close();
      }
      expect(interrupted, "the stopped workers left calls running, settled as interrupted").toBeGreaterThan(0);
      // The inspector's followers caught up with every head, byte for byte.
      for (const [i, f] of followers.entries()) {
        const id = made[i] as SessionId;
        const head = (await store.branch(id, "main"))?.head as EventId;
        await until(`follower ${i} to reach the head`, () => f.replica.event === head, 30_000);
        expect(f.errors).toEqual([]);
        expect(toSnapshot(f.replica.tree)).toBe(toSnapshot(await loadTree(await materialize(store, head))));
      }
    } finally {
      for (const f of followers) f.close();
      await served?.stop();
      await store.close();
    }
  }, 240_000);
});
