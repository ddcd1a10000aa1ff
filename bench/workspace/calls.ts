/**
 * Workspace benchmark 2 — a session of 1,000 tool calls over the tree (issue 13), each changing
 * 1–10 files (bench/workspace/mutate.ts), measured call by call next to real git in the same run:
 * - **capture vs. `git status --porcelain`**: after each call, `WorkspaceTracker.capture` (stat
 *   index, hashing only what changed) and `git status --porcelain` of a repository whose index is
 *   fresh (the previous call's `git add -A && git commit`, then `git update-index --refresh`),
 *   order alternating per call; the ratio is per call. The capture is checked against the paths
 *   the call changed.
 * - **per call, recorded**: capture + the event carrying its changes (`applyFileChanges`, one
 *   commit per call) vs. a shadow-git checkpoint (`git add -A && git commit`) of the same changes.
 * - **bytes per call**: growth of the SQLite file (WAL checkpointed) and of its blob table over the
 *   calls, next to the bytes of the changed files' new content, and to the shadow repository's
 *   `.git/objects` growth: loose objects as the commits left them (no auto-gc), and after `git gc`.
 * - **checkout at random events**: K random events of the 1,000, visited in random order:
 *   `session.at(event)` + `checkoutWorkspace(tree, dir, store, { from })` into a directory that
 *   held the previous target, vs. `git checkout --detach <commit>` of the equivalent commit in a
 *   clone that held the same previous target. A few targets are verified byte for byte (git status
 *   of the strata directory against the git index of the target commit).
 *
 * Run: npx tsx bench/run.ts calls   (BENCH_WS_SMALL=1 and BENCH_WS_CALLS=200 for a dev run)
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { type FileChange, workspaceFiles } from "@strata/agent";
import type { Tree } from "@strata/dom";
import type { EventId } from "@strata/store";
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
  value,
} from "../lib/harness.ts";
import { bytes, median, num, rng, type Sample, summarize, table } from "../lib/stats.ts";
import { LinePool, type WorkspaceModel } from "./generate.ts";
import { checkpoint, git, initRepo, type Repo, spawnCost, timedGit, treeBytes } from "./git.ts";
import { mutateCall } from "./mutate.ts";
import { count, inTurn, makeTree, scratch, treeLine } from "./setup.ts";
import {
  blobSizes,
  checkCapture,
  checkoutAt,
  checkTree,
  commitChanges,
  openWorkspace,
  type StrataWorkspace,
  storeBytes,
} from "./strata.ts";

const NAME = "calls";
const CALLS = Number(process.env.BENCH_WS_CALLS ?? 1000);
const TARGETS = Number(process.env.BENCH_WS_TARGETS ?? 20);
/** Checkouts verified byte for byte against git (untimed). */
const VERIFY = 4;
/** Further checkouts without `from` (the directory's content unknown to strata). */
const BLIND = 3;

interface History {
  readonly events: EventId[];
  readonly commits: string[];
}

function hashesOf(changes: readonly FileChange[]): string[] {
  return changes.flatMap((c) => (c.type === "delete" ? [] : [c.entry.hash]));
}

