/**
 * The contract between `bench/run.ts` and a benchmark file. A benchmark file measures once per
 * process and reports a {@link RunResult}; the runner starts it in N fresh processes and folds the
 * N results into an {@link Aggregate}, from which the file renders its markdown.
 *
 * Figures: a timed metric is the median over processes of each process's median; its spread is the
 * lowest p10 to the highest p90 seen in any process (within-run and between-run noise together).
 * A ratio is computed inside each process (figure and baseline measured in the same run, in
 * interleaved rounds: median of the per-round ratios) and then summarized as median (min–max) over
 * processes.
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { bytes, median, num, type Sample } from "./stats.ts";

/** What one process reports. */
export interface RunResult {
  /** Timed or sampled figures. */
  readonly metrics: Record<string, Sample>;
  /** Plain numbers: ratios of same-run medians, sizes, counts. */
  readonly values: Record<string, number>;
}

export interface AggMetric {
  readonly unit: string;
  /** Median over processes of the per-process medians. */
  readonly median: number;
  /** Lowest per-process p10. */
  readonly lo: number;
  /** Highest per-process p90. */
  readonly hi: number;
  /** The per-process medians. */
  readonly runs: readonly number[];
  /** Samples per process (median) and calls per sample (median). */
  readonly n: number;
  readonly batch: number;
}

export interface AggValue {
  readonly median: number;
  readonly lo: number;
  readonly hi: number;
  readonly runs: readonly number[];
}

/** Where and how a result was produced. */
export interface RunInfo {
  readonly command: string;
  readonly date: string;
  readonly node: string;
  readonly cores: number;
  readonly cpu: string;
  readonly runs: number;
  /** What was measured: a fingerprint of the package's sources (set by the runner). */
  readonly source?: string;
}

export interface Aggregate {
  readonly name: string;
  readonly info: RunInfo;
  readonly metrics: Record<string, AggMetric>;
  readonly values: Record<string, AggValue>;
}

/** A benchmark file's exports. */
export interface BenchModule {
  readonly title: string;
  measure(): RunResult | Promise<RunResult>;
  render(agg: Aggregate): string;
  /** One line per target of the issue: what was measured, the figure, PASS/FAIL. */
  verdicts(agg: Aggregate): string[];
}

export function machineInfo(command: string, runs: number): RunInfo {
  const list = cpus();
  return {
    command,
    date: new Date().toISOString(),
    node: process.version,
    cores: list.length,
    cpu: (list[0]?.model ?? "unknown").trim(),
    runs,
  };
}

/** Folds the results of several processes. */
export function aggregate(name: string, info: RunInfo, results: readonly RunResult[]): Aggregate {
  const metrics: Record<string, AggMetric> = {};
  const values: Record<string, AggValue> = {};
  const metricKeys = new Set(results.flatMap((r) => Object.keys(r.metrics)));
  for (const k of metricKeys) {
    const ss = results.map((r) => r.metrics[k]).filter((s): s is Sample => s !== undefined);
    const runs = ss.map((s) => s.median);
    metrics[k] = {
      unit: (ss[0] as Sample).unit,
      median: median(runs),
      lo: Math.min(...ss.map((s) => s.p10)),
      hi: Math.max(...ss.map((s) => s.p90)),
      runs,
      n: median(ss.map((s) => s.n)),
      batch: median(ss.map((s) => s.batch)),
    };
  }
  const valueKeys = new Set(results.flatMap((r) => Object.keys(r.values)));
  for (const k of valueKeys) {
    const runs = results.map((r) => r.values[k]).filter((v): v is number => v !== undefined);
    values[k] = { median: median(runs), lo: Math.min(...runs), hi: Math.max(...runs), runs };
  }
  return { name, info, metrics, values };
}

// ---- rendering helpers ----

/** `12.3 µs (11.8–13.1)`: median and spread of a metric. Missing metrics render as "–". */
export function cell(agg: Aggregate, key: string, digits = 3): string {
  const m = agg.metrics[key];
  if (m === undefined) return "–";
  return `${num(m.median, digits)} ${m.unit} (${num(m.lo, digits)}–${num(m.hi, digits)})`;
}

/** Median of a metric, or NaN. */
export function med(agg: Aggregate, key: string): number {
  return agg.metrics[key]?.median ?? agg.values[key]?.median ?? Number.NaN;
}

