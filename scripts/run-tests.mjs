#!/usr/bin/env node
// Runs the whole vitest suite with its own output, then prints the plain closing line
// "N passed, N failed" from vitest's JSON reporter. Exits non-zero on any failure, including a
// crash that leaves no JSON report. Extra arguments go to vitest.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const report = join(root, ".vitest-results.json");
rmSync(report, { force: true });
const vitest = join(root, "node_modules", ".bin", "vitest");
const run = spawnSync(vitest, ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  stdio: "inherit",
  cwd: root,
});
let passed = 0;
let failed = 0;
try {
  const r = JSON.parse(readFileSync(report, "utf8"));
  passed = r.numPassedTests;
  failed = r.numFailedTests;
  // A file that fails to load fails no test but fails the run: count it.
  if (r.success === false && failed === 0) failed = Math.max(1, r.numFailedTestSuites ?? 0);
} catch {
  console.log(`0 passed, 1 failed (vitest exited with ${run.status ?? run.signal} and wrote no report)`);
  process.exit(1);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
