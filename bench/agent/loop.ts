/**
 * Agent-loop overhead (issue 6): what `runAgent` costs per step over the bare store append of the
 * same events. A step is one model reply (about 300 B of tool-call arguments, streamed in chunks)
 * and one tool call returning 1–2 KB — the workload of the store benchmarks — driven through the
 * real loop: projection of the request, streaming into the tree, intent/start/outcome commits.
 * The model and the tool answer instantly, so everything measured is strata's.
 *
 * Baseline, same run, same file: `store.append` of exactly the events the loop wrote (re-appended
 * one by one to a second session, the same number of transactions), and a JSONL append of the
 * same event bytes with an fsync-free write per event.
 *
 * Run: npx tsx bench/run.ts loop
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Model, type ModelEvent, type ModelRequest, runAgent, ToolRegistry } from "@strata/agent";
import { Session } from "@strata/engine";
import { type EventId, openStore } from "@strata/store";
import { prose } from "../lib/agent.ts";
import { type Aggregate, type BenchModule, cell, isMain, progress, type RunResult, ratio, runAsScript } from "../lib/harness.ts";
import { median, rng, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "loop";
const STEPS = Number(process.env.BENCH_STEPS ?? 300);
const ROUNDS = 5;

/** Replies instantly: turn N calls `fetch` with ~300 B of arguments in 16-character chunks; the last turn submits. */
class InstantModel implements Model {
  readonly id = "bench:instant";
  constructor(
    readonly steps: number,
    readonly seed: number,
  ) {}
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const n = request.messages.filter((m) => m.role === "assistant").length;
    const r = rng(this.seed + n);
    yield { type: "text", delta: `Step ${n}: reading the next module.` };
    const name = n + 1 >= this.steps ? "submit" : "fetch";
    yield { type: "tool-call", index: 0, id: `call_${n}`, name };
    const args = JSON.stringify({ path: `/src/module_${n % 977}.ts`, query: prose(r, 240) });
    for (let i = 0; i < args.length; i += 16) yield { type: "tool-arguments", index: 0, delta: args.slice(i, i + 16) };
    yield { type: "usage", inputTokens: 1000 + n, outputTokens: 80 };
    yield { type: "done", finishReason: "tool_calls" };
  }
}

function registry(seed: number): ToolRegistry {
  const r = rng(seed);
  return new ToolRegistry([
    {
      name: "fetch",
      description: "fetch",
      parameters: { type: "object" },
      replayPolicy: "safe",
      handler: async () => prose(r, 1000 + Math.floor(r() * 1000)),
    },
    { name: "submit", description: "submit", parameters: { type: "object" }, completesRun: true, handler: async () => "done" },
  ]);
}

async function round(
  dir: string,
  k: number,
): Promise<{ loop: number; append: number; jsonl: number; events: number; eventsPerStep: number }> {
  const store = openStore(join(dir, `loop-${k}.db`));
  const s = Session.create(store);
  const t0 = performance.now();
  const result = await runAgent(s, {
    model: new InstantModel(STEPS, k),
    registry: registry(k),
    task: "read every module",
    limits: { maxSteps: STEPS + 1 },
  });
  const loopMs = performance.now() - t0;
  if (result.stop !== "completed-by-tool") throw new Error(`the loop stopped with ${result.stop}`);
  const events = store.chain(s.head.id, 0, Number.MAX_SAFE_INTEGER);
  // Baseline: the same events, appended one per transaction to a second session of the same file.
  const { session: other, genesis } = store.createSession({
    genesis: { kind: events[0]?.kind as string, data: events[0]?.data as string },
  });
  let head = genesis.id;
  const t1 = performance.now();
  for (const e of events.slice(1))
    head = (
      store.append(other.id, "main", head, [{ kind: e.kind, label: e.label, by: e.by, ts: e.ts, data: e.data }])[0] as { id: EventId }
    ).id;
  const appendMs = performance.now() - t1;
  const jsonl = join(dir, `loop-${k}.jsonl`);
  const t2 = performance.now();
  for (const e of events)
    appendFileSync(
      jsonl,
      `${JSON.stringify({ id: e.id, prior: e.prior, kind: e.kind, label: e.label, by: e.by, ts: e.ts, data: e.data })}\n`,
    );
  const jsonlMs = performance.now() - t2;
  store.close();
  return {
    loop: loopMs / STEPS,
    append: appendMs / STEPS,
    jsonl: jsonlMs / STEPS,
    events: events.length,
    eventsPerStep: events.length / STEPS,
  };
}

const mod: BenchModule = {
  title: "Agent loop: overhead per step",
  async measure(): Promise<RunResult> {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-loop-"));
    const loop: number[] = [];
    const append: number[] = [];
    const jsonl: number[] = [];
    const ratios: number[] = [];
    let perStep = 0;
    try {
      await round(dir, 0); // warm-up
      for (let k = 1; k <= ROUNDS; k++) {
        progress(NAME, `round ${k}/${ROUNDS}: ${STEPS} steps`);
        const r = await round(dir, k);
        loop.push(r.loop);
        append.push(r.append);
        jsonl.push(r.jsonl);
        ratios.push(r.loop / r.append);
        perStep = r.eventsPerStep;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const metrics: Record<string, Sample> = { loop: summarize(loop, "ms"), append: summarize(append, "ms"), jsonl: summarize(jsonl, "ms") };
    return {
      metrics,
      values: { loopRatio: median(ratios), eventsPerStep: perStep, jsonlRatio: median(loop.map((x, i) => x / (jsonl[i] as number))) },
    };
  },
  render(agg: Aggregate): string {
    return [
      `### ${mod.title}`,
      "",
      `${STEPS} steps per round (a model reply with ~300 B of arguments streamed in 16-character chunks, one tool call returning 1–2 KB), ${ROUNDS} rounds per process; the model and the tool answer instantly, so the figure is strata's own cost: projecting the request, streaming into the tree (coalesced), and the intent, start and outcome commits — ${agg.values.eventsPerStep?.median.toFixed(1)} events per step. Baselines: the same events appended with \`store.append\` one per transaction to another session of the same file, and a JSONL append of the same bytes.`,
      "",
      table(
        ["per step", "runAgent", "store.append of its events", "JSONL append", "loop / append", "loop / JSONL"],
        [["", cell(agg, "loop"), cell(agg, "append"), cell(agg, "jsonl"), ratio(agg, "loopRatio"), ratio(agg, "jsonlRatio")]],
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const r = agg.values.loopRatio;
    const x = (v: number | undefined) => (v === undefined ? "–" : v.toFixed(2));
    return [
      `**REPORTED** (the issue sets no target) — agent loop per step ${cell(agg, "loop")} for ${x(agg.values.eventsPerStep?.median)} events, next to the bare store append of the same events ${cell(agg, "append")}: ${x(r?.median)}× (${x(r?.lo)}–${x(r?.hi)})`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
