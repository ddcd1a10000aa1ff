/**
 * Running the `strata` command as a user does, for the CLI benchmarks: the published package's
 * layout (its bin and dist/, no checkout around them), a user's environment, and one fresh
 * process timed from outside with the OS's accounting.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
export const CLI = join(ROOT, "apps", "cli");
/** The checkout's bin (it checks that no source is newer than the build before running dist/). */
export const BIN = join(CLI, "bin", "strata.mjs");

/** The environment of a user's shell: no source condition, no strata settings. */
export function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  delete env.NODE_OPTIONS;
  for (const k of Object.keys(env)) if (k.startsWith("STRATA_")) delete env[k];
  return env;
}

/**
 * The published package's layout in `dir`: its bin and package.json copied, its dist/ linked (Node
 * resolves the link, so dist/'s dependencies come from the checkout's node_modules, as they would
 * from the installing project's). No tsconfig.build.json beside it, so the bin is not in a checkout
 * and runs dist/ straight away, as it does after `npm install @strata/cli`. Returns the bin.
 */
export function installedLayout(dir: string): string {
  const pkg = join(dir, "node_modules", "@strata", "cli");
  mkdirSync(join(pkg, "bin"), { recursive: true });
  copyFileSync(join(CLI, "package.json"), join(pkg, "package.json"));
  copyFileSync(BIN, join(pkg, "bin", "strata.mjs"));
  symlinkSync(join(CLI, "dist"), join(pkg, "dist"), "dir");
  return join(pkg, "bin", "strata.mjs");
}

export interface Timed {
  readonly wall: number;
  readonly cpu: number;
  readonly rss: number;
  /** Bytes the command wrote on stdout. */
  readonly out: number;
}

/** One run under /usr/bin/time: wall and CPU in ms, peak RSS in bytes; throws if the command fails. */
export function timed(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Timed {
  const r = spawnSync("/usr/bin/time", ["-f", "TIME %e %U %S %M", ...argv], { cwd, env, encoding: "buffer", maxBuffer: 1 << 30 });
  const err = r.stderr.toString("utf8");
  const m = /TIME (\S+) (\S+) (\S+) (\S+)\s*$/.exec(err);
  if (r.status !== 0 || m === null) throw new Error(`${argv.join(" ")} failed (exit ${r.status}): ${err.slice(-2000)}`);
  const [, wall, user, sys, rss] = m.map(Number) as [number, number, number, number, number];
  return { wall: wall * 1000, cpu: (user + sys) * 1000, rss: rss * 1024, out: r.stdout.length };
}
