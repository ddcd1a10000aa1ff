/**
 * Engine benchmarks (issue 4), on sessions of 1,000 and 100,000 events written by the engine:
 * - **commit**: a one-op patch (`set` on a call) committed on a live session at N events, next to
 *   the store's own append of the same payload (interleaved rounds, ratio per round);
 * - **fork / rewind**: `session.fork(e)` and `session.rewind(e)` to the half-way event (materialize
 *   the target, diff lifecycle elements), at 1,000 and at 100,000 events;
 * - **named forks**: `session.fork(e)` with no name among a few branches, then among 5,000 (the
 *   default name is one lookup, EN-23: flat in branches);
 * - **subscribe**: a Replica fed from `subscribe()` while a writer commits 5,000 events/s for a
 *   second (it keeps up if its lag returns to zero); catch-up of every event from the start of a
 *   100,000-event session into a Replica.
 *
 * Run: npx tsx bench/run.ts session
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NodeId, nodeId } from "@strata/dom";
import { type Frame, Replica, Session } from "@strata/engine";
import { type EventId, openStore, type Store } from "@strata/store";
import { buildSession } from "../lib/agent.ts";
import {
  type Aggregate,
  type BenchModule,
  cell,
  isMain,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  targetLine,
  value,
} from "../lib/harness.ts";
import { interleave, median, num, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "session";
const EVENTS = (process.env.BENCH_EVENTS ?? "1000,100000").split(",").map(Number);
/** Branches added before the second round of default-named forks. */
const BRANCHES = 5000;

function calls(s: Session): NodeId[] {
  const out: NodeId[] = [];
  let turn = s.durableTree.rec(3)?.last ?? 0;
  for (let i = 0; i < 200 && turn !== 0; i++) {
    const call = s.durableTree.childIds(turn)[1];
    if (call !== undefined) out.push(call);
    turn = s.durableTree.rec(turn)?.prev ?? 0;
  }
  return out;
}