/** `1.42× (1.38–1.51)`: a same-run ratio, median and range over processes. */
export function ratio(agg: Aggregate, key: string): string {
  const v = agg.values[key];
  if (v === undefined) return "–";
  return `${num(v.median)}× (${num(v.lo)}–${num(v.hi)})`;
}

/** A plain value with its range over processes. */
export function value(agg: Aggregate, key: string, fmt: (x: number) => string = (x) => num(x)): string {
  const v = agg.values[key];
  if (v === undefined) return "–";
  if (v.lo === v.hi) return fmt(v.median);
  return `${fmt(v.median)} (${fmt(v.lo)}–${fmt(v.hi)})`;
}

/** A byte count with its range over processes. */
export function byteValue(agg: Aggregate, key: string): string {
  return value(agg, key, bytes);
}

/**
 * PASS/FAIL of a same-run ratio against a target, judged on the median; flagged when the range
 * over processes crosses the target.
 */
export function verdict(agg: Aggregate, key: string, op: "<=" | "<", target: number): string {
  const v = agg.values[key];
  if (v === undefined) return "not measured";
  const ok = (x: number) => (op === "<=" ? x <= target : x < target);
  const pass = ok(v.median);
  const borderline = ok(v.lo) !== ok(v.hi);
  return `${pass ? "**PASS**" : "**FAIL**"}${borderline ? " (range crosses the target)" : ""}`;
}

/** True when the median of a ratio meets the target. */
export function passes(agg: Aggregate, key: string, op: "<=" | "<", target: number): boolean {
  const v = agg.values[key]?.median;
  if (v === undefined) return false;
  return op === "<=" ? v <= target : v < target;
}

/**
 * One verdict line for a target checked on several same-run ratios: PASS when every median meets
 * it, otherwise FAIL naming the misses.
 */
export function targetLine(
  agg: Aggregate,
  what: string,
  checks: readonly { readonly key: string; readonly label: string }[],
  op: "<=" | "<",
  target: number,
  extra = "",
): string {
  const measured = checks.filter((c) => agg.values[c.key] !== undefined);
  if (measured.length === 0) return `**NOT MEASURED** — ${what}`;
  const misses = measured.filter((c) => !passes(agg, c.key, op, target));
  const shown = measured.map((c) => `${c.label} ${num(med(agg, c.key))}×`).join(", ");
  const sign = op === "<=" ? "≤" : "<";
  const tail = extra === "" ? "" : ` ${extra}`;
  if (misses.length === 0)
    return `**PASS** — ${what} (target ${sign} ${Number.isInteger(target) ? target : num(target)}×): ${shown}.${tail}`;
  return `**FAIL** — ${what} (target ${sign} ${Number.isInteger(target) ? target : num(target)}×): ${misses.length} of ${measured.length} missed (${misses
    .map((c) => `${c.label} ${ratio(agg, c.key)}`)
    .join("; ")}); all: ${shown}.${tail}`;
}

/** The "how this was produced" line under a benchmark's heading. */
export function provenance(agg: Aggregate): string {
  const i = agg.info;
  return (
    `Produced by \`${i.command}\` on ${i.date.slice(0, 16).replace("T", " ")} UTC, Node ${i.node}, ` +
    `${i.cores} cores (${i.cpu}); ${i.runs} process run${i.runs === 1 ? "" : "s"}` +
    (i.source === undefined ? "." : `; measured ${i.source}.`)
  );
}

// ---- child side ----

/** True when the module at `url` is the script node was started with. */
export function isMain(url: string): boolean {
  const script = process.argv[1];
  return script !== undefined && pathToFileURL(resolve(script)).href === url;
}

/** Progress line on stderr (stdout stays clean for results). */
export function progress(name: string, msg: string): void {
  process.stderr.write(`  [${name}] ${msg}\n`);
}

/**
 * Entry point of a benchmark file run as a script. Under the runner (`BENCH_OUT` set) it writes its
 * `RunResult` as JSON to that file; run by hand it prints the rendered markdown of this one run.
 */
export async function runAsScript(name: string, mod: BenchModule): Promise<void> {
  const result = await mod.measure();
  const out = process.env.BENCH_OUT;
  if (out !== undefined && out !== "") {
    writeFileSync(out, JSON.stringify(result));
    return;
  }
  const info = machineInfo(`node --expose-gc --import tsx ${process.argv[1] ?? name}`, 1);
  process.stdout.write(`${mod.render(aggregate(name, info, [result]))}\n`);
}
