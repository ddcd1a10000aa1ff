/**
 * Benchmark 1 — cost of one op against tree size. Target (issue): one op on a 100,000-element tree
 * costs at most 2× the same op on a 1,000-element tree.
 *
 * Each op kind is measured on both trees in interleaved rounds. Every call applies a different op
 * (thousands of precomputed ops with random targets, cycled) to the same base version, so the
 * figure is the steady-state cost of `applyPatch(tree, [op])`, validation included, not one warm
 * path. Context for decision 0004: the same single-attribute edit with immer `produce` on a plain
 * bucketed layout (256 records per bucket), autoFreeze on and off, next to a chain of
 * `applyPatch` versions.
 *
 * Run: npx tsx bench/run.ts apply
 */
import { applyPatch, type NodeId, type NodeSpec, type Op, type Tree } from "@strata/dom";
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
import { BODY_ID, sessionTree, type Targets, targets, turnSpec } from "../lib/session.ts";
import { interleave, num, once, pairedRatio, pick, rng, type Sample, scale, table } from "../lib/stats.ts";

const NAME = "apply";
const SMALL = 1_000;
const LARGE = 100_000;
const OPS_PER_KIND = 8_192;
const TARGET = 2;

export const KINDS = ["set", "append", "ins", "rm", "mv"] as const;
type Kind = (typeof KINDS)[number];

const KIND_LABEL: Record<Kind, string> = {
  set: "`set` attribute on a random element",
  append: "`append` text to a random leaf",
  ins: "`ins` a 3-element turn at the end of body",
  rm: "`rm` a random leaf",
  mv: "`mv` a random leaf to the end of another turn",
};

/** `count` distinct ops of one kind against `tree`, with random targets. */
export function makeOps(tree: Tree, t: Targets, kind: Kind, count: number, seed: number): Op[] {
  const r = rng(seed);
  const ops: Op[] = [];
  const lastTurn = t.turns[t.turns.length - 1] as NodeId;
  const small: NodeSpec[] = [];
  for (let i = 0; i < 64; i++) {
    const full = turnSpec(r, 1_000_000 + i);
    small.push({ ...full, children: (full.children ?? []).slice(0, 2) });
  }
  for (let i = 0; i < count; i++) {
    switch (kind) {
      case "set":
        ops.push(["set", pick(r, t.all) as NodeId, "status", `s${i}`]);
        break;
      case "append":
        ops.push(["append", pick(r, t.leaves) as NodeId, ` chunk ${i}`]);
        break;
      case "ins":
        ops.push(["ins", BODY_ID as NodeId, lastTurn, small[i % small.length] as NodeSpec]);
        break;
      case "rm":
        ops.push(["rm", pick(r, t.leaves) as NodeId]);
        break;
      case "mv": {
        const leaf = pick(r, t.leaves);
        const from = tree.get(leaf)?.parent?.id;
        let to = pick(r, t.turns);
        while (to === from) to = pick(r, t.turns);
        const after = tree.get(to)?.lastChild?.id ?? null;
        ops.push(["mv", leaf as NodeId, to as NodeId, after as NodeId | null]);
        break;
      }
      default: {
        const never: never = kind;
        throw new Error(`no ops of kind ${String(never)}`);
      }
    }
  }
  return ops;
}

function us(s: Sample): Sample {
  return scale(s, 1000, "µs");
}

