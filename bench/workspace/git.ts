/**
 * Real git (`/usr/bin/git`) as the baseline of the workspace benchmarks, isolated from the
 * machine's configuration: no system or global config, a fixed identity, no automatic gc or
 * maintenance (so loose-object growth per commit is what one commit writes), no fsmonitor, no
 * signing. Everything else is git's default (index v2, no untracked cache, preloadIndex on), i.e.
 * what a shadow-git checkpointing harness gets out of the box.
 *
 * A repository here is a git directory plus a work tree (`--git-dir`/`--work-tree`), the way
 * shadow-git checkpointers keep their repository outside the user's directory.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const GIT = "/usr/bin/git";

const CONFIG = [
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "commit.gpgsign=false",
  "-c",
  "core.autocrlf=false",
  "-c",
  "init.defaultBranch=main",
  "-c",
  "advice.detachedHead=false",
];

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    LANG: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "bench",
    GIT_AUTHOR_EMAIL: "bench@example.invalid",
    GIT_COMMITTER_NAME: "bench",
    GIT_COMMITTER_EMAIL: "bench@example.invalid",
    GIT_TERMINAL_PROMPT: "0",
    ...extra,
  };
}

export interface Repo {
  readonly gitDir: string;
  readonly workTree: string;
}

/** Runs git on `repo` and returns stdout; a failure throws with git's stderr. */
export function git(repo: Repo | undefined, args: readonly string[], extraEnv: Record<string, string> = {}): string {
  const where = repo === undefined ? [] : [`--git-dir=${repo.gitDir}`, `--work-tree=${repo.workTree}`];
  const res = spawnSync(GIT, [...where, ...CONFIG, ...args], {
    env: env(extraEnv),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (res.status !== 0)
    throw new Error(`git ${args.join(" ")} failed (exit ${res.status ?? res.signal}): ${(res.stderr ?? "").trim() || res.error?.message}`);
  return res.stdout;
}

/** Times one git invocation (spawn included, as a harness driving git pays it); returns ms and stdout. */
export function timedGit(repo: Repo | undefined, args: readonly string[]): { ms: number; out: string } {
  const t0 = performance.now();
  const out = git(repo, args);
  return { ms: performance.now() - t0, out };
}

/** `git init` of a repository whose git directory is `gitDir` and whose work tree is `workTree`. */
export function initRepo(gitDir: string, workTree: string): Repo {
  const repo = { gitDir, workTree };
  git(repo, ["init", "-q"]);
  return repo;
}

/** `git add -A && git commit`: a shadow-git checkpoint. Returns the commit's sha. */
export function checkpoint(repo: Repo, message: string): string {
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "--allow-empty", "--no-verify", "-m", message]);
  return git(repo, ["rev-parse", "HEAD"]).trim();
}

/** Apparent bytes and allocated bytes (st_blocks × 512) of every file under `dir`. */
export function treeBytes(dir: string): { apparent: number; allocated: number; files: number } {
  let apparent = 0;
  let allocated = 0;
  let files = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        apparent += s.size;
        allocated += s.blocks * 512;
        files++;
      }
    }
  };
  walk(dir);
  return { apparent, allocated, files };
}

/** The cost of spawning git at all (`git --version`), median of `n` runs, in ms. */
export function spawnCost(n = 15): number {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(timedGit(undefined, ["--version"]).ms);
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)] as number;
}
