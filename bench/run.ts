/**
 * Benchmark runner. Runs each benchmark file in fresh child processes
 * (`node --expose-gc --import tsx bench/<group>/<name>.ts`), `--runs N` times each (default 3,
 * rounds interleaved across benchmarks), folds the runs (medians of per-process medians, ratios
 * taken inside each process against its own baseline), writes `bench/results/<name>.json` and
 * regenerates the group's section of `docs/benchmarks.md` between `<!-- <group>:start -->` and
 * `<!-- <group>:end -->`. Within it each benchmark's section and verdicts sit between markers of
 * its name (`<!-- section:NAME -->` … `<!-- /section:NAME -->`): a benchmark with no results on
 * this machine keeps what the document has, so running one name never drops its group's others.
 *
 * Usage:
 *   npx tsx bench/run.ts dom               all dom benchmarks
 *   npx tsx bench/run.ts select --runs 5   one benchmark, 5 process runs
 *   npx tsx bench/run.ts --render          rewrite the docs from the saved results only
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { type Aggregate, aggregate, type BenchModule, machineInfo, type RunResult } from "./lib/harness.ts";

const ROOT = join(import.meta.dirname, "..");
const RESULTS = join(ROOT, "bench", "results");
const DOC = join(ROOT, "docs", "benchmarks.md");

/** Benchmark groups, each a folder of files and a section of docs/benchmarks.md, in doc order. */
const GROUPS: Record<string, readonly string[]> = {
  dom: ["apply", "select", "serialize", "memory"],
  store: ["append", "resume", "chains", "search"],
  engine: ["session"],
  agent: ["loop", "prompt", "inspector"],
  workspace: ["baseline", "calls", "fork"],
  api: ["public"],
  cli: ["startup", "reads"],
  import: ["foreign"],
  postgres: ["pg", "listing", "langgraph", "pg-session", "pg-agent"],
};

/** Section headings that are not a package's name. */
const HEADINGS: Record<string, string> = {
  workspace: "The workspace in the log (@strata/agent's `workspace/`, against git)",
  api: "Sessions through the public API (`Session`, against raw SQLite and Pi)",
  cli: "The `strata` command (`@strata/cli`, compiled)",
  import: "Importing other tools' sessions (`@strata/import`, against JSON.parse)",
  postgres: "The event log on PostgreSQL (`@strata/store-postgres`, against raw INSERTs on the same server)",
};

interface Args {
  names: string[];
  runs: number;
  renderOnly: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const names: string[] = [];
  let runs = 3;
  let renderOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--runs") {
      runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1) fail(`--runs takes a positive integer, got ${argv[i]}`);
    } else if (a.startsWith("--runs=")) {
      runs = Number(a.slice(7));
      if (!Number.isInteger(runs) || runs < 1) fail(`--runs takes a positive integer, got ${a.slice(7)}`);
    } else if (a === "--render") renderOnly = true;
    else if (a === "--help" || a === "-h") {
      process.stdout.write(
        `usage: npx tsx bench/run.ts [${[...Object.keys(GROUPS), ...Object.values(GROUPS).flat()].join("|")}]... [--runs N] [--render]\n`,
      );
      process.exit(0);
    } else if (a.startsWith("-")) fail(`unknown option ${a}`);
    else if (GROUPS[a] !== undefined) names.push(...(GROUPS[a] as string[]));
    else if (groupOf(a) !== undefined) names.push(a);
    else fail(`unknown benchmark ${JSON.stringify(a)}; known: ${[...Object.keys(GROUPS), ...Object.values(GROUPS).flat()].join(", ")}`);
  }
  if (names.length === 0 && !renderOnly) names.push(...Object.values(GROUPS).flat());
  return { names: [...new Set(names)], runs, renderOnly };
}

function fail(msg: string): never {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(2);
}

function groupOf(name: string): string | undefined {
  for (const [g, names] of Object.entries(GROUPS)) if (names.includes(name)) return g;
  return undefined;
}

function fileOf(name: string): string {
  return join(ROOT, "bench", groupOf(name) as string, `${name}.ts`);
}

/**
 * Fingerprint of the packages a group measures (`packages/<p>/src` of the group and of the packages
 * it builds on): a content hash plus the git commit and whether the sources differ from it. Other
 * work may edit a package while a run is going; a run whose fingerprint changes part-way is thrown
 * away.
 */
const MEASURES: Record<string, readonly string[]> = {
  dom: ["dom"],
  store: ["dom", "store", "engine"],
  engine: ["dom", "store", "engine"],
  agent: ["dom", "store", "engine", "agent"],
  workspace: ["dom", "store", "engine", "agent"],
  api: ["dom", "store", "engine"],
  cli: ["dom", "store", "engine", "agent", "models"],
  import: ["dom", "store", "engine", "agent", "import"],
  postgres: ["dom", "store", "engine", "store-postgres"],
};

