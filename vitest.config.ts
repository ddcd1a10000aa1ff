import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

/**
 * The tests run the sources: the workspace's packages resolve through their exports' "@strata/source"
 * condition (not their built dist/), here and in every child process a test starts (NODE_OPTIONS),
 * where the `strata` command then runs its sources too (apps/cli/bin/strata.mjs).
 */
const SOURCE = "@strata/source";
const conditions = [SOURCE, ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: [SOURCE] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "scripts/test/**/*.test.ts"],
    // One private PostgreSQL server for the run (inject("pgUrl")); STRATA_TEST_PG_URL uses another instead.
    globalSetup: ["packages/store-postgres/test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--conditions=${SOURCE}`].filter(Boolean).join(" "),
    },
  },
});
