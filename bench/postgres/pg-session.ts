/**
 * `Session` on PostgreSQL (issue 15): the engine's session over the asynchronous port
 * (`openPgStore` of `@strata/store-postgres`, decision 0036) on the public-API workload of issue 14
 * (bench/api/workload.ts: one step = one event, a `<turn>` with a 380 B assistant text, ~300 B of
 * JSON arguments and a 1–2 KB tool output), at 1,000, 10,000 and 100,000 steps, each figure next to
 * raw `pg` on the same private server (`startPgServer` of `@strata/store-postgres/testing`, fsync
 * on), measured in the same run. The mirror of bench/api/public.ts, on PostgreSQL.
 *
 * Per size, one session in schema `bench_session`, written through `Session` only, and a raw table
 * `raw_<N>(id bigserial primary key, parent bigint, ts bigint, kind text, label text, data text)`
 * holding the same payloads (read back with `store.chain`), one row per event, plus a branch table:
 * - **append**: the last BENCH_PGS_SINGLY steps (default all of them) are committed one
 *   `await session.commit` at a time, in blocks of 128 steps; after each block the raw baseline
 *   inserts the same payloads, one parameterized single-row `INSERT` in autocommit per step on one
 *   `pg.Client` (ratio per block). The steps before them, if any, are built by `session.commitMany`
 *   in groups of 128 (each group one call, still the public API; its raw rows one multi-row
 *   `INSERT` per group), timed apart. Statements per commit are counted on the clients the store's
 *   pool hands out (as bench/postgres/pg.ts counts appends).
 * - Then fresh processes (bench/postgres/pg-session-probe.ts; modules imported and the connection
 *   opened before the clock: `openPgStore` for strata, `connect` for raw, reported apart), in
 *   rounds after one untimed warm-up round, strata and raw alternating which goes first:
 *   **resume** `Session.open` (raw: the last 128 rows read and decoded, the log tail a resume after
 *   the last snapshot folds); **all** open + `load()` + every message's text (raw: every row read and decoded);
 *   **half** open + `loadTree(at(event after step N/2))` + every message's text (raw: the rows up to it);
 *   **fork** open + `fork(event after step N/2)` + one `commit` on the fork (raw: one transaction of
 *   a branch row and an event row). Ratios per round. Statements and bytes received per operation
 *   counted in the probe; peak RSS of the resume and all processes.
 *
 * Run: npx tsx bench/run.ts pg-session
 *   (by hand: BENCH_PGS_STEPS=1000,10000 node --import tsx --conditions=@strata/source bench/postgres/pg-session.ts)
 * Knobs: BENCH_PGS_STEPS (sizes), BENCH_PGS_PROBES (timed rounds, default 5), BENCH_PGS_SINGLY
 * (steps committed one at a time at the end of each size; default: every step).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { TreeDraft } from "@strata/dom";
import { bodyOf, Session } from "@strata/engine";
import type { EventMeta } from "@strata/store";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import pg from "pg";
import { BLOCK, type Step, stepOps, steps, turnSpec } from "../api/workload.ts";
import {
  type Aggregate,
  type BenchModule,
  byteValue,
  cell,
  isMain,
  med,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  targetLine,
  value,
} from "../lib/harness.ts";
import { median, num, type Sample, summarize, table } from "../lib/stats.ts";
import { onPgServer } from "./server.ts";
import { StatementCounter } from "./statements.ts";

const NAME = "pg-session";
const SIZES = (process.env.BENCH_PGS_STEPS ?? "1000,10000,100000").split(",").map(Number);
const PROBES = Number(process.env.BENCH_PGS_PROBES ?? 5);
const SINGLY = Number(process.env.BENCH_PGS_SINGLY ?? Number.POSITIVE_INFINITY);
const SCHEMA = "bench_session";
const ROOT = join(import.meta.dirname, "..", "..");
const PROBE = join(ROOT, "bench", "postgres", "pg-session-probe.ts");
const SOURCE_CONDITION = "--conditions=@strata/source";
/** Blocks at the end of a size whose per-step commit is compared with the first size's (flat in N). */
const TAIL_BLOCKS = 10;
/** The issue's targets. */
const RESUME_MS = 50;
const HALF_RATIO = 1.2;
const FORK_MS = 5;

