/**
 * Crash safety (ST-19, L1), on both storage ports (decision 0036; issue 15): SQLite files and
 * PostgreSQL schemas of the server the test run started. A writer process is SIGKILLed at random
 * moments while it commits (single and group commits, snapshots every 16 events, forks and
 * rewinds); after each kill the database opens, verify is clean, every printed id is present, no
 * group or payload is partial, the heads are at committed events, and `Journal.open` equals the
 * replay from genesis. One harness and one set of checks for both ports, in crash-writer.ts;
 * `tsx scripts/crash-long.ts` runs it for 500 trials.
 */
import { describe, expect, inject, it } from "vitest";
import { type CrashPort, runCrashTrials } from "./crash-writer.ts";

const PORTS: readonly { name: string; trials: number; port: () => CrashPort }[] = [
  { name: "SQLite", trials: Number(process.env.STRATA_CRASH_TRIALS ?? "50"), port: () => "sqlite" },
  // Fewer trials: each writer connects and each check reads over the network.
  { name: "PostgreSQL", trials: Number(process.env.STRATA_CRASH_PG_TRIALS ?? "20"), port: () => ({ postgres: inject("pgUrl") }) },
];

describe.each(PORTS)("ST-19 crash safety (SIGKILL) on $name", ({ name, trials, port }) => {
  it(`survives ${trials} kills at random moments`, async () => {
    const summary = await runCrashTrials({ trials, port: port(), freshEvery: 10 });
    const context = `${name}, seed ${summary.seed}, ${JSON.stringify(summary.failures, null, 1)}`;
    console.log(
      `crash (${name}): ${summary.trials} trials, ${summary.kills} SIGKILLs, ${summary.eventsCommitted} events committed ` +
        `(${summary.eventsPrinted} printed), in-flight commit durable after ${summary.inFlightDurable} kills, ` +
        `max lost per kill ${summary.maxEventsLostPerKill}, ${summary.failures.length} failures, ` +
        `slowest verify ${Math.round(summary.maxVerifyMs)} ms, ${(summary.elapsedMs / 1000).toFixed(1)} s, seed ${summary.seed}`,
    );
    expect(summary.failures, context).toEqual([]);
    expect(summary.kills, context).toBe(trials);
    expect(summary.maxEventsLostPerKill).toBe(0);
    expect(summary.eventsPrinted).toBeGreaterThan(0);
    expect(summary.eventsCommitted).toBeGreaterThanOrEqual(summary.eventsPrinted);
  }, 300_000);
});
