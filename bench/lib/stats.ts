/**
 * Measurement helpers shared by every benchmark: timing with warm-up and calibrated batches,
 * interleaved comparisons (so a noisy neighbour hits the figure and its baseline alike),
 * retained-heap readings with forced GC, and a tiny markdown table writer.
 *
 * All times are in milliseconds unless a `Sample` says otherwise.
 */
import { performance } from "node:perf_hooks";

/** Summary of one set of timed samples (or readings) taken in one process. */
export interface Sample {
  readonly unit: string;
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly min: number;
  readonly max: number;
  /** Number of samples summarized. */
  readonly n: number;
  /** Calls per sample (each sample is the mean of `batch` calls). */
  readonly batch: number;
  /** The samples in the order taken (one per round when interleaved). */
  readonly raw: readonly number[];
}

/** Value at quantile `q` (0…1) of a sorted array, linearly interpolated. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

export function median(values: readonly number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** Summarizes raw values into a {@link Sample}. */
export function summarize(values: readonly number[], unit: string, batch = 1): Sample {
  const s = [...values].sort((a, b) => a - b);
  return {
    raw: [...values],
    unit,
    median: quantile(s, 0.5),
    p10: quantile(s, 0.1),
    p90: quantile(s, 0.9),
    min: s[0] ?? Number.NaN,
    max: s[s.length - 1] ?? Number.NaN,
    n: s.length,
    batch,
  };
}

/** Multiplies every figure of a sample (e.g. ms to µs). */
export function scale(s: Sample, factor: number, unit: string): Sample {
  return {
    ...s,
    unit,
    median: s.median * factor,
    p10: s.p10 * factor,
    p90: s.p90 * factor,
    min: s.min * factor,
    max: s.max * factor,
    raw: s.raw.map((x) => x * factor),
  };
}

/**
 * Ratio of two functions timed by {@link interleave}: the median over rounds of `num / den` within
 * the round (the two samples were taken back to back), which a slow drift of the machine cancels
 * out of. Falls back to the ratio of medians when the samples are not paired.
 */
export function pairedRatio(num: Sample, den: Sample): number {
  const n = Math.min(num.raw.length, den.raw.length);
  if (n === 0 || num.raw.length !== den.raw.length) return num.median / den.median;
  const ratios: number[] = [];
  for (let i = 0; i < n; i++) ratios.push((num.raw[i] as number) / (den.raw[i] as number));
  return median(ratios);
}

let sinkValue: unknown;
/** Keeps a result alive so the JIT cannot drop the work that produced it. */
export function sink(x: unknown): void {
  sinkValue = x;
}
/** @internal for tests of the harness */
export function lastSunk(): unknown {
  return sinkValue;
}

/** The function under test. It receives a running call index, used to pick distinct inputs. */
export type Bench = (i: number) => unknown;

export interface TimeOptions {
  /** Untimed calls before measuring (default: enough calls to fill `warmupMs`, at least 3). */
  readonly warmup?: number;
  /** Minimum time spent warming up, in ms (default 200). */
  readonly warmupMs?: number;
  /** Timed samples (default 15). */
  readonly iterations?: number;
  /** Each sample runs the function this many times and records the mean (default: calibrated). */
  readonly batch?: number;
  /** Target duration of one sample when calibrating `batch`, in ms (default 10). */
  readonly minSampleMs?: number;
  /** Stop taking samples after this much time (in ms) once `minIterations` are in (default 20,000). */
  readonly maxTimeMs?: number;
  /** Never fewer samples than this, whatever `maxTimeMs` says (default 3). */
  readonly minIterations?: number;
}

interface Plan {
  readonly fn: Bench;
  batch: number;
  counter: number;
  readonly values: number[];
}

function warm(plan: Plan, opts: TimeOptions): void {
  const warmupMs = opts.warmupMs ?? 200;
  const minSampleMs = opts.minSampleMs ?? 10;
  let calls = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (calls < (opts.warmup ?? 3) || elapsed < warmupMs) {
    sink(plan.fn(plan.counter++));
    calls++;
    elapsed = performance.now() - t0;
    if (opts.warmup !== undefined && calls >= opts.warmup && elapsed >= Math.min(warmupMs, 50)) break;
  }
  if (opts.batch !== undefined) plan.batch = opts.batch;
  else {
    const perCall = elapsed / calls;
    plan.batch = Math.max(1, Math.ceil(minSampleMs / Math.max(perCall, 1e-6)));
  }
}

