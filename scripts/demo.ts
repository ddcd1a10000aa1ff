/**
 * The main job on embedded defaults: copies the demo workspace (fixtures/demo-workspace) to
 * .strata/demo and runs `strata run` there with the offline scripted model, writing the session
 * to .strata/strata.db in the current directory. Extra arguments go to `strata run`.
 *
 * Usage: pnpm demo [--json] [--no-color]
 */
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { main } from "../apps/cli/src/main.ts";

const root = join(import.meta.dirname, "..");
const workspace = join(process.cwd(), ".strata", "demo");
rmSync(join(workspace, "SUMMARY.md"), { force: true });
cpSync(join(root, "fixtures", "demo-workspace"), workspace, { recursive: true });
process.exitCode = await main(["run", "--workspace", workspace, ...process.argv.slice(2)]);
if (process.exitCode === 0 && !process.argv.includes("--json"))
  process.stderr.write(
    "\nNext: `pnpm strata ls`, `pnpm strata log <session>`, `pnpm strata show <session> --tree`, `pnpm strata prompt <session>` — see the README walkthrough.\n",
  );
