/**
 * strata's event log on PostgreSQL next to LangGraph's PostgreSQL checkpointer
 * (`@langchain/langgraph-checkpoint-postgres`'s `PostgresSaver`), on the same private server, the
 * same workload, in the same process and run. The server is started here (`startPgServer` of
 * `@strata/store-postgres/testing`, fsync on) and stopped at the end.
 *
 * The workload is bench/api/workload.ts's: one step = a `<turn>` with a 380 B assistant text, one
 * `<call>` with ~300 B of JSON arguments and its 1–2 KB tool output.
 *
 * - **strata** stores a step as one event (`append` of `{ kind: "patch@1", data }`, `data` the
 *   `{"ops":[…]}` text of the step), through `openPgStore` (schema `strata`).
 * - **LangGraph** stores it the way a `StateGraph(MessagesAnnotation)` with one node `agent` that
 *   loops on itself persists one super-step (libs/langgraph-core/src/pregel/loop.ts and algo.ts):
 *   the node returns the step's two messages (an `AIMessage` with the text and the `read_file` tool
 *   call, a `ToolMessage` with the output, from `@langchain/core`); the loop saves the task's writes
 *   (`putWrites` of `[["messages", [ai, tool]], ["branch:to:agent", null]]` under the current
 *   checkpoint, task id `uuid5` of the task path as `_prepareNextTasks` makes it), then applies them
 *   (the `messages` channel, a `BinaryOperatorAggregate`, now holds every message so far) and puts
 *   the next checkpoint (`put` with `channel_values` = the whole list and the trigger, both channels
 *   bumped to max + 1 by the saver's `getNextVersion`, `newVersions` naming them, `versions_seen`
 *   of the node, metadata `{ source: "loop", step, parents: {} }`, id `uuid6(step)`). The saver writes
 *   one `checkpoint_blobs` row per changed channel — the full message list every step — and one
 *   `checkpoints` row; each call is awaited (durability "sync"). A thread starts with an "input"
 *   checkpoint (`emptyCheckpoint()`), as a session starts with its genesis event.
 *
 * Measured, both sides, in one process:
 * - **append**: N steps (BENCH_LG_STEPS, default 1,000), one strata `append` and one LangGraph
 *   `putWrites` + `put` per step, alternating which goes first; latency per step (median, p90, and
 *   the first and last 10% of the steps); the ratio is per step. A warm-up of 30 steps runs first in
 *   schemas of its own, dropped before the measured run.
 * - **bytes**: `pg_total_relation_size` (heap, TOAST, indexes, after a `VACUUM`) of every table of
 *   each side's schema — strata's `events`, `segments`, `branches`, `snapshots`, `blobs`,
 *   `sessions`, `leases`, `meta`; LangGraph's `checkpoints`, `checkpoint_blobs`,
 *   `checkpoint_writes`, `checkpoint_migrations` — divided by N, and rows (`count(*)`) per step.
 * - **resume**: in a fresh connection (a new store / a new saver with its own pool, as a fresh
 *   process makes them), the latest state: LangGraph `getTuple({ configurable: { thread_id } })`;
 *   strata `openPgStore` + `branch(session, "main")` + `chainData(head)` (every event's payload).
 *   Then the same again on the now-connected pool ("warm"). 5 interleaved rounds.
 * - **state at N/2**: LangGraph `getTuple` with the `checkpoint_id` of the checkpoint after step
 *   N/2; strata `chainData(event after step N/2)`; cold and warm as above.
 * - **fork**: LangGraph branches by writing a checkpoint whose parent is an old one (what
 *   `invoke(null, { configurable: { thread_id, checkpoint_id } })` does for time travel: a
 *   `{ source: "fork" }` checkpoint that copies the state, no channel changed so no blob), then one
 *   more step on it (`putWrites` + `put`); strata `fork(session, event after step N/2, name)` + one
 *   `append` on the fork. 10 forks each, interleaved. LangGraph's fork is measured three ways: with
 *   the versions the loop computes (max + 1 of the forked checkpoint's — the same numbers the main
 *   line used after N/2, so the saver's `ON CONFLICT DO NOTHING` keeps the main line's blob:
 *   langgraphjs issue 1812); with versions unique in the thread (the fork's own blob is stored);
 *   and with the two `getTuple` reads a time-travel `invoke` makes first. Every read is checked
 *   against the content written (and a fork's state against the fork's step).
 *
 * Run: npx tsx bench/run.ts langgraph
 *   (by hand: BENCH_LG_STEPS=300 node --expose-gc --import tsx --conditions=@strata/source bench/postgres/langgraph.ts)
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type Checkpoint, type CheckpointMetadata, copyCheckpoint, emptyCheckpoint, uuid5, uuid6 } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { EventId, EventInput, SessionId } from "@strata/store";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import pg from "pg";
import { contentOf, rawPayload, SEED, type Step, steps } from "../api/workload.ts";
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
  value,
} from "../lib/harness.ts";
import { bytes, median, num, type Sample, summarize, table } from "../lib/stats.ts";
import { onPgServer } from "./server.ts";

const NAME = "langgraph";
const STEPS = Number(process.env.BENCH_LG_STEPS ?? 1000);
const PROBES = 5;
const WARM_READS = 3;
const FORKS = 10;
const WARMUP = 30;
const ROOT = join(import.meta.dirname, "..", "..");
/** The issue's goal: strata stores a step in at least this many times fewer bytes. */
const BYTES_TARGET = 50;

