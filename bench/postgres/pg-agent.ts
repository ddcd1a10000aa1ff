/**
 * Statements per agent turn on PostgreSQL (issue 15: "statements per agent turn (count them)";
 * Mastra's durable agents issued 1,040 statements for one 49-second turn). The agent loop of
 * `@strata/agent` (`runAgent`) drives a session of an `openPgStore` store on a private server
 * (`startPgServer`, fsync on), through the public API only, and every statement the store's pool
 * sends is counted (bench/postgres/statements.ts) with its kind.
 *
 * Two workloads, each a fresh session, a model written here that streams like a real one:
 * - **short turns**: TURNS model turns, each streaming 400 characters of text in 20 parts and one
 *   tool call (a lookup answering 1 KB), then a last turn with text only; statements per turn are
 *   the run's statements over its turns (the task, the inputs and the final stop included).
 * - **a long turn**: one turn streaming text for STREAM_SECONDS (default 49, Mastra's turn) at 20
 *   parts a second, then one tool call, then a short last turn; the statements of the first turn
 *   (after the task: its projection's reads, its `turn.start`, … to its call's outcome) are counted apart.
 * Next to each: the events the turn wrote (one event per durable step of the loop: the turn's
 * start, each streamed flush, each call's opening, the turn's end, each call's start and outcome),
 * and statements per event (the store's hot path is two: the insert and the head's
 * compare-and-swap, in one transaction).
 *
 * Run: npx tsx bench/run.ts pg-agent
 *   (by hand: BENCH_AGENT_STREAM_SECONDS=5 node --import tsx --conditions=@strata/source bench/postgres/pg-agent.ts)
 * Knobs: BENCH_AGENT_TURNS (short turns, default 20), BENCH_AGENT_STREAM_SECONDS (default 49).
 */
import { type Model, type ModelEvent, type ModelRequest, runAgent, ToolRegistry, type ToolSpec } from "@strata/agent";
import { Session } from "@strata/engine";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import { type Aggregate, type BenchModule, isMain, med, progress, provenance, type RunResult, runAsScript, value } from "../lib/harness.ts";
import { num, type Sample, summarize, table } from "../lib/stats.ts";
import { onPgServer } from "./server.ts";
import { StatementCounter } from "./statements.ts";

const NAME = "pg-agent";
const TURNS = Number(process.env.BENCH_AGENT_TURNS ?? 20);
const STREAM_SECONDS = Number(process.env.BENCH_AGENT_STREAM_SECONDS ?? 49);
/** Mastra's count for one 49-second turn (issue 15). */
const MASTRA = 1_040;
const PARTS_PER_SECOND = 20;

/** A model that streams `text` in parts (`gapMs` apart) and asks for one lookup, `turns` times, then answers. */
class StreamingModel implements Model {
  readonly id = "bench:streaming";
  constructor(
    private readonly turns: number,
    private readonly parts: (turn: number) => { count: number; gapMs: number },
  ) {}
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const n = request.messages.filter((m) => m.role === "assistant").length;
    const { count, gapMs } = this.parts(n);
    for (let i = 0; i < count; i++) {
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      yield { type: "text", delta: `part ${String(i).padStart(5, "0")} of turn ${n}; ` };
    }
    if (n < this.turns) {
      yield { type: "tool-call", index: 0, id: `call_${n}`, name: "lookup" };
      yield { type: "tool-arguments", index: 0, delta: JSON.stringify({ key: `k${n}` }) };
    }
    yield { type: "usage", inputTokens: 1000 + n, outputTokens: 100 };
    yield { type: "done", finishReason: n < this.turns ? "tool_calls" : "stop" };
  }
}

const lookup: ToolSpec = {
  name: "lookup",
  description: "looks a key up",
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  replayPolicy: "safe",
  handler: async (args) => `${(args as { key: string }).key}: ${"v".repeat(1024)}`,
};

interface Counted {
  readonly statements: number;
  readonly events: number;
  readonly kinds: Map<string, number>;
  readonly seconds: number;
}

async function counted(store: PgStore, counter: StatementCounter, run: (s: Session<PgStore>) => Promise<void>): Promise<Counted> {
  const session = await Session.create(store);
  const before = (await session.log()).length;
  counter.reset();
  const t0 = performance.now();
  await run(session);
  const seconds = (performance.now() - t0) / 1000;
  const statements = counter.total;
  const kinds = new Map(counter.kinds);
  const events = (await session.log()).length - before;
  await session.close();
  return { statements, events, kinds, seconds };
}

