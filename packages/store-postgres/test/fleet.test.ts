/**
 * A fleet on one PostgreSQL server (issue 15; ST-23, ST-32, ST-34), with real processes: 8 workers
 * (fleet-worker.ts) drive 40 sessions at once, each session by whichever worker takes its lease,
 * while an inspector in another process (fleet-follower.ts) follows all of them. One worker is
 * killed with SIGKILL in the middle of a call, another paused (SIGSTOP) in the middle of one until
 * the others have taken its sessions over, then let go on (SIGCONT): a stale driver, which must
 * never write again. The others find both workers' leases stale and resume their sessions.
 * Afterwards every session holds every step's call exactly once — started, ended, and a call a
 * replaced driver left running marked interrupted before it was run again — each session was
 * driven by one worker at a time (a replaced driver never wrote again), and the inspector was given
 * every event of every session once, in order.
 */
import type { EventId, SessionId } from "@strata/store";
import { describe, expect, inject, it } from "vitest";
import { openPgStore, type PgStore } from "../src/index.ts";
import { start } from "./processes.ts";

const url = inject("pgUrl");
const SESSIONS = 40;
const WORKERS = 8;
const STEPS = 8;

const until = async (what: string, test: () => boolean | Promise<boolean>, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe("the fleet: 8 worker processes, 40 sessions, one inspector process, one worker killed and one paused", () => {
  it("nothing is lost or done twice, one driver at a time, and the inspector sees every event once, in order", async () => {
    const schema = `fleet_${process.pid}_${Date.now().toString(36)}`;
    const store: PgStore = await openPgStore(url, { schema, max: 4 });
    try {
      const made: { id: SessionId; genesis: EventId }[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const { session, genesis } = await store.createSession({ title: `s${i}`, genesis: { kind: "genesis@1", data: "{}" } });
        made.push({ id: session.id, genesis: genesis.id });
      }
      const inspector = start("fleet-follower.ts", [url, schema, ...made.map((m) => `${m.genesis}:${m.id}`)]);
      await until("the inspector to listen", () => inspector.lines.includes("ready"));
      const workers = Array.from({ length: WORKERS }, (_, i) => start("fleet-worker.ts", [url, schema, `worker-${i}`, String(STEPS)]));
      // Kill a worker once it drives sessions and has recorded some of their calls; pause another.
      type Worker = (typeof workers)[number];
      const took = (w: Worker) => w.lines.filter((l) => l.startsWith("took ")).map((l) => l.slice(5));
      const unfinished = (w: Worker) => {
        const left = new Set(took(w));
        for (const d of w.lines.filter((l) => l.startsWith("done "))) left.delete(d.slice(5));
        return left;
      };
      await until("two workers to take sessions", () => workers.filter((w) => took(w).length > 0).length >= 2);
      const [vi, si] = workers.flatMap((w, i) => (took(w).length > 0 ? [i] : [])) as [number, number];
      const victim = workers[vi] as Worker;
      const sleeper = workers[si] as Worker;
      const [victimName, sleeperName] = [`worker-${vi}`, `worker-${si}`];
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      // Stop both in the same instant, while each is in the middle of a call it started.
      const inCall = async (w: Worker, name: string) => {
        for (const s of unfinished(w)) {
          const b = await store.branch(s as SessionId, "main");
          const tail = b === undefined ? undefined : (await store.chainMeta(b.head, 0, 1, true))[0];
          if (tail?.kind === "call.start" && tail.by === name) return true;
        }
        return false;
      };
      await until(
        "both to be in the middle of a call",
        async () => (await inCall(victim, victimName)) && (await inCall(sleeper, sleeperName)),
        10_000,
      );
      victim.child.kill("SIGKILL");
      sleeper.child.kill("SIGSTOP");
      await victim.exited;
      // What the two stopped workers held, read from the store: their leases, and the calls they left running.
      const held = new Map<string, string>();
      const running = new Map<string, number>();
      for (const m of made) {
        const lease = await store.lease(m.id, "main");
        if (lease === undefined || (lease.owner !== victimName && lease.owner !== sleeperName)) continue;
        held.set(m.id, lease.owner);
        const tail = await store.event(((await store.branch(m.id, "main")) as { head: EventId }).head);
        if (tail?.kind === "call.start" && tail.by === lease.owner) running.set(m.id, (JSON.parse(tail.data) as { step: number }).step);
      }
      expect([...held.values()].filter((o) => o === victimName).length, "the killed worker held sessions").toBeGreaterThan(0);
      expect([...held.values()].filter((o) => o === sleeperName).length, "the paused worker held sessions").toBeGreaterThan(0);
      expect(running.size, "a stopped worker was in the middle of a call").toBeGreaterThan(0);
      // Let the paused worker go on once every session it held is driven by another.
      await until("the paused worker's sessions to be taken over", async () => {
        for (const [s, owner] of held)
          if (owner === sleeperName && (await store.lease(s as SessionId, "main"))?.owner === sleeperName) return false;
        return true;
      });
      sleeper.child.kill("SIGCONT");
      await Promise.all(workers.filter((w) => w !== victim).map((w) => w.exited));
      const orphaned = held;

      let interrupted = 0;
      for (const m of made) {
        const log = await store.log(m.id);
        const events = await store.chain(log.at(-1)?.id as EventId);
        const calls = events.slice(1).map((e) => ({ kind: e.kind, by: e.by, step: (JSON.parse(e.data) as { step: number }).step }));
        expect(calls.at(-1)?.kind, `session ${m.id} finished`).toBe("done");
        // Every step ended exactly once, in order; a start is followed by its end, or by its interruption and a new start.
        expect(calls.filter((c) => c.kind === "call.end").map((c) => c.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
        for (let i = 0; i < calls.length - 1; i++) {
          const c = calls[i] as (typeof calls)[number];
          const next = calls[i + 1] as (typeof calls)[number];
          if (c.kind === "call.start") expect(["call.end", "call.interrupted"], JSON.stringify(calls)).toContain(next.kind);
          if (next.kind === "call.end" || next.kind === "call.interrupted")
            expect(c, JSON.stringify(calls)).toMatchObject({ kind: "call.start", step: next.step });
        }
        interrupted += calls.filter((c) => c.kind === "call.interrupted").length;
        // The call a stopped driver left running was marked interrupted, then run again.
        const left = running.get(m.id);
        if (left !== undefined) expect(calls.filter((c) => c.kind === "call.interrupted").map((c) => c.step)).toContain(left);
        // One driver at a time: a driver that was replaced never writes again (no A … B … A), and
        // the dead and the paused worker were replaced. (Other takeovers are allowed: a driver
        // that stalls past the stale limit on a loaded machine is replaced like a dead one.)
        const drivers = calls.map((c) => c.by).filter((b, i, all) => i === 0 || b !== all[i - 1]);
        expect(new Set(drivers).size, JSON.stringify(drivers)).toBe(drivers.length);
        const stale = orphaned.get(m.id);
        // (It may have written nothing: taken, then stopped before its first event.)
        if (stale !== undefined) expect(drivers.at(-1), JSON.stringify(drivers)).not.toBe(stale);
        expect((await store.verify(m.id)).ok).toBe(true);
      }
      expect(interrupted).toBeGreaterThan(0);

      // The inspector was given every event once, in order, and nothing else.
      for (const m of made) {
        const log = (await store.log(m.id)).slice(1).map((e) => `${m.id} ${e.id}`);
        await until(
          `the inspector to see session ${m.id}`,
          () => inspector.lines.filter((l) => l.startsWith(m.id)).length >= log.length,
          10_000,
        );
        expect(inspector.lines.filter((l) => l.startsWith(m.id))).toEqual(log);
      }
      expect(inspector.lines.filter((l) => l.startsWith("moved"))).toEqual([]);
      inspector.child.kill("SIGTERM");
      await inspector.exited;
    } finally {
      await store.close();
    }
  }, 180_000);
});