for (const n of SIZES) if (!Number.isInteger(n) || n < 2) throw new Error(`BENCH_PGS_STEPS: ${n} is not a size of at least 2 steps`);

interface Phase {
  readonly statements: number;
  readonly kinds: Record<string, number>;
  readonly bytes: number;
}

/** What a probe reports (bench/postgres/pg-session-probe.ts). */
interface Probe {
  readonly ms: number;
  readonly opMs: number;
  readonly connectMs: number;
  readonly openMs?: number;
  readonly atMs?: number;
  readonly forkMs?: number;
  /** Warm (the median of 5 more forks in the same process): fork + commit, fork alone, `store.fork` alone. */
  readonly warmMs?: number;
  readonly warmForkMs?: number;
  readonly storeForkMs?: number;
  readonly commitMs?: number;
  readonly open: Phase;
  readonly op?: Phase;
  readonly commit?: Phase;
  readonly headDepth?: number;
  readonly rows?: number;
  readonly messages?: number;
  readonly chars?: number;
  readonly maxRssKb: number;
}

/** Node options of a probe: tsx, and the packages' sources (as the runner's children get them). */
function probeArgs(): string[] {
  // Under bench/run.ts the condition comes in NODE_OPTIONS (inherited); by hand it is on the command line.
  return ["--import", "tsx", ...((process.env.NODE_OPTIONS ?? "").includes(SOURCE_CONDITION) ? [] : [SOURCE_CONDITION])];
}