const STRATA_SCHEMA = "strata";
const LG_SCHEMA = "public";
const THREAD = "bench-thread";
/** The graph: one node that loops on itself, and MessagesAnnotation's one channel. */
const NODE = "agent";
const MESSAGES = "messages";
const TRIGGER = `branch:to:${NODE}`;
/** `PULL` of libs/langgraph-core/src/constants.ts: part of a pulled task's id. */
const PULL = "__pregel_pull";
const PACKAGES = ["@langchain/langgraph-checkpoint-postgres", "@langchain/langgraph-checkpoint", "@langchain/core"] as const;

/** `major.minor.patch` as one number (values are numbers), and back. */
const encodeVersion = (v: string): number => {
  const [a, b, c] = v.split(".").map((x) => Number.parseInt(x, 10));
  return (a ?? 0) * 1e6 + (b ?? 0) * 1e3 + (c ?? 0);
};
const decodeVersion = (n: number): string => `${Math.floor(n / 1e6)}.${Math.floor(n / 1e3) % 1e3}.${n % 1e3}`;

function installedVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, "bench", "node_modules", name, "package.json"), "utf8")) as { version: string };
  return manifest.version;
}

// ---- the two writers ----

const event = (data: string): EventInput => ({ kind: "patch@1", label: null, data });

/** The messages a step adds to a LangGraph thread: what the node returns, ids as messagesStateReducer gives them. */
function stepMessages(s: Step): BaseMessage[] {
  const call = `call_${s.i}`;
  return [
    new AIMessage({
      id: randomUUID(),
      content: s.assistant,
      tool_calls: [{ id: call, name: "read_file", args: JSON.parse(s.args) as Record<string, unknown>, type: "tool_call" }],
    }),
    new ToolMessage({ id: randomUUID(), content: s.output, tool_call_id: call, name: "read_file" }),
  ];
}

const configOf = (thread: string, checkpointId?: string) => ({
  configurable:
    checkpointId === undefined
      ? { thread_id: thread, checkpoint_ns: "" }
      : { thread_id: thread, checkpoint_ns: "", checkpoint_id: checkpointId },
});

function maxVersion(versions: Record<string, number | string>): number | undefined {
  let max: number | undefined;
  for (const v of Object.values(versions)) if (typeof v === "number" && (max === undefined || v > max)) max = v;
  return max;
}

/** A LangGraph state: the checkpoint last put, the step it was put at, and its message list. */
interface LgState {
  readonly checkpoint: Checkpoint;
  readonly step: number;
  readonly messages: readonly BaseMessage[];
}

interface LgStepTimes {
  readonly writesMs: number;
  readonly putMs: number;
}

/** The thread's first checkpoint, as an invoke's input makes it (untimed, like strata's genesis). */
async function lgStart(saver: PostgresSaver, thread: string): Promise<LgState> {
  const checkpoint: Checkpoint = { ...emptyCheckpoint(), id: uuid6(-1) };
  const metadata: CheckpointMetadata = { source: "input", step: -1, parents: {} };
  await saver.put(configOf(thread), checkpoint, metadata, {});
  return { checkpoint, step: -1, messages: [] };
}

/**
 * One super-step of the loop after `prev`: `putWrites` of the node's writes, then `put` of the new
 * checkpoint. `version(max)` gives the changed channels' new version (the loop: the saver's
 * `getNextVersion` of the checkpoint's highest one).
 */
