/**
 * PostgreSQL store benchmark (issue 15): the strata event log on PostgreSQL (`@strata/store-postgres`,
 * the asynchronous port, only its public API plus its pool for counting statements) next to plain
 * `INSERT`s and `SELECT`s through `pg` on the same private server, in the same process and run.
 * The server is started here (`startPgServer` of packages/store-postgres/test/pg-server.ts, fsync on)
 * and stopped at the end. One step = one event: the `{"ops":[…]}` payload of bench/api/workload.ts
 * (a `<turn>` with a 380 B assistant text, ~300 B of JSON arguments and a 1–2 KB tool output).
 *
 * - **append**: N steps (BENCH_PG_STEPS, default 2,000) appended one event at a time, each awaited,
 *   the head taken from the previous result, in blocks of 100 steps; after each block the **raw**
 *   baseline inserts the same payloads into `raw(id bigserial primary key, session text, depth int,
 *   data text)`, one parameterized single-row `INSERT` in autocommit per step through one
 *   `pg.Client`. Per-append latency (median, p90) of each; the strata/raw ratio is per block.
 *   Statements per append: every statement the store's pool sends during the appends, divided by N.
 * - **bytes**: `pg_total_relation_size` (heap, TOAST, indexes) of the schema's tables, grown during
 *   the appends, per step; the raw table's likewise. Rows per step likewise (`count(*)`).
 * - **read**: `chainData(head)` of the N-step session, 5 interleaved rounds with the raw
 *   `SELECT data FROM raw WHERE session = $1 ORDER BY depth`; ratio per round.
 * - **fork**: `fork` at the event after step N/2 + one `append` on the fork, 20 forks (distinct
 *   names), each followed by the raw fork: a transaction of a branch row and one event row. The rows
 *   one fork writes (and its first append) are counted in every table of the schema.
 * - **concurrent**: 8 sessions, each appended by its own async loop (a store of its own schema,
 *   `max: 8` connections), against 8 raw inserters (8 `pg.Client`s), in 5 interleaved rounds;
 *   aggregate events/s of each, ratio per round.
 *
 * Run: npx tsx bench/run.ts postgres   (by hand: BENCH_PG_STEPS=500 node --import tsx --conditions=@strata/source bench/postgres/pg.ts)
 */
import type { EventId, EventInput, SessionId } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";
import pg from "pg";
import { rawPayload, steps } from "../api/workload.ts";
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

const NAME = "pg";
const STEPS = Number(process.env.BENCH_PG_STEPS ?? 2000);
const BLOCK = 100;
const READS = 5;
const FORKS = 20;
const WRITERS = 8;
const CONC_ROUNDS = 5;
/** Steps per writer and round of the concurrent phase. */
const CONC_STEPS = Math.max(10, Math.floor(STEPS / 40));
const WARMUP = 50;
/** The tables of a store's schema whose rows and bytes are counted. */
const TABLES = ["events", "segments", "branches", "snapshots", "blobs", "sessions"] as const;
const FORK_TABLES = ["branches", "events", "segments", "snapshots", "blobs"] as const;

/** A store event of one step. */
const event = (data: string): EventInput => ({ kind: "patch@1", label: "x", data });

/** `{ table: rows }` of a store's schema. */
async function rowCounts(admin: pg.Client, schema: string, tables: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) {
    const r = await admin.query(`SELECT count(*)::int AS n FROM "${schema}"."${t}"`);
    out[t] = Number(r.rows[0]?.n);
  }
  return out;
}

/** Bytes (`pg_total_relation_size`) of every table of `schema`, and of its events table's parts. */
async function sizes(
  admin: pg.Client,
  schema: string,
): Promise<Map<string, { total: number; heap: number; toast: number; indexes: number }>> {
  const r = await admin.query(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::bigint AS total, pg_relation_size(c.oid)::bigint AS heap,
            pg_indexes_size(c.oid)::bigint AS indexes,
            COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0)::bigint AS toast
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  return new Map(
    r.rows.map((row) => [
      row.name as string,
      { total: Number(row.total), heap: Number(row.heap), toast: Number(row.toast), indexes: Number(row.indexes) },
    ]),
  );
}

