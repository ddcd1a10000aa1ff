/**
 * Shared set-up of the workspace benchmarks: a scratch directory per process, the generated tree
 * (its shape recorded as values so the rendered section says what was measured), and flushing of
 * dirty pages between timed steps (each step writes up to ~200 MB; without a flush, the kernel's
 * writeback of one step lands on the next one).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Aggregate } from "../lib/harness.ts";
import { bytes } from "../lib/stats.ts";
import { generateWorkspace, modelBytes, type WorkspaceModel, workspaceFiles } from "./generate.ts";

export interface Scratch {
  readonly dir: string;
  remove(): void;
}

export function scratch(name: string): Scratch {
  const dir = mkdtempSync(join(tmpdir(), `strata-bench-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `sync(1)`: writes dirty pages back before a timed step. */
export function flushDisk(): void {
  spawnSync("sync", { stdio: "ignore" });
}

/** Generates the benchmark tree under `dir/name` and records its shape in `values` (prefix `tree.`). */
export function makeTree(dir: string, values: Record<string, number>, files = workspaceFiles(), prefix = "tree"): WorkspaceModel {
  const model = generateWorkspace(join(dir, "ws"), { files });
  values[`${prefix}.files`] = model.files.size;
  values[`${prefix}.bytes`] = modelBytes(model);
  values[`${prefix}.dirs`] = model.dirs.length;
  values[`${prefix}.ignored`] = model.ignored.length;
  return model;
}

/** One sentence naming the tree a section measured. */
export function treeLine(agg: Aggregate, prefix = "tree"): string {
  const v = (k: string) => agg.values[`${prefix}.${k}`]?.median ?? Number.NaN;
  return (
    `Tree: ${count(v("files"))} tracked files, ${bytes(v("bytes"))}, in ${count(v("dirs"))} directories 1–5 levels deep ` +
    `(bench/workspace/generate.ts: seeded; mostly 1–30 KB text, ~2% media files of 10–300 KB, MB-sized binaries), ` +
    `plus ${count(v("ignored"))} ignored files (\`node_modules/\`, \`dist/\`, \`*.log\`).`
  );
}

/** Round `i`'s order: strata first on even rounds, the baseline first on odd ones. */
export function strataFirst(i: number): boolean {
  return i % 2 === 0;
}

/** Runs both sides of round `i` in its order ({@link strataFirst}); returns both results. */
export async function inTurn<S, B>(i: number, strata: () => S | Promise<S>, baseline: () => B): Promise<[S, B]> {
  if (strataFirst(i)) {
    const s = await strata();
    return [s, baseline()];
  }
  const b = baseline();
  return [await strata(), b];
}

/** A count: a whole number with thousands separators. */
export function count(x: number): string {
  return Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "–";
}