async function runCalls(
  ws: StrataWorkspace,
  repo: Repo,
  model: WorkspaceModel,
  metrics: Record<string, Sample>,
  values: Record<string, number>,
): Promise<History> {
  const pool = new LinePool(101);
  const r = rng(1300);
  const t = { capture: [] as number[], status: [] as number[], event: [] as number[], shadow: [] as number[] };
  const ratios = { capture: [] as number[], recorded: [] as number[] };
  const history: History = { events: [], commits: [] };
  // Hashes the store already holds (the baseline's): a call's content counts when it is new.
  const seen = new Set<string>([...workspaceFiles(ws.session.tree).values()].map((f) => f.hash));
  const before = storeBytes(ws.store);
  const objects0 = treeBytes(join(repo.gitDir, "objects"));
  let changedBytes = 0;
  let changedFiles = 0;
  const fresh = new Set<string>();
  for (let i = 0; i < CALLS; i++) {
    if (i % 100 === 0) progress(NAME, `call ${i}/${CALLS}`);
    const effect = mutateCall(model, pool, r, i);
    changedBytes += effect.changedBytes;
    changedFiles += effect.paths.length;
    const tree = ws.session.tree;
    let cap: Awaited<ReturnType<typeof ws.tracker.capture>> | undefined;
    let captureMs = 0;
    let statusMs = 0;
    const strata = async () => {
      const t0 = performance.now();
      cap = await ws.tracker.capture(tree);
      captureMs = performance.now() - t0;
    };
    const status = () => {
      const s = timedGit(repo, ["status", "--porcelain"]);
      if (s.out === "") throw new Error(`call ${i}: git status saw no change after ${effect.paths.length} changed files`);
      statusMs = s.ms;
    };
    await inTurn(i, strata, status);
    const capture = cap as NonNullable<typeof cap>;
    checkCapture(capture, effect, i);
    const t1 = performance.now();
    history.events.push(commitChanges(ws, capture.changes, `call ${i}`).id);
    const eventMs = performance.now() - t1;
    for (const h of hashesOf(capture.changes)) if (!seen.has(h)) fresh.add(h);
    const t2 = performance.now();
    history.commits.push(checkpoint(repo, `call ${i}`));
    const shadowMs = performance.now() - t2;
    git(repo, ["update-index", "-q", "--refresh"]);
    t.capture.push(captureMs);
    t.status.push(statusMs);
    t.event.push(eventMs);
    t.shadow.push(shadowMs);
    ratios.capture.push(captureMs / statusMs);
    ratios.recorded.push((captureMs + eventMs) / shadowMs);
    if ((i + 1) % 250 === 0) checkTree(ws.session.tree, model, `after call ${i}`);
  }
  checkTree(ws.session.tree, model, "after the last call");
  metrics.capture = summarize(t.capture, "ms");
  metrics.status = summarize(t.status, "ms");
  metrics.event = summarize(t.event, "ms");
  metrics.shadow = summarize(t.shadow, "ms");
  metrics.recorded = summarize(
    t.capture.map((x, i) => x + (t.event[i] as number)),
    "ms",
  );
  values.captureRatio = median(ratios.capture);
  values.recordedRatio = median(ratios.recorded);
  values.calls = CALLS;
  values.filesPerCall = changedFiles / CALLS;

  // Bytes per call.
  const after = storeBytes(ws.store);
  values.changedPerCall = changedBytes / CALLS;
  values.dbPerCall = (after.file - before.file) / CALLS;
  values.blobPerCall = (after.blobs - before.blobs) / CALLS;
  values.contentPerCall = blobSizes(ws.store, fresh) / CALLS;
  values.otherBlobPerCall = values.blobPerCall - values.contentPerCall;
  const objects1 = treeBytes(join(repo.gitDir, "objects"));
  values.gitLoosePerCall = (objects1.apparent - objects0.apparent) / CALLS;
  values.gitLooseAllocPerCall = (objects1.allocated - objects0.allocated) / CALLS;
  values.gitObjectsPerCall = (objects1.files - objects0.files) / CALLS;
  values.dbVsChanged = values.dbPerCall / values.changedPerCall;
  values.dbVsGitLoose = values.dbPerCall / values.gitLoosePerCall;
  return history;
}

/** Packed size of the shadow repository per call after `git gc`, against its packed baseline. */
function gcBytes(repo: Repo, baselinePacked: number, values: Record<string, number>): void {
  const t0 = performance.now();
  git(repo, ["gc", "-q"]);
  values.gcMs = performance.now() - t0;
  const packed = treeBytes(join(repo.gitDir, "objects")).apparent;
  values.gitPackedPerCall = (packed - baselinePacked) / CALLS;
  values.dbVsGitPacked = (values.dbPerCall as number) / values.gitPackedPerCall;
}