function fingerprint(group: string): string {
  const hash = createHash("sha256");
  const dirs = (MEASURES[group] ?? [group]).map((p) => join("packages", p, "src"));
  const walk = (dir: string): void => {
    for (const f of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, f.name);
      if (f.isDirectory()) walk(p);
      else
        hash
          .update(p)
          .update("\0")
          .update(readFileSync(join(ROOT, p)))
          .update("\0");
    }
  };
  for (const d of dirs) walk(d);
  let git = "no git";
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", ...dirs], { cwd: ROOT, encoding: "utf8" }).trim();
    git = `git ${head}${dirty === "" ? "" : " + uncommitted changes"}`;
  } catch {
    // not a git checkout: the content hash alone identifies the source
  }
  return `${dirs.join(", ")} sha256:${hash.digest("hex").slice(0, 12)} (${git})`;
}

/** What makes the workspace's packages resolve to their sources, not their built dist/. */
const SOURCE_CONDITION = "--conditions=@strata/source";

/** One process run of one benchmark; returns its result. */
function runChild(name: string, run: number, runs: number, dir: string): RunResult {
  const out = join(dir, `${name}-${run}.json`);
  const file = relative(ROOT, fileOf(name));
  process.stderr.write(`[${name}] run ${run}/${runs}: node --expose-gc --import tsx ${file}\n`);
  const t0 = Date.now();
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", file], {
    cwd: ROOT,
    // the packages' sources (their "@strata/source" export condition), in this child and in every process it starts
    env: { ...process.env, BENCH_OUT: out, NODE_OPTIONS: [process.env.NODE_OPTIONS, SOURCE_CONDITION].filter(Boolean).join(" ") },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (child.status !== 0 || !existsSync(out))
    fail(`${name} run ${run} failed (exit ${child.status ?? child.signal}); see its output above`);
  process.stderr.write(`[${name}] run ${run}/${runs} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  return JSON.parse(readFileSync(out, "utf8")) as RunResult;
}

interface SavedResult extends Aggregate {
  readonly raw: readonly RunResult[];
}

async function load(name: string): Promise<BenchModule> {
  const mod = (await import(fileOf(name))) as { default: BenchModule };
  return mod.default;
}

const INTRO = `# Benchmarks

How fast and how big strata's building blocks are, each figure next to a baseline measured in the
same run. The sections between the \`<!-- group:start -->\` / \`<!-- group:end -->\` markers are
generated by \`bench/run.ts\`; do not edit them by hand, re-run the command they name.

## How the figures are produced

- **Processes.** Every benchmark file runs in its own fresh process
  (\`node --expose-gc --import tsx bench/<group>/<name>.ts\`), \`--runs N\` times (default 3; rounds
  are interleaved across benchmarks so a noisy minute does not land on one benchmark only).
- **Timing.** Inside a process each function is warmed up, then timed in samples; a sample runs a
  calibrated batch of calls (≥ 5–10 ms) and records the mean per call. A figure and its baseline
  are timed in interleaved rounds (one sample of each per round), so a noisy neighbour hits both.
- **Figures.** A time is the median over processes of each process's median sample, followed in
  parentheses by its spread: the lowest 10th percentile to the highest 90th percentile seen in any
  process (within-run and between-run noise together).
- **Ratios** are computed inside each process, never across processes: for a figure and its
  baseline timed in interleaved rounds, the ratio is the median over rounds of figure ÷ baseline,
  the two samples taken back to back in that round (a slow drift of the machine cancels out); otherwise it is the
  ratio of the two medians. The table gives the median over processes with the min–max over
  processes. Targets are judged on the median; a verdict says so when the range crosses the target.
- **Memory** is \`process.memoryUsage().heapUsed\` after forced full collections, with the measured
  object alive minus without it; each reading is repeated 3× per process.
- **Machine.** Each section names the command, date, Node version and CPU it ran on. The machine
  these figures come from has 2 cores and is shared (noisy): read the figures as ratios and orders
  of magnitude, not as absolute contracts.
- Results of the last run are in \`bench/results/<name>.json\` (git-ignored), raw per-process
  figures included.

Reproduce everything: \`npx tsx bench/run.ts dom\` (7 minutes with the default 3 runs on the 2-core machine, 12 with \`--runs 5\`).
`;

/** One benchmark's part of its group's block: its section and its verdict lines, each between markers of its name. */
interface Part {
  readonly name: string;
  readonly section: string;
  readonly verdicts: string;
}

const mark = (kind: "section" | "verdicts", name: string, end = false) => `<!-- ${end ? "/" : ""}${kind}:${name} -->`;

/**
 * The part of `name` as the block `block` already holds it (between its markers), or undefined. A
 * benchmark whose results are not on this machine (`bench/results/` is not in git) keeps the part
 * the document has, so running one benchmark of a group never drops the others.
 */
function existingPart(block: string, name: string): Part | undefined {
  const between = (kind: "section" | "verdicts"): string | undefined => {
    const a = block.indexOf(mark(kind, name));
    const b = block.indexOf(mark(kind, name, true));
    return a >= 0 && b > a ? block.slice(a + mark(kind, name).length, b).trim() : undefined;
  };
  const section = between("section");
  const verdicts = between("verdicts");
  return section === undefined || verdicts === undefined ? undefined : { name, section, verdicts };
}

function renderGroup(group: string, parts: readonly Part[], missing: string[]): string {
  const lines = [`<!-- ${group}:start -->`, `<!-- generated by bench/run.ts; do not edit by hand -->`, ""];
  lines.push(`## ${HEADINGS[group] ?? `@strata/${group}`}`, "");
  lines.push(
    `Command: \`npx tsx bench/run.ts ${group}\` (or one name: ${(GROUPS[group] ?? []).map((n) => `\`${n}\``).join(", ")}; add \`--runs N\` for more process runs).`,
    "",
  );
  if (parts.some((p) => p.verdicts !== "")) {
    lines.push("**Targets**", "");
    for (const p of parts) lines.push(mark("verdicts", p.name), ...(p.verdicts === "" ? [] : [p.verdicts]), mark("verdicts", p.name, true));
    lines.push("");
  }
  for (const p of parts) lines.push(mark("section", p.name), "", p.section, "", mark("section", p.name, true), "");
  if (missing.length > 0) lines.push(`Not run yet: ${missing.join(", ")}.`, "");
  lines.push(`<!-- ${group}:end -->`);
  return lines.join("\n");
}