async function lgStep(
  saver: PostgresSaver,
  thread: string,
  prev: LgState,
  s: Step,
  version: (max: number | undefined) => number,
): Promise<{ state: LgState; times: LgStepTimes }> {
  const step = prev.step + 1;
  const config = configOf(thread, prev.checkpoint.id);
  const taskId = uuid5(JSON.stringify([NODE, String(step), NODE, PULL, NODE]), prev.checkpoint.id);
  const update = stepMessages(s);
  const t0 = performance.now();
  await saver.putWrites(
    config,
    [
      [MESSAGES, update],
      [TRIGGER, null],
    ],
    taskId,
  );
  const t1 = performance.now();
  const messages = [...prev.messages, ...update];
  const v = version(maxVersion(prev.checkpoint.channel_versions));
  const seen = prev.checkpoint.channel_versions[TRIGGER];
  const checkpoint: Checkpoint = {
    v: 4,
    id: uuid6(step),
    ts: new Date().toISOString(),
    channel_values: { [MESSAGES]: messages, [TRIGGER]: null },
    channel_versions: { ...prev.checkpoint.channel_versions, [MESSAGES]: v, [TRIGGER]: v },
    versions_seen: { ...prev.checkpoint.versions_seen, [NODE]: seen === undefined ? {} : { [TRIGGER]: seen } },
  };
  const t2 = performance.now();
  await saver.put(config, checkpoint, { source: "loop", step, parents: {} }, { [MESSAGES]: v, [TRIGGER]: v });
  const t3 = performance.now();
  return { state: { checkpoint, step, messages }, times: { writesMs: t1 - t0, putMs: t3 - t2 } };
}

/**
 * A fork of `at` as a time-travel invoke writes it: a copy of its state under a new id with `at` as
 * parent, `{ source: "fork" }`, no changed channel (so no blob: it shares `at`'s).
 */
async function lgFork(saver: PostgresSaver, thread: string, at: LgState): Promise<LgState> {
  const step = at.step + 1;
  const checkpoint: Checkpoint = { ...copyCheckpoint(at.checkpoint), id: uuid6(step), ts: new Date().toISOString() };
  await saver.put(configOf(thread, at.checkpoint.id), checkpoint, { source: "fork", step, parents: {} }, {});
  return { checkpoint, step, messages: at.messages };
}

// ---- what was read ----

interface Content {
  messages: number;
  chars: number;
}

/** The content of strata payloads (assistant text, arguments, output of every step). */
function strataContent(data: readonly string[]): Content {
  const out = { messages: 0, chars: 0 };
  for (const d of data) contentOf(d, out);
  return out;
}

/** The same content of a LangGraph message list. */
function lgContent(messages: readonly BaseMessage[]): Content {
  const out = { messages: 0, chars: 0 };
  for (const m of messages) {
    if (typeof m.content === "string" && m.content !== "") {
      out.messages++;
      out.chars += m.content.length;
    }
    for (const c of (m as AIMessage).tool_calls ?? []) {
      out.messages++;
      out.chars += JSON.stringify(c.args).length;
    }
  }
  return out;
}

const messagesOf = (tuple: { checkpoint: Checkpoint } | undefined): BaseMessage[] =>
  (tuple?.checkpoint.channel_values[MESSAGES] as BaseMessage[] | undefined) ?? [];

function same(what: string, a: Content, b: Content, want: number): void {
  if (a.messages !== want || b.messages !== want || a.chars !== b.chars)
    throw new Error(
      `${what}: strata read ${a.messages} messages / ${a.chars} chars, LangGraph ${b.messages} / ${b.chars}; expected ${want} messages each, the same chars`,
    );
}

// ---- sizes ----

interface Sizes {
  readonly bytes: Record<string, number>;
  readonly rows: Record<string, number>;
}

