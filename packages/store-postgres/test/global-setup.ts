/**
 * Vitest globalSetup: ONE private PostgreSQL server (pg-server.ts) for the whole run, its URL given
 * to every test as `inject("pgUrl")`, stopped and removed when the run ends. When
 * `STRATA_TEST_PG_URL` is set, the tests use that server instead and nothing is started.
 */
import type { TestProject } from "vitest/node";
import { startPgServer } from "./pg-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The server the tests share: `postgres://strata@127.0.0.1:PORT/postgres`, or STRATA_TEST_PG_URL. */
    pgUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.STRATA_TEST_PG_URL;
  if (given) {
    project.provide("pgUrl", given);
    return undefined;
  }
  const server = await startPgServer();
  project.provide("pgUrl", server.url);
  return () => server.stop();
}