async function checkouts(
  ws: StrataWorkspace,
  shadow: Repo,
  history: History,
  dir: string,
  metrics: Record<string, Sample>,
  values: Record<string, number>,
): Promise<void> {
  const r = rng(4242);
  const targets: number[] = [];
  while (targets.length < Math.min(TARGETS, history.events.length)) {
    const k = Math.floor(r() * history.events.length);
    if (!targets.includes(k)) targets.push(k);
  }
  // Both directories start at the last call's state.
  const strataDir = join(dir, "checkout-strata");
  const gitDir = join(dir, "checkout-git");
  git(undefined, ["clone", "-q", shadow.gitDir, gitDir]);
  const clone: Repo = { gitDir: join(gitDir, ".git"), workTree: gitDir };
  if (git(clone, ["rev-parse", "HEAD"]).trim() !== history.commits[history.commits.length - 1])
    throw new Error("the clone of the shadow repository is not at the last call's commit");
  let from: Tree = await checkoutAt(ws, history.events[history.events.length - 1] as EventId, strataDir);
  const t = { strata: [] as number[], at: [] as number[], git: [] as number[] };
  const ratios: number[] = [];
  let verified = 0;
  for (const [n, k] of targets.entries()) {
    let strataMs = 0;
    let atMs = 0;
    let gitMs = 0;
    const strata = async () => {
      const t0 = performance.now();
      const tree = ws.session.at(history.events[k] as EventId);
      const t1 = performance.now();
      await checkoutAt(ws, history.events[k] as EventId, strataDir, from);
      strataMs = performance.now() - t0;
      atMs = t1 - t0;
      from = tree;
    };
    const gitSide = () => {
      gitMs = timedGit(clone, ["checkout", "-q", "--detach", history.commits[k] as string]).ms;
    };
    await inTurn(n, strata, gitSide);
    t.strata.push(strataMs);
    t.at.push(atMs);
    t.git.push(gitMs);
    ratios.push(strataMs / gitMs);
    if (n % Math.max(1, Math.floor(targets.length / VERIFY)) === 0 || n === targets.length - 1) {
      verify(clone, strataDir, dir, k);
      verified++;
    }
  }
  // Without `from`: the directory's content is not known, so every file is compared by hash.
  const blind = { strata: [] as number[], git: [] as number[] };
  const blindRatios: number[] = [];
  for (let n = 0; n < BLIND; n++) {
    const k = Math.floor(r() * history.events.length);
    let strataMs = 0;
    let gitMs = 0;
    const strata = async () => {
      const t0 = performance.now();
      from = await checkoutAt(ws, history.events[k] as EventId, strataDir);
      strataMs = performance.now() - t0;
    };
    const gitSide = () => {
      gitMs = timedGit(clone, ["checkout", "-q", "--detach", history.commits[k] as string]).ms;
    };
    await inTurn(n, strata, gitSide);
    blind.strata.push(strataMs);
    blind.git.push(gitMs);
    blindRatios.push(strataMs / gitMs);
    if (n === BLIND - 1) {
      verify(clone, strataDir, dir, k);
      verified++;
    }
  }
  metrics.blindCheckout = summarize(blind.strata, "ms");
  metrics.blindGit = summarize(blind.git, "ms");
  values.blindRatio = median(blindRatios);
  values.blindTargets = BLIND;
  metrics.checkout = summarize(t.strata, "ms");
  metrics.checkoutAt = summarize(t.at, "ms");
  metrics.gitCheckout = summarize(t.git, "ms");
  values.checkoutRatio = median(ratios);
  values.targets = targets.length;
  values.verified = verified;
}

/**
 * The strata directory holds exactly the target commit: `git status` of it against a copy of the
 * clone's index (which describes the commit) is empty — contents, exec bits, no extra or missing
 * files. A copy, so the clone's own index keeps its stat data.
 */
function verify(clone: Repo, strataDir: string, dir: string, k: number): void {
  const index = join(dir, "verify.index");
  copyFileSync(join(clone.gitDir, "index"), index);
  const out = git({ gitDir: clone.gitDir, workTree: strataDir }, ["status", "--porcelain"], { GIT_INDEX_FILE: index });
  if (out !== "") throw new Error(`checkout at call ${k} differs from git's commit of the same changes:\n${out.slice(0, 800)}`);
}

