/**
 * The fleet with the session engine (issue 15, L1, L2, L7, ST-23): the store-level fleet test
 * (packages/store-postgres/test/fleet.test.ts) with `Session` doing the work. 8 worker processes
 * (fleet-session-worker.ts) drive 40 sessions on one PostgreSQL server, each session by whichever
 * worker holds its lease, every commit fenced by the lease token. One worker is killed with
 * SIGKILL in the middle of a call and another paused (SIGSTOP) in the middle of one until the
 * others have taken its sessions over, then let go on (SIGCONT): a stale driver whose commits the
 * fence must refuse. The others resume those sessions from the lifecycle work `Session.open` hands
 * back — the call left running is in it — a live handoff between machines.
 *
 * Afterwards every session's tree holds, for every step, exactly one call that is done, no call
 * still running, and an interrupted call only for a step that was run again; each session was
 * driven by one worker at a time (a replaced driver never committed again); the tree a fresh
 * process reads equals the replay from genesis (L1); the store verifies.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { toSnapshot } from "@strata/dom";
import type { SessionId } from "@strata/store";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import { afterAll, describe, expect, inject, it } from "vitest";
import { loadTree, materialize, Session } from "../src/index.ts";

const url = inject("pgUrl");
const SESSIONS = 40;
const WORKERS = 8;
const STEPS = 6;

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
  const script = join(import.meta.dirname, "fleet-session-worker.ts");
  const child = spawn(process.execPath, ["--conditions=@strata/source", "--import", "tsx", script, url, schema, name, String(STEPS)], {
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

const until = async (what: string, test: () => boolean | Promise<boolean>, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe("the fleet on Session: 8 worker processes, 40 sessions, one worker killed and one paused mid-call", () => {
  it("a resumed session finishes what the dead driver left, from its lifecycle work; one driver at a time; nothing lost or done twice", async () => {
    const schema = `sfleet_${process.pid}_${Date.now().toString(36)}`;
    const store: PgStore = await openPgStore(url, { schema, max: 4 });
    try {
      const made: SessionId[] = [];
      for (let i = 0; i < SESSIONS; i++) made.push((await Session.create(store, { title: `s${i}` })).id);
      const workers = Array.from({ length: WORKERS }, (_, i) => worker(schema, `worker-${i}`));
      const took = (w: Worker) => w.lines.filter((l) => l.startsWith("took ")).map((l) => l.slice(5) as SessionId);
      const tail = async (s: SessionId) => {
        const b = await store.branch(s, "main");
        return b === undefined ? undefined : (await store.chainMeta(b.head, 0, 1, true))[0];
      };
      // A worker in the middle of a call: the last commit of a session it took is its call.start.
      const inCall = async (w: Worker) => {
        for (const s of took(w)) {
          const t = await tail(s);
          if (t?.label === "call.start" && t.by === w.name) return true;
        }
        return false;
      };
      await until("two workers to take sessions", () => workers.filter((w) => took(w).length > 0).length >= 2);
      const [victim, sleeper] = workers.filter((w) => took(w).length > 0) as [Worker, Worker];
      await until("both to be in the middle of a call", async () => (await inCall(victim)) && (await inCall(sleeper)), 10_000);
      victim.child.kill("SIGKILL");
      sleeper.child.kill("SIGSTOP");
      await victim.exited;
      // What the two stopped workers held, and the calls they left running.
      const held = new Map<SessionId, string>();
      const running = new Set<SessionId>();
      for (const s of made) {
        const lease = await store.lease(s, "main");
        if (lease === undefined || (lease.owner !== victim.name && lease.owner !== sleeper.name)) continue;
        held.set(s, lease.owner);
        const t = await tail(s);
        if (t?.label === "call.start" && t.by === lease.owner) running.add(s);
      }
      expect([...held.values()].filter((o) => o === victim.name).length, "the killed worker held sessions").toBeGreaterThan(0);
      expect([...held.values()].filter((o) => o === sleeper.name).length, "the paused worker held sessions").toBeGreaterThan(0);
      expect(running.size, "a stopped worker was in the middle of a call").toBeGreaterThan(0);
      await until("the paused worker's sessions to be taken over", async () => {
        for (const [s, owner] of held) if (owner === sleeper.name && (await store.lease(s, "main"))?.owner === sleeper.name) return false;
        return true;
      });
      sleeper.child.kill("SIGCONT");
      await Promise.all(workers.filter((w) => w !== victim).map((w) => w.exited));

      let interrupted = 0;
      for (const s of made) {
        // A fresh handle, as another process would open it: the tree, loaded whole, and the replay from genesis (L1).
        const { session } = await Session.open(store, s);
        const tree = await session.load();
        const head = session.head.id;
        expect(toSnapshot(await loadTree(await materialize(store, head, { fromGenesis: true }))), `session ${s}: L1`).toBe(
          toSnapshot(tree),
        );
        const calls = session.select("call").map((c) => ({ step: Number(c.attr("step")), status: c.attr("status") }));
        expect(session.select("done").length, `session ${s} finished`).toBe(1);
        // Every step done exactly once, in order; nothing left running; an interruption only where the step was run again.
        expect(calls.filter((c) => c.status === "done").map((c) => c.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
        expect(
          calls.filter((c) => c.status !== "done" && c.status !== "interrupted"),
          JSON.stringify(calls),
        ).toEqual([]);
        const again = calls.filter((c) => c.status === "interrupted");
        interrupted += again.length;
        if (running.has(s)) expect(again.length, `session ${s}: the call left running was marked interrupted`).toBeGreaterThan(0);
        // One driver at a time: a replaced driver never committed again (no A … B … A).
        const log = await session.log();
        const drivers = log
          .slice(1)
          .map((e) => e.by)
          .filter((b, i, all) => i === 0 || b !== all[i - 1]);
        expect(new Set(drivers).size, JSON.stringify(drivers)).toBe(drivers.length);
        const stale = held.get(s);
        if (stale !== undefined) expect(drivers.at(-1), JSON.stringify(drivers)).not.toBe(stale);
        expect((await store.verify(s)).ok).toBe(true);
      }
      expect(interrupted).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 180_000);
});