export function measure(): RunResult {
  const metrics: Record<string, Sample> = {};
  const values: Record<string, number> = {};

  progress(NAME, `building trees of ${SMALL} and ${LARGE} elements`);
  const trees = { small: sessionTree(SMALL, { seed: 7 }), large: sessionTree(LARGE, { seed: 7 }) };
  const tg = { small: targets(trees.small), large: targets(trees.large) };

  for (const [k, kind] of KINDS.entries()) {
    const smallOps = makeOps(trees.small, tg.small, kind, OPS_PER_KIND, 100 + k);
    const largeOps = makeOps(trees.large, tg.large, kind, OPS_PER_KIND, 200 + k);
    // Every op must apply cleanly to its base version.
    for (const op of smallOps) applyPatch(trees.small, [op]);
    for (const op of largeOps) applyPatch(trees.large, [op]);
    progress(NAME, `timing ${kind} (1k vs 100k, interleaved)`);
    const s = interleave(
      {
        small: (i) => applyPatch(trees.small, [smallOps[i % OPS_PER_KIND] as Op]),
        large: (i) => applyPatch(trees.large, [largeOps[i % OPS_PER_KIND] as Op]),
      },
      { iterations: 21, minSampleMs: 10, warmupMs: 300 },
    );
    metrics[`${kind}.1k`] = us(s.small);
    metrics[`${kind}.100k`] = us(s.large);
    values[`${kind}.ratio`] = pairedRatio(s.large, s.small);
  }

  // ---- immer on buckets vs applyPatch, one attribute per version, versions chained ----
  progress(NAME, "immer produce on 100k bucketed records (autoFreeze on/off) vs applyPatch chain");
  const ids = tg.large.all;
  const r = rng(99);
  const order = Array.from({ length: OPS_PER_KIND }, () => pick(r, ids));
  const immerOn = new Immer({ autoFreeze: true });
  const immerOff = new Immer({ autoFreeze: false });
  const edit = (id: number, v: string) => (d: BucketState) => {
    ((d.buckets[id >> 8] as Record<number, BucketRec>)[id & 255] as BucketRec).attrs.status = v;
  };
  let on = bucketState(trees.large);
  let off = bucketState(trees.large);
  values["immer.on.first_ms"] = once(() => {
    on = immerOn.produce(on, edit(order[0] as number, "first"));
    return on;
  });
  values["immer.off.first_ms"] = once(() => {
    off = immerOff.produce(off, edit(order[0] as number, "first"));
    return off;
  });
  let chain = trees.large;
  const c = interleave(
    {
      strata: (i) => {
        chain = applyPatch(chain, [["set", order[i % OPS_PER_KIND] as NodeId, "status", `v${i}`]]);
        return chain;
      },
      immerOn: (i) => {
        on = immerOn.produce(on, edit(order[i % OPS_PER_KIND] as number, `v${i}`));
        return on;
      },
      immerOff: (i) => {
        off = immerOff.produce(off, edit(order[i % OPS_PER_KIND] as number, `v${i}`));
        return off;
      },
    },
    { iterations: 21, minSampleMs: 10, warmupMs: 300 },
  );
  metrics["cmp.strata"] = us(c.strata);
  metrics["cmp.immerOn"] = us(c.immerOn);
  metrics["cmp.immerOff"] = us(c.immerOff);
  values["cmp.immerOn.ratio"] = pairedRatio(c.immerOn, c.strata);
  values["cmp.immerOff.ratio"] = pairedRatio(c.immerOff, c.strata);
  return { metrics, values };
}

export function render(agg: Aggregate): string {
  const rows = KINDS.map((k) => [
    KIND_LABEL[k],
    cell(agg, `${k}.1k`),
    cell(agg, `${k}.100k`),
    ratio(agg, `${k}.ratio`),
    `≤ ${TARGET}×`,
    verdict(agg, `${k}.ratio`, "<=", TARGET),
  ]);
  const first = (key: string) => {
    const v = agg.values[key];
    return v === undefined ? "–" : `${num(v.median)} ms (${num(v.lo)}–${num(v.hi)})`;
  };
  const cmp = [
    ['`applyPatch(tree, [["set", id, "status", v]])` (@strata/dom)', cell(agg, "cmp.strata"), "1× (reference)", "–"],
    [
      "immer `produce`, buckets of 256, autoFreeze **on**",
      cell(agg, "cmp.immerOn"),
      ratio(agg, "cmp.immerOn.ratio"),
      first("immer.on.first_ms"),
    ],
    [
      "immer `produce`, buckets of 256, autoFreeze **off**",
      cell(agg, "cmp.immerOff"),
      ratio(agg, "cmp.immerOff.ratio"),
      first("immer.off.first_ms"),
    ],
  ];
  return [
    "### 1. One op on 100,000 vs 1,000 elements (`bench/dom/apply.ts`)",
    "",
    provenance(agg),
    "",
    `Session-shaped trees (\`session > meta + body > turn × n\`, each turn a \`msg\`, 1–4 \`call\`s with attributes and text, a \`todo\` of \`item\`s every third turn, a \`reply\`) of exactly ${SMALL.toLocaleString("en-US")} and ${LARGE.toLocaleString("en-US")} elements, built with \`applyPatch\` of \`ins\` ops. Each call applies one op (validation included) to the base version; ${OPS_PER_KIND.toLocaleString("en-US")} precomputed ops per kind with random targets are cycled, and the two sizes are timed in interleaved rounds. Time per op, median (spread).`,
    "",
    table(["op", "1,000 elements (baseline)", "100,000 elements", "ratio 100k / 1k", "target", "verdict"], rows),
    "",
    "**Context for decision 0004** — the same single-attribute edit on 100,000 elements, each edit making a new version from the previous one (a chain), timed interleaved in the same process. The immer state is the plain bucketed layout measured in the library research (`buckets[id >> 8][id & 255]`, 256 plain records per bucket, records `{id, type, name, attrs, text, children, parent}`):",
    "",
    table(["engine", "per op", "ratio to @strata/dom (same run)", "first produce"], cmp),
  ].join("\n");
}

export function verdicts(agg: Aggregate): string[] {
  return [
    targetLine(
      agg,
      "one op on 100,000 elements vs 1,000 (`apply`)",
      KINDS.map((k) => ({ key: `${k}.ratio`, label: `\`${k}\`` })),
      "<=",
      TARGET,
    ),
  ];
}

const mod: BenchModule = { title: "apply", measure, render, verdicts };
export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