async function writeDocs(): Promise<void> {
  let doc = existsSync(DOC) ? readFileSync(DOC, "utf8") : INTRO;
  for (const [group, names] of Object.entries(GROUPS)) {
    const start = `<!-- ${group}:start -->`;
    const end = `<!-- ${group}:end -->`;
    const a = doc.indexOf(start);
    const b = doc.indexOf(end);
    const old = a >= 0 && b > a ? doc.slice(a, b) : "";
    const parts: Part[] = [];
    const missing: string[] = [];
    let fresh = 0;
    for (const name of names) {
      const path = join(RESULTS, `${name}.json`);
      if (!existsSync(path)) {
        const kept = existingPart(old, name);
        if (kept === undefined) missing.push(name);
        else parts.push(kept);
        continue;
      }
      const saved = JSON.parse(readFileSync(path, "utf8")) as SavedResult;
      const mod = await load(name);
      parts.push({
        name,
        section: mod.render(saved),
        verdicts: mod
          .verdicts(saved)
          .map((v) => `- ${v}`)
          .join("\n"),
      });
      fresh++;
    }
    if (fresh === 0) continue;
    // A block written before the markers cannot give back its other benchmarks' parts: leave it
    // whole rather than drop them (a run of the whole group writes it anew).
    if (old !== "" && missing.length > 0 && !old.includes("<!-- section:")) {
      process.stderr.write(
        `bench: ${relative(ROOT, DOC)}: the ${group} group was left as it was (it predates per-benchmark markers, and ${missing.join(", ")} ${missing.length === 1 ? "has" : "have"} no results here); run \`npx tsx bench/run.ts ${group}\` to write it anew\n`,
      );
      continue;
    }
    const block = renderGroup(group, parts, missing);
    if (a >= 0 && b > a) doc = doc.slice(0, a) + block + doc.slice(b + end.length);
    else doc = `${doc.trimEnd()}\n\n${block}\n`;
  }
  writeFileSync(DOC, doc.endsWith("\n") ? doc : `${doc}\n`);
  // The repository's one formatter lays the tables out (the lint step of the tests checks it).
  execFileSync(process.execPath, [join(ROOT, "node_modules", "@biomejs", "biome", "bin", "biome"), "format", "--write", DOC], {
    stdio: "ignore",
  });
  process.stderr.write(`wrote ${relative(ROOT, DOC)}\n`);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.renderOnly && args.names.length === 0) {
    await writeDocs();
    return;
  }
  const command = `npx tsx bench/run.ts ${process.argv.slice(2).join(" ")}`.trim();
  mkdirSync(RESULTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), "strata-bench-"));
  const t0 = Date.now();
  const raw = new Map<string, RunResult[]>(args.names.map((n) => [n, []]));
  const sources = new Map<string, string>(args.names.map((n) => [n, fingerprint(groupOf(n) as string)]));
  try {
    for (let run = 1; run <= args.runs; run++)
      for (const name of args.names) {
        (raw.get(name) as RunResult[]).push(runChild(name, run, args.runs, dir));
        const now = fingerprint(groupOf(name) as string);
        if (now !== sources.get(name))
          fail(`the measured source changed during the run (${sources.get(name)} → ${now}); nothing was saved, re-run when it is stable`);
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const name of args.names) {
    const runs = raw.get(name) as RunResult[];
    const agg = aggregate(name, { ...machineInfo(command, args.runs), source: sources.get(name) as string }, runs);
    const saved: SavedResult = { ...agg, raw: runs };
    writeFileSync(join(RESULTS, `${name}.json`), `${JSON.stringify(saved, null, 2)}\n`);
    process.stderr.write(`wrote bench/results/${name}.json\n`);
  }
  await writeDocs();
  process.stderr.write(`done in ${((Date.now() - t0) / 60_000).toFixed(1)} min\n`);
}

await main();
