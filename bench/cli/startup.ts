/**
 * CLI start-up (issue 16): the `strata` command as a user starts it — a fresh `node` process per
 * run, timed from outside with the OS's accounting (`/usr/bin/time`: wall, user + sys CPU, peak
 * RSS) — next to `node -e 0` measured in the same rounds as the floor. Commands: `strata --help`
 * and `strata ls` on a small database (one offline demo session), each run three ways: installed
 * (the published package's layout — its bin and dist/, no checkout around them — which is what
 * `npm install @strata/cli` runs and what the target is about), from a built checkout (the same
 * dist/ behind the checkout's freshness check of the sources), and from the TypeScript sources
 * through tsx (how every start went before the build; the baseline). Rounds interleave all the
 * commands, so a noisy neighbour hits the figure and the floor alike; ratios are per round.
 *
 * Run: npx tsx bench/run.ts startup   (the build must be current: `npx -y pnpm@12.4.2 build`)
 * Knobs: BENCH_ROUNDS (default 15).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Aggregate,
  type BenchModule,
  cell,
  isMain,
  med,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
} from "../lib/harness.ts";
import { median, num, type Sample, summarize, table } from "../lib/stats.ts";
import { BIN, installedLayout, ROOT, type Timed, timed, userEnv } from "./process.ts";

const NAME = "startup";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);

const mod: BenchModule = {
  title: "CLI start-up (`strata --help`, `strata ls`, against `node -e 0`)",
  measure(): RunResult {
    if (!existsSync("/usr/bin/time")) throw new Error("needs /usr/bin/time (Debian: apt-get install time)");
    const stamp = JSON.parse(readFileSync(join(ROOT, "apps", "cli", "dist", "build.json"), "utf8"));
    const dir = mkdtempSync(join(tmpdir(), "strata-startup-"));
    try {
      const env = userEnv();
      const demo = spawnSync(process.execPath, [BIN, "run", "-q"], { cwd: dir, env, encoding: "utf8" });
      if (demo.status !== 0) throw new Error(`the demo run failed: ${demo.stderr}`);
      const db = join(dir, ".strata", "strata.db");
      const installed = installedLayout(dir);
      // from the sources: what the checkout's bin does when the build is stale (tsx + the source condition)
      const sourceEnv = { ...env, NODE_OPTIONS: "--conditions=@strata/source" };
      const commands: Record<string, { argv: string[]; env: NodeJS.ProcessEnv }> = {
        floor: { argv: [process.execPath, "-e", "0"], env },
        help: { argv: [process.execPath, installed, "--help"], env },
        ls: { argv: [process.execPath, installed, "--db", db, "ls"], env },
        helpCheckout: { argv: [process.execPath, BIN, "--help"], env },
        lsCheckout: { argv: [process.execPath, BIN, "--db", db, "ls"], env },
        helpSource: { argv: [process.execPath, BIN, "--help"], env: sourceEnv },
        lsSource: { argv: [process.execPath, BIN, "--db", db, "ls"], env: sourceEnv },
      };
      const runs: Record<string, Timed[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
      for (const c of Object.values(commands)) timed(c.argv, c.env, dir); // warm-up: page cache, tsx's cache
      for (let round = 0; round < ROUNDS; round++) {
        for (const [k, c] of Object.entries(commands)) (runs[k] as Timed[]).push(timed(c.argv, c.env, dir));
        if (round % 5 === 4) progress(NAME, `round ${round + 1}/${ROUNDS}`);
      }
      const metrics: Record<string, Sample> = {};
      const values: Record<string, number> = {};
      for (const [k, rs] of Object.entries(runs)) {
        metrics[`${k}.wall`] = summarize(
          rs.map((r) => r.wall),
          "ms",
        );
        metrics[`${k}.cpu`] = summarize(
          rs.map((r) => r.cpu),
          "ms",
        );
        values[`${k}.rss`] = median(rs.map((r) => r.rss));
        if (k !== "floor") {
          const floor = runs.floor as Timed[];
          values[`${k}.overFloor`] = median(rs.map((r, i) => r.wall / (floor[i] as Timed).wall));
          values[`${k}.aboveFloorMs`] = median(rs.map((r, i) => r.wall - (floor[i] as Timed).wall));
        }
      }
      values["help.vsSource"] = median((runs.help as Timed[]).map((r, i) => r.wall / ((runs.helpSource as Timed[])[i] as Timed).wall));
      values["ls.vsSource"] = median((runs.ls as Timed[]).map((r, i) => r.wall / ((runs.lsSource as Timed[])[i] as Timed).wall));
      values.builtAt = Date.parse(stamp.builtAt);
      return { metrics, values };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  render(agg: Aggregate): string {
    const ms = (k: string) => `${num(agg.values[k]?.median ?? Number.NaN)} ms`;
    const mb = (k: string) => `${num((agg.values[k]?.median ?? Number.NaN) / 1e6)} MB`;
    const row = (label: string, k: string) => [
      label,
      cell(agg, `${k}.wall`),
      cell(agg, `${k}.cpu`),
      mb(`${k}.rss`),
      k === "floor" ? "1×" : ratio(agg, `${k}.overFloor`),
      k === "floor" ? "–" : ms(`${k}.aboveFloorMs`),
    ];
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `Each command a fresh process under \`/usr/bin/time\`, ${ROUNDS} interleaved rounds per process run (wall and user + sys CPU: median (p10–p90)); *over the floor*: per-round wall / \`node -e 0\` of the same round. *installed*: the published package's layout (its \`bin/strata.mjs\` and \`dist/\`, no checkout around them: what \`npm install @strata/cli\` runs, and what the target is about); *checkout*: \`node apps/cli/bin/strata.mjs\` with a current build (the same dist/, after the checkout's check that no source is newer than the build); *sources*: the checkout's bin running the TypeScript through tsx, as every start did before the build. \`ls\` on a database of one offline demo session.`,
      "",
      table(
        ["command", "wall", "CPU", "peak RSS", "over the floor", "above the floor"],
        [
          row("`node -e 0` (the floor)", "floor"),
          row("`strata --help`, installed", "help"),
          row("`strata ls`, installed", "ls"),
          row("`strata --help`, built checkout", "helpCheckout"),
          row("`strata ls`, built checkout", "lsCheckout"),
          row("`strata --help`, sources (before)", "helpSource"),
          row("`strata ls`, sources (before)", "lsSource"),
        ],
      ),
      "",
      `Installed against sources in the same rounds: \`--help\` ${ratio(agg, "help.vsSource")}, \`ls\` ${ratio(agg, "ls.vsSource")}.`,
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const wall = (k: string) => med(agg, `${k}.wall`);
    const floor = wall("floor");
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    return [
      line(
        wall("help") <= 150 && wall("ls") <= 150,
        `\`strata --help\` and \`strata ls\` (installed) ≤ 150 ms wall: ${num(wall("help"))} ms and ${num(wall("ls"))} ms, with \`node -e 0\` at ${num(floor)} ms in the same rounds (${num(wall("help") - floor)} and ${num(wall("ls") - floor)} ms above it)`,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