function sampleOnce(plan: Plan): number {
  const { fn, batch } = plan;
  let i = plan.counter;
  const t0 = performance.now();
  for (let b = 0; b < batch; b++) sink(fn(i++));
  const t1 = performance.now();
  plan.counter = i;
  return (t1 - t0) / batch;
}

/** Times `fn`: warm-up, then `iterations` samples of `batch` calls each. Returns ms per call. */
export function time(fn: Bench, opts: TimeOptions = {}): Sample {
  return interleave({ only: fn }, opts).only as Sample;
}

/**
 * Times several functions in rounds, one sample of each per round, so that slow phases of a noisy
 * machine fall on all of them. Returns ms per call for each key.
 */
export function interleave<K extends string>(fns: Record<K, Bench>, opts: TimeOptions = {}): Record<K, Sample> {
  const keys = Object.keys(fns) as K[];
  const plans = new Map<K, Plan>();
  for (const k of keys) {
    const plan: Plan = { fn: fns[k], batch: 1, counter: 0, values: [] };
    warm(plan, opts);
    plans.set(k, plan);
  }
  const iterations = opts.iterations ?? 15;
  const minIterations = Math.min(opts.minIterations ?? 3, iterations);
  const maxTimeMs = opts.maxTimeMs ?? 20_000;
  const t0 = performance.now();
  for (let r = 0; r < iterations; r++) {
    if (r >= minIterations && performance.now() - t0 > maxTimeMs) break;
    for (const k of keys) {
      const plan = plans.get(k) as Plan;
      plan.values.push(sampleOnce(plan));
    }
  }
  const out = {} as Record<K, Sample>;
  for (const k of keys) {
    const plan = plans.get(k) as Plan;
    out[k] = summarize(plan.values, "ms", plan.batch);
  }
  return out;
}

/** Times a single call of `fn` (for one-off costs such as a first produce). */
export function once(fn: () => unknown): number {
  const t0 = performance.now();
  sink(fn());
  return performance.now() - t0;
}

// ---- memory ----

type GcFn = () => void;

/** True when the process runs with `--expose-gc`. */
export function canGc(): boolean {
  return typeof (globalThis as { gc?: GcFn }).gc === "function";
}

/** Forces full collections (several, so that finalization and weak processing settle). */
export function fullGc(): void {
  const gc = (globalThis as { gc?: GcFn }).gc;
  if (gc === undefined) throw new Error("run with node --expose-gc (bench/run.ts does this) to measure memory");
  for (let i = 0; i < 4; i++) gc();
}

/** Heap in use after forced GC, in bytes. */
export function heapUsed(): number {
  fullGc();
  return process.memoryUsage().heapUsed;
}

/**
 * Retained heap of what `build` returns, in bytes: the heap after building (and keeping the result)
 * minus the heap before, both after forced GC. Returns the value so the caller can keep using it.
 */
export function retained<T>(build: () => T): { value: T; bytes: number } {
  const before = heapUsed();
  const value = build();
  const after = heapUsed();
  return { value, bytes: after - before };
}

// ---- formatting ----

/** A number with about three significant digits and thousands separators. */
export function num(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a === 0) return "0";
  if (a >= 10 ** digits) return Math.round(x).toLocaleString("en-US");
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(a)));
  return x.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Byte count as B, KB, MB (decimal units, as MB/s throughputs use). */
export function bytes(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e9) return `${num(n / 1e9)} GB`;
  if (a >= 1e6) return `${num(n / 1e6)} MB`;
  if (a >= 1e3) return `${num(n / 1e3)} KB`;
  return `${Math.round(n)} B`;
}

export type Align = "l" | "r" | "c";

/** A GitHub-flavoured markdown table. Pipes in cells are escaped. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], align: readonly Align[] = []): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const sep = headers.map((_, i) => {
    const a = align[i] ?? (i === 0 ? "l" : "r");
    return a === "r" ? "---:" : a === "c" ? ":---:" : "---";
  });
  const line = (cells: readonly string[]) => `| ${cells.map(esc).join(" | ")} |`;
  return [line(headers), `|${sep.join("|")}|`, ...rows.map(line)].join("\n");
}

// ---- deterministic randomness ----

/** A small seeded PRNG (mulberry32), so every run builds the same trees and picks the same targets. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random element of `xs`. */
export function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}