async function sizes(admin: pg.Client, schema: string): Promise<Sizes> {
  const tables = await admin.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [
    schema,
  ]);
  const out: Sizes = { bytes: {}, rows: {} };
  for (const { t } of tables.rows) {
    const name = `"${schema}"."${t}"`;
    await admin.query(`VACUUM ${name}`);
    const b = await admin.query<{ n: string }>("SELECT pg_total_relation_size($1::regclass) AS n", [name]);
    const r = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${name}`);
    out.bytes[t] = Number(b.rows[0]?.n);
    out.rows[t] = Number(r.rows[0]?.n);
  }
  return out;
}

const total = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

// ---- the run ----

type Side = "strata" | "lg";

/**
 * The stores and savers still open. When a phase throws they are closed on the way out, before the
 * server stops: a pool left with idle connections would die of the shutdown with an unhandled
 * `error` event and hide the first error.
 */
class Closer {
  readonly #open = new Set<() => Promise<unknown>>();
  /** Registers `close`; returns it, run once and unregistered. */
  add(close: () => Promise<unknown>): () => Promise<unknown> {
    const once = () => {
      this.#open.delete(once);
      return close();
    };
    this.#open.add(once);
    return once;
  }
  async all(): Promise<void> {
    for (const close of [...this.#open]) await close().catch(() => {});
  }
}

async function measureOn(url: string, metrics: Record<string, Sample>, values: Record<string, number>): Promise<void> {
  const n = STEPS;
  const half = Math.floor(n / 2);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const closer = new Closer();
  try {
    const server = await admin.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    values["pg.version"] = Number(server.rows[0]?.v);

    // Warm-up, in schemas of their own: both drivers, the statements, the JIT.
    progress(NAME, `warm-up: ${WARMUP} steps each`);
    {
      const store = await openPgStore(url, { schema: "strata_warmup" });
      const closeStore = closer.add(() => store.close());
      const saver = PostgresSaver.fromConnString(url, { schema: "lg_warmup" });
      const closeSaver = closer.add(() => saver.end());
      await saver.setup();
      const { session, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      let head = genesis.id;
      let lg = await lgStart(saver, THREAD);
      for (const s of steps(WARMUP)) {
        head = ((await store.append(session.id, "main", head, [event(rawPayload(s))]))[0] as { id: EventId }).id;
        lg = (await lgStep(saver, THREAD, lg, s, (max) => saver.getNextVersion(max) as number)).state;
      }
      await saver.getTuple(configOf(THREAD));
      await store.chainData(head);
      await closeStore();
      await closeSaver();
      await admin.query("DROP SCHEMA strata_warmup CASCADE");
      await admin.query("DROP SCHEMA lg_warmup CASCADE");
    }

    const store: PgStore = await openPgStore(url, { schema: STRATA_SCHEMA });
    const closeStore = closer.add(() => store.close());
    const saver = PostgresSaver.fromConnString(url, { schema: LG_SCHEMA });
    const closeSaver = closer.add(() => saver.end());
    await saver.setup();
    const emptyStrata = await sizes(admin, STRATA_SCHEMA);
    const emptyLg = await sizes(admin, LG_SCHEMA);
    const next = (max: number | undefined) => saver.getNextVersion(max) as number;

    // ---- append ----
    progress(NAME, `append: ${n} steps each, interleaved`);
    const { session, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
    const sid = session.id as SessionId;
    let head = genesis.id;
    let lg = await lgStart(saver, THREAD);
    let halfEvent: EventId | undefined;
    let halfLg: LgState | undefined;
    const strataMs: number[] = [];
    const lgMs: number[] = [];
    const lgWritesMs: number[] = [];
    const lgPutMs: number[] = [];
    const stepRatios: number[] = [];
    const payloadBytes: number[] = [];
    const messageBytes: number[] = [];
    for (const s of steps(n)) {
      const data = rawPayload(s);
      payloadBytes.push(Buffer.byteLength(data));
      messageBytes.push(Buffer.byteLength(JSON.stringify(stepMessages(s))));
      const runStrata = async () => {
        const t0 = performance.now();
        head = ((await store.append(sid, "main", head, [event(data)]))[0] as { id: EventId }).id;
        strataMs.push(performance.now() - t0);
      };
      const runLg = async () => {
        const r = await lgStep(saver, THREAD, lg, s, next);
        lg = r.state;
        lgWritesMs.push(r.times.writesMs);
        lgPutMs.push(r.times.putMs);
        lgMs.push(r.times.writesMs + r.times.putMs);
      };
      if (s.i % 2 === 0) {
        await runStrata();
        await runLg();
      } else {
        await runLg();
        await runStrata();
      }
      stepRatios.push((lgMs[s.i] as number) / (strataMs[s.i] as number));
      if (s.i === half - 1) {
        halfEvent = head;
        halfLg = lg;
      }
      if ((s.i + 1) % 100 === 0) progress(NAME, `  ${s.i + 1}/${n} steps`);
    }
    if (halfEvent === undefined || halfLg === undefined) throw new Error(`BENCH_LG_STEPS must be at least 2, got ${n}`);
    const tenth = Math.max(1, Math.floor(n / 10));
    const record = (side: Side, ms: number[]) => {
      const sample = summarize(ms, "ms");
      metrics[`append.${side}`] = sample;
      metrics[`appendFirst.${side}`] = summarize(ms.slice(0, tenth), "ms");
      metrics[`appendLast.${side}`] = summarize(ms.slice(-tenth), "ms");
      values[`appendP90.${side}`] = sample.p90;
    };
    record("strata", strataMs);
    record("lg", lgMs);
    metrics["append.lg.putWrites"] = summarize(lgWritesMs, "ms");
    metrics["append.lg.put"] = summarize(lgPutMs, "ms");
    values.appendRatio = median(stepRatios);
    values.appendP90Ratio = (values["appendP90.lg"] as number) / (values["appendP90.strata"] as number);
    values.appendFirstRatio = median(stepRatios.slice(0, tenth));
    values.appendLastRatio = median(stepRatios.slice(-tenth));
    values.steps = n;
    values["payload.strata"] = median(payloadBytes);
    values["payload.lg"] = median(messageBytes);

    // ---- bytes and rows ----
    progress(NAME, "bytes and rows");
    const fullStrata = await sizes(admin, STRATA_SCHEMA);
    const fullLg = await sizes(admin, LG_SCHEMA);
    for (const [side, full, empty] of [
      ["strata", fullStrata, emptyStrata],
      ["lg", fullLg, emptyLg],
    ] as const) {
      values[`bytesPerStep.${side}`] = total(full.bytes) / n;
      values[`grownPerStep.${side}`] = (total(full.bytes) - total(empty.bytes)) / n;
      values[`rowsPerStep.${side}`] = total(full.rows) / n;
      values[`bytesEmpty.${side}`] = total(empty.bytes);
      for (const t of Object.keys(full.bytes)) {
        values[`table.${side}.${t}.bytes`] = full.bytes[t] as number;
        values[`table.${side}.${t}.rows`] = full.rows[t] as number;
      }
    }
    values.bytesFactor = (values["bytesPerStep.lg"] as number) / (values["bytesPerStep.strata"] as number);
    values.grownFactor = (values["grownPerStep.lg"] as number) / (values["grownPerStep.strata"] as number);
    values.rowsFactor = (values["rowsPerStep.lg"] as number) / (values["rowsPerStep.strata"] as number);

    // ---- resume and state at N/2, fresh connections ----
    progress(NAME, `resume and state at N/2: ${PROBES} rounds`);
    const reads = {
      resume: {
        strata: [] as number[],
        strataOpen: [] as number[],
        lg: [] as number[],
        warmStrata: [] as number[],
        warmLg: [] as number[],
      },
      half: { strata: [] as number[], strataOpen: [] as number[], lg: [] as number[], warmStrata: [] as number[], warmLg: [] as number[] },
    };
    const coldRatios = { resume: [] as number[], half: [] as number[] };
    const warmRatios = { resume: [] as number[], half: [] as number[] };
    const decodeMs: number[] = [];
    const halfId = halfLg.checkpoint.id;
    const halfAt = halfEvent;
    for (let round = 0; round < PROBES; round++) {
      for (const what of ["resume", "half"] as const) {
        const strataRead = async (s: PgStore): Promise<string[]> => {
          if (what === "half") return s.chainData(halfAt);
          const b = await s.branch(sid, "main");
          if (b === undefined) throw new Error("the main branch is gone");
          return s.chainData(b.head);
        };
        const lgConfig = what === "half" ? configOf(THREAD, halfId) : configOf(THREAD);
        const want = (what === "half" ? half : n) * 3;
        const r = reads[what];
        const runStrata = async () => {
          const t0 = performance.now();
          const s = await openPgStore(url, { schema: STRATA_SCHEMA });
          const close = closer.add(() => s.close());
          const t1 = performance.now();
          const data = await strataRead(s);
          const t2 = performance.now();
          r.strata.push(t2 - t0);
          r.strataOpen.push(t1 - t0);
          const warm: number[] = [];
          for (let w = 0; w < WARM_READS; w++) {
            const t3 = performance.now();
            await strataRead(s);
            warm.push(performance.now() - t3);
          }
          r.warmStrata.push(...warm);
          await close();
          if (what === "resume") {
            const t4 = performance.now();
            for (const d of data) JSON.parse(d);
            decodeMs.push(performance.now() - t4);
          }
          return { content: strataContent(data), warm: median(warm) };
        };
        const runLg = async () => {
          const t0 = performance.now();
          const s = PostgresSaver.fromConnString(url, { schema: LG_SCHEMA });
          const close = closer.add(() => s.end());
          const tuple = await s.getTuple(lgConfig);
          const t1 = performance.now();
          r.lg.push(t1 - t0);
          const warm: number[] = [];
          for (let w = 0; w < WARM_READS; w++) {
            const t2 = performance.now();
            await s.getTuple(lgConfig);
            warm.push(performance.now() - t2);
          }
          r.warmLg.push(...warm);
          await close();
          return { content: lgContent(messagesOf(tuple)), warm: median(warm) };
        };
        const first = round % 2 === 0 ? await runStrata() : await runLg();
        const second = round % 2 === 0 ? await runLg() : await runStrata();
        const [a, b] = round % 2 === 0 ? [first, second] : [second, first];
        same(`${what} (round ${round + 1})`, a.content, b.content, want);
        coldRatios[what].push((r.lg.at(-1) as number) / (r.strata.at(-1) as number));
        warmRatios[what].push(b.warm / a.warm);
      }
    }
    for (const what of ["resume", "half"] as const) {
      const r = reads[what];
      metrics[`${what}.strata`] = summarize(r.strata, "ms");
      metrics[`${what}Open.strata`] = summarize(r.strataOpen, "ms");
      metrics[`${what}.lg`] = summarize(r.lg, "ms");
      metrics[`${what}Warm.strata`] = summarize(r.warmStrata, "ms");
      metrics[`${what}Warm.lg`] = summarize(r.warmLg, "ms");
      values[`${what}Ratio`] = median(coldRatios[what]);
      values[`${what}WarmRatio`] = median(warmRatios[what]);
    }
    metrics["decode.strata"] = summarize(decodeMs, "ms");

    // ---- fork at N/2 + one step ----
    progress(NAME, `fork at N/2 + one step: ${FORKS} of each`);
    const forkStep: Step = { ...(steps(1, 0, SEED + 1).next().value as Step), i: half };
    const forkData = rawPayload(forkStep);
    /** The highest version issued in the thread: a fork's own versions start above it. */
    let threadMax = maxVersion(lg.checkpoint.channel_versions) ?? 0;
    const unique = (_max: number | undefined) => {
      threadMax = saver.getNextVersion(threadMax) as number;
      return threadMax;
    };
    const forkMs = { strata: [] as number[], lg: [] as number[], lgUnique: [] as number[], lgInvoke: [] as number[] };
    const forkRatios = { lg: [] as number[], lgUnique: [] as number[], lgInvoke: [] as number[] };
    const forkHeads: { strata: EventId[]; lg: string[]; lgUnique: string[]; lgInvoke: string[] } = {
      strata: [],
      lg: [],
      lgUnique: [],
      lgInvoke: [],
    };
    const forkAt = halfLg;
    for (let k = 0; k < FORKS; k++) {
      const t0 = performance.now();
      await store.fork(sid, halfAt, `fork-${k}`);
      const [m] = await store.append(sid, `fork-${k}`, halfAt, [event(forkData)]);
      const strataFork = performance.now() - t0;
      forkMs.strata.push(strataFork);
      forkHeads.strata.push((m as { id: EventId }).id);

      const t1 = performance.now();
      const f = await lgFork(saver, THREAD, forkAt);
      const a = await lgStep(saver, THREAD, f, forkStep, next);
      forkMs.lg.push(performance.now() - t1);
      forkHeads.lg.push(a.state.checkpoint.id);

      const t2 = performance.now();
      const fu = await lgFork(saver, THREAD, forkAt);
      const b = await lgStep(saver, THREAD, fu, forkStep, unique);
      forkMs.lgUnique.push(performance.now() - t2);
      forkHeads.lgUnique.push(b.state.checkpoint.id);

      // What a time-travel invoke does before it writes: the checkpoint asked for, then the latest (is it the head?).
      const t3 = performance.now();
      const saved = await saver.getTuple(configOf(THREAD, forkAt.checkpoint.id));
      await saver.getTuple(configOf(THREAD));
      if (saved === undefined) throw new Error("the checkpoint at N/2 is gone");
      const loaded: LgState = { checkpoint: saved.checkpoint, step: forkAt.step, messages: messagesOf(saved) };
      const fi = await lgFork(saver, THREAD, loaded);
      const c = await lgStep(saver, THREAD, fi, forkStep, next);
      forkMs.lgInvoke.push(performance.now() - t3);
      forkHeads.lgInvoke.push(c.state.checkpoint.id);

      forkRatios.lg.push((forkMs.lg.at(-1) as number) / strataFork);
      forkRatios.lgUnique.push((forkMs.lgUnique.at(-1) as number) / strataFork);
      forkRatios.lgInvoke.push((forkMs.lgInvoke.at(-1) as number) / strataFork);
    }
    metrics["fork.strata"] = summarize(forkMs.strata, "ms");
    for (const k of ["lg", "lgUnique", "lgInvoke"] as const) {
      metrics[`fork.${k}`] = summarize(forkMs[k], "ms");
      values[`forkRatio.${k}`] = median(forkRatios[k]);
    }

    // Does each fork read back as the fork's state (the half-way state plus the fork's step)?
    const wantFork = strataContent([...(await store.chainData(halfAt)), forkData]);
    const strataOk = await Promise.all(
      forkHeads.strata.map(async (h) => {
        const got = strataContent(await store.chainData(h));
        return got.chars === wantFork.chars && got.messages === wantFork.messages;
      }),
    );
    values["forkCorrect.strata"] = strataOk.filter(Boolean).length / FORKS;
    for (const k of ["lg", "lgUnique", "lgInvoke"] as const) {
      let ok = 0;
      for (const id of forkHeads[k]) {
        const got = messagesOf(await saver.getTuple(configOf(THREAD, id)));
        const last = got.at(-1);
        const c = lgContent(got);
        if (c.chars === wantFork.chars && c.messages === wantFork.messages && last?.content === forkStep.output) ok++;
      }
      values[`forkCorrect.${k}`] = ok / FORKS;
    }

    await closeStore();
    await closeSaver();
  } finally {
    await closer.all();
    await admin.end();
  }
}

// ---- rendering ----

const ms = (agg: Aggregate, key: string) => cell(agg, key);
const times = (x: number) => `${num(x)}×`;
const rowsText = (n: number) => `${Math.round(n).toLocaleString("en-US")} ${Math.round(n) === 1 ? "row" : "rows"}`;

function tablesOf(agg: Aggregate, side: Side): string[] {
  const prefix = `table.${side}.`;
  return [
    ...new Set(
      Object.keys(agg.values)
        .filter((k) => k.startsWith(prefix) && k.endsWith(".bytes"))
        .map((k) => k.slice(prefix.length, -".bytes".length)),
    ),
  ];
}

const mod: BenchModule = {
  title: "strata against LangGraph's PostgreSQL checkpointer (same server, same workload)",
  measure(): Promise<RunResult> {
    const values: Record<string, number> = {};
    for (const p of PACKAGES) {
      const v = installedVersion(p);
      values[`version.${p}`] = encodeVersion(v);
      progress(NAME, `${p} ${v}`);
    }
    return onPgServer(NAME, measureOn, values);
  },
  render(agg: Aggregate): string {
    const n = agg.values.steps?.median ?? Number.NaN;
    const half = Math.floor(n / 2);
    const versions = PACKAGES.map((p) => {
      const v = agg.values[`version.${p}`]?.median;
      return `\`${p}\` ${v === undefined ? "?" : decodeVersion(v)}`;
    }).join(", ");
    const pgVersion = agg.values["pg.version"]?.median;
    const pgText = pgVersion === undefined ? "PostgreSQL" : `PostgreSQL ${Math.floor(pgVersion / 10000)}.${pgVersion % 10000}`;
    const correct = (key: string) => {
      const v = agg.values[key];
      if (v === undefined) return "–";
      return v.lo === 1 ? "yes, every fork" : v.hi === 0 ? "**no**, none" : `${num(v.median * 100)}% of forks`;
    };
    const N = n.toLocaleString("en-US");
    const rows = [
      [
        "payload of a step (strata: the event's data; LangGraph: the step's two messages, serialized)",
        byteValue(agg, "payload.strata"),
        byteValue(agg, "payload.lg"),
        "",
      ],
      [
        "append one step, median (LangGraph: `putWrites` + `put`)",
        ms(agg, "append.strata"),
        ms(agg, "append.lg"),
        ratio(agg, "appendRatio"),
      ],
      [
        "… p90",
        value(agg, "appendP90.strata", (x) => `${num(x)} ms`),
        value(agg, "appendP90.lg", (x) => `${num(x)} ms`),
        value(agg, "appendP90Ratio", times),
      ],
      ["… first 10% of the steps", ms(agg, "appendFirst.strata"), ms(agg, "appendFirst.lg"), ratio(agg, "appendFirstRatio")],
      ["… last 10% of the steps", ms(agg, "appendLast.strata"), ms(agg, "appendLast.lg"), ratio(agg, "appendLastRatio")],
      ["… of which `putWrites` / `put`", "", `${ms(agg, "append.lg.putWrites")} / ${ms(agg, "append.lg.put")}`, ""],
      [
        "bytes per step (every table of the schema ÷ N)",
        byteValue(agg, "bytesPerStep.strata"),
        byteValue(agg, "bytesPerStep.lg"),
        ratio(agg, "bytesFactor"),
      ],
      [
        "… growth only ((after − empty tables) ÷ N)",
        byteValue(agg, "grownPerStep.strata"),
        byteValue(agg, "grownPerStep.lg"),
        ratio(agg, "grownFactor"),
      ],
      ["… the empty tables", byteValue(agg, "bytesEmpty.strata"), byteValue(agg, "bytesEmpty.lg"), ""],
      ["rows per step", value(agg, "rowsPerStep.strata"), value(agg, "rowsPerStep.lg"), ratio(agg, "rowsFactor")],
      ["resume, fresh connection: the latest state", ms(agg, "resume.strata"), ms(agg, "resume.lg"), ratio(agg, "resumeRatio")],
      ["… of which strata's `openPgStore` (LangGraph connects inside `getTuple`)", ms(agg, "resumeOpen.strata"), "", ""],
      ["… again on the connected pool", ms(agg, "resumeWarm.strata"), ms(agg, "resumeWarm.lg"), ratio(agg, "resumeWarmRatio")],
      ["… strata: `JSON.parse` of every payload (LangGraph's `getTuple` includes its decoding)", ms(agg, "decode.strata"), "", ""],
      [
        `state at N/2 (step ${half.toLocaleString("en-US")}), fresh connection`,
        ms(agg, "half.strata"),
        ms(agg, "half.lg"),
        ratio(agg, "halfRatio"),
      ],
      ["… again on the connected pool", ms(agg, "halfWarm.strata"), ms(agg, "halfWarm.lg"), ratio(agg, "halfWarmRatio")],
      [
        "fork at N/2 + one step (LangGraph: fork `put` + `putWrites` + `put`, the loop's versions)",
        ms(agg, "fork.strata"),
        ms(agg, "fork.lg"),
        ratio(agg, "forkRatio.lg"),
      ],
      ["… its state read back is the fork's", correct("forkCorrect.strata"), correct("forkCorrect.lg"), ""],
      [
        "… LangGraph with versions unique in the thread (its own blob stored)",
        ms(agg, "fork.strata"),
        ms(agg, "fork.lgUnique"),
        ratio(agg, "forkRatio.lgUnique"),
      ],
      ["… its state read back is the fork's", correct("forkCorrect.strata"), correct("forkCorrect.lgUnique"), ""],
      [
        "… LangGraph with the two `getTuple` of a time-travel invoke first",
        ms(agg, "fork.strata"),
        ms(agg, "fork.lgInvoke"),
        ratio(agg, "forkRatio.lgInvoke"),
      ],
    ];
    const breakdown = (["strata", "lg"] as const).map((side) =>
      tablesOf(agg, side)
        .map(
          (t) =>
            `\`${t}\` ${bytes(agg.values[`table.${side}.${t}.bytes`]?.median ?? Number.NaN)} / ${rowsText(agg.values[`table.${side}.${t}.rows`]?.median ?? Number.NaN)}`,
        )
        .join(", "),
    );
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `${N} steps on one private ${pgText} server (fsync on), both sides in one process, against ${versions}. ` +
        "One step is bench/api/workload.ts's (a 380 B assistant text, a `read_file` call with ~300 B of JSON arguments and its 1–2 KB output). " +
        '_strata_ appends it as one event (`openPgStore`, `append` of its `{"ops":[…]}` payload). ' +
        "_LangGraph_ stores it the way a `StateGraph(MessagesAnnotation)` with one looping node persists a super-step: `putWrites` of the node's writes " +
        "(an `AIMessage` with the text and the tool call, a `ToolMessage` with the output, and the node's trigger), then `put` of the next checkpoint, " +
        "whose `messages` channel holds every message so far (stored whole in `checkpoint_blobs` at each new version), each call awaited. " +
        "Steps alternate which side goes first; ratios are LangGraph ÷ strata, per step or per round. " +
        "Bytes: `pg_total_relation_size` (heap, TOAST, indexes) of every table of each side's schema after a `VACUUM`. " +
        `Reads: ${PROBES} rounds, each on a fresh store / saver (its own pool) and then ${WARM_READS} more times on it; strata reads \`branch\` + \`chainData(head)\` (every payload; \`chainData(event)\` for N/2), LangGraph \`getTuple\`; every read is checked to hold the same content on both sides. ` +
        `Forks: ${FORKS} of each, at the event / checkpoint after step N/2. LangGraph's loop gives the fork's step the versions the main line already used after N/2 ` +
        "(integer versions, max + 1), and the saver's `ON CONFLICT DO NOTHING` on `checkpoint_blobs` then keeps the main line's blob (langgraphjs issue 1812): the row says whether the state read back is the fork's; " +
        "the second LangGraph row uses versions unique in the thread, which stores the fork's own full message list.",
      "",
      table([`${N} steps`, "strata", "LangGraph", "LangGraph ÷ strata"], rows, ["l", "r", "r", "r"]),
      "",
      `Tables after the ${N} steps — strata: ${breakdown[0]}; LangGraph: ${breakdown[1]}.`,
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const v = agg.values.bytesFactor;
    const n = (agg.values.steps?.median ?? Number.NaN).toLocaleString("en-US");
    if (v === undefined) return ["**NOT MEASURED** — strata ≥ 50× fewer bytes per step than LangGraph's PostgreSQL checkpointer"];
    const pass = v.median >= BYTES_TARGET;
    const borderline = v.lo >= BYTES_TARGET !== v.hi >= BYTES_TARGET;
    return [
      `${pass ? "**PASS**" : "**FAIL**"}${borderline ? " (range crosses the target)" : ""} — strata stores a step in ≥ ${BYTES_TARGET}× fewer bytes than LangGraph's PostgreSQL checkpointer (${n} steps, same server and workload): ` +
        `${byteValue(agg, "bytesPerStep.strata")} against ${byteValue(agg, "bytesPerStep.lg")} per step, ${ratio(agg, "bytesFactor")}.`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