const sumTotal = (m: Map<string, { total: number }>, only?: string): number =>
  [...m.entries()].filter(([k]) => only === undefined || k === only).reduce((a, [, v]) => a + v.total, 0);

async function measureAll(url: string, metrics: Record<string, Sample>, values: Record<string, number>): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(
    "CREATE TABLE raw (id bigserial PRIMARY KEY, session text, depth int, data text);" +
      "CREATE TABLE raw_warm (id bigserial PRIMARY KEY, session text, depth int, data text);" +
      "CREATE TABLE raw_branch (session text NOT NULL, name text NOT NULL, head bigint NOT NULL, PRIMARY KEY (session, name));" +
      "CREATE TABLE raw_conc (id bigserial PRIMARY KEY, session text, depth int, data text);",
  );
  const raw = new pg.Client({ connectionString: url });
  await raw.connect();
  const insert = "INSERT INTO raw (session, depth, data) VALUES ($1, $2, $3)";
  const store = await openPgStore(url, { schema: "bench_pg" });
  const counter = new StatementCounter(store);
  const conc = await openPgStore(url, { schema: "bench_conc", max: WRITERS });
  const concCounter = new StatementCounter(conc);
  const concClients: pg.Client[] = [];
  try {
    const payloads = [...steps(STEPS)].map(rawPayload);
    values.steps = STEPS;
    values.concSteps = CONC_STEPS;
    values.payloadBytesPerStep = payloads.reduce((a, p) => a + Buffer.byteLength(p), 0) / STEPS;

    // Warm-up (connections, JIT, plans) on a session and a table that are not measured.
    progress(NAME, `warm-up: ${WARMUP} appends and inserts`);
    const warm = await store.createSession({ title: "warm-up", genesis: { kind: "genesis@1", data: "{}" } });
    let warmHead = warm.genesis.id;
    for (let i = 0; i < WARMUP; i++) {
      const data = payloads[i % STEPS] as string;
      warmHead = ((await store.append(warm.session.id, "main", warmHead, [event(data)]))[0] as { id: EventId }).id;
      await raw.query("INSERT INTO raw_warm (session, depth, data) VALUES ($1, $2, $3)", ["warm", i + 2, data]);
    }

    // 1. Appends, block by block, each block followed by the raw inserts of the same payloads.
    progress(NAME, `${STEPS} appends, blocks of ${BLOCK}, each followed by the raw inserts`);
    const { session, genesis } = await store.createSession({ title: "bench", genesis: { kind: "genesis@1", data: "{}" } });
    // What the appends add (the session's creation rows are not part of a step).
    const sizesBefore = await sizes(admin, "bench_pg");
    const rawBefore = await sizes(admin, "public");
    const rowsBefore = await rowCounts(admin, "bench_pg", TABLES);
    const sid = session.id;
    const rawSession = `raw-${sid}`;
    const ids: EventId[] = [genesis.id];
    const strataLat: number[] = [];
    const rawLat: number[] = [];
    const blockRatios: number[] = [];
    const blockTimeRatios: number[] = [];
    let head = genesis.id;
    let cpuStrata = 0;
    let cpuRaw = 0;
    let statements = 0;
    const kinds = new Map<string, number>();
    for (let done = 0; done < STEPS; done += BLOCK) {
      const end = Math.min(STEPS, done + BLOCK);
      counter.reset();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = done; i < end; i++) {
        const a = performance.now();
        head = ((await store.append(sid, "main", head, [event(payloads[i] as string)]))[0] as { id: EventId }).id;
        strataLat.push(performance.now() - a);
        ids.push(head);
      }
      const t1 = performance.now();
      const cpu1 = process.cpuUsage();
      statements += counter.total;
      for (const [k, n] of counter.kinds) kinds.set(k, (kinds.get(k) ?? 0) + n);
      for (let i = done; i < end; i++) {
        const a = performance.now();
        await raw.query(insert, [rawSession, i + 2, payloads[i]]);
        rawLat.push(performance.now() - a);
      }
      const t2 = performance.now();
      const cpu2 = process.cpuUsage();
      cpuStrata += cpu1.user + cpu1.system - cpu0.user - cpu0.system;
      cpuRaw += cpu2.user + cpu2.system - cpu1.user - cpu1.system;
      // Paired per block: the block's median latencies (robust to the fsync spikes), and its total times.
      blockRatios.push(median(strataLat.slice(done)) / median(rawLat.slice(done)));
      blockTimeRatios.push((t1 - t0) / (t2 - t1));
    }
    metrics["append.strata"] = summarize(strataLat, "ms");
    metrics["append.raw"] = summarize(rawLat, "ms");
    values.appendRatio = median(blockRatios);
    values.appendTimeRatio = median(blockTimeRatios);
    values["cpuPerAppend.strata"] = cpuStrata / 1000 / STEPS;
    values["cpuPerAppend.raw"] = cpuRaw / 1000 / STEPS;
    values["appendP90.strata"] = (metrics["append.strata"] as Sample).p90;
    values["appendP90.raw"] = (metrics["append.raw"] as Sample).p90;
    values.statementsPerAppend = statements / STEPS;
    for (const [k, n] of kinds) values[`statements.append.${k}`] = n / STEPS;
    progress(NAME, `statements per append ${num(statements / STEPS)}: ${[...kinds].map(([k, n]) => `${k} ${num(n / STEPS)}`).join(", ")}`);

    // 4. Bytes and rows the appends added, per step.
    const sizesAfter = await sizes(admin, "bench_pg");
    const rawAfter = await sizes(admin, "public");
    const rowsAfter = await rowCounts(admin, "bench_pg", TABLES);
    values["bytesPerStep.strata"] = (sumTotal(sizesAfter) - sumTotal(sizesBefore)) / STEPS;
    values["bytesPerStep.raw"] = (sumTotal(rawAfter, "raw") - sumTotal(rawBefore, "raw")) / STEPS;
    values.bytesRatio = (values["bytesPerStep.strata"] as number) / (values["bytesPerStep.raw"] as number);
    const ev0 = sizesBefore.get("events") ?? { total: 0, heap: 0, toast: 0, indexes: 0 };
    const ev1 = sizesAfter.get("events") ?? { total: 0, heap: 0, toast: 0, indexes: 0 };
    values["bytes.events.heap"] = (ev1.heap - ev0.heap) / STEPS;
    values["bytes.events.toast"] = (ev1.toast - ev0.toast) / STEPS;
    values["bytes.events.indexes"] = (ev1.indexes - ev0.indexes) / STEPS;
    values["bytes.other"] = (sumTotal(sizesAfter) - sumTotal(sizesBefore) - (ev1.total - ev0.total)) / STEPS;
    const r0 = rawBefore.get("raw") ?? { total: 0, heap: 0, toast: 0, indexes: 0 };
    const r1 = rawAfter.get("raw") ?? { total: 0, heap: 0, toast: 0, indexes: 0 };
    values["bytes.raw.heap"] = (r1.heap - r0.heap) / STEPS;
    values["bytes.raw.toast"] = (r1.toast - r0.toast) / STEPS;
    values["bytes.raw.indexes"] = (r1.indexes - r0.indexes) / STEPS;
    let rows = 0;
    for (const t of TABLES) rows += (rowsAfter[t] as number) - (rowsBefore[t] as number);
    values["rowsPerStep.strata"] = rows / STEPS;
    values["rowsPerStep.events"] = ((rowsAfter.events as number) - (rowsBefore.events as number)) / STEPS;
    const rawRows = await admin.query("SELECT count(*)::int AS n FROM raw WHERE session = $1", [rawSession]);
    values["rowsPerStep.raw"] = Number(rawRows.rows[0]?.n) / STEPS;

    // 5. Full history read, interleaved with the raw read of the same payloads.
    progress(NAME, `full history read: ${READS} rounds (+1 warm-up)`);
    const readStrata: number[] = [];
    const readRaw: number[] = [];
    const readRatios: number[] = [];
    for (let round = 0; round <= READS; round++) {
      const a = performance.now();
      const got = await store.chainData(head);
      const b = performance.now();
      const rawRowsRead = (await raw.query("SELECT data FROM raw WHERE session = $1 ORDER BY depth", [rawSession])).rows;
      const c = performance.now();
      if (got.length !== STEPS + 1 || rawRowsRead.length !== STEPS)
        throw new Error(`read: strata returned ${got.length} payloads, raw ${rawRowsRead.length} rows, expected ${STEPS + 1} and ${STEPS}`);
      if (round === 0)
        for (let i = 0; i < STEPS; i++)
          if (got[i + 1] !== payloads[i] || rawRowsRead[i]?.data !== payloads[i]) throw new Error(`read: payload ${i} differs`);
      if (round === 0) continue;
      readStrata.push(b - a);
      readRaw.push(c - b);
      readRatios.push((b - a) / (c - b));
    }
    metrics["read.strata"] = summarize(readStrata, "ms");
    metrics["read.raw"] = summarize(readRaw, "ms");
    values.readRatio = median(readRatios);

    // 3. Forks at N/2 + one append on each, interleaved with the raw fork.
    const half = Math.floor(STEPS / 2);
    const at = ids[half] as EventId; // the event after step N/2
    const forkData = payloads[half] as string;
    const rawAt = await admin.query("SELECT id FROM raw WHERE session = $1 AND depth = $2", [rawSession, half + 1]);
    const rawAtId = Number(rawAt.rows[0]?.id);
    // The rows one fork writes, and then its first append (untimed, counted apart).
    const c0 = await rowCounts(admin, "bench_pg", FORK_TABLES);
    counter.reset();
    await store.fork(sid, at, "counted");
    values.forkStatements = counter.total;
    const c1 = await rowCounts(admin, "bench_pg", FORK_TABLES);
    counter.reset();
    await store.append(sid, "counted", at, [event(forkData)]);
    values.forkAppendStatements = counter.total;
    const forkAppendKinds = [...counter.kinds];
    const c2 = await rowCounts(admin, "bench_pg", FORK_TABLES);
    for (const t of FORK_TABLES) {
      values[`forkRows.${t}`] = (c1[t] as number) - (c0[t] as number);
      values[`forkAppendRows.${t}`] = (c2[t] as number) - (c1[t] as number);
    }
    progress(
      NAME,
      `fork: ${values.forkStatements} statement(s), rows ${FORK_TABLES.map((t) => `${t} +${values[`forkRows.${t}`]}`).join(", ")}; ` +
        `first append on it: ${values.forkAppendStatements} statements (${forkAppendKinds.map(([k, n]) => `${k} ${n}`).join(", ")}), rows ${FORK_TABLES.map((t) => `${t} +${values[`forkAppendRows.${t}`]}`).join(", ")}`,
    );
    progress(NAME, `${FORKS} forks at step ${half} + one append each (+2 warm-up), each followed by the raw fork`);
    const forkTotal: number[] = [];
    const forkOnly: number[] = [];
    const forkAppend: number[] = [];
    const forkRaw: number[] = [];
    const forkRatios: number[] = [];
    for (let i = -2; i < FORKS; i++) {
      const name = `fork-${i + 2}`;
      const a = performance.now();
      await store.fork(sid, at, name);
      const b = performance.now();
      await store.append(sid, name, at, [event(forkData)]);
      const c = performance.now();
      await raw.query("BEGIN");
      const ins = await raw.query("INSERT INTO raw (session, depth, data) VALUES ($1, $2, $3) RETURNING id", [
        `${rawSession}/${name}`,
        half + 2,
        forkData,
      ]);
      await raw.query("INSERT INTO raw_branch (session, name, head) VALUES ($1, $2, $3)", [rawSession, name, ins.rows[0]?.id ?? rawAtId]);
      await raw.query("COMMIT");
      const d = performance.now();
      if (i < 0) continue;
      forkOnly.push(b - a);
      forkAppend.push(c - b);
      forkTotal.push(c - a);
      forkRaw.push(d - c);
      forkRatios.push((c - a) / (d - c));
    }
    metrics["fork.strata"] = summarize(forkTotal, "ms");
    metrics["forkOnly.strata"] = summarize(forkOnly, "ms");
    metrics["forkAppend.strata"] = summarize(forkAppend, "ms");
    metrics["fork.raw"] = summarize(forkRaw, "ms");
    values.forkRatio = median(forkRatios);

    // 2. Concurrent writers: 8 sessions of their own, 8 async loops; 8 raw inserters.
    progress(NAME, `${WRITERS} concurrent writers: ${CONC_ROUNDS} rounds of ${CONC_STEPS} steps each (+1 warm-up)`);
    const writers: { id: SessionId; head: EventId }[] = [];
    for (let w = 0; w < WRITERS; w++) {
      const s = await conc.createSession({ title: `writer ${w}`, genesis: { kind: "genesis@1", data: "{}" } });
      writers.push({ id: s.session.id, head: s.genesis.id });
    }
    for (let w = 0; w < WRITERS; w++) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      concClients.push(c);
    }
    const concStrata: number[] = [];
    const concRaw: number[] = [];
    const concRatios: number[] = [];
    let concStatements = 0;
    let concEvents = 0;
    let concCpuStrata = 0;
    let concCpuRaw = 0;
    const depth = new Array<number>(WRITERS).fill(1);
    for (let round = 0; round <= CONC_ROUNDS; round++) {
      const from = (round * CONC_STEPS) % STEPS;
      const data = (k: number) => payloads[(from + k) % STEPS] as string;
      concCounter.reset();
      const cpu0 = process.cpuUsage();
      const a = performance.now();
      await Promise.all(
        writers.map(async (w) => {
          for (let k = 0; k < CONC_STEPS; k++)
            w.head = ((await conc.append(w.id, "main", w.head, [event(data(k))]))[0] as { id: EventId }).id;
        }),
      );
      const b = performance.now();
      const cpu1 = process.cpuUsage();
      if (round > 0) {
        concStatements += concCounter.total;
        concEvents += WRITERS * CONC_STEPS;
        concCpuStrata += cpu1.user + cpu1.system - cpu0.user - cpu0.system;
      }
      await Promise.all(
        concClients.map(async (c, w) => {
          for (let k = 0; k < CONC_STEPS; k++)
            await c.query("INSERT INTO raw_conc (session, depth, data) VALUES ($1, $2, $3)", [`w${w}`, ++(depth[w] as number), data(k)]);
        }),
      );
      const c = performance.now();
      const cpu2 = process.cpuUsage();
      if (round === 0) continue;
      concCpuRaw += cpu2.user + cpu2.system - cpu1.user - cpu1.system;
      const sRate = (WRITERS * CONC_STEPS) / ((b - a) / 1000);
      const rRate = (WRITERS * CONC_STEPS) / ((c - b) / 1000);
      concStrata.push(sRate);
      concRaw.push(rRate);
      concRatios.push(sRate / rRate);
    }
    metrics["conc.strata"] = summarize(concStrata, "events/s");
    metrics["conc.raw"] = summarize(concRaw, "events/s");
    values.concRatio = median(concRatios);
    values.concStatementsPerAppend = concStatements / concEvents;
    values["concCpuPerAppend.strata"] = concCpuStrata / 1000 / concEvents;
    values["concCpuPerAppend.raw"] = concCpuRaw / 1000 / concEvents;
    const concLog = await conc.log(writers[0]?.id as SessionId, { branch: "main", limit: 1, reverse: true });
    if (concLog[0]?.depth !== 1 + (CONC_ROUNDS + 1) * CONC_STEPS)
      throw new Error(`concurrent: writer 0 ended at depth ${concLog[0]?.depth}, expected ${1 + (CONC_ROUNDS + 1) * CONC_STEPS}`);
  } finally {
    for (const c of concClients) await c.end().catch(() => {});
    await conc.close().catch(() => {});
    await store.close().catch(() => {});
    await raw.end().catch(() => {});
    await admin.end().catch(() => {});
  }
}

