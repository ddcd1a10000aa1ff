/**
 * Crash safety (ST-19, L1): a writer process is SIGKILLed at random moments while it commits (single and group
 * commits, snapshots every 16 events, forks and rewinds); after each kill the database opens,
 * `verify` is clean, every printed id is present, no group or payload is partial, the heads are at
 * committed events, and `Journal.open` equals the replay from genesis. The harness is in
 * crash-writer.ts; `tsx scripts/crash-long.ts` runs it for 500 trials.
 */
import { describe, expect, it } from "vitest";
import { runCrashTrials } from "./crash-writer.ts";

const TRIALS = Number(process.env.STRATA_CRASH_TRIALS ?? "50");

describe("ST-19 crash safety (SIGKILL)", () => {
  it(`survives ${TRIALS} kills at random moments`, async () => {
    const summary = await runCrashTrials({ trials: TRIALS, freshEvery: 10 });
    const context = `seed ${summary.seed}, ${JSON.stringify(summary.failures, null, 1)}`;
    console.log(
      `crash: ${summary.trials} trials, ${summary.kills} SIGKILLs, ${summary.eventsCommitted} events committed ` +
        `(${summary.eventsPrinted} printed), in-flight commit durable after ${summary.inFlightDurable} kills, ` +
        `max lost per kill ${summary.maxEventsLostPerKill}, ${summary.failures.length} failures, seed ${summary.seed}`,
    );
    expect(summary.failures, context).toEqual([]);
    expect(summary.kills, context).toBe(TRIALS);
    expect(summary.maxEventsLostPerKill).toBe(0);
    expect(summary.eventsPrinted).toBeGreaterThan(0);
    expect(summary.eventsCommitted).toBeGreaterThanOrEqual(summary.eventsPrinted);
  }, 300_000);
});