async function measureAll(url: string, metrics: Record<string, Sample>, values: Record<string, number>): Promise<void> {
  const store = await openPgStore(url, { schema: "bench_agent" });
  const counter = new StatementCounter(store);
  const registry = new ToolRegistry([lookup]);
  try {
    progress(NAME, `${TURNS} short turns`);
    const short = await counted(store, counter, async (s) => {
      const r = await runAgent(s, { model: new StreamingModel(TURNS, () => ({ count: 20, gapMs: 0 })), registry, task: "look things up" });
      if (r.stop !== "end-turn" || r.steps !== TURNS + 1) throw new Error(`the short run stopped ${r.stop} after ${r.steps} steps`);
    });
    values.shortTurns = TURNS + 1;
    values.shortStatementsPerTurn = short.statements / (TURNS + 1);
    values.shortEventsPerTurn = short.events / (TURNS + 1);
    values.shortStatementsPerEvent = short.statements / short.events;
    metrics.shortTurn = summarize([(short.seconds * 1000) / (TURNS + 1)], "ms");
    for (const [k, v] of short.kinds) values[`shortKind.${k}`] = v / (TURNS + 1);

    progress(NAME, `one turn streaming for ${STREAM_SECONDS} s`);
    const count = Math.round(STREAM_SECONDS * PARTS_PER_SECOND);
    let firstTurn: { statements: number; events: number; kinds: Map<string, number> } | undefined;
    const long = await counted(store, counter, async (s) => {
      let baseStatements = 0;
      let baseEvents = 0;
      let baseKinds = new Map<string, number>();
      const r = await runAgent(s, {
        model: new StreamingModel(1, (n) => (n === 0 ? { count, gapMs: 1000 / PARTS_PER_SECOND } : { count: 5, gapMs: 0 })),
        registry,
        task: "think at length",
        onEvent: (e) => {
          // From the task (the statements after it are the turn's) to the turn's call's outcome.
          if (e.type === "turn" && e.role === "user" && firstTurn === undefined && baseStatements === 0) {
            baseStatements = counter.total;
            baseKinds = new Map(counter.kinds);
            baseEvents = s.head.depth;
          }
          if (e.type === "call" && e.status === "executed" && firstTurn === undefined) {
            const kinds = new Map<string, number>();
            for (const [k, v] of counter.kinds) kinds.set(k, v - (baseKinds.get(k) ?? 0));
            firstTurn = { statements: counter.total - baseStatements, events: s.head.depth - baseEvents, kinds };
          }
        },
      });
      if (r.stop !== "end-turn") throw new Error(`the long run stopped ${r.stop}`);
    });
    const first = firstTurn as NonNullable<typeof firstTurn>;
    values.longSeconds = STREAM_SECONDS;
    values.longParts = count;
    values.longStatements = first.statements;
    values.longEvents = first.events;
    values.longStatementsPerEvent = first.statements / first.events;
    values.longRunStatements = long.statements;
    for (const [k, v] of first.kinds) values[`longKind.${k}`] = v;
    values.mastraRatio = MASTRA / first.statements;
  } finally {
    await store.close();
  }
}

const kindsOf = (agg: Aggregate, prefix: string): string =>
  Object.keys(agg.values)
    .filter((k) => k.startsWith(prefix))
    .map((k) => [k.slice(prefix.length), med(agg, k)] as const)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${num(v)}`)
    .join(", ");

const mod: BenchModule = {
  title: "Statements per agent turn on PostgreSQL",
  measure(): Promise<RunResult> {
    return onPgServer(NAME, measureAll);
  },
  render(agg: Aggregate): string {
    const rows = [
      [
        `a short turn (400 characters streamed in 20 parts, one tool call; ${value(agg, "shortTurns")} turns, task and stop included)`,
        value(agg, "shortStatementsPerTurn"),
        value(agg, "shortEventsPerTurn"),
        value(agg, "shortStatementsPerEvent"),
        "",
      ],
      [
        `a ${value(agg, "longSeconds")}-second turn (${value(agg, "longParts")} parts streamed, one tool call)`,
        value(agg, "longStatements"),
        value(agg, "longEvents"),
        value(agg, "longStatementsPerEvent"),
        `Mastra: ${MASTRA} (${value(agg, "mastraRatio")}× as many)`,
      ],
    ];
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      "`runAgent` of `@strata/agent` on a session of an `openPgStore` store (a private server, fsync on), every statement of the store's pool counted. " +
        "A model written for the benchmark streams text parts and asks for one lookup (a tool answering 1 KB) per turn; streamed text is flushed every 500 ms over the network (decision 0037). " +
        `Statements by kind, short turn: ${kindsOf(agg, "shortKind.")}; long turn: ${kindsOf(agg, "longKind.")}.`,
      "",
      table(["workload", "statements", "events", "statements per event", "next to"], rows, ["l", "r", "r", "r", "l"]),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const perEvent = Math.max(med(agg, "shortStatementsPerEvent"), med(agg, "longStatementsPerEvent"));
    return [
      `${med(agg, "longStatements") < MASTRA ? "**PASS**" : "**FAIL**"} — statements per agent turn counted: a short turn ${value(agg, "shortStatementsPerTurn")}, a ${value(agg, "longSeconds")}-second turn ${value(agg, "longStatements")} (Mastra: ${MASTRA})`,
      `${perEvent <= 2.5 ? "**PASS**" : "**FAIL**"} — at most two statements per appended event on the hot path, in the agent loop: ${num(perEvent)} per event`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
