/**
 * The read paths users touch, against session length (issue 14: "`strata show S@E`, `strata log`,
 * `strata prompt --at`, `strata diff`, the inspector's timeline, tree-at-event and diff endpoints —
 * each cost independent of session length except for the data it returns"). Sessions of 1,000,
 * 10,000 and 100,000 steps (bench/api/workload.ts: one step = one event, a turn with an assistant
 * text and a settled call with its arguments and a 1–2 KB output), each command a fresh `strata`
 * process of the published layout (bench/cli/process.ts) under `/usr/bin/time`, at an event in the
 * middle of the session (a different one each round, so no answer is cached). The inspector's
 * endpoints are requested from one `strata serve` process per size, each request at an event not
 * requested before. The baseline of every row is the same command on the 1,000-step session, in the
 * same run: flat in N means the ratio stays near 1. Two kinds of read grow with the session by what
 * they are, and are shown for scale, not judged flat: `show` of the whole tree (its output is the
 * session) and the prompt (it is the visible history since the last compaction: every element of
 * it is looked at, and in an agent session every one is a message of the answer).
 *
 * Run: npx tsx bench/run.ts reads   (the build must be current: `npx -y pnpm@12.4.2 build`)
 * Knobs: BENCH_STEPS (default 1000,10000,100000), BENCH_ROUNDS (default 5).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "@strata/engine";
import { type EventId, openStore } from "@strata/store";
import { stepOps, steps } from "../api/workload.ts";
import { type Aggregate, type BenchModule, isMain, med, progress, provenance, type RunResult, runAsScript } from "../lib/harness.ts";
import { num, type Sample, summarize, table } from "../lib/stats.ts";
import { installedLayout, type Timed, timed, userEnv } from "./process.ts";

const NAME = "reads";
const SIZES = (process.env.BENCH_STEPS ?? "1000,10000,100000").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** A row's 100,000/1,000 ratio at most this is flat (a fresh process's start-up dominates both). */
const FLAT = 1.5;

interface Built {
  readonly db: string;
  readonly session: string;
  /** Ids of the events of steps N/2 … N/2 + ROUNDS + 5 (a fresh one per round). */
  readonly middle: readonly EventId[];
}

/** A session of `count` steps in its own database, written through the public API. */
function build(dir: string, count: number): Built {
  const db = join(dir, `s${count}.db`);
  const store = openStore(db);
  const s = Session.create(store, { title: `reads ${count}` });
  const from = Math.floor(count / 2);
  const middle: EventId[] = [];
  for (const step of steps(count)) {
    const meta = s.commit(stepOps(s.tree, step), { label: "step" });
    if (step.i >= from && step.i < from + ROUNDS + 6) middle.push(meta.id);
  }
  const session = s.id;
  s.close();
  store.close();
  return { db, session, middle };
}

/** Rows that grow with the session by what they return (see the header): reported, not judged flat. */
const GROWS = new Set(["showAll", "prompt", "apiPrompt"]);

/** The CLI rows: name, what it shows, and its argv after `--db DB` at round `r`. */
const COMMANDS: readonly { key: string; label: string; argv: (b: Built, r: number) => string[] }[] = [
  { key: "log", label: "`strata log S --json` (the last 100 events)", argv: (b) => ["log", b.session, "--json"] },
  {
    key: "showOne",
    label: "`strata show S@E --select 'turn:last-child' --json` (one element at E)",
    argv: (b, r) => ["show", `${b.session}@${b.middle[r]}`, "--select", "turn:last-child", "--json"],
  },
  {
    key: "prompt",
    label: "`strata prompt S@E --json` (the visible history: grows with N)",
    argv: (b, r) => ["prompt", `${b.session}@${b.middle[r]}`, "--json"],
  },
  {
    key: "diff",
    label: "`strata diff S@E S@E+5 --json`",
    argv: (b, r) => ["diff", `${b.session}@${b.middle[r]}`, `${b.session}@${b.middle[r + 5]}`, "--json"],
  },
  { key: "branches", label: "`strata branches S --json`", argv: (b) => ["branches", b.session, "--json"] },
  {
    key: "fork",
    label: "`strata fork S@E --json` (a branch and its working directory)",
    argv: (b, r) => ["fork", `${b.session}@${b.middle[r]}`, "--name", `f${r}`, "--json"],
  },
  {
    key: "showAll",
    label: "`strata show S@E --json` (the whole tree: grows with N)",
    argv: (b, r) => ["show", `${b.session}@${b.middle[r]}`, "--json"],
  },
];

/** The inspector rows: name and the path requested at round `r`. */
const ENDPOINTS: readonly { key: string; label: string; path: (b: Built, r: number) => string }[] = [
  {
    key: "apiEvents",
    label: "`GET …/events?offset=0&limit=500` (timeline, first page)",
    path: (b) => `/api/sessions/${b.session}/events?offset=0&limit=500`,
  },
  {
    key: "apiTree",
    label: "`GET …/tree?at=E` (the windowed tree at E)",
    path: (b, r) => `/api/sessions/${b.session}/tree?at=${b.middle[r]}`,
  },
  {
    key: "apiDiff",
    label: "`GET …/diff?from=E&to=E+5`",
    path: (b, r) => `/api/sessions/${b.session}/diff?from=${b.middle[r]}&to=${b.middle[r + 5]}`,
  },
  {
    key: "apiPrompt",
    label: "`GET …/prompt?at=E` (the visible history: grows with N)",
    path: (b, r) => `/api/sessions/${b.session}/prompt?at=${b.middle[r]}`,
  },
];

