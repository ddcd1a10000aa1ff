/**
 * Public-API benchmark (issue 14): what a harness author gets from `Session` on sessions of 1,000,
 * 10,000 and 100,000 steps, each figure beside a raw SQLite table of the same bytes measured in
 * the same run (bench/api/raw.ts) and Pi's session manager as a reference column (bench/api/pi.ts,
 * where installed). One step = one event (bench/api/workload.ts). Everything is a fresh process
 * (bench/api/probe.ts, bench/api/pi.ts, compiled; modules imported before the clock starts):
 *
 * - **append**: the writer commits one step per `session.commit`, timed in blocks of 128 steps;
 *   after each block the raw baseline inserts the same payloads (one row per event, WAL,
 *   `synchronous=NORMAL`, autocommit) — the ratio is per block, in the writer's process. Its peak
 *   RSS is measured in a writer process of its own (probe `write-alone`), as the raw writer's and Pi's are.
 * - **all**: `Session.open` + every message of `session.tree` (`select`) with its text; raw: every
 *   row read and decoded; Pi: `SessionManager.open` + `buildSessionContext()`. Peak RSS of this
 *   process is the "full resume" figure.
 * - **half**: `Session.open` + `session.at(event after step N/2)` + every message of it with its
 *   text; raw: the rows up to it; Pi: `branch(entry)` + `buildSessionContext()`.
 * - **fork**: `Session.open` + `session.fork(event after step N/2)` + one `commit` of a step on the
 *   fork; raw: a branch row + one event row; Pi: `branch(entry)` + the step's two entries.
 *   The open and the fork + commit are also reported apart.
 * Probes run in interleaved rounds (strata, raw, Pi for each operation); ratios are per round.
 * Each probe runs as plain JavaScript (`node probe.mjs`, compiled once per run by
 * bench/lib/compiled.ts), as a harness author's program runs: under tsx every process would carry
 * ~40 MB of loader that is not the library's memory.
 *
 * Run: npx tsx bench/run.ts public   (by hand: BENCH_STEPS=1000,10000 node --import tsx bench/api/public.ts)
 * Knobs: BENCH_STEPS (sizes), BENCH_PROBES (rounds, default 5), BENCH_PI_DIR (where Pi is, see
 * bench/api/pi.ts), BENCH_API_KEEP=<dir> (write the sessions there and keep them, with the probe
 * command lines in <dir>/<steps>/probes.txt, to profile a probe by hand: `node --cpu-prof …`).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileScript } from "../lib/compiled.ts";
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
} from "../lib/harness.ts";
import { median, num, type Sample, summarize, table } from "../lib/stats.ts";
import { piStatus } from "./pi.ts";

const NAME = "public";
const SIZES = (process.env.BENCH_STEPS ?? "1000,10000,100000").split(",").map(Number);
const PROBES = Number(process.env.BENCH_PROBES ?? 5);
const ROOT = join(import.meta.dirname, "..", "..");
const TAIL_BLOCKS = 10;
const KEEP = process.env.BENCH_API_KEEP ?? "";

type Impl = "strata" | "raw" | "pi";

interface Probe {
  ms: number;
  openMs: number;
  opMs: number;
  maxRssKb: number;
  messages?: number;
  chars?: number;
}

/** The probes as plain JavaScript (bench/lib/compiled.ts), compiled once per run by `measure`. */
const compiled: Record<string, string> = {};