function measureSize(events: number, dir: string, metrics: Record<string, Sample>, values: Record<string, number>): string {
  const tag = String(events);
  const path = join(dir, `s-${tag}.db`);
  progress(NAME, `${events} events: building`);
  const store: Store = openStore(path);
  const { session } = buildSession(store, Math.ceil(events / 3));
  const { session: s } = Session.open(store, session);
  const targets = calls(s);
  // The store's own append, on a second session of the same file, with the same payload.
  const { session: other, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
  let otherHead = genesis.id;
  const payload = JSON.stringify({ ops: [["set", targets[0], "status", "running"]] });
  progress(NAME, `${events} events: commit vs append`);
  const t = interleave(
    {
      commit: (i) =>
        s.commit([["set", targets[i % targets.length] as NodeId, "status", i % 2 ? "running" : "executed"]], { label: "tool.start" }),
      append: () => {
        otherHead = (
          store.append(other.id, "main", otherHead, [{ kind: "patch@1", label: "tool.start", data: payload }])[0] as { id: EventId }
        ).id;
      },
    },
    { iterations: 25, minSampleMs: 20 },
  );
  metrics[`commit.${tag}`] = t.commit;
  metrics[`append.${tag}`] = t.append;
  values[`commitRatio.${tag}`] = t.commit.median / t.append.median;

  progress(NAME, `${events} events: fork and rewind`);
  const log = s.log();
  const half = (log[Math.floor(log.length / 2)] as { id: EventId }).id;
  const forkTimes: number[] = [];
  const rewindTimes: number[] = [];
  // Round 0 warms the code paths up (the first size measured would otherwise pay for the JIT).
  for (let i = 0; i <= 9; i++) {
    const t0 = performance.now();
    s.fork(half, { name: `bench-fork-${i}` });
    if (i > 0) forkTimes.push(performance.now() - t0);
    // Rewind a fresh session object on its own branch (so every round starts from a long head).
    store.fork(session, s.head.id, `bench-rw-${i}`);
    const { session: r } = Session.open(store, session, { branch: `bench-rw-${i}` });
    const t1 = performance.now();
    r.rewind(half);
    if (i > 0) rewindTimes.push(performance.now() - t1);
  }
  metrics[`fork.${tag}`] = summarize(forkTimes, "ms");
  metrics[`rewind.${tag}`] = summarize(rewindTimes, "ms");

  // A fork with its default name (`fork-<event>`, EN-23) among a few branches, then among 5,000:
  // the same work apart from the name's lookup (events 128 apart sit as far after their snapshots).
  progress(NAME, `${events} events: forks among ${BRANCHES.toLocaleString("en-US")} branches`);
  const mid = Math.floor(log.length / 2);
  const namedFork = (at: number): number => {
    const t0 = performance.now();
    s.fork((log[at] as { id: EventId }).id);
    return performance.now() - t0;
  };
  const few: number[] = [];
  for (let i = 0; i <= 9; i++) {
    const ms = namedFork(mid + 1 + i);
    if (i > 0) few.push(ms);
  }
  store.transaction(() => {
    for (let i = 0; i < BRANCHES; i++) store.fork(session, (log[i % log.length] as { id: EventId }).id, `bench-many-${i}`);
  });
  const many: number[] = [];
  for (let i = 0; i <= 9; i++) {
    const ms = namedFork(mid + 1 + 128 + i);
    if (i > 0) many.push(ms);
  }
  metrics[`forkFew.${tag}`] = summarize(few, "ms");
  metrics[`forkMany.${tag}`] = summarize(many, "ms");
  values[`forkManyRatio.${tag}`] = median(many) / median(few);
  store.close();
  return session;
}

async function keepUp(dir: string, bigSession: string, values: Record<string, number>, metrics: Record<string, Sample>): Promise<void> {
  progress(NAME, "subscribe: 5,000 events/s");
  const store = openStore(join(dir, "live.db"));
  const s = Session.create(store);
  let logId = 0 as NodeId;
  s.commit((d) => {
    logId = d.appendChild(nodeId(3), { tag: "log" });
  });
  const sub = s.subscribe();
  const replica = new Replica();
  let maxLag = 0;
  let consumed = 0;
  const consumer = (async () => {
    for await (const f of sub) {
      replica.apply(f as Frame);
      if ((f as Frame).type === "event") consumed++;
    }
  })();
  const rate = 5000;
  const t0 = performance.now();
  let written = 0;
  while (written < rate) {
    const due = Math.min(rate, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
    while (written < due) {
      s.commit([["append", logId, "x"]]);
      written++;
    }
    maxLag = Math.max(maxLag, written - consumed);
    await new Promise((r) => setImmediate(r));
  }
  const writeMs = performance.now() - t0;
  while (consumed < written) await new Promise((r) => setImmediate(r));
  const drainMs = performance.now() - t0 - writeMs;
  values.keepUpWriteMs = writeMs;
  values.keepUpDrainMs = drainMs;
  values.keepUpMaxLag = maxLag;
  values.keepUpEqual = replica.event === s.head.id ? 1 : 0;
  sub.close();
  await consumer;

  progress(NAME, "subscribe: catch-up from the start of 100,000 events");
  const big = openStore(join(dir, `s-${EVENTS[EVENTS.length - 1]}.db`));
  const { session: b } = Session.open(big, bigSession as never);
  const genesis = (b.log({ limit: 1 })[0] as { id: EventId }).id;
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = new Replica();
    const t1 = performance.now();
    const all = b.subscribe({ from: genesis, buffer: 1_000_000 });
    for await (const f of all) {
      r.apply(f as Frame);
      if (r.event === b.head.id) break;
    }
    times.push(performance.now() - t1);
    all.close();
  }
  metrics.catchUp = summarize(times, "ms");
  values.catchUpEvents = b.head.depth;
  big.close();
  store.close();
}

const mod: BenchModule = {
  title: "Sessions: commit, fork, rewind, subscribe",
  async measure(): Promise<RunResult> {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-session-"));
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      let big = "";
      for (const n of EVENTS) big = measureSize(n, dir, metrics, values);
      await keepUp(dir, big, values, metrics);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    const rows = EVENTS.map((n) => [
      n.toLocaleString("en-US"),
      cell(agg, `commit.${n}`),
      cell(agg, `append.${n}`),
      ratio(agg, `commitRatio.${n}`),
      cell(agg, `fork.${n}`),
      cell(agg, `rewind.${n}`),
      cell(agg, `forkFew.${n}`),
      cell(agg, `forkMany.${n}`),
      ratio(agg, `forkManyRatio.${n}`),
    ]);
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `*commit*: \`session.commit\` of a one-op patch (validate, append with compare-and-swap, fold) on a live session; *append*: \`store.append\` of the same payload, timed in interleaved rounds. *fork*/*rewind*: to the half-way event (materialize the target: snapshot + tail, lifecycle diff from snapshot headers). *Named fork*: \`session.fork(e)\` with no name (it takes \`fork-<e>\`, EN-23) at events just after the half-way one, among the session's few branches, then at events 128 further (as far after their snapshots) once ${BRANCHES.toLocaleString("en-US")} more branches exist.`,
      "",
      table(
        [
          "events",
          "commit (1 op)",
          "store append",
          "commit / append",
          "fork",
          "rewind",
          "named fork, few branches",
          `named fork, ${BRANCHES.toLocaleString("en-US")} branches`,
          "many / few",
        ],
        rows,
      ),
      "",
      `Subscribe: a Replica fed from \`subscribe()\` while the writer commits 5,000 events in ${value(agg, "keepUpWriteMs", (x) => `${num(x)} ms`)}: largest lag ${value(agg, "keepUpMaxLag", (x) => `${num(x)} events`)}, drained ${value(agg, "keepUpDrainMs", (x) => `${num(x)} ms`)} after the last commit. Catch-up of every event from the start of a ${value(agg, "catchUpEvents", (x) => num(x))}-event session into a Replica: ${cell(agg, "catchUp")}.`,
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const last = EVENTS[EVENTS.length - 1] as number;
    const ms = (k: string) => agg.metrics[k]?.median ?? Number.NaN;
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    const drain = agg.values.keepUpDrainMs?.median ?? Number.NaN;
    return [
      targetLine(
        agg,
        `commit of a one-op patch at ${last.toLocaleString("en-US")} events ≤ 1.5× the store's append`,
        [{ key: `commitRatio.${last}`, label: `${last} events` }],
        "<=",
        1.5,
      ),
      line(
        ms(`fork.${last}`) <= 10 && ms(`rewind.${last}`) <= 10,
        `fork and rewind on a ${last.toLocaleString("en-US")}-event session ≤ 10 ms: fork ${num(ms(`fork.${last}`))} ms, rewind ${num(ms(`rewind.${last}`))} ms (at ${EVENTS[0]}: ${num(ms(`fork.${EVENTS[0]}`))} / ${num(ms(`rewind.${EVENTS[0]}`))} ms)`,
      ),
      targetLine(
        agg,
        `a fork with its default name costs the same among ${BRANCHES.toLocaleString("en-US")} branches as among a few (within 1.5×)`,
        EVENTS.map((n) => ({ key: `forkManyRatio.${n}`, label: `${n} events` })),
        "<=",
        1.5,
      ),
      line(drain <= 100, `a replica keeps up with 5,000 events/s: drained ${num(drain)} ms after the writer's last commit`),
      line(
        ms("catchUp") <= 2000,
        `catch-up of ${num(agg.values.catchUpEvents?.median ?? 0)} events from cursor 0 ≤ 2 s: ${num(ms("catchUp"))} ms`,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
