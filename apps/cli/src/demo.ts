/**
 * The offline demo (CLI-10, CLI-28): with no model configured `strata run` plays the scripted demo
 * (`fixtures/models/demo.json`), which writes `SUMMARY.md` and runs shell commands. It only ever
 * plays in a demo workspace of its own: a fresh copy of `fixtures/demo-workspace` at
 * `.strata/demo` in the current directory (what `pnpm demo` uses), or a directory named with
 * `--workspace` that is empty, new, or already a copy of the demo workspace. Anything else —
 * the current directory with a user's files in it — is refused before anything is created.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { UsageError } from "./errors.ts";

/**
 * The built command carries its own copy of the demo (dist/demo/, made by scripts/build.mjs); the
 * sources use the repository's fixtures.
 */
const PACKED = join(import.meta.dirname, "demo");
export const DEMO_SCRIPT = existsSync(PACKED)
  ? join(PACKED, "demo.json")
  : resolve(import.meta.dirname, "../../../fixtures/models/demo.json");
export const DEMO_SPEC = `scripted:${DEMO_SCRIPT}`;
export const DEMO_FILES = existsSync(PACKED) ? join(PACKED, "workspace") : resolve(import.meta.dirname, "../../../fixtures/demo-workspace");
export const DEMO_TASK = "Read the meeting notes in this workspace and write SUMMARY.md with the decisions and the open questions.";
/** What the demo itself writes into its workspace. */
const DEMO_OUTPUT = new Set(["SUMMARY.md"]);

/** Where the demo plays when no workspace is named: `.strata/demo` in the current directory. */
export function demoWorkspace(cwd: string): string {
  return join(cwd, ".strata", "demo");
}

/** Every file of the demo workspace, relative to it. */
function demoFiles(dir = DEMO_FILES, base = DEMO_FILES): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? demoFiles(join(dir, e.name), base) : [relative(base, join(dir, e.name))],
  );
}

/** True when `dir` holds nothing but the demo workspace's files (unchanged) and what the demo writes. */
function isDemoCopy(dir: string): boolean {
  const want = new Set(demoFiles());
  const walk = (d: string): boolean =>
    readdirSync(d, { withFileTypes: true }).every((e) => {
      const rel = relative(dir, join(d, e.name));
      if (e.isDirectory()) return walk(join(d, e.name));
      if (DEMO_OUTPUT.has(rel)) return e.isFile();
      return e.isFile() && want.has(rel) && readFileSync(join(d, e.name)).equals(readFileSync(join(DEMO_FILES, rel)));
    });
  return walk(dir);
}

/**
 * Checks that `dir` (named with `--workspace`) may host the demo: it does not exist, is empty, or
 * is a copy of the demo workspace. Throws a UsageError saying what to do otherwise.
 */
export function checkDemoWorkspace(dir: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new UsageError(`the workspace ${dir} is not a directory; give a directory, or omit --workspace`);
  if (readdirSync(dir).length === 0 || isDemoCopy(dir)) return;
  throw new UsageError(
    `no model is configured, so strata would play its offline demo, which writes SUMMARY.md and runs shell commands in the workspace — and ${dir} has files of its own. ` +
      "Omit --workspace (the demo then plays in its own copy at .strata/demo), give an empty directory, or give a real model: --model openai:MODEL (OPENAI_API_KEY) or --model scripted:FILE, or set STRATA_MODEL",
  );
}

/**
 * Makes `dir` a fresh copy of the demo workspace: the demo's own files are restored and what a
 * previous demo run wrote is removed. Only called on a directory {@link checkDemoWorkspace} accepted
 * or on `.strata/demo`, which belongs to strata.
 */
export function freshDemoWorkspace(dir: string, own: boolean): void {
  if (own) rmSync(dir, { recursive: true, force: true });
  else for (const f of DEMO_OUTPUT) rmSync(join(dir, f), { force: true });
  cpSync(DEMO_FILES, dir, { recursive: true });
}
