/**
 * Workspace benchmark 1 — the baseline capture (issue 13): recording a whole workspace before the
 * first tool that may write, next to `git add -A` of the same tree into a fresh repository.
 *
 * In one process: the tree is generated (bench/workspace/generate.ts), one untimed warm-up round
 * of each side reads it into the page cache, then in R interleaved rounds (order alternating):
 * - **strata**: a fresh SQLite store and session; `WorkspaceTracker.baseline(tree)` (scan, hash
 *   every tracked file, put its bytes in the blob store) — then the event that records it
 *   (`applyFileChanges` of the 10,000 adds, one commit);
 * - **git**: a fresh repository (git dir outside the tree), `git add -A`, then `git commit`.
 * Dirty pages are flushed (`sync`) before each timed step. Ratios are per round. Also reported:
 * the bytes each side stored, and the first capture of a fresh tracker over an unchanged tree
 * (what a new process pays before its stat index exists) next to `git status --porcelain`.
 *
 * Run: npx tsx bench/run.ts baseline   (BENCH_WS_SMALL=1 for a 1,000-file dev run)
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { WorkspaceTracker } from "@strata/agent";
import {
  type Aggregate,
  type BenchModule,
  byteValue,
  cell,
  isMain,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  targetLine,
} from "../lib/harness.ts";
import { median, type Sample, summarize, table } from "../lib/stats.ts";
import { git, initRepo, timedGit, treeBytes } from "./git.ts";
import { flushDisk, inTurn, makeTree, scratch, treeLine } from "./setup.ts";
import { checkTree, commitChanges, openWorkspace, storeBytes } from "./strata.ts";

const NAME = "baseline";
const ROUNDS = Number(process.env.BENCH_WS_ROUNDS ?? 3);

const mod: BenchModule = {
  title: "Workspace baseline capture vs. git add -A",
  async measure(): Promise<RunResult> {
    const tmp = scratch(NAME);
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      progress(NAME, "generating the tree");
      const model = makeTree(tmp.dir, values);
      const cols = { capture: [] as number[], event: [] as number[], add: [] as number[], commit: [] as number[] };
      const prime = { capture: [] as number[], cached: [] as number[], status: [] as number[] };
      const ratios = { capture: [] as number[], recorded: [] as number[], prime: [] as number[], cached: [] as number[] };
      let dbBytes = 0;
      let gitBytes = { apparent: 0, allocated: 0, files: 0 };
      for (let round = 0; round <= ROUNDS; round++) {
        const timed = round > 0;
        progress(NAME, timed ? `round ${round}/${ROUNDS}` : "warm-up round");
        const strata = async () => {
          const dbPath = join(tmp.dir, `r${round}.db`);
          const ws = openWorkspace(dbPath, model.root);
          flushDisk();
          const t0 = performance.now();
          const cap = await ws.tracker.baseline(ws.session.tree);
          const t1 = performance.now();
          commitChanges(ws, cap.changes, "workspace.baseline");
          const t2 = performance.now();
          if (round === 0) checkTree(ws.session.tree, model, "after the baseline");
          if (cap.skipped.length > 0)
            throw new Error(`the baseline skipped ${cap.skipped.length} files (the size cap is 16 MiB; none is that big)`);
          dbBytes = storeBytes(ws.store).file;
          // A fresh tracker (a new process, a resume) over the unchanged tree: its first capture.
          flushDisk();
          const t3 = performance.now();
          const again = await new WorkspaceTracker(model.root, ws.store).capture(ws.session.tree);
          const t4 = performance.now();
          if (again.changes.length > 0) throw new Error(`a fresh tracker found ${again.changes.length} changes in an unchanged tree`);
          // The same with a stat index persisted by an earlier process (`indexFile`, as the CLI keeps one).
          const indexFile = join(tmp.dir, `r${round}.index`);
          await new WorkspaceTracker(model.root, ws.store, { indexFile }).capture(ws.session.tree);
          const t5 = performance.now();
          const cached = await new WorkspaceTracker(model.root, ws.store, { indexFile }).capture(ws.session.tree);
          const t6 = performance.now();
          if (cached.changes.length > 0 || (cached.stats !== undefined && cached.stats.hashed > 0))
            throw new Error(`a tracker with a persisted index hashed ${cached.stats?.hashed} files of an unchanged tree`);
          rmSync(indexFile, { force: true });
          ws.store.close();
          rmSync(dbPath, { force: true });
          rmSync(`${dbPath}-wal`, { force: true });
          rmSync(`${dbPath}-shm`, { force: true });
          return { capture: t1 - t0, event: t2 - t1, prime: t4 - t3, cached: t6 - t5 };
        };
        const gitSide = () => {
          const repo = initRepo(join(tmp.dir, `r${round}.git`), model.root);
          flushDisk();
          const add = timedGit(repo, ["add", "-A"]).ms;
          const commit = timedGit(repo, ["commit", "-q", "--no-verify", "-m", "baseline"]).ms;
          const tracked = git(repo, ["ls-files", "-z"]).split("\0").length - 1;
          if (tracked !== model.files.size) throw new Error(`git tracked ${tracked} files, the tree has ${model.files.size}`);
          gitBytes = treeBytes(join(repo.gitDir, "objects"));
          git(repo, ["update-index", "-q", "--refresh"]);
          const status = timedGit(repo, ["status", "--porcelain"]);
          if (status.out !== "") throw new Error(`git status after the commit is not clean: ${status.out.slice(0, 200)}`);
          rmSync(repo.gitDir, { recursive: true, force: true });
          return { add, commit, status: status.ms };
        };
        const [s, g] = await inTurn(round, strata, gitSide);
        if (!timed) continue;
        cols.capture.push(s.capture);
        cols.event.push(s.event);
        cols.add.push(g.add);
        cols.commit.push(g.commit);
        prime.capture.push(s.prime);
        prime.cached.push(s.cached);
        ratios.cached.push(s.cached / g.status);
        prime.status.push(g.status);
        ratios.capture.push(s.capture / g.add);
        ratios.recorded.push((s.capture + s.event) / (g.add + g.commit));
        ratios.prime.push(s.prime / g.status);
      }
      metrics.capture = summarize(cols.capture, "ms");
      metrics.event = summarize(cols.event, "ms");
      metrics.recorded = summarize(
        cols.capture.map((x, i) => x + (cols.event[i] as number)),
        "ms",
      );
      metrics.add = summarize(cols.add, "ms");
      metrics.commit = summarize(cols.commit, "ms");
      metrics.gitTotal = summarize(
        cols.add.map((x, i) => x + (cols.commit[i] as number)),
        "ms",
      );
      metrics.prime = summarize(prime.capture, "ms");
      metrics.cached = summarize(prime.cached, "ms");
      values.cachedRatio = median(ratios.cached);
      metrics.status = summarize(prime.status, "ms");
      values.captureRatio = median(ratios.capture);
      values.recordedRatio = median(ratios.recorded);
      values.primeRatio = median(ratios.prime);
      values.dbBytes = dbBytes;
      values.gitBytes = gitBytes.apparent;
      values.gitAllocated = gitBytes.allocated;
      values.gitObjects = gitBytes.files;
      values.dbPerTree = dbBytes / (values["tree.bytes"] as number);
      values.gitPerTree = gitBytes.apparent / (values["tree.bytes"] as number);
    } finally {
      tmp.remove();
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `${treeLine(agg)} ${ROUNDS} timed rounds per process after a warm-up round, strata and git alternating first; \`sync\` before each timed step. *strata*: a fresh SQLite store, \`WorkspaceTracker.baseline\` (scan, sha256 of every tracked file, bytes into the blob store), then the \`workspace.baseline\` event (\`applyFileChanges\`, one commit). *git*: a fresh repository (git dir outside the tree, default settings, no auto-gc), \`git add -A\`, then \`git commit\` (spawn included).`,
      "",
      table(
        ["", "strata", "git", "strata / git"],
        [
          ["capture: baseline scan vs. `git add -A`", cell(agg, "capture"), cell(agg, "add"), ratio(agg, "captureRatio")],
          ["recorded: + its event vs. + `git commit`", cell(agg, "recorded"), cell(agg, "gitTotal"), ratio(agg, "recordedRatio")],
          ["(the event / the commit alone)", cell(agg, "event"), cell(agg, "commit"), ""],
          [
            "bytes stored (SQLite file / `.git/objects`, loose)",
            byteValue(agg, "dbBytes"),
            `${byteValue(agg, "gitBytes")} (${byteValue(agg, "gitAllocated")} allocated)`,
            "",
          ],
          [
            "first capture of a fresh tracker (no stat index) vs. `git status --porcelain` (index fresh)",
            cell(agg, "prime"),
            cell(agg, "status"),
            ratio(agg, "primeRatio"),
          ],
          [
            "first capture of a fresh tracker with a persisted stat index (`indexFile`) vs. the same `git status`",
            cell(agg, "cached"),
            cell(agg, "status"),
            ratio(agg, "cachedRatio"),
          ],
        ],
      ),
      "",
      "The blob store keeps file bytes uncompressed; git's loose objects are zlib-compressed (the text compresses, the binaries do not), which is most of git's time here.",
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    return [
      targetLine(
        agg,
        "baseline capture ≤ 1.5× `git add -A` of the same tree into a fresh repository",
        [
          { key: "captureRatio", label: "capture vs. add -A" },
          { key: "recordedRatio", label: "capture + event vs. add -A + commit" },
        ],
        "<=",
        1.5,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
