/**
 * The main job on embedded defaults: `strata run` with the offline scripted model, which plays in a
 * fresh copy of the demo workspace (fixtures/demo-workspace) at .strata/demo and writes the
 * session to .strata/strata.db in the current directory (CLI-28). Extra arguments go to
 * `strata run`.
 *
 * Usage: pnpm demo [--json] [--no-color]
 */
import { main } from "../apps/cli/src/main.ts";

process.exitCode = await main(["run", ...process.argv.slice(2)]);
if (process.exitCode === 0 && !process.argv.includes("--json"))
  process.stderr.write(
    "\nNext: `pnpm strata ls`, `pnpm strata log @last`, `pnpm strata show @last --tree`, `pnpm strata prompt @last` — see the README walkthrough.\n",
  );
