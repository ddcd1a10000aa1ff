/** What the PostgreSQL benchmarks share: a private server for one measurement (bench/postgres/). */
import { startPgServer } from "@strata/store-postgres/testing";
import { progress, type RunResult } from "../lib/harness.ts";
import type { Sample } from "../lib/stats.ts";

/** What a measurement fills in. */
export type Measure = (url: string, metrics: Record<string, Sample>, values: Record<string, number>) => Promise<void>;

/** Runs `measure` against a private PostgreSQL server started for it (its log lines as `name`'s progress), stopped after. */
export async function onPgServer(name: string, measure: Measure, values: Record<string, number> = {}): Promise<RunResult> {
  const metrics: Record<string, Sample> = {};
  const server = await startPgServer({ log: (line) => progress(name, line) });
  try {
    await measure(server.url, metrics, values);
  } finally {
    await server.stop();
  }
  return { metrics, values };
}