function probe(args: readonly (string | number)[]): Probe {
  const r = spawnSync(process.execPath, [...probeArgs(), PROBE, ...args.map(String)], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`pg-session-probe ${args.join(" ")} failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as Probe;
}

const add = (into: Map<string, number>, from: Map<string, number> | Record<string, number>) => {
  for (const [k, n] of from instanceof Map ? from : Object.entries(from)) into.set(k, (into.get(k) ?? 0) + n);
};

async function measureSize(
  url: string,
  store: PgStore,
  counter: StatementCounter,
  raw: pg.Client,
  n: number,
  metrics: Record<string, Sample>,
  values: Record<string, number>,
): Promise<void> {
  const tag = String(n);
  const half = Math.floor(n / 2);
  const rawTable = `raw_${n}`;
  await raw.query(
    `DROP TABLE IF EXISTS ${rawTable}, raw_branch_${n};` +
      `CREATE TABLE ${rawTable} (id bigserial PRIMARY KEY, parent bigint, ts bigint NOT NULL, kind text NOT NULL, label text, data text NOT NULL);` +
      `CREATE TABLE raw_branch_${n} (name text PRIMARY KEY, head bigint NOT NULL);`,
  );
  const insert = `INSERT INTO ${rawTable} (parent, ts, kind, label, data) VALUES ($1, $2, $3, $4, $5)`;

  // 1. The session, written through `Session` only: commitMany groups first (if any), then single commits.
  const singlyFrom = Number.isFinite(SINGLY) ? Math.max(0, Math.floor((n - SINGLY) / BLOCK) * BLOCK) : 0;
  progress(
    NAME,
    `${n} steps: ${singlyFrom > 0 ? `${singlyFrom} by commitMany in groups of ${BLOCK}, then ` : ""}${n - singlyFrom} by one commit each, blocks of ${BLOCK} followed by the raw inserts`,
  );
  const s = await Session.create(store, { title: `bench ${n}` });
  const body = bodyOf(s.tree).id;
  const commitUs: number[] = [];
  const insertUs: number[] = [];
  const ratios: number[] = [];
  const perCommit: number[] = [];
  const kinds = new Map<string, number>();
  let groupMs = 0;
  let groupRawMs = 0;
  let groupStatements = 0;
  let groups = 0;
  let halfEvent: EventMeta | undefined;
  let bytes = 0;
  let row = 0;
  const gen = steps(n);
  const t0 = performance.now();
  for (let done = 0; done < n; done += BLOCK) {
    const block: Step[] = [];
    for (let i = 0; i < BLOCK && done + i < n; i++) block.push(gen.next().value as Step);
    const from = s.head.depth;
    if (done < singlyFrom) {
      counter.reset();
      const a = performance.now();
      const metas = await s.commitMany(
        block.map((step) => ({
          change: (d: TreeDraft) => {
            d.appendChild(body, turnSpec(step));
          },
          label: "step",
        })),
      );
      const b = performance.now();
      groupStatements += counter.total;
      groups++;
      metas.forEach((m, i) => {
        if ((block[i] as Step).i === half - 1) halfEvent = m;
      });
      const events = await store.chain(s.head.id, from, block.length);
      const c = performance.now();
      const parents = events.map((_, i) => (row + i === 0 ? null : row + i));
      await raw.query(
        `INSERT INTO ${rawTable} (parent, ts, kind, label, data) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[])`,
        [parents, events.map((e) => e.ts), events.map((e) => e.kind), events.map((e) => e.label), events.map((e) => e.data)],
      );
      const d = performance.now();
      groupMs += b - a;
      groupRawMs += d - c;
      for (const e of events) bytes += Buffer.byteLength(e.data);
      row += events.length;
      continue;
    }
    const a = performance.now();
    for (const step of block) {
      counter.reset();
      const meta = await s.commit(stepOps(s.tree, step), { label: "step" });
      perCommit.push(counter.total);
      add(kinds, counter.kinds);
      if (step.i === half - 1) halfEvent = meta;
    }
    const b = performance.now();
    const events = await store.chain(s.head.id, from, block.length);
    const c = performance.now();
    for (const e of events) {
      await raw.query(insert, [row === 0 ? null : row, e.ts, e.kind, e.label, e.data]);
      row++;
    }
    const d = performance.now();
    for (const e of events) bytes += Buffer.byteLength(e.data);
    commitUs.push(((b - a) / block.length) * 1000);
    insertUs.push(((d - c) / block.length) * 1000);
    ratios.push((b - a) / (d - c));
  }
  values[`buildSeconds.${tag}`] = (performance.now() - t0) / 1000;
  if (halfEvent === undefined) throw new Error(`${n} steps: no event after step ${half}`);
  const rawRows = await raw.query(`SELECT count(*)::int AS n, max(id)::int AS last FROM ${rawTable}`);
  if (rawRows.rows[0]?.n !== n || rawRows.rows[0]?.last !== n || s.head.depth !== n + 1)
    throw new Error(`${n} steps: the raw table holds ${rawRows.rows[0]?.n} rows, the session's head is at depth ${s.head.depth}`);
  const halfRow = half; // step i is row i + 1
  values[`steps.${tag}`] = n;
  values[`singly.${tag}`] = n - singlyFrom;
  values[`bytesPerStep.${tag}`] = bytes / n;
  if (commitUs.length > 0) {
    metrics[`commit.${tag}`] = summarize(commitUs, "µs");
    metrics[`insert.${tag}`] = summarize(insertUs, "µs");
    values[`commitRatio.${tag}`] = median(ratios);
    values[`commitTailUs.${tag}`] = median(commitUs.slice(-TAIL_BLOCKS));
    values[`statementsPerCommit.${tag}`] = perCommit.reduce((x, y) => x + y, 0) / perCommit.length;
    values[`statementsPerCommitMedian.${tag}`] = median(perCommit);
    values[`statementsPerCommitMax.${tag}`] = Math.max(...perCommit);
    for (const [k, c] of kinds) values[`statements.commit.${k}.${tag}`] = c / perCommit.length;
  }
  if (groups > 0) {
    values[`groupUsPerStep.${tag}`] = (groupMs / singlyFrom) * 1000;
    values[`groupRawUsPerStep.${tag}`] = (groupRawMs / singlyFrom) * 1000;
    values[`statementsPerGroup.${tag}`] = groupStatements / groups;
  }
  progress(
    NAME,
    `${n} steps built in ${num(values[`buildSeconds.${tag}`] as number)} s; ` +
      (commitUs.length > 0
        ? `commit ${num(median(commitUs))} µs/step against raw ${num(median(insertUs))} µs (${num(median(ratios))}×), statements per commit ${num(values[`statementsPerCommit.${tag}`] as number)} (${[...kinds].map(([k, c]) => `${k} ${num(c / perCommit.length)}`).join(", ")}; max ${values[`statementsPerCommitMax.${tag}`]})`
        : "") +
      (groups > 0
        ? `; commitMany ${num((groupMs / singlyFrom) * 1000)} µs/step (${num(groupStatements / groups)} statements per group of ${BLOCK})`
        : ""),
  );
  await raw.query(`VACUUM ANALYZE ${rawTable}`);
  await s.close();

  // 2. Fresh processes, in rounds; round 0 is a warm-up (server caches, hint bits) and not kept.
  const ops = {
    resume: { strata: ["resume", url, SCHEMA, s.id], raw: ["raw-resume", url, rawTable, n] },
    all: { strata: ["all", url, SCHEMA, s.id], raw: ["raw-all", url, rawTable, n] },
    half: { strata: ["half", url, SCHEMA, s.id, Number(halfEvent.id)], raw: ["raw-half", url, rawTable, halfRow] },
    fork: { strata: ["fork", url, SCHEMA, s.id, Number(halfEvent.id)], raw: ["raw-fork", url, rawTable, halfRow] },
  } as const;
  type Op = keyof typeof ops;
  const got: Record<string, Probe[]> = {};
  progress(NAME, `${n} steps: ${PROBES} rounds of probes (+1 warm-up round)`);
  for (let round = 0; round <= PROBES; round++)
    for (const op of Object.keys(ops) as Op[]) {
      const order = round % 2 === 0 ? (["strata", "raw"] as const) : (["raw", "strata"] as const);
      for (const impl of order) {
        const p = probe(ops[op][impl]);
        if (round === 0) continue;
        const key = `${op}.${impl}`;
        (got[key] ??= []).push(p);
      }
      if (round === 0) progress(NAME, `${n} steps: warm-up ${op} done`);
    }

  // Every reader must have read the same content (else the comparison means nothing).
  const first = (op: Op, impl: "strata" | "raw") => (got[`${op}.${impl}`] as Probe[])[0] as Probe;
  for (const op of ["all", "half"] as const) {
    const want = (op === "all" ? n : half) * 3;
    for (const impl of ["strata", "raw"] as const)
      if (first(op, impl).messages !== want || first(op, impl).chars !== first(op, "raw").chars)
        throw new Error(
          `${op} at ${n} steps: ${impl} read ${first(op, impl).messages} messages / ${first(op, impl).chars} chars, raw ${first(op, "raw").chars} chars, expected ${want} messages`,
        );
  }
  if (first("resume", "strata").headDepth !== n + 1 || first("resume", "raw").rows !== Math.min(BLOCK, n))
    throw new Error(
      `resume at ${n} steps: strata opened depth ${first("resume", "strata").headDepth}, raw read ${first("resume", "raw").rows} rows`,
    );

  const list = (op: Op, impl: "strata" | "raw") => got[`${op}.${impl}`] as Probe[];
  const ms = (xs: readonly (number | undefined)[]) => summarize(xs.map(Number), "ms");
  for (const op of Object.keys(ops) as Op[]) {
    const st = list(op, "strata");
    const rw = list(op, "raw");
    metrics[`${op}.strata.${tag}`] = ms(st.map((p) => p.ms));
    metrics[`${op}.raw.${tag}`] = ms(rw.map((p) => p.ms));
    metrics[`${op}Connect.strata.${tag}`] = ms(st.map((p) => p.connectMs));
    metrics[`${op}Connect.raw.${tag}`] = ms(rw.map((p) => p.connectMs));
    values[`${op}Ratio.${tag}`] = median(st.map((p, i) => p.ms / (rw[i] as Probe).ms));
    values[`${op}Rss.strata.${tag}`] = median(st.map((p) => p.maxRssKb * 1024));
    values[`${op}Rss.raw.${tag}`] = median(rw.map((p) => p.maxRssKb * 1024));
    values[`${op}Bytes.raw.${tag}`] = median(rw.map((p) => p.open.bytes));
    values[`openStatements.${op}.${tag}`] = median(st.map((p) => p.open.statements));
    values[`openBytes.${op}.${tag}`] = median(st.map((p) => p.open.bytes));
    if (op !== "resume") {
      metrics[`${op}Open.strata.${tag}`] = ms(st.map((p) => p.openMs));
      metrics[`${op}Op.strata.${tag}`] = ms(st.map((p) => p.opMs));
    }
  }
  values[`resumeStatements.${tag}`] = values[`openStatements.resume.${tag}`] as number;
  for (const [k, c] of Object.entries(first("resume", "strata").open.kinds)) values[`statements.open.${k}.${tag}`] = c;
  metrics[`halfAt.strata.${tag}`] = ms(list("half", "strata").map((p) => p.atMs));
  values[`halfAtStatements.${tag}`] = median(list("half", "strata").map((p) => p.op?.statements ?? Number.NaN));
  values[`halfAtBytes.${tag}`] = median(list("half", "strata").map((p) => p.op?.bytes ?? Number.NaN));
  metrics[`forkOnly.strata.${tag}`] = ms(list("fork", "strata").map((p) => p.forkMs));
  metrics[`forkCommit.strata.${tag}`] = ms(list("fork", "strata").map((p) => p.commitMs));
  values[`forkStatements.${tag}`] = median(list("fork", "strata").map((p) => p.op?.statements ?? Number.NaN));
  values[`forkBytes.${tag}`] = median(list("fork", "strata").map((p) => p.op?.bytes ?? Number.NaN));
  values[`forkCommitStatements.${tag}`] = median(list("fork", "strata").map((p) => p.commit?.statements ?? Number.NaN));
  metrics[`forkWarm.strata.${tag}`] = ms(list("fork", "strata").map((p) => p.warmMs));
  metrics[`forkWarm.raw.${tag}`] = ms(list("fork", "raw").map((p) => p.warmMs));
  metrics[`forkWarmOnly.strata.${tag}`] = ms(list("fork", "strata").map((p) => p.warmForkMs));
  metrics[`storeFork.strata.${tag}`] = ms(list("fork", "strata").map((p) => p.storeForkMs));
  values[`forkWarmRatio.${tag}`] = median(
    list("fork", "strata").map((p, i) => (p.warmMs ?? Number.NaN) / ((list("fork", "raw")[i] as Probe).warmMs ?? Number.NaN)),
  );
  // Fork + its commit after the open, against the raw fork (which has no open).
  values[`forkOpRatio.${tag}`] = median(list("fork", "strata").map((p, i) => p.opMs / (list("fork", "raw")[i] as Probe).ms));
  progress(
    NAME,
    `${n} steps: resume ${num(median(list("resume", "strata").map((p) => p.ms)))} ms (raw ${num(median(list("resume", "raw").map((p) => p.ms)))} ms), ` +
      `all ${num(median(list("all", "strata").map((p) => p.ms)))} ms (${num(values[`allRatio.${tag}`] as number)}×), ` +
      `half ${num(median(list("half", "strata").map((p) => p.ms)))} ms (${num(values[`halfRatio.${tag}`] as number)}×), ` +
      `fork + commit ${num(median(list("fork", "strata").map((p) => p.opMs)))} ms (fork alone ${num(median(list("fork", "strata").map((p) => p.forkMs ?? Number.NaN)))} ms; warm fork ${num(median(list("fork", "strata").map((p) => p.warmForkMs ?? Number.NaN)))} ms, store.fork ${num(median(list("fork", "strata").map((p) => p.storeForkMs ?? Number.NaN)))} ms)`,
  );
}