/** A plain figure: a count as a whole number, anything else to three digits. */
const per = (x: number) => (Number.isInteger(x) ? x.toLocaleString("en-US") : num(x));

const mod: BenchModule = {
  title: "Appends, concurrent writers, forks, bytes and reads on PostgreSQL",
  measure(): Promise<RunResult> {
    return onPgServer(NAME, measureAll);
  },
  render(agg: Aggregate): string {
    const n = med(agg, "steps");
    const kinds = Object.keys(agg.values)
      .filter((k) => k.startsWith("statements.append."))
      .map((k) => `${k.slice("statements.append.".length)} ${value(agg, k, per)}`)
      .join(", ");
    const forkRows = FORK_TABLES.map((t) => `${t} +${value(agg, `forkRows.${t}`, per)}`).join(", ");
    const forkAppendRows = FORK_TABLES.map((t) => `${t} +${value(agg, `forkAppendRows.${t}`, per)}`).join(", ");
    const rows = [
      [
        "append one step (`append`, awaited), per append: median (p10–p90)",
        cell(agg, "append.strata"),
        cell(agg, "append.raw"),
        ratio(agg, "appendRatio"),
        "≤ 1.5× raw",
      ],
      ["… p90 per append, ms", value(agg, "appendP90.strata", per), value(agg, "appendP90.raw", per), "", ""],
      ["… a whole block's time (mean per append)", "", "", ratio(agg, "appendTimeRatio"), ""],
      ["… CPU time of this process per append, ms", value(agg, "cpuPerAppend.strata", per), value(agg, "cpuPerAppend.raw", per), "", ""],
      ["statements per append", value(agg, "statementsPerAppend", per), "1", "", "≤ 2 (ideally 1)"],
      [`${WRITERS} concurrent writers (sessions), aggregate`, cell(agg, "conc.strata"), cell(agg, "conc.raw"), ratio(agg, "concRatio"), ""],
      ["… statements per append", value(agg, "concStatementsPerAppend", per), "1", "", ""],
      [
        "… CPU time of this process per append, ms",
        value(agg, "concCpuPerAppend.strata", per),
        value(agg, "concCpuPerAppend.raw", per),
        "",
        "",
      ],
      ["fork at N/2 + one append on it", cell(agg, "fork.strata"), cell(agg, "fork.raw"), ratio(agg, "forkRatio"), "≤ 5 ms"],
      ["… of which the fork", cell(agg, "forkOnly.strata"), "", "", ""],
      ["… of which the first append on the fork", cell(agg, "forkAppend.strata"), "", "", ""],
      [
        "bytes per step (tables, TOAST, indexes)",
        byteValue(agg, "bytesPerStep.strata"),
        byteValue(agg, "bytesPerStep.raw"),
        ratio(agg, "bytesRatio"),
        "",
      ],
      ["rows per step", value(agg, "rowsPerStep.strata", per), value(agg, "rowsPerStep.raw", per), "", ""],
      ["full history read (`chainData(head)`)", cell(agg, "read.strata"), cell(agg, "read.raw"), ratio(agg, "readRatio"), ""],
    ];
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `A private PostgreSQL server started by the benchmark (packages/store-postgres/test/pg-server.ts: 127.0.0.1, fsync on, \`shared_buffers=128MB\`), ` +
        `${per(n)} steps of ${value(agg, "payloadBytesPerStep", (x) => `${num(x)} B`)} of payload each (bench/api/workload.ts: one step = one event). ` +
        "Only the public API is timed (`openPgStore`, `append`, `fork`, `chainData`); statements are counted on the clients the store's pool hands out. " +
        "_Raw_: a plain table `raw(id bigserial primary key, session text, depth int, data text)` (no other index) through `pg.Client`: one parameterized single-row `INSERT` in autocommit per step on one connection; " +
        "the read is `SELECT data FROM raw WHERE session = $1 ORDER BY depth`; a fork is a transaction of one event row and one row of a branch table. " +
        `_Append_: each append awaited, the head from the previous result, in blocks of ${BLOCK} steps each followed by the raw inserts of the same payloads (latencies per call; the ratio is the median over blocks of the block's median strata latency ÷ its median raw latency, and below it the same for the blocks' total times, which the fsync spikes of either side weigh on; CPU time is \`process.cpuUsage()\` of the benchmark's process, client side only). ` +
        `_Concurrent_: ${WRITERS} sessions in a schema of their own, each appended by its own async loop on a store opened with \`max: ${WRITERS}\`, against ${WRITERS} \`pg.Client\`s inserting in parallel; ${agg.metrics["conc.strata"]?.n ?? "?"} rounds of ${WRITERS} × ${value(agg, "concSteps", per)} events, aggregate events/s, ratio strata ÷ raw per round (higher is better). ` +
        `_Fork_: ${agg.metrics["fork.strata"]?.n ?? "?"} forks (distinct names) at the event after step N/2, each with one append on the fork, each followed by the raw fork. ` +
        "_Bytes_: growth of `pg_total_relation_size` of the schema's tables (heap, TOAST, indexes) during the appends, per step; the raw table's likewise. " +
        `_Read_: ${agg.metrics["read.strata"]?.n ?? "?"} interleaved rounds after a warm-up, the payloads checked against the raw rows.`,
      "",
      table([`${per(n)} steps`, "strata", "raw PostgreSQL", "strata / raw", "goal"], rows, ["l", "r", "r", "r", "r"]),
      "",
      `Statements per append by kind: ${kinds}. Rows one fork writes: ${forkRows} (${value(agg, "forkStatements", per)} statement); ` +
        `its first append then writes ${forkAppendRows} (${value(agg, "forkAppendStatements", per)} statements). ` +
        `Bytes per step of the events table: heap ${byteValue(agg, "bytes.events.heap")}, TOAST ${byteValue(agg, "bytes.events.toast")}, indexes ${byteValue(agg, "bytes.events.indexes")}; other tables ${byteValue(agg, "bytes.other")}. ` +
        `Raw table: heap ${byteValue(agg, "bytes.raw.heap")}, TOAST ${byteValue(agg, "bytes.raw.toast")}, index ${byteValue(agg, "bytes.raw.indexes")}.`,
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    const stmts = med(agg, "statementsPerAppend");
    const fork = med(agg, "fork.strata");
    const others = FORK_TABLES.filter((t) => t !== "branches").map((t) => agg.values[`forkRows.${t}`]?.hi ?? Number.NaN);
    const branchRows = agg.values["forkRows.branches"];
    const oneRow = branchRows !== undefined && branchRows.lo === 1 && branchRows.hi === 1 && others.every((x) => x === 0);
    return [
      targetLine(
        agg,
        "append one step on PostgreSQL ≤ 1.5× a raw single-row INSERT on the same server",
        [{ key: "appendRatio", label: "per block" }],
        "<=",
        1.5,
      ),
      line(stmts <= 2, `statements per append ≤ 2 (ideally 1): ${value(agg, "statementsPerAppend", per)}`),
      line(fork <= 5, `fork at N/2 + one append on the fork ≤ 5 ms: ${cell(agg, "fork.strata")}`),
      line(
        oneRow,
        `a fork writes exactly one row (in branches): ${FORK_TABLES.map((t) => `${t} +${value(agg, `forkRows.${t}`, per)}`).join(", ")}`,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
