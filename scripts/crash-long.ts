/**
 * The crash harness (packages/engine/test/crash-writer.ts) for a long run: spawns the writer,
 * SIGKILLs it at a random moment, checks the database, N times. Progress goes to stderr; the
 * summary to stdout. Exits 1 when any trial failed.
 *
 * Usage: tsx scripts/crash-long.ts [--trials N (500)] [--seed S] [--fresh-every N (25; 0: one file)]
 *                                  [--snapshot-every K (16)] [--keep] [--json]
 */
import { type CrashSummary, runCrashTrials } from "../packages/engine/test/crash-writer.ts";

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

function number(name: string, fallback: number): number {
  const v = option(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`crash-long: ${name} needs a non-negative integer, got ${JSON.stringify(v)}`);
    process.exit(2);
  }
  return n;
}

const json = process.argv.includes("--json");
const trials = number("--trials", 500);
const seed = option("--seed") === undefined ? undefined : number("--seed", 0);
const freshEvery = number("--fresh-every", 25);
const snapshotEvery = number("--snapshot-every", 16);

const summary: CrashSummary = await runCrashTrials({
  trials,
  seed,
  freshEvery,
  snapshotEvery,
  keep: process.argv.includes("--keep"),
  onTrial: (t, done) => {
    const status = t.problems.length === 0 ? "ok" : `FAILED: ${t.problems.join("; ")}`;
    console.error(
      `[${done}/${trials}] ${t.durability}${t.early ? " early" : ""} kill@${t.killAfterMs}ms${t.readyBeforeKill ? "" : " (before ready)"}: ` +
        `${t.commitsPrinted} commits/${t.eventsPrinted} events printed, +${t.eventsCommitted} committed` +
        `${t.eventsInFlight > 0 ? ` (${t.eventsInFlight} in flight landed)` : ""}, ${t.eventsTotal} in file, ` +
        `${t.snapshotsTotal} snapshots, verify ${Math.round(t.verifyMs)}ms, checks ${Math.round(t.checkMs)}ms — ${status}`,
    );
  },
});

if (json) console.log(JSON.stringify(summary, null, 2));
else {
  const s = summary;
  console.log(
    [
      `crash harness: ${s.trials} trials, ${s.kills} SIGKILLs (${s.earlyKills} at a random moment after spawn, ${s.killsBeforeReady} before the writer was ready; ${s.fullDurabilityTrials} trials with durability "full")`,
      `events committed: ${s.eventsCommitted} (${s.eventsPrinted} printed in ${s.commitsPrinted} commits; the commit in flight was durable but unprinted after ${s.inFlightDurable} kills)`,
      `max events lost per kill: ${s.maxEventsLostPerKill} (0 expected)`,
      `databases: ${s.databases} (largest ${s.largestDbEvents} events, ${(s.largestDbBytes / 1048576).toFixed(1)} MiB); slowest verify ${Math.round(s.maxVerifyMs)} ms`,
      `seed ${s.seed}, ${(s.elapsedMs / 1000).toFixed(1)} s`,
      `failures: ${s.failures.length}`,
      ...s.failures.map((f) => `  trial ${f.trial} (seed ${f.seed}, db kept at ${f.db}): ${f.problems.join("; ")}`),
    ].join("\n"),
  );
}
process.exit(summary.failures.length === 0 && summary.kills === summary.trials ? 0 : 1);