function run<T>(script: string, args: readonly (string | number)[]): T {
  const file = compiled[script];
  if (file === undefined) throw new Error(`${script} was not compiled`);
  const r = spawnSync(process.execPath, [file, ...args.map(String)], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")} failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as T;
}

function copyDb(from: string, to: string): void {
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
}

function measureSize(steps: number, root: string, pi: boolean, metrics: Record<string, Sample>, values: Record<string, number>): void {
  const tag = String(steps);
  const dir = join(root, tag);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "pi"), { recursive: true });
  const half = Math.floor(steps / 2);

  progress(NAME, `${steps} steps: writers`);
  const w = run<{
    session: string;
    half: number;
    halfRow: number;
    commit: number[];
    insert: number[];
    ratio: number[];
    bytesPerStep: number;
    maxRssKb: number;
  }>("probe.ts", ["write", dir, steps]);
  metrics[`commit.${tag}`] = summarize(w.commit, "µs");
  metrics[`insert.${tag}`] = summarize(w.insert, "µs");
  values[`commitRatio.${tag}`] = median(w.ratio);
  values[`commitTailUs.${tag}`] = median(w.commit.slice(-TAIL_BLOCKS));
  values[`bytesPerStep.${tag}`] = w.bytesPerStep;
  values[`writeRssWithRaw.strata.${tag}`] = w.maxRssKb * 1024;
  // The writing process's peak RSS is measured alone, as the raw writer's and Pi's are.
  const sw = run<{ maxRssKb: number }>("probe.ts", ["write-alone", join(dir, "strata-alone.db"), steps]);
  for (const f of ["", "-wal", "-shm"]) rmSync(join(dir, `strata-alone.db${f}`), { force: true });
  values[`writeRss.strata.${tag}`] = sw.maxRssKb * 1024;
  const rw = run<{ insert: number[]; maxRssKb: number }>("probe.ts", ["raw-write", join(dir, "raw-alone.db"), steps]);
  rmSync(join(dir, "raw-alone.db"), { force: true });
  values[`writeRss.raw.${tag}`] = rw.maxRssKb * 1024;
  metrics[`insertAlone.${tag}`] = summarize(rw.insert, "µs");
  let piFile = "";
  let piHalf = "";
  if (pi) {
    const pw = run<{ file: string; half: string; append: number[]; maxRssKb: number }>("pi.ts", ["write", join(dir, "pi"), steps]);
    piFile = pw.file;
    piHalf = pw.half;
    metrics[`append.pi.${tag}`] = summarize(pw.append, "µs");
    values[`writeRss.pi.${tag}`] = pw.maxRssKb * 1024;
  }

  // Forks write: each implementation forks in a copy, so the reads see the session as written.
  copyDb(join(dir, "strata.db"), join(dir, "strata-fork.db"));
  copyDb(join(dir, "raw.db"), join(dir, "raw-fork.db"));
  if (pi) copyFileSync(piFile, join(dir, "pi-fork.jsonl"));

  const args = {
    all: { strata: ["all", join(dir, "strata.db"), w.session], raw: ["raw-all", join(dir, "raw.db"), w.session], pi: ["all", piFile] },
    half: {
      strata: ["half", join(dir, "strata.db"), w.session, w.half],
      raw: ["raw-half", join(dir, "raw.db"), w.session, w.halfRow],
      pi: ["half", piFile, piHalf],
    },
    fork: {
      strata: ["fork", join(dir, "strata-fork.db"), w.session, w.half],
      raw: ["raw-fork", join(dir, "raw-fork.db"), w.session, w.halfRow],
      pi: ["fork", join(dir, "pi-fork.jsonl"), piHalf],
    },
  } as const;
  const impls: Impl[] = pi ? ["strata", "raw", "pi"] : ["strata", "raw"];
  if (KEEP !== "")
    writeFileSync(
      join(dir, "probes.txt"),
      (["all", "half", "fork"] as const)
        .flatMap((op) => impls.map((impl) => `node ${compiled[impl === "pi" ? "pi.ts" : "probe.ts"]} ${args[op][impl].join(" ")}`))
        .join("\n")
        .concat("\n"),
    );
  const got: Record<string, Probe[]> = {};
  progress(NAME, `${steps} steps: ${PROBES} rounds of probes`);
  for (let round = 0; round < PROBES; round++)
    for (const op of ["all", "half", "fork"] as const)
      for (const impl of impls) {
        const p = run<Probe>(impl === "pi" ? "pi.ts" : "probe.ts", args[op][impl]);
        const list = got[`${op}.${impl}`] ?? [];
        list.push(p);
        got[`${op}.${impl}`] = list;
      }

  // Every reader must have read the same content (else the comparison means nothing).
  const seen = (op: string, impl: Impl) => (got[`${op}.${impl}`] as Probe[])[0] as Probe;
  for (const op of ["all", "half"] as const) {
    const want = (op === "all" ? steps : half) * 3;
    for (const impl of impls)
      if (seen(op, impl).messages !== want || seen(op, impl).chars !== seen(op, "raw").chars)
        throw new Error(
          `${op} at ${steps} steps: ${impl} read ${seen(op, impl).messages} messages / ${seen(op, impl).chars} chars, raw ${seen(op, "raw").chars} chars, expected ${want} messages`,
        );
  }

  for (const op of ["all", "half", "fork"] as const) {
    for (const impl of impls) {
      const list = got[`${op}.${impl}`] as Probe[];
      metrics[`${op}.${impl}.${tag}`] = summarize(
        list.map((p) => p.ms),
        "ms",
      );
      metrics[`${op}Open.${impl}.${tag}`] = summarize(
        list.map((p) => p.openMs),
        "ms",
      );
      metrics[`${op}Op.${impl}.${tag}`] = summarize(
        list.map((p) => p.opMs),
        "ms",
      );
      if (op === "all") values[`resumeRss.${impl}.${tag}`] = median(list.map((p) => p.maxRssKb * 1024));
    }
    const s = got[`${op}.strata`] as Probe[];
    const r = got[`${op}.raw`] as Probe[];
    values[`${op}Ratio.${tag}`] = median(s.map((p, i) => p.ms / (r[i] as Probe).ms));
    if (op === "all") values[`resumeRssRatio.${tag}`] = median(s.map((p, i) => p.maxRssKb / (r[i] as Probe).maxRssKb));
  }
  values[`writeRssRatio.${tag}`] = (values[`writeRss.strata.${tag}`] as number) / (values[`writeRss.raw.${tag}`] as number);
  if (KEEP === "") rmSync(dir, { recursive: true, force: true });
}

