/**
 * Writes the session fixture of this release: `fixtures/sessions/<version>.db`, a database holding
 * one real agent session written by the `strata` command of this build, and
 * `fixtures/sessions/<version>.bundle.json`, its `strata export` (docs/compatibility.md). The tests
 * open both forever after (`packages/engine/test/compat.test.ts`, `apps/cli/test/compat.test.ts`):
 * every later strata must read the database (snapshots, pages, text references, request records,
 * the workspace record) and import the bundle, and get the heads this build wrote.
 *
 * The session is the README walkthrough plus enough events on `main` for snapshots: a run killed
 * with SIGKILL mid-call and resumed (an interrupted call), a fork resumed with another script, a
 * deterministic re-run of it (`rerun/alt`), a rewind over an outside edit (`--force`: a
 * `workspace.outside` event, a kept head), main resumed after the rewind and continued with a new
 * task for about 20 more turns (a chain past 128 events: snapshots with page lists and text references).
 * Run once per release whose formats changed; an existing fixture is never rewritten.
 *
 * Usage: tsx scripts/make-session-fixture.ts [VERSION]   (default: the version in apps/cli/package.json)
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const BIN = join(ROOT, "apps", "cli", "bin", "strata.mjs");
const version = process.argv[2] ?? (JSON.parse(readFileSync(join(ROOT, "apps/cli/package.json"), "utf8")) as { version: string }).version;
const out = join(ROOT, "fixtures", "sessions");
const db = join(out, `${version}.db`);
const bundle = join(out, `${version}.bundle.json`);
for (const f of [db, bundle])
  if (existsSync(f)) {
    console.error(`${f} exists; fixtures are never rewritten`);
    process.exit(1);
  }

const dir = mkdtempSync(join(tmpdir(), "strata-session-fixture-"));
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
for (const k of Object.keys(env)) if (/^(STRATA_|OPENAI_)/.test(k)) delete env[k];
cpSync(join(ROOT, "fixtures", "demo-workspace"), join(dir, "ws"), { recursive: true });
copyFileSync(join(ROOT, "fixtures", "models", "alt.json"), join(dir, "alt.json"));
// 24 turns that grow the plan, then a submit: whichever turn a request of N assistant messages plays (MO-1), main grows.
const step = (i: number) => ({
  text: `Step ${i}: ${"keeping the plan current so that the summary stays honest about what is open. ".repeat(2)}`,
  toolCalls: [{ name: "todo", arguments: { items: [{ text: `Check the summary (pass ${i})`, status: "in_progress" }] } }],
});
writeFileSync(
  join(dir, "more.json"),
  JSON.stringify({
    name: "more",
    chunk: 24,
    turns: [
      ...Array.from({ length: 24 }, (_, i) => step(i + 1)),
      { text: "Done.", toolCalls: [{ name: "submit", arguments: { summary: "Kept the plan current." } }] },
    ],
  }),
);

function strata(args: readonly string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`strata ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** `strata run --workspace ws`, killed with SIGKILL while its slow `run` call runs. */
function killedRun(): Promise<void> {
  return new Promise((resolve, reject) => {
    const p: ChildProcess = spawn(process.execPath, [BIN, "run", "--workspace", "ws"], {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    p.stdout?.on("data", (c) => {
      stdout += c;
      if (/→ run \{/.test(stdout)) setTimeout(() => p.kill("SIGKILL"), 300);
    });
    p.on("close", (_code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`not killed:\n${stdout}`))));
  });
}

try {
  await killedRun();
  strata(["resume", "@last"]);
  strata(["fork", "@last@3", "--name", "alt"]);
  strata(["resume", "@last@alt", "--model", "scripted:alt.json"]);
  strata(["replay", "@last@alt", "--rerun"]);
  writeFileSync(join(dir, "ws", "SUMMARY.md"), `${readFileSync(join(dir, "ws", "SUMMARY.md"), "utf8")}- [ ] my own note\n`);
  const interrupted = strata(["bisect", "@last", "--until", "call[status=interrupted]", "-q"]).trim();
  strata(["rewind", "@last", "--to", interrupted, "--force"]);
  strata(["resume", "@last"]);
  strata([
    "run",
    "Keep the plan current while checking the summary.",
    "--session",
    "@last",
    "--model",
    "scripted:more.json",
    "--max-steps",
    "40",
  ]);
  const exported = strata(["export", "@last"]);
  const check = strata(["verify", "--json"]);
  if (!(JSON.parse(check) as { ok: boolean }).ok) throw new Error(`the fixture does not verify:\n${check}`);
  mkdirSync(out, { recursive: true });
  // The command closed the database (its last connection checkpoints the WAL and removes it): the file is whole.
  if (existsSync(join(dir, ".strata", "strata.db-wal"))) throw new Error("a -wal file is left: the database is not closed");
  copyFileSync(join(dir, ".strata", "strata.db"), db);
  writeFileSync(bundle, exported);
  console.log(`wrote ${db} and ${bundle}`);
  console.log(strata(["branches", "@last"]));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
