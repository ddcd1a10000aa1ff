/**
 * L1 (one authority) fuzzed: random commits, group commits, streams, forks, rewinds and reopens.
 * After every step the live tree, the reopened tree, replay from genesis, snapshot + tail, and a
 * Replica fed only from subscription frames must all be the same bytes. STRATA_FUZZ_STEPS raises
 * the size of each run (the long job runs 10,000+ ops). On every storage port (ports.ts): SQLite,
 * the asynchronous port over SQLite, PostgreSQL — where a stream, which the asynchronous port does
 * not offer yet, is the same text committed as `append` ops.
 */
import { type NodeId, nodeId, toSnapshot } from "@strata/dom";
import { type EventMeta, isAsyncStore, type Store } from "@strata/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Frame, loadTree, materialize, Replica, Session, type Subscription, verifyStore } from "../src/index.ts";
import { type AnyPort, PORTS } from "./ports.ts";

const n = nodeId;
const STEPS = Number(process.env.STRATA_FUZZ_STEPS ?? 40);
const RUNS = Number(process.env.STRATA_FC_RUNS ?? 60);
const MIN = Number(process.env.STRATA_FUZZ_MIN ?? Math.min(STEPS, 20));

type Action =
  | { k: "turn"; text: string }
  | { k: "group"; size: number }
  | { k: "set"; i: number; v: string }
  | { k: "remove"; i: number }
  | { k: "stream"; i: number; chunks: string[] }
  | { k: "fork"; i: number }
  | { k: "rewind"; i: number }
  | { k: "reopen" }
  | { k: "switch"; i: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant("turn" as const), text: fc.string({ maxLength: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("group" as const), size: fc.integer({ min: 2, max: 4 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("set" as const), i: fc.nat(), v: fc.constantFrom("running", "executed", "pending", "done") }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("remove" as const), i: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("stream" as const),
      i: fc.nat(),
      chunks: fc.array(fc.string({ maxLength: 80 }), { maxLength: 5 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("fork" as const), i: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("rewind" as const), i: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("reopen" as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("switch" as const), i: fc.nat() }) },
);

async function drain(sub: Subscription, replica: Replica, until: number): Promise<void> {
  while (replica.event !== until) {
    const r = await sub.next();
    if (r.done) throw new Error("subscription ended");
    replica.apply(r.value as Frame);
  }
}

describe.each(PORTS)("L1 one authority, on $name", (port) => {
  it("live == reopened == replay from genesis == snapshot + tail == replica, at every step", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: MIN, maxLength: STEPS, size: "max" }),
        fc.integer({ min: 2, max: 12 }),
        async (actions, every) => {
          const place = port.place();
          try {
            const store: AnyPort = await place.open();
            let s: Session<AnyPort> = await Session.create(store, { snapshotEvery: every });
            let sub = s.subscribe({ buffer: 7 });
            let replica = new Replica();
            // Over the asynchronous port a tree reads only what was fetched (decision 0037): the
            // commits below load what they touch themselves (a fork, reopen or switch starts from a
            // lazily loaded head); what the test reads whole, and a subscription's first frame, is
            // loaded first.
            const whole = async () => {
              if (port.async) await s.load();
              return s.durableTree;
            };
            const attach = async () => {
              sub.close();
              if (port.async) await s.load();
              sub = s.subscribe({ buffer: 7 });
              replica = new Replica();
            };
            const turns = async () => (await whole()).childIds(3);
            for (const a of actions) {
              switch (a.k) {
                case "turn":
                  await s.commit((d) => {
                    const t = d.appendChild(n(3), { tag: "turn" });
                    d.appendChild(t, { tag: "user", text: a.text });
                    d.appendChild(t, { tag: "call", attrs: { status: "running" } });
                  });
                  break;
                case "group":
                  await s.commitMany(
                    Array.from({ length: a.size }, (_, i) => ({
                      change: (d) => void d.appendChild(n(3), { tag: "turn", attrs: { g: String(i) } }),
                    })),
                  );
                  break;
                case "set": {
                  const tree = await whole();
                  const calls = tree
                    .childIds(3)
                    .flatMap((t) => tree.childIds(t))
                    .filter((c) => tree.rec(c)?.tag === "call");
                  if (calls.length > 0) await s.commit([["set", calls[a.i % calls.length] as NodeId, "status", a.v]]);
                  break;
                }
                case "remove": {
                  const t = await turns();
                  if (t.length > 0) await s.commit([["rm", t[a.i % t.length] as NodeId]]);
                  break;
                }
                case "stream": {
                  const tree = await whole();
                  const users = tree
                    .childIds(3)
                    .map((t) => tree.rec(t)?.first ?? 0)
                    .filter((u) => u !== 0 && tree.rec(u)?.first === 0);
                  if (users.length === 0) break;
                  const into = users[a.i % users.length] as NodeId;
                  const w = s.stream(into, { intervalMs: 60_000, maxBytes: 50 });
                  for (const c of a.chunks) w.append(c);
                  w.close();
                  // Over the asynchronous port the stream's flushes are queued: durable once they ran.
                  await s.flush();
                  break;
                }
                case "fork": {
                  const log = await s.log();
                  s = await s.fork((log[a.i % log.length] as EventMeta).id);
                  await attach();
                  break;
                }
                case "rewind": {
                  const log = await s.log();
                  await s.rewind((log[a.i % log.length] as EventMeta).id);
                  break;
                }
                case "reopen":
                  s = (await Session.open(await place.open(), s.id, { branch: s.branch, snapshotEvery: every })).session;
                  await attach();
                  break;
                case "switch": {
                  const branches = await s.branches();
                  await s.switchTo((branches[a.i % branches.length] as { name: string }).name);
                  break;
                }
              }
              if (port.async) await s.load();
              const live = toSnapshot(s.tree);
              expect(toSnapshot(s.durableTree)).toBe(live);
              await drain(sub, replica, s.head.id);
              expect(toSnapshot(replica.tree), "replica").toBe(live);
            }
            const live = toSnapshot(s.tree);
            const other = await place.open();
            const reopened = (await Session.open(other, s.id, { branch: s.branch })).session;
            expect(toSnapshot(await reopened.load()), "reopened").toBe(live);
            expect(toSnapshot(await loadTree(await materialize(other, s.head.id, { fromGenesis: true }))), "replay from genesis").toBe(
              live,
            );
            expect(toSnapshot(await loadTree(await materialize(other, s.head.id))), "snapshot + tail").toBe(live);
            const report = isAsyncStore(store) ? await store.verify() : verifyStore(store as Store);
            expect(report.findings).toEqual([]);
            sub.close();
          } finally {
            await place.dispose();
          }
        },
      ),
      { numRuns: port.name === "postgres" ? Math.ceil(RUNS / 2) : RUNS },
    );
  });
});