const mod: BenchModule = {
  title: "Workspace: 1,000 tool calls — capture, bytes per call, checkout",
  async measure(): Promise<RunResult> {
    const tmp = scratch(NAME);
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      progress(NAME, "generating the tree");
      const model = makeTree(tmp.dir, values);
      const ws = openWorkspace(join(tmp.dir, "bench.db"), model.root);
      const base = await ws.tracker.baseline(ws.session.tree);
      commitChanges(ws, base.changes, "workspace.baseline");
      checkTree(ws.session.tree, model, "after the baseline");
      const repo = initRepo(join(tmp.dir, "shadow.git"), model.root);
      checkpoint(repo, "baseline");
      git(repo, ["gc", "-q"]);
      const baselinePacked = treeBytes(join(repo.gitDir, "objects")).apparent;
      git(repo, ["update-index", "-q", "--refresh"]);
      values.spawn = spawnCost();
      const history = await runCalls(ws, repo, model, metrics, values);
      progress(NAME, `checkout at ${TARGETS} random events`);
      await checkouts(ws, repo, history, tmp.dir, metrics, values);
      progress(NAME, "git gc of the shadow repository");
      gcBytes(repo, baselinePacked, values);
      ws.store.close();
    } finally {
      tmp.remove();
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    const calls = num(agg.values.calls?.median ?? CALLS);
    const b = (k: string) => byteValue(agg, k);
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `${treeLine(agg)} ${calls} calls, each changing 1–10 tracked files (${value(agg, "filesPerCall")} on average: mostly edits of a few lines, appends, new files, deletions, renames, exec-bit flips, rewritten media files; one call in ten also writes ignored build output), committed as one event per call. git: a shadow repository (git dir outside the tree, no auto-gc) with a checkpoint per call; spawning git costs ${value(agg, "spawn", (x) => `${num(x)} ms`)} of each git figure.`,
      "",
      "**Per call** (median over calls; spread p10–p90; ratios per call):",
      "",
      table(
        ["", "strata", "git", "strata / git"],
        [
          ["capture vs. `git status --porcelain` (index fresh)", cell(agg, "capture"), cell(agg, "status"), ratio(agg, "captureRatio")],
          ["capture + its event vs. `git add -A && git commit`", cell(agg, "recorded"), cell(agg, "shadow"), ratio(agg, "recordedRatio")],
          ["(the event alone)", cell(agg, "event"), "", ""],
        ],
      ),
      "",
      "**Bytes stored per call** (mean over the calls):",
      "",
      table(
        ["", "per call", "÷ changed bytes"],
        [
          ["changed bytes (new content of added and modified files)", b("changedPerCall"), "1"],
          ["strata: SQLite file growth (WAL checkpointed)", b("dbPerCall"), ratio(agg, "dbVsChanged")],
          ["— of which new file content in the blob table", b("contentPerCall"), ""],
          ["— of which other blobs (snapshot pages, large payloads)", b("otherBlobPerCall"), ""],
          [
            `shadow git: \`.git/objects\` growth, loose (${value(agg, "gitObjectsPerCall")} objects per call; ${b("gitLooseAllocPerCall")} allocated)`,
            b("gitLoosePerCall"),
            "",
          ],
          [
            `shadow git after \`git gc\` (packed, deltas; the gc took ${value(agg, "gcMs", (x) => `${num(x / 1000)} s`)})`,
            b("gitPackedPerCall"),
            "",
          ],
        ],
      ),
      "",
      `strata per call ÷ shadow git per call: loose ${ratio(agg, "dbVsGitLoose")}, after gc ${ratio(agg, "dbVsGitPacked")}. strata stores each new file version whole and uncompressed (content-addressed: a renamed or restored file costs nothing); git's loose objects are zlib-compressed, and \`git gc\` also delta-compresses versions of a file against each other.`,
      "",
      `**Checkout at ${value(agg, "targets", count)} random events of the ${calls}** (each from the previous target; ${value(agg, "verified", count)} verified byte for byte against git):`,
      "",
      table(
        ["", "strata", "`git checkout --detach`", "strata / git"],
        [
          [
            "checkout at an event (`session.at` + `checkoutWorkspace` with `from`)",
            cell(agg, "checkout"),
            cell(agg, "gitCheckout"),
            ratio(agg, "checkoutRatio"),
          ],
          ["(reading the tree at the event, `session.at`)", cell(agg, "checkoutAt"), "", ""],
          [
            `without \`from\` (content of the directory unknown: every file compared by hash; ${value(agg, "blindTargets", count)} more events)`,
            cell(agg, "blindCheckout"),
            cell(agg, "blindGit"),
            ratio(agg, "blindRatio"),
          ],
        ],
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    return [
      targetLine(
        agg,
        "capture after a call that changed ≤ 10 files ≤ 1.5× `git status --porcelain`",
        [{ key: "captureRatio", label: "capture vs. status" }],
        "<=",
        1.5,
        `(medians: capture ${num(agg.metrics.capture?.median ?? Number.NaN)} ms, git status ${num(agg.metrics.status?.median ?? Number.NaN)} ms)`,
      ),
      `bytes stored per call ≈ the changed bytes: ${bytes(agg.values.dbPerCall?.median ?? Number.NaN)} per call for ${bytes(agg.values.changedPerCall?.median ?? Number.NaN)} changed (${num(agg.values.dbVsChanged?.median ?? Number.NaN)}×); a shadow-git commit per call: ${bytes(agg.values.gitLoosePerCall?.median ?? Number.NaN)} loose, ${bytes(agg.values.gitPackedPerCall?.median ?? Number.NaN)} after gc.`,
      targetLine(
        agg,
        "checkout at a random event of the 1,000 ≤ 1.5× `git checkout` of the equivalent commit",
        [{ key: "checkoutRatio", label: "checkout vs. git checkout" }],
        "<=",
        1.5,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