async function measureAll(url: string, metrics: Record<string, Sample>, values: Record<string, number>): Promise<void> {
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  const store = await openPgStore(url, { schema: SCHEMA });
  const counter = new StatementCounter(store);
  try {
    // Warm-up of the writer (connections, JIT, prepared statements) on a session that is not measured.
    const warm = await Session.create(store, { title: "warm-up" });
    for (const step of steps(BLOCK)) await warm.commit(stepOps(warm.tree, step), { label: "step" });
    await warm.close();
    for (const n of SIZES) await measureSize(url, store, counter, raw, n, metrics, values);
    const first = SIZES[0] as number;
    for (const n of SIZES) {
      const tail = values[`commitTailUs.${n}`];
      const base = metrics[`commit.${first}`]?.median;
      if (tail !== undefined && base !== undefined) values[`commitScale.${n}`] = tail / base;
      values[`forkScale.${n}`] = (metrics[`forkOp.strata.${n}`] as Sample).median / (metrics[`forkOp.strata.${first}`] as Sample).median;
    }
  } finally {
    await store.close().catch(() => {});
    await raw.end().catch(() => {});
  }
}

/** The sizes a result holds, in order (from its values, so a saved result renders without env). */
function sizesOf(agg: Aggregate): number[] {
  return Object.keys(agg.values)
    .filter((k) => k.startsWith("steps."))
    .map((k) => Number(k.slice("steps.".length)))
    .sort((a, b) => a - b);
}

