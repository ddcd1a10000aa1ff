/**
 * CLI-W the README's quickstart, pasted in order: every shell command of the section runs in one
 * bash session in a fresh directory with the real binary, each must exit as expected, and every
 * output line the README shows must appear in what the command printed, in order (ids, handles
 * and numbers compared by form, runs of spaces as one; a line `…` elides, a line ending in `…`
 * shows a prefix). The opening install commands are not run (the test runs in the installed
 * clone). Substitutions, each for a reason a fresh clone does not have:
 *   - `R=$PWD` becomes the clone's path (the test does not start in the clone), `/tmp/walk` a
 *     fresh temp directory, and aliases are switched on (bash scripts do not expand them);
 *   - `strata run … & sleep 3; kill -9 $!` kills the run when its output shows `→ run ` instead of
 *     after three seconds (the same moment on a loaded machine), and expects exit 137;
 *   - `strata serve &` binds a free port (7357 may be taken) and is waited for; the `curl` goes to
 *     that port and stops after a few seconds (`--max-time`: a live stream never ends; exit 28).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, ROOT, sh, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

interface Step {
  command: string;
  expected: string[];
}

/** The shell commands of the quickstart and the output the README shows after each. */
export function quickstartSteps(readme: string): Step[] {
  // the section runs to the next heading outside a code block (prompts in it have "## " lines)
  const lines = readme.slice(readme.indexOf("## Quickstart")).split("\n");
  let fenced = false;
  const end = lines.findIndex((l, i) => {
    if (l.startsWith("```")) fenced = !fenced;
    return i > 0 && !fenced && l.startsWith("## ");
  });
  const section = lines.slice(0, end < 0 ? undefined : end).join("\n");
  const steps: Step[] = [];
  for (const m of section.matchAll(/```(\w*)\n([\s\S]*?)```/g)) {
    const [, lang, body] = m as unknown as [string, string, string];
    const lines = body.replace(/\n$/, "").split("\n");
    if (lang === "sh") {
      for (const l of lines) if (l.trim() !== "") steps.push({ command: l, expected: [] });
      continue;
    }
    for (const l of lines) {
      if (l.startsWith("$ ")) steps.push({ command: l.slice(2), expected: [] });
      else if (steps.length > 0 && l.trim() !== "") steps.at(-1)?.expected.push(l);
    }
  }
  return steps;
}

/** The documented substitutions; returns the command to run and the exit code it must have. */
function substitute(command: string, walk: string): { run: string; exit: number[] } {
  let run = command.replace(/^R=\$PWD\b/, `R=${ROOT}`).replaceAll("/tmp/walk", walk);
  let exit = [0];
  const kill = /^(strata run .*?) & sleep \d+; kill -9 \$!$/.exec(run);
  if (kill !== null) {
    run = `${kill[1]} > .run.out 2>&1 & pid=$!; until grep -q '→ run ' .run.out; do sleep 0.1; done; kill -9 $pid; wait $pid; rc=$?; cat .run.out; (exit $rc)`;
    exit = [137];
  }
  if (/^strata serve &/.test(run))
    run = `strata serve --port 0 > .serve.out 2>&1 & for i in $(seq 600); do grep -q 'inspector on' .serve.out && break; sleep 0.2; done; cat .serve.out; PORT=$(grep -o '127.0.0.1:[0-9]*' .serve.out | head -1 | cut -d: -f2)`;
  if (/^curl -N /.test(run)) {
    run = run.replace(/^curl -N /, "curl -sN --max-time 4 ").replace("127.0.0.1:7357", "127.0.0.1:$PORT");
    exit = [28];
  }
  return { run, exit };
}

/**
 * Session handles seen (the README's and each run's, from its `session HANDLE (ID)` banner): a
 * handle is the id's tail and may hold no digit, so it is not always found by form.
 */
const handles = new Set<string>();

/** Learns the handles of every `session HANDLE (ID)` banner in `text`. */
function learnHandles(text: string): void {
  for (const m of text.matchAll(/\bsession ([0-9A-Z]{6,16}) \(([0-9A-Z]{26})\)/g))
    if (m[2]?.endsWith(m[1] as string)) handles.add(m[1] as string);
}

