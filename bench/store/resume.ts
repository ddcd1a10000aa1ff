/**
 * Store benchmark 2 — resume, state at any event, and forks (issue 3), at 1,000, 10,000 and
 * 100,000 steps. Each session is written by the engine (snapshots every K events) and a raw table
 * holds the same events. Every resume is a fresh process (bench/store/probe.ts; modules imported
 * before the clock starts):
 * - **ready**: open the file, materialize the head (snapshot + tail, pages loaded on touch) and read
 *   the last 50 steps' content — what the next prompt and the screen need;
 * - **half**: the same for the event half-way through the session (cold);
 * - **full**: every event of the branch with its payload decoded — what the peers return — next to
 *   the same read of the raw table (the floor: the bytes must all be read);
 * - **fork**: a branch at the half-way event plus one appended step (store level), time and bytes
 *   added (`dbstat` payload, in a copy of the file).
 *
 * Run: npx tsx bench/run.ts resume
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventId, openStore, type SessionId, type SqliteStore } from "@strata/store";
import { buildSession, eventsOf, RawLog, toInput } from "../lib/agent.ts";
import {
  type Aggregate,
  type BenchModule,
  byteValue,
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
import { median, num, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "resume";
const SIZES = (process.env.BENCH_STEPS ?? "1000,10000,100000").split(",").map(Number);
const PROBES = Number(process.env.BENCH_PROBES ?? 7);
const ROOT = join(import.meta.dirname, "..", "..");

interface ProbeResult {
  ms: number;
  maxRssKb: number;
  detail: number;
}

function probe(mode: string, db: string, session: string): ProbeResult {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "bench/store/probe.ts"), mode, db, session], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`probe ${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as ProbeResult;
}

function measureSize(steps: number, dir: string, metrics: Record<string, Sample>, values: Record<string, number>): void {
  const tag = String(steps);
  const path = join(dir, `a-${tag}.db`);
  progress(NAME, `${steps} steps: building`);
  const store = openStore(path);
  const { session, head } = buildSession(store, steps);
  const raw = new RawLog(join(dir, `raw-${tag}.db`));
  raw.db.exec("BEGIN");
  for (const e of eventsOf(store, head)) raw.append(session, toInput(e));
  raw.db.exec("COMMIT");
  raw.db.pragma("wal_checkpoint(TRUNCATE)");
  raw.close();
  (store as SqliteStore).database.pragma("wal_checkpoint(TRUNCATE)");
  store.close();

  progress(NAME, `${steps} steps: probes`);
  const ready: number[] = [];
  const half: number[] = [];
  const full: number[] = [];
  const rawFull: number[] = [];
  const fullRatios: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < PROBES; i++) {
    const r = probe("ready", path, session);
    ready.push(r.ms);
    rss.push(r.maxRssKb * 1024);
    half.push(probe("half", path, session).ms);
    const f = probe("full", path, session).ms;
    const b = probe("raw-full", join(dir, `raw-${tag}.db`), session).ms;
    full.push(f);
    rawFull.push(b);
    fullRatios.push(f / b);
  }
  metrics[`ready.${tag}`] = summarize(ready, "ms");
  metrics[`half.${tag}`] = summarize(half, "ms");
  metrics[`full.${tag}`] = summarize(full, "ms");
  metrics[`rawFull.${tag}`] = summarize(rawFull, "ms");
  values[`fullRatio.${tag}`] = median(fullRatios);
  values[`readyRss.${tag}`] = median(rss);

  // Fork at the half-way event, plus one appended step, in a copy of the file.
  const copy = join(dir, `fork-${tag}.db`);
  copyFileSync(path, copy);
  const s = openStore(copy) as SqliteStore;
  const payload = () => Number(s.database.prepare("SELECT sum(payload) FROM dbstat").pluck().get());
  const mainHead = s.branch(session as SessionId, "main")?.head as EventId;
  const at = s.atDepth(mainHead, Math.floor(steps * 1.5)) as { id: EventId };
  const step = s.chain(mainHead, Math.floor(steps * 1.5), 3).map(toInput);
  const forkTimes: number[] = [];
  const forkBytes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = payload();
    const t0 = performance.now();
    s.fork(session as SessionId, at.id, `bench-${i}`);
    let h = at.id;
    for (const e of step) h = (s.append(session as SessionId, `bench-${i}`, h, [e])[0] as { id: EventId }).id;
    forkTimes.push(performance.now() - t0);
    forkBytes.push(payload() - before);
  }
  s.close();
  metrics[`fork.${tag}`] = summarize(forkTimes, "ms");
  values[`forkBytes.${tag}`] = median(forkBytes);
}

const mod: BenchModule = {
  title: "Resume, state at any event, forks",
  measure(): RunResult {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-resume-"));
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      for (const n of SIZES) measureSize(n, dir, metrics, values);
      const first = String(SIZES[0]);
      for (const n of SIZES) {
        values[`readyScale.${n}`] = (metrics[`ready.${n}`] as Sample).median / (metrics[`ready.${first}`] as Sample).median;
        values[`halfScale.${n}`] = (metrics[`half.${n}`] as Sample).median / (metrics[`half.${first}`] as Sample).median;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    const rows = SIZES.map((n) => [
      n.toLocaleString("en-US"),
      cell(agg, `ready.${n}`),
      value(agg, `readyScale.${n}`, (x) => `${num(x)}×`),
      cell(agg, `half.${n}`),
      byteValue(agg, `readyRss.${n}`),
      cell(agg, `full.${n}`),
      cell(agg, `rawFull.${n}`),
      ratio(agg, `fullRatio.${n}`),
      cell(agg, `fork.${n}`),
      byteValue(agg, `forkBytes.${n}`),
    ]);
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `Fresh process per resume (${PROBES} probes per size and run; modules imported before the clock starts). *ready*: open + head materialized + last 50 steps' content; *half*: the same at the half-way event; *full*: every event's payload on the branch, read with \`store.chainData\` (the narrow read for full histories) and decoded, next to the raw table read and decoded the same way; *fork*: \`store.fork\` at the half-way event + one appended step (3 events), bytes added from \`dbstat\`. For scale: Pi needs 6.4 s to resume a 100,000-step session and 5.3 s for the state half-way back (issue 3).`,
      "",
      table(
        [
          "steps",
          "ready",
          "vs 1k",
          "half-way (cold)",
          "ready peak RSS",
          "full",
          "raw full read",
          "full / raw",
          "fork + 1 step",
          "bytes added",
        ],
        rows,
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const last = SIZES[SIZES.length - 1] as number;
    const first = SIZES[0] as number;
    const ms = (k: string) => agg.metrics[k]?.median ?? Number.NaN;
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    return [
      line(ms(`ready.${last}`) <= 50, `ready resume ≤ 50 ms at ${last.toLocaleString("en-US")} steps: ${num(ms(`ready.${last}`))} ms`),
      targetLine(
        agg,
        `ready resume at ${last} within 1.5× of ${first}`,
        [{ key: `readyScale.${last}`, label: `${last}/${first}` }],
        "<=",
        1.5,
      ),
      line(
        ms(`half.${last}`) <= 50,
        `ready state at step N/2 (cold) ≤ 50 ms at ${last.toLocaleString("en-US")} steps: ${num(ms(`half.${last}`))} ms`,
      ),
      targetLine(
        agg,
        `state at N/2 at ${last} within 1.5× of ${first}`,
        [{ key: `halfScale.${last}`, label: `${last}/${first}` }],
        "<=",
        1.5,
      ),
      targetLine(
        agg,
        "full resume ≤ 1.2× the raw SQLite read of the same bytes",
        SIZES.map((n) => ({ key: `fullRatio.${n}`, label: `${n} steps` })),
        "<=",
        1.2,
      ),
      line(
        ms(`fork.${last}`) <= 2 && (agg.values[`forkBytes.${last}`]?.median ?? Infinity) <= 4096,
        `fork at N/2 + one appended step ≤ 2 ms and ≤ 4 KB: ${num(ms(`fork.${last}`))} ms, ${byteValue(agg, `forkBytes.${last}`)}`,
      ),
      line(
        (agg.values[`readyRss.${last}`]?.median ?? Infinity) <= 150e6,
        `peak RSS of a ready resume at ${last.toLocaleString("en-US")} steps ≤ 150 MB: ${byteValue(agg, `readyRss.${last}`)}`,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