/** A plain figure: a count as a whole number, anything else to three digits. */
const per = (x: number) => (Number.isInteger(x) ? x.toLocaleString("en-US") : num(x));
const big = (n: number) => n.toLocaleString("en-US");

function kindsOf(agg: Aggregate, prefix: string, tag: string): string {
  return Object.keys(agg.values)
    .filter((k) => k.startsWith(prefix) && k.endsWith(`.${tag}`))
    .map((k) => `${k.slice(prefix.length, k.length - tag.length - 1)} ${value(agg, k, per)}`)
    .join(", ");
}

const mod: BenchModule = {
  title: "`Session` on PostgreSQL: append, resume, every message, state at N/2, fork",
  measure(): Promise<RunResult> {
    return onPgServer(NAME, measureAll);
  },
  render(agg: Aggregate): string {
    const sizes = sizesOf(agg);
    const sections = [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      "A private PostgreSQL server started by the benchmark (packages/store-postgres/test/pg-server.ts: 127.0.0.1, fsync on, `shared_buffers=128MB`), " +
        "one store schema holding a session per size, written and read only through the public API (`openPgStore`, `Session.create`/`open`, `commit`, `commitMany`, `at`, `fork`, `select`). " +
        `**One step = one event** (bench/api/workload.ts, issue 14's workload: ${sizes.map((n) => `${num(agg.values[`bytesPerStep.${n}`]?.median ?? Number.NaN)} B`).join(", ")} of payload per step). ` +
        "_Raw PostgreSQL_: a table per size, `raw_N(id bigserial primary key, parent bigint, ts, kind, label, data text)`, one row per event holding the payload strata stored (read back with `store.chain`), through `pg.Client`; its reads decode every row (`JSON.parse`, messages counted); a fork is one transaction of an event row and a branch row. " +
        `_Append_: the steps are committed one \`await session.commit\` at a time (${sizes.map((n) => `${per(agg.values[`singly.${n}`]?.median ?? Number.NaN)} of ${big(n)}`).join(", ")}; any before them built by \`commitMany\` in groups of ${BLOCK}, timed apart), in blocks of ${BLOCK}, each block followed by the raw single-row autocommit \`INSERT\`s of the same payloads; ratio per block. ` +
        "Statements are counted on the clients the store's pool hands out. " +
        `_Probes_: fresh processes (bench/postgres/pg-session-probe.ts), ${agg.metrics[`resume.strata.${sizes[0]}`]?.n ?? "?"} per operation, size and run after one untimed warm-up round, strata and raw alternating which goes first, ratios per round; modules imported and the connection opened before the clock (\`openPgStore\` — connect and schema check — for strata, \`connect\` for raw; shown apart). ` +
        "_Resume_: `Session.open` (ready to commit at the head); raw: the last 128 rows read and decoded — the log tail that a resume from the last snapshot folds (a snapshot every 128 events), which is the least a raw log needs to continue; the bytes each received are shown. " +
        '_Every message_: `Session.open` + `session.load()` + `session.select("assistant, args, output")`, each element\'s text; raw: every row. ' +
        "_State at N/2_: `Session.open` + `loadTree(await session.at(e))`, e the event after step N/2, + every message of that tree (over the asynchronous port a tree reads what was fetched: `loadTree` fetches its pages in one call and its texts in one per level, decision 0037); raw: the rows up to it. " +
        "_Fork_: `Session.open` + `session.fork(e)` + one `commit` on the fork (raw: its transaction, after its connect), then 5 more forks and commits in the same process (warm; raw: 5 more transactions), each followed by a `store.fork` alone (the one row). `session.fork` opens the new branch as a live session: it materializes the state at the fork point (the nearest snapshot's header and hot pages, and the events after it — up to 127 at a snapshot every 128) and its lifecycle work (L7); `store.fork` writes the branch row only.",
      "",
    ];
    for (const n of sizes) {
      const t = String(n);
      const group = agg.values[`groupUsPerStep.${t}`];
      const rows = [
        [
          "append one step (`session.commit`), per step",
          cell(agg, `commit.${t}`),
          cell(agg, `insert.${t}`),
          ratio(agg, `commitRatio.${t}`),
          "",
        ],
        ...(group === undefined
          ? []
          : [
              [
                `… building: \`commitMany\` of ${BLOCK} steps, per step (raw: one multi-row INSERT)`,
                `${value(agg, `groupUsPerStep.${t}`, per)} µs`,
                `${value(agg, `groupRawUsPerStep.${t}`, per)} µs`,
                "",
                "",
              ],
            ]),
        [
          "statements per commit: mean (median; max, a snapshot's commit)",
          `${value(agg, `statementsPerCommit.${t}`, per)} (${value(agg, `statementsPerCommitMedian.${t}`, per)}; ${value(agg, `statementsPerCommitMax.${t}`, per)})`,
          "1",
          "",
          "",
        ],
        [
          "ready resume (`Session.open`), fresh process",
          cell(agg, `resume.strata.${t}`),
          cell(agg, `resume.raw.${t}`),
          ratio(agg, `resumeRatio.${t}`),
          n === sizes[sizes.length - 1] ? `≤ ${RESUME_MS} ms` : "",
        ],
        [
          "… statements; bytes received",
          `${value(agg, `resumeStatements.${t}`, per)}; ${byteValue(agg, `openBytes.resume.${t}`)}`,
          `1; ${byteValue(agg, `resumeBytes.raw.${t}`)}`,
          "",
          "",
        ],
        [
          "… before the clock: `openPgStore` / `connect`",
          cell(agg, `resumeConnect.strata.${t}`),
          cell(agg, `resumeConnect.raw.${t}`),
          "",
          "",
        ],
        ["… peak RSS of the process", byteValue(agg, `resumeRss.strata.${t}`), byteValue(agg, `resumeRss.raw.${t}`), "", ""],
        ["open + every message with its content", cell(agg, `all.strata.${t}`), cell(agg, `all.raw.${t}`), ratio(agg, `allRatio.${t}`), ""],
        ["… of which the open", cell(agg, `allOpen.strata.${t}`), "", "", ""],
        ["… peak RSS of the process", byteValue(agg, `allRss.strata.${t}`), byteValue(agg, `allRss.raw.${t}`), "", ""],
        [
          "open + state at N/2 with content",
          cell(agg, `half.strata.${t}`),
          cell(agg, `half.raw.${t}`),
          ratio(agg, `halfRatio.${t}`),
          `≤ ${HALF_RATIO}× raw`,
        ],
        [
          "… of which `loadTree(at(e))`; its statements, bytes received",
          `${cell(agg, `halfAt.strata.${t}`)}; ${value(agg, `halfAtStatements.${t}`, per)}, ${byteValue(agg, `halfAtBytes.${t}`)}`,
          byteValue(agg, `halfBytes.raw.${t}`),
          "",
          "",
        ],
        [
          "fork at N/2 + one committed step (after the open)",
          cell(agg, `forkOp.strata.${t}`),
          cell(agg, `fork.raw.${t}`),
          ratio(agg, `forkOpRatio.${t}`),
          `≤ ${FORK_MS} ms`,
        ],
        [
          "… of which the fork; its statements, bytes received",
          `${cell(agg, `forkOnly.strata.${t}`)}; ${value(agg, `forkStatements.${t}`, per)}, ${byteValue(agg, `forkBytes.${t}`)}`,
          "",
          "",
          "",
        ],
        [
          "… of which the commit on the fork; its statements",
          `${cell(agg, `forkCommit.strata.${t}`)}; ${value(agg, `forkCommitStatements.${t}`, per)}`,
          "",
          "",
          "",
        ],
        ["… with the open before it", cell(agg, `fork.strata.${t}`), "", ratio(agg, `forkRatio.${t}`), ""],
        [
          "fork at N/2 + one committed step, warm (5 more in the same process, median)",
          cell(agg, `forkWarm.strata.${t}`),
          cell(agg, `forkWarm.raw.${t}`),
          ratio(agg, `forkWarmRatio.${t}`),
          "",
        ],
        ["… of which `session.fork`, warm", cell(agg, `forkWarmOnly.strata.${t}`), "", "", `≤ ${FORK_MS} ms`],
        ["`store.fork` alone (the one row), warm", cell(agg, `storeFork.strata.${t}`), "", "", ""],
      ];
      sections.push(
        table([`${big(n)} steps`, "strata", "raw PostgreSQL", "strata / raw", "goal"], rows, ["l", "r", "r", "r", "r"]),
        "",
        `Statements per commit by kind (notify: the wake-up for followers, \`pg_notify\`, sent after each commit; blobs and snapshots: the snapshot every 128 events): ${kindsOf(agg, "statements.commit.", t) || "–"}. Statements of a resume by kind: ${kindsOf(agg, "statements.open.", t) || "–"}. ` +
          `Built in ${value(agg, `buildSeconds.${t}`)} s.` +
          (group === undefined ? "" : ` Statements per \`commitMany\` of ${BLOCK}: ${value(agg, `statementsPerGroup.${t}`, per)}.`),
        "",
      );
    }
    return sections.join("\n").trimEnd();
  },
  verdicts(agg: Aggregate): string[] {
    const sizes = sizesOf(agg);
    const first = sizes[0] as number;
    const last = sizes[sizes.length - 1] as number;
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    const each = (k: string) => sizes.map((n) => ({ key: `${k}.${n}`, label: `${big(n)} steps` }));
    const forkMs = sizes.map((n) => med(agg, `forkOp.strata.${n}`));
    const warmFork = sizes.map((n) => med(agg, `forkWarmOnly.strata.${n}`));
    const resume = med(agg, `resume.strata.${last}`);
    return [
      line(
        resume <= RESUME_MS,
        `ready resume (\`Session.open\`, fresh process, connection opened before the clock) ≤ ${RESUME_MS} ms at ${big(last)} steps: ${cell(agg, `resume.strata.${last}`)} ` +
          `(${sizes.map((n) => `${big(n)} steps ${num(med(agg, `resume.strata.${n}`))} ms`).join(", ")}; raw last 128 rows ${num(med(agg, `resume.raw.${last}`))} ms)`,
      ),
      targetLine(agg, `open + state at N/2 with content ≤ ${HALF_RATIO}× a raw read of the same rows`, each("halfRatio"), "<=", HALF_RATIO),
      line(
        warmFork.every((ms) => ms <= FORK_MS),
        `\`session.fork\` at N/2 ≤ ${FORK_MS} ms at every size, warm (a process that has forked before): ${sizes
          .map((n, i) => `${big(n)} steps ${num(warmFork[i] as number)} ms`)
          .join(", ")}; \`store.fork\` alone (one row) ${num(med(agg, `storeFork.strata.${last}`))} ms at ${big(last)}`,
      ),
      line(
        forkMs.every((ms) => ms <= FORK_MS),
        `fork at N/2 + one committed step ≤ ${FORK_MS} ms at every size, the first in a fresh process (after the open; raw ${num(med(agg, `fork.raw.${last}`))} ms): ${sizes
          .map((n, i) => `${big(n)} steps ${num(forkMs[i] as number)} ms`)
          .join(
            ", ",
          )} (${big(last)}/${big(first)}: ${num(med(agg, `forkScale.${last}`))}×; the fork alone ${num(med(agg, `forkOnly.strata.${last}`))} ms at ${big(last)})`,
      ),
      `Statements per \`session.commit\` (per agent turn: the pg-agent benchmark) ${sizes
        .map((n) => `${value(agg, `statementsPerCommit.${n}`, per)} at ${big(n)}`)
        .join(", ")} (mean; a snapshot's commit ${value(agg, `statementsPerCommitMax.${last}`, per)}), per resume ${sizes
        .map((n) => `${value(agg, `resumeStatements.${n}`, per)} at ${big(n)}`)
        .join(", ")}.`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
