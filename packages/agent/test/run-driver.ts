/**
 * The driver process of run-orphans.test.ts (TL-18): a real agent loop whose model calls the
 * built-in `run` tool. Usage:
 *   node --import tsx run-driver.ts <db> <workspace> start <command>   prints `SESSION <id>` and
 *     `RUNNING` once the call is running, then waits to be killed
 *   node --import tsx run-driver.ts <db> <workspace> resume <id> <command>   resumes; the model's
 *     next turn runs <command>; prints `RESULT <json>`
 */

import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { runAgent, ToolRegistry, workspaceTools } from "../src/index.ts";
import { InlineModel } from "./agent-kit.ts";

const [db, workspace, command, arg, next] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const registry = new ToolRegistry(workspaceTools({ root: workspace, runTimeoutMs: 30_000 }));
const store = openStore(db);
if (command === "start") {
  const model = new InlineModel([{ text: "Running it.", calls: [{ name: "run", args: { command: arg } }] }], "orphans");
  const s = Session.create(store, { title: "orphans" });
  say(`SESSION ${s.id}`);
  await runAgent(s, {
    model,
    registry,
    task: "run the command",
    onEvent: (e) => {
      if (e.type === "call" && e.status === "running") say("RUNNING");
    },
  });
  say("UNEXPECTED-END");
} else {
  const model = new InlineModel(
    [{ text: "unused" }, { text: "Again, after the crash.", calls: [{ name: "run", args: { command: next } }] }, { text: "Done." }],
    "orphans",
  );
  const { session } = Session.open(store, arg as never);
  const result = await runAgent(session, { model, registry });
  say(
    `RESULT ${JSON.stringify({
      stop: result.stop,
      calls: session.select("body call").map((c) => `${c.attrs.tool}:${c.attrs.status}`),
      results: session.select("body call > result").map((r) => r.textContent()),
    })}`,
  );
  store.close();
}