/** `strata serve --port 0 --json` on `db`: its URL (with the token, if any) and the process. */
async function serve(bin: string, db: string, cwd: string): Promise<{ url: URL; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [bin, "--db", db, "serve", "--port", "0", "--json"], {
    cwd,
    env: userEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stderr?.on("data", (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout?.on("data", (d) => {
      out += d;
      try {
        resolve((JSON.parse(out) as { url: string }).url); // one JSON document, once it is complete
      } catch {}
    });
    proc.on("exit", (code) => reject(new Error(`strata serve exited (${code}): ${err}`)));
  });
  return { url: new URL(url), proc };
}

async function get(base: URL, path: string): Promise<{ ms: number; bytes: number }> {
  const u = new URL(path, base);
  for (const [k, v] of base.searchParams) u.searchParams.set(k, v);
  const t0 = performance.now();
  const res = await fetch(u);
  const body = await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${Buffer.from(body).toString("utf8").slice(0, 300)}`);
  return { ms, bytes: body.byteLength };
}

const mod: BenchModule = {
  title: "Read paths against session length (`strata log/show/prompt/diff/branches/fork`, the inspector's endpoints)",
  async measure(): Promise<RunResult> {
    const dir = mkdtempSync(join(tmpdir(), "strata-reads-"));
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      const bin = installedLayout(dir);
      const env = userEnv();
      for (const size of SIZES) {
        progress(NAME, `writing a session of ${size} steps`);
        const b = build(dir, size);
        for (const c of COMMANDS) {
          const runs: Timed[] = [];
          timed([process.execPath, bin, "--db", b.db, ...c.argv(b, ROUNDS)], env, dir); // warm-up: the page cache
          for (let r = 0; r < ROUNDS; r++) runs.push(timed([process.execPath, bin, "--db", b.db, ...c.argv(b, r)], env, dir));
          metrics[`${c.key}.${size}`] = summarize(
            runs.map((t) => t.wall),
            "ms",
          );
          values[`${c.key}.${size}.out`] = runs[0]?.out ?? 0;
          values[`${c.key}.${size}.rss`] = Math.max(...runs.map((t) => t.rss));
        }
        progress(NAME, `${size} steps: the inspector`);
        const { url, proc } = await serve(bin, b.db, dir);
        try {
          for (const e of ENDPOINTS) {
            const ms: number[] = [];
            await get(url, e.path(b, ROUNDS)); // warm-up
            for (let r = 0; r < ROUNDS; r++) {
              const got = await get(url, e.path(b, r));
              ms.push(got.ms);
              values[`${e.key}.${size}.out`] = got.bytes;
            }
            metrics[`${e.key}.${size}`] = summarize(ms, "ms");
          }
        } finally {
          proc.kill("SIGTERM");
        }
        rmSync(b.db, { force: true });
        rmSync(`${b.db}-wal`, { force: true });
      }
      return { metrics, values };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  render(agg: Aggregate): string {
    const small = SIZES[0] as number;
    const large = SIZES[SIZES.length - 1] as number;
    const kb = (k: string) => `${num((agg.values[k]?.median ?? Number.NaN) / 1000)} KB`;
    const rows = [...COMMANDS, ...ENDPOINTS].map((c) => [
      c.label,
      ...SIZES.map((n) => `${num(med(agg, `${c.key}.${n}`))} ms`),
      `${num(med(agg, `${c.key}.${large}`) / med(agg, `${c.key}.${small}`))}×`,
      kb(`${c.key}.${large}.out`),
    ]);
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `Sessions of ${SIZES.map((n) => n.toLocaleString("en-US")).join(", ")} steps written through \`Session.commit\` (bench/api/workload.ts: one event a step, ~2.5 KB). CLI rows: a fresh \`strata\` process of the published layout per run (its bin and dist/, as \`npm install @strata/cli\` runs it) under \`/usr/bin/time\`, ${ROUNDS} runs per size after a warm-up run, each at a different event in the middle of the session (median wall). Inspector rows: one \`strata serve\` process per size, each request at an event not requested before (median). *N / ${small.toLocaleString("en-US")}*: the ${large.toLocaleString("en-US")}-step figure over the ${small.toLocaleString("en-US")}-step one, in the same run (flat: near 1). *Output*: bytes of the answer at ${large.toLocaleString("en-US")} steps. The whole tree and the prompt grow with the session by what they are (the prompt is the visible history since the last compaction; this workload's turns carry no role, so its prompt is near empty, but every turn is still looked at).`,
      "",
      table(
        [
          "read",
          ...SIZES.map((n) => `${n.toLocaleString("en-US")} steps`),
          `${large.toLocaleString("en-US")} / ${small.toLocaleString("en-US")}`,
          "output",
        ],
        rows,
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const small = SIZES[0] as number;
    const large = SIZES[SIZES.length - 1] as number;
    const rows = [...COMMANDS, ...ENDPOINTS]
      .filter((c) => !GROWS.has(c.key))
      .map((c) => ({
        label: c.key,
        r: med(agg, `${c.key}.${large}`) / med(agg, `${c.key}.${small}`),
      }));
    const grown = rows.filter((x) => !(x.r <= FLAT));
    return [
      `${grown.length === 0 ? "**PASS**" : "**FAIL**"} — every read but the whole tree and the prompt within ${FLAT}× from ${small.toLocaleString("en-US")} to ${large.toLocaleString("en-US")} steps: ${rows.map((x) => `${x.label} ${num(x.r)}×`).join(", ")}${grown.length === 0 ? "" : `; grows: ${grown.map((x) => x.label).join(", ")}`}`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