/** A line as compared: ids, handles, numbers by form; runs of spaces as one. */
function normal(line: string): string {
  let l = line;
  for (const h of handles) l = l.replace(new RegExp(`\\b${h}\\b`, "g"), "<h>");
  return l
    .replace(/\b[0-9A-Z]{26}\b/g, "<id>")
    .replace(/\b(?=[0-9A-Z]*[0-9])(?=[0-9A-Z]*[A-Z])[0-9A-Z]{6,16}\b/g, "<h>")
    .replace(/[0-9]+/g, "N")
    .replace(/\s+/g, " ")
    .trim();
}

/** The README lines not found, in order, in what a command printed (stdout first, then stderr). */
function missing(expected: readonly string[], stdout: string, stderr: string): string[] {
  const out = stdout.split("\n").map(normal);
  const err = stderr.split("\n").map(normal);
  const lost: string[] = [];
  let at = 0;
  for (const line of expected) {
    if (line.trim() === "…") continue;
    const want = normal(line);
    const prefix = want.endsWith("…") ? want.slice(0, -1) : undefined;
    const ok = (l: string) => (prefix === undefined ? l === want : l.startsWith(prefix));
    const i = out.findIndex((l, k) => k >= at && ok(l));
    if (i >= 0) at = i + 1;
    else if (!err.some(ok)) lost.push(line);
  }
  return lost;
}

describe("CLI-W the README, pasted in order", () => {
  it("every command of the quickstart works on a fresh clone and prints what the README shows", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    // the opening two commands stay exactly as they are
    expect(readme).toContain(
      'npx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 demo\n\n# the whole test suite: type-check, lint, package-graph and rule checks, all tests ("N passed, N failed" last)\nnpx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 test',
    );
    learnHandles(readme);
    const steps = quickstartSteps(readme);
    expect(steps.length).toBeGreaterThan(20);
    const walk = join(tempDir(), "walk");
    const script = ["shopt -s expand_aliases"];
    const runs = steps.map((s) => substitute(s.command, walk));
    for (const [i, r] of runs.entries()) script.push(`echo "@@${i}@@"; echo "@@${i}@@" >&2`, r.run, `echo "@@${i} rc=$?@@"`);
    // whatever the README left running (it stops the inspector itself) ends with the test
    script.push("kill $(jobs -p) 2>/dev/null; true");
    const result = await sh(tempDir(), script.join("\n"));
    const outs = result.stdout.split(/@@\d+@@\n/).slice(1);
    const errs = result.stderr.split(/@@\d+@@\n/).slice(1);
    expect(outs.length, result.stderr).toBe(steps.length);
    learnHandles(result.stdout);
    for (const [i, step] of steps.entries()) {
      const m = /@@\d+ rc=(\d+)@@\n?$/.exec(outs[i] as string);
      const stdout = (outs[i] as string).replace(/@@\d+ rc=\d+@@\n?$/, "");
      const what = `README: $ ${step.command}\n--- printed:\n${stdout}\n--- stderr:\n${errs[i]}`;
      expect(m, what).not.toBeNull();
      expect(runs[i]?.exit, what).toContain(Number(m?.[1]));
      expect(errs[i], what).not.toMatch(/unexpected error|\n\s+at /);
      // a selector the README shows must find something on the README's own path
      expect(errs[i], what).not.toMatch(/no element matches/);
      const shown = step.expected.map((l) => l.replaceAll("/tmp/walk", walk));
      expect(missing(shown, stdout, errs[i] ?? ""), what).toEqual([]);
    }
    // what the walkthrough says it leaves behind: each branch its own summary (CLI-31), main's
    // written again after the rewind, the note made outside the agent recoverable (CLI-33)
    const main = readFileSync(join(walk, "ws", "SUMMARY.md"), "utf8");
    expect(main).toContain("# Summary of the meeting notes");
    expect(main).not.toContain("my own note");
    const forks = join(walk, ".strata", "workspaces");
    const [handle] = readdirSync(forks);
    expect(readFileSync(join(forks, handle as string, "alt", "SUMMARY.md"), "utf8")).toContain("# Notes, in short");
    expect(readFileSync(join(walk, "kept", "SUMMARY.md"), "utf8")).toMatch(/# Summary of the meeting notes[\s\S]*- \[ \] my own note\n$/);
    expect(existsSync(join(walk, "copy.db"))).toBe(true);
  }, 600_000);
});
