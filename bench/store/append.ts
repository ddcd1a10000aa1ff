/**
 * Store benchmark 1 — append cost and bytes on disk (issue 3), for sessions of 1,000, 10,000 and
 * 100,000 agent steps (three events each; ~2.7 KB per step, bench/lib/agent.ts).
 *
 * In one process, per size N:
 * - **engine**: the engine's write path (`Journal.commit`: validate, append with compare-and-swap,
 *   fold, snapshot every K events) builds database A, timed in blocks of 250 steps, each block
 *   followed by the **raw** baseline inserting the same events into a plain table (one row per
 *   event, WAL, same synchronous, one statement per event) — the engine/raw ratio is per block.
 * - **store**: `store.append` of the same payloads into database B, block by block, interleaved
 *   with the raw baseline again and a **JSONL** append (one `write` per event, no fsync — the
 *   NORMAL-durability analogue) of the same events.
 * - **bytes**: file sizes after a WAL checkpoint, per step, A (snapshots included) vs raw.
 * Per-event cost is the median over blocks; flatness is the per-event cost of the last 10 blocks
 * at N versus the 1,000-step figure.
 *
 * Run: npx tsx bench/run.ts append
 */
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Journal } from "@strata/engine/internal";
import { type EventInput, openStore, type SqliteStore } from "@strata/store";
import { commitStep, eventsOf, RawLog, toInput } from "../lib/agent.ts";
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
import { bytes, median, num, rng, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "append";
const SIZES = (process.env.BENCH_STEPS ?? "1000,10000,100000").split(",").map(Number);
const BLOCK = 250;

function fileSize(path: string): number {
  let n = 0;
  for (const f of [path, `${path}-wal`]) {
    try {
      n += statSync(f).size;
    } catch {
      // no WAL file: checkpointed away
    }
  }
  return n;
}

function measureSize(steps: number, dir: string, metrics: Record<string, Sample>, values: Record<string, number>): void {
  const tag = String(steps);
  const r = rng(11);
  // A: the engine builds the session; each block is followed by the raw baseline on the same events.
  const pathA = join(dir, `a-${tag}.db`);
  const storeA = openStore(pathA);
  const { journal } = Journal.create(storeA, { title: "bench" });
  const raw1 = new RawLog(join(dir, `raw1-${tag}.db`));
  const engineBlocks: number[] = [];
  const rawBlocks1: number[] = [];
  const engineRatios: number[] = [];
  for (let done = 0; done < steps; done += BLOCK) {
    const from = journal.head.id;
    const t0 = performance.now();
    for (let i = done; i < Math.min(steps, done + BLOCK); i++) commitStep(journal, i, r);
    const t1 = performance.now();
    const events = storeA.chain(journal.head.id, storeA.eventMeta(from)?.depth ?? 1).map(toInput);
    const t2 = performance.now();
    for (const e of events) raw1.append(journal.session, e);
    const t3 = performance.now();
    const per = (t1 - t0) / events.length;
    const perRaw = (t3 - t2) / events.length;
    engineBlocks.push(per * 1000);
    rawBlocks1.push(perRaw * 1000);
    engineRatios.push(per / perRaw);
  }
  (storeA as SqliteStore).database.pragma("wal_checkpoint(TRUNCATE)");
  raw1.db.pragma("wal_checkpoint(TRUNCATE)");
  values[`bytesPerStep.engine.${tag}`] = fileSize(pathA) / steps;
  values[`bytesPerStep.raw.${tag}`] = fileSize(raw1.path) / steps;
  values[`bytesRatio.${tag}`] = fileSize(pathA) / fileSize(raw1.path);
  const db = (storeA as SqliteStore).database;
  const tableBytes = (names: string[]) =>
    Number(
      db
        .prepare(`SELECT sum(pgsize) FROM dbstat WHERE name IN (${names.map(() => "?").join(",")})`)
        .pluck()
        .get(...names) ?? 0,
    );
  values[`bytes.events.${tag}`] = tableBytes(["events", "events_chain"]) / steps;
  values[`bytes.blobs.${tag}`] = tableBytes(["blobs", "sqlite_autoindex_blobs_1"]) / steps;
  values[`bytes.snapshots.${tag}`] = tableBytes(["snapshots", "snapshots_chain"]) / steps;
  metrics[`engine.${tag}`] = summarize(engineBlocks, "µs");
  metrics[`raw1.${tag}`] = summarize(rawBlocks1, "µs");
  values[`engineRatio.${tag}`] = median(engineRatios);
  values[`engineTail.${tag}`] = median(engineBlocks.slice(-10));

  // B: the store alone appends the same payloads, interleaved with the raw baseline and JSONL.
  const pathB = join(dir, `b-${tag}.db`);
  const storeB = openStore(pathB);
  const { session, genesis } = storeB.createSession({ title: "bench", genesis: { kind: "genesis@1", data: "{}" } });
  const raw2 = new RawLog(join(dir, `raw2-${tag}.db`));
  const jsonlPath = join(dir, `log-${tag}.jsonl`);
  const fd = openSync(jsonlPath, "w");
  const storeBlocks: number[] = [];
  const rawBlocks: number[] = [];
  const jsonlBlocks: number[] = [];
  const storeRatios: number[] = [];
  let head = genesis.id;
  let block: EventInput[] = [];
  const flush = () => {
    const t0 = performance.now();
    for (const e of block) head = (storeB.append(session.id, "main", head, [e])[0] as { id: typeof head }).id;
    const t1 = performance.now();
    for (const e of block) raw2.append(session.id, e);
    const t2 = performance.now();
    for (const e of block)
      writeSync(fd, `${JSON.stringify({ session: session.id, ts: e.ts, kind: e.kind, label: e.label, data: e.data })}\n`);
    const t3 = performance.now();
    storeBlocks.push(((t1 - t0) / block.length) * 1000);
    rawBlocks.push(((t2 - t1) / block.length) * 1000);
    jsonlBlocks.push(((t3 - t2) / block.length) * 1000);
    storeRatios.push((t1 - t0) / (t2 - t1));
    block = [];
  };
  for (const e of eventsOf(storeA, journal.head.id)) {
    block.push(toInput(e));
    if (block.length === BLOCK * 3) flush();
  }
  if (block.length > 0) flush();
  closeSync(fd);
  metrics[`store.${tag}`] = summarize(storeBlocks, "µs");
  metrics[`raw.${tag}`] = summarize(rawBlocks, "µs");
  metrics[`jsonl.${tag}`] = summarize(jsonlBlocks, "µs");
  values[`storeRatio.${tag}`] = median(storeRatios);
  values[`storeTail.${tag}`] = median(storeBlocks.slice(-10));
  values[`events.${tag}`] = steps * 3;
  for (const s of [storeA, storeB]) s.close();
  raw1.close();
  raw2.close();
}

const mod: BenchModule = {
  title: "Appends and bytes on disk",
  measure(): RunResult {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-append-"));
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      for (const n of SIZES) {
        progress(NAME, `${n} steps`);
        measureSize(n, dir, metrics, values);
      }
      const first = String(SIZES[0]);
      for (const n of SIZES) {
        values[`storeFlat.${n}`] = (values[`storeTail.${n}`] as number) / (values[`storeTail.${first}`] as number);
        values[`engineFlat.${n}`] = (values[`engineTail.${n}`] as number) / (values[`engineTail.${first}`] as number);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    const rows = SIZES.map((n) => [
      n.toLocaleString("en-US"),
      cell(agg, `store.${n}`),
      cell(agg, `raw.${n}`),
      ratio(agg, `storeRatio.${n}`),
      cell(agg, `jsonl.${n}`),
      cell(agg, `engine.${n}`),
      ratio(agg, `engineRatio.${n}`),
    ]);
    const sizes = SIZES.map((n) => [
      n.toLocaleString("en-US"),
      byteValue(agg, `bytesPerStep.engine.${n}`),
      byteValue(agg, `bytesPerStep.raw.${n}`),
      ratio(agg, `bytesRatio.${n}`),
      byteValue(agg, `bytes.events.${n}`),
      byteValue(agg, `bytes.blobs.${n}`),
      byteValue(agg, `bytes.snapshots.${n}`),
    ]);
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      "Per event (median over blocks of 250 steps; spread p10–p90). *store*: `store.append`; *raw*: a plain SQLite insert of the same bytes (one row per event, WAL, synchronous=NORMAL); *JSONL*: one `write` per event; *engine*: `Journal.commit` (validate, compare-and-swap append, fold, snapshots), ratio against raw inserts of the same events right after each block.",
      "",
      table(["steps", "store", "raw insert", "store / raw", "JSONL", "engine commit", "engine / raw"], rows),
      "",
      `Flatness (per-event cost of the last 10 blocks vs. the ${SIZES[0]}-step figure): store ${SIZES.map((n) => `${n}: ${value(agg, `storeFlat.${n}`, (x) => `${num(x)}×`)}`).join(", ")}; engine ${SIZES.map((n) => `${n}: ${value(agg, `engineFlat.${n}`, (x) => `${num(x)}×`)}`).join(", ")}.`,
      "",
      "Bytes on disk per step after a WAL checkpoint (database A, written by the engine, snapshots included) next to the raw table, and where A's bytes are (per step, from `dbstat`):",
      "",
      table(["steps", "strata", "raw", "strata / raw", "events + index", "blobs (pages)", "snapshot rows"], sizes),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const last = String(SIZES[SIZES.length - 1]);
    return [
      targetLine(
        agg,
        "append ≤ 1.3× the raw SQLite insert per event",
        SIZES.map((n) => ({ key: `storeRatio.${n}`, label: `${n} steps` })),
        "<=",
        1.3,
      ),
      targetLine(
        agg,
        `append flat in N (per-event cost at ${last} within 1.2× of ${SIZES[0]})`,
        [{ key: `storeFlat.${last}`, label: `${last}/${SIZES[0]}` }],
        "<=",
        1.2,
      ),
      targetLine(
        agg,
        "bytes on disk per step, snapshots included, ≤ 1.3× raw",
        SIZES.map((n) => ({ key: `bytesRatio.${n}`, label: `${n} steps` })),
        "<=",
        1.3,
        `(${bytes(agg.values[`bytesPerStep.engine.${last}`]?.median ?? 0)} per step at ${last})`,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