/** The sizes a result holds, in order (from its values, so a saved result renders without env). */
function sizesOf(agg: Aggregate): number[] {
  return Object.keys(agg.values)
    .filter((k) => k.startsWith("bytesPerStep."))
    .map((k) => Number(k.slice("bytesPerStep.".length)))
    .sort((a, b) => a - b);
}

const mod: BenchModule = {
  title: "Append, every message, state at N/2, fork (issue 14's table)",
  async measure(): Promise<RunResult> {
    for (const script of ["probe.ts", "pi.ts"]) compiled[script] = await compileScript(join(ROOT, "bench", "api", script));
    const root = KEEP === "" ? mkdtempSync(join(tmpdir(), "strata-bench-api-")) : KEEP;
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    const pi = piStatus();
    progress(NAME, pi.installed ? `Pi ${pi.version}: ${pi.detail}` : `Pi: ${pi.detail} (its column says so)`);
    values["pi.installed"] = pi.installed ? 1 : 0;
    if (pi.installed) {
      const [major, minor, patch] = pi.version.split(".").map((x) => Number.parseInt(x, 10));
      values["pi.version"] = (major ?? 0) * 1e6 + (minor ?? 0) * 1e3 + (patch ?? 0);
    }
    try {
      for (const n of SIZES) measureSize(n, root, pi.installed, metrics, values);
      const first = SIZES[0] as number;
      for (const n of SIZES) {
        values[`commitScale.${n}`] = (values[`commitTailUs.${n}`] as number) / (metrics[`commit.${first}`] as Sample).median;
        values[`forkScale.${n}`] = (metrics[`fork.strata.${n}`] as Sample).median / (metrics[`fork.strata.${first}`] as Sample).median;
      }
    } finally {
      if (KEEP === "") rmSync(root, { recursive: true, force: true });
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    const sizes = sizesOf(agg);
    const piInstalled = (agg.values["pi.installed"]?.median ?? 0) === 1;
    const v = agg.values["pi.version"]?.median;
    const piVersion = v === undefined ? "" : `${Math.floor(v / 1e6)}.${Math.floor(v / 1e3) % 1e3}.${v % 1e3}`;
    const piCell = (key: string, bytes = false) => {
      if (!piInstalled) return "not installed";
      return bytes ? byteValue(agg, key) : cell(agg, key);
    };
    const sections = [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      "Fresh process per figure (bench/api/probe.ts, bench/api/pi.ts; modules imported before the clock starts), each run as plain JavaScript — `node probe.mjs`, the probe and the strata sources bundled once per run by bench/lib/compiled.ts, as a harness author's program runs (under tsx every process carries ~40 MB of loader that is not the library's memory) — " +
        `${agg.metrics[`all.strata.${sizes[0]}`]?.n ?? "?"} probes per operation, size and run, in interleaved rounds (strata, raw, Pi); ` +
        "ratios are taken per round. Only the public API is timed: `openStore` and `Session` from `@strata/store` and `@strata/engine`, `select` from `@strata/dom`. " +
        "**One step = one event**, as the issue defines it: a `<turn>` with a 380 B assistant text and a `<call status=executed>` holding ~300 B of JSON arguments and a 1–2 KB tool output, " +
        `inserted by one \`session.commit\` (${sizes.map((n) => `${num(agg.values[`bytesPerStep.${n}`]?.median ?? Number.NaN)} B`).join(", ")} of payload per step; the store and engine sections write the same texts as three events per step, ~2.7 KB, which is the figure the issue quotes). ` +
        "_Raw SQLite_ (better-sqlite3): one row per event (WAL, `synchronous=NORMAL`, autocommit), the same payloads; reads decode every row up to the state; a fork is a branch row plus the event row. " +
        "_Append_: blocks of 128 steps committed by the writer, each followed by the raw inserts of the same payloads in the same process (ratio per block); " +
        '_every message_: `Session.open` + `select(session.tree, "assistant, args, output")`, each element\'s text read; ' +
        "_state at N/2_: `Session.open` + `session.at(e)` for the event after step N/2 (its id given on the probe command line, as `strata show S@E` gets it), then every message of that tree; " +
        "_fork_: `Session.open` + `session.fork(e)` + one `commit` on the fork (in a copy of the file); " +
        "_peak RSS_: the peak resident set (`VmHWM`, not `maxRSS`, which in a spawned child starts from its parent's RSS; bench/lib/rss.ts) of a writer process of its own for each (`write-alone`: `Session.create` + the commits and nothing else; the timed writer, which also runs the raw inserts, is not used for it) and of the _every message_ process. " +
        (piInstalled
          ? `_Pi_ (${"`@mariozechner/pi-coding-agent`"} ${piVersion}, its \`SessionManager\`): a step is its two native entries (assistant message with the tool call, tool result), each \`appendMessage\` an \`appendFileSync\` without fsync; ` +
            "open is `SessionManager.open` (reads and parses the whole JSONL file), every message is `buildSessionContext()`, the state at N/2 is `branch(entry)` (its leaf moved, in memory) + `buildSessionContext()`, the fork is `branch(entry)` in the same file plus the step's two entries."
          : "_Pi_: not installed (`@mariozechner/pi-coding-agent`; set `BENCH_PI_DIR` to a directory holding it)."),
      "",
    ];
    for (const n of sizes) {
      const t = String(n);
      const rows = [
        [
          "append one step (`commit`), per step",
          cell(agg, `commit.${t}`),
          cell(agg, `insert.${t}`),
          ratio(agg, `commitRatio.${t}`),
          piCell(`append.pi.${t}`) + (piInstalled ? " (no fsync)" : ""),
          "≤ 1.3× raw",
        ],
        [
          "open + every message with its content",
          cell(agg, `all.strata.${t}`),
          cell(agg, `all.raw.${t}`),
          ratio(agg, `allRatio.${t}`),
          piCell(`all.pi.${t}`),
          "≤ 1.2× raw",
        ],
        ["… of which the open", cell(agg, `allOpen.strata.${t}`), cell(agg, `allOpen.raw.${t}`), "", piCell(`allOpen.pi.${t}`), ""],
        [
          "open + state at N/2 with content, cold",
          cell(agg, `half.strata.${t}`),
          cell(agg, `half.raw.${t}`),
          ratio(agg, `halfRatio.${t}`),
          piCell(`half.pi.${t}`),
          "≤ 1.2× raw",
        ],
        [
          "open + fork at N/2 + one committed step",
          cell(agg, `fork.strata.${t}`),
          cell(agg, `fork.raw.${t}`),
          ratio(agg, `forkRatio.${t}`),
          piCell(`fork.pi.${t}`),
          "≤ 5 ms, flat in N",
        ],
        [
          "… of which fork + commit (after the open)",
          cell(agg, `forkOp.strata.${t}`),
          cell(agg, `forkOp.raw.${t}`),
          "",
          piCell(`forkOp.pi.${t}`),
          "",
        ],
        [
          "peak RSS of the writing process",
          byteValue(agg, `writeRss.strata.${t}`),
          byteValue(agg, `writeRss.raw.${t}`),
          ratio(agg, `writeRssRatio.${t}`),
          piCell(`writeRss.pi.${t}`, true),
          "≤ 200 MB",
        ],
        [
          "peak RSS of a full resume",
          byteValue(agg, `resumeRss.strata.${t}`),
          byteValue(agg, `resumeRss.raw.${t}`),
          ratio(agg, `resumeRssRatio.${t}`),
          piCell(`resumeRss.pi.${t}`, true),
          "≤ 1.1× raw",
        ],
      ];
      sections.push(
        table([`${n.toLocaleString("en-US")} steps (fresh processes)`, "strata", "raw SQLite", "strata / raw", "Pi", "goal"], rows, [
          "l",
          "r",
          "r",
          "r",
          "r",
          "r",
        ]),
        "",
      );
    }
    return sections.join("\n").trimEnd();
  },
  verdicts(agg: Aggregate): string[] {
    const sizes = sizesOf(agg);
    const first = sizes[0] as number;
    const last = sizes[sizes.length - 1] as number;
    const big = last.toLocaleString("en-US");
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    const each = (k: string) => sizes.map((n) => ({ key: `${k}.${n}`, label: `${n} steps` }));
    const forkMs = sizes.map((n) => med(agg, `fork.strata.${n}`));
    const writeRss = agg.values[`writeRss.strata.${last}`]?.median ?? Number.POSITIVE_INFINITY;
    return [
      targetLine(agg, "append one step (`session.commit`) ≤ 1.3× the raw insert of the same bytes", each("commitRatio"), "<=", 1.3),
      targetLine(
        agg,
        `append flat in N (per-step commit over the last ${TAIL_BLOCKS} blocks at N within 1.2× of ${first.toLocaleString("en-US")} steps)`,
        sizes.slice(1).map((n) => ({ key: `commitScale.${n}`, label: `${n}/${first}` })),
        "<=",
        1.2,
      ),
      targetLine(agg, "open + every message with its content ≤ 1.2× the raw read of the same bytes", each("allRatio"), "<=", 1.2),
      targetLine(agg, "open + state at N/2 with content (cold) ≤ 1.2× the raw read", each("halfRatio"), "<=", 1.2),
      line(
        forkMs.every((ms) => ms <= 5),
        `open + fork at N/2 + one committed step ≤ 5 ms at every size, flat in N: ${sizes
          .map((n, i) => `${n.toLocaleString("en-US")} steps ${num(forkMs[i] as number)} ms`)
          .join(", ")} (${big}/${first.toLocaleString("en-US")}: ${num(med(agg, `forkScale.${last}`))}×; fork + commit after the open ${num(
          med(agg, `forkOp.strata.${last}`),
        )} ms at ${big})`,
      ),
      line(writeRss <= 200e6, `peak RSS of the writing process at ${big} steps ≤ 200 MB: ${byteValue(agg, `writeRss.strata.${last}`)}`),
      targetLine(
        agg,
        `peak RSS of a full resume ≤ 1.1× the raw reader's (judged at ${big} steps)`,
        [{ key: `resumeRssRatio.${last}`, label: `${last} steps` }],
        "<=",
        1.1,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
