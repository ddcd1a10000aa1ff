/**
 * Benchmark 4 — memory of kept versions. Target (issue): 10,000 successive versions of a
 * 100,000-element tree, each one op away from the previous (mostly `set` on random elements, some
 * `append`), all kept alive, retain less than 10× the base tree.
 *
 * Readings are `process.memoryUsage().heapUsed` after forced full GCs (`--expose-gc`):
 * base = heap with the tree − heap before it; versions = heap with the 10,000 versions − heap with
 * the tree, the targets and nothing else. Each reading is repeated 3 times per process (rebuilding
 * what is measured). Same-run baseline for the per-version figure: the same 10,000 edits with immer
 * `produce` (autoFreeze off) on the plain bucketed layout.
 *
 * Run: npx tsx bench/run.ts memory
 */
import { applyPatch, type NodeId, type Op, type Tree } from "@strata/dom";
import { Immer } from "immer";
import { type BucketRec, type BucketState, bucketState } from "../lib/buckets.ts";
import {
  type Aggregate,
  type BenchModule,
  cell,
  isMain,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  targetLine,
  verdict,
} from "../lib/harness.ts";
import { sessionTree, targets } from "../lib/session.ts";
import { heapUsed, pick, rng, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "memory";
const ELEMENTS = 100_000;
const VERSIONS = 10_000;
const APPEND_SHARE = 0.1;
const REPEATS = 3;
const TARGET = 10;

interface Edit {
  readonly kind: "set" | "append";
  readonly id: number;
}

/** The edit sequence: 90% `set status` on a random element, 10% `append` to a random leaf. */
function edits(all: readonly number[], leaves: readonly number[], seed: number): Edit[] {
  const r = rng(seed);
  const out: Edit[] = [];
  for (let i = 0; i < VERSIONS; i++)
    out.push(r() < APPEND_SHARE ? { kind: "append", id: pick(r, leaves) } : { kind: "set", id: pick(r, all) });
  return out;
}

function strataVersions(base: Tree, plan: readonly Edit[]): Tree[] {
  const versions: Tree[] = [];
  let t = base;
  for (let i = 0; i < plan.length; i++) {
    const e = plan[i] as Edit;
    const op: Op = e.kind === "set" ? ["set", e.id as NodeId, "status", `v${i}`] : ["append", e.id as NodeId, ` +${i}`];
    t = applyPatch(t, [op]);
    versions.push(t);
  }
  return versions;
}

const immer = new Immer({ autoFreeze: false });

function immerVersions(base: BucketState, plan: readonly Edit[]): BucketState[] {
  const versions: BucketState[] = [];
  let s = base;
  for (let i = 0; i < plan.length; i++) {
    const e = plan[i] as Edit;
    s = immer.produce(s, (d) => {
      const rec = (d.buckets[e.id >> 8] as Record<number, BucketRec>)[e.id & 255] as BucketRec;
      if (e.kind === "set") rec.attrs.status = `v${i}`;
      else rec.text += ` +${i}`;
    });
    versions.push(s);
  }
  return versions;
}

const MB = 1e6;

interface Reading {
  readonly base: number;
  readonly versions: number;
  readonly immerBase: number;
  readonly immerVersions: number;
}

/**
 * One repetition. Everything it allocates is referenced only from this frame (and the callees'),
 * so it is all garbage once it returns: locals of a loop body could otherwise stay alive in the
 * interpreter's registers into the next repetition and skew its "before" reading.
 */
function once(rep: number): Reading {
  progress(NAME, `repeat ${rep + 1}/${REPEATS}: base tree of ${ELEMENTS} elements`);
  const h0 = heapUsed();
  const tree = sessionTree(ELEMENTS, { seed: 31 });
  const h1 = heapUsed();
  const t = targets(tree);
  const plan = edits(t.all, t.leaves, 41);
  progress(NAME, `repeat ${rep + 1}/${REPEATS}: ${VERSIONS} versions`);
  const versions = keepStrata(tree, plan);
  progress(NAME, `repeat ${rep + 1}/${REPEATS}: immer baseline`);
  const immer = keepImmer(tree, plan);
  return { base: h1 - h0, versions, immerBase: immer.base, immerVersions: immer.versions };
}

/** Retained bytes of the versions made from `tree` (the tree itself is alive before and after). */
function keepStrata(tree: Tree, plan: readonly Edit[]): number {
  const before = heapUsed();
  const versions = strataVersions(tree, plan);
  const after = heapUsed();
  if ((versions[VERSIONS - 1] as Tree).size !== ELEMENTS) throw new Error("edits changed the element count");
  return after - before;
}

function keepImmer(tree: Tree, plan: readonly Edit[]): { base: number; versions: number } {
  const h0 = heapUsed();
  const state = bucketState(tree);
  const h1 = heapUsed();
  const versions = immerVersions(state, plan);
  const h2 = heapUsed();
  if (versions.length !== VERSIONS) throw new Error("missing immer versions");
  return { base: h1 - h0, versions: h2 - h1 };
}

export function measure(): RunResult {
  const readings: Reading[] = [];
  for (let rep = 0; rep < REPEATS; rep++) readings.push(once(rep));
  progress(NAME, `readings (bytes): ${JSON.stringify(readings)}`);
  const baseBytes = readings.map((r) => r.base);
  const verBytes = readings.map((r) => r.versions);
  const immerBase = readings.map((r) => r.immerBase);
  const immerVer = readings.map((r) => r.immerVersions);
  const ratios = readings.map((r) => r.versions / r.base);
  const immerRatios = readings.map((r) => r.immerVersions / r.immerBase);
  const metrics: Record<string, Sample> = {
    base: summarize(
      baseBytes.map((b) => b / MB),
      "MB",
    ),
    versions: summarize(
      verBytes.map((b) => b / MB),
      "MB",
    ),
    perVersion: summarize(
      verBytes.map((b) => b / VERSIONS / 1000),
      "KB",
    ),
    immerBase: summarize(
      immerBase.map((b) => b / MB),
      "MB",
    ),
    immerVersions: summarize(
      immerVer.map((b) => b / MB),
      "MB",
    ),
    immerPerVersion: summarize(
      immerVer.map((b) => b / VERSIONS / 1000),
      "KB",
    ),
  };
  const m = (k: string) => (metrics[k] as Sample).median;
  return {
    metrics,
    values: {
      ratio: summarize(ratios, "×").median,
      immerRatio: summarize(immerRatios, "×").median,
      perVersionVsImmer: m("perVersion") / m("immerPerVersion"),
    },
  };
}

export function render(agg: Aggregate): string {
  const rows = [
    [
      "@strata/dom (`applyPatch`)",
      cell(agg, "base"),
      cell(agg, "versions"),
      cell(agg, "perVersion"),
      ratio(agg, "ratio"),
      `< ${TARGET}×`,
      verdict(agg, "ratio", "<", TARGET),
    ],
    [
      "immer `produce` on buckets of 256 (baseline)",
      cell(agg, "immerBase"),
      cell(agg, "immerVersions"),
      cell(agg, "immerPerVersion"),
      ratio(agg, "immerRatio"),
      "–",
      "–",
    ],
  ];
  return [
    "### 4. Memory of 10,000 kept versions (`bench/dom/memory.ts`)",
    "",
    provenance(agg),
    "",
    `A ${ELEMENTS.toLocaleString("en-US")}-element session tree, then ${VERSIONS.toLocaleString("en-US")} successive versions, each one op after the previous (${100 - APPEND_SHARE * 100}% \`set status\` on a random element, ${APPEND_SHARE * 100}% \`append\` to a random leaf), all kept in an array. Retained heap = \`process.memoryUsage().heapUsed\` after forced full GCs (\`--expose-gc\`) with the object alive, minus the same reading before it was made; each reading ${REPEATS}× per process. The baseline row applies the same edit sequence with immer \`produce\` (autoFreeze off) to the plain bucketed layout of the same tree.`,
    "",
    table(
      ["engine", "base tree", `${VERSIONS.toLocaleString("en-US")} versions`, "per version", "versions / base", "target", "verdict"],
      rows,
    ),
    "",
    `Per-version cost relative to the immer baseline (same run): ${ratio(agg, "perVersionVsImmer")}. The immer base figure is the bucketed records only: they share their text and name strings with the @strata/dom tree they were copied from, so it is not comparable with the @strata/dom base tree (which owns its strings); the per-version figures are comparable.`,
  ].join("\n");
}

export function verdicts(agg: Aggregate): string[] {
  return [
    targetLine(
      agg,
      `${VERSIONS.toLocaleString("en-US")} kept versions retain less than 10× the ${ELEMENTS.toLocaleString("en-US")}-element base tree (\`memory\`)`,
      [{ key: "ratio", label: "versions / base" }],
      "<",
      TARGET,
      `Base ${cell(agg, "base")}, versions ${cell(agg, "versions")}, ${cell(agg, "perVersion")} per version.`,
    ),
  ];
}

const mod: BenchModule = { title: "memory", measure, render, verdicts };
export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
