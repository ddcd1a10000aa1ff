/**
 * The child process of the workspace crash test (WS-26). Usage:
 *   node --import tsx workspace-crash-child.ts <db> <root> start     prints `SESSION <id>`, `RUNNING <tool>` per call start, then runs (and hangs at the end) until killed
 *   node --import tsx workspace-crash-child.ts <db> <root> resume <id>   resumes and prints `RESULT <json>`
 * The agent works in <root> with the built-in tools and a workspace tracker; its `run` calls
 * write files slowly, so a kill lands in the middle of one as often as between events.
 */
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { type RunAgentOptions, runAgent, startRun, ToolRegistry, WorkspaceTracker, workspaceTools } from "../src/index.ts";
import { InlineModel } from "./agent-kit.ts";

const [db, root, command, arg] = process.argv.slice(2) as [string, string, string, string | undefined];
const say = (line: string): void => void process.stdout.write(`${line}\n`);

const run = (cmd: string) => ({ calls: [{ name: "run", args: { command: cmd } }] });
const model = new InlineModel(
  [
    { calls: [{ name: "write_file", args: { path: "a.txt", content: "alpha\n" } }] },
    run(
      "for i in 1 2 3 4 5 6 7 8; do printf 'slow %s\\n' $i > slow-$i.txt; sleep 0.08; done; rm a.txt; mkdir -p sub && printf x > sub/x.txt",
    ),
    {
      calls: [
        { name: "write_file", args: { path: "b.txt", content: "beta\n" } },
        { name: "edit_file", args: { path: "b.txt", old: "beta", new: "BETA" } },
      ],
    },
    run("for i in 1 2 3 4 5; do printf '%s\\n' $i >> log.txt; sleep 0.08; done; chmod +x log.txt; ln -sf b.txt link"),
    run("mv slow-1.txt moved.txt; rm -f slow-2.txt; printf done > done.txt"),
    { text: "all done" },
  ],
  "workspace-crash",
);

const store = openStore(db);
const options: RunAgentOptions = {
  model,
  registry: new ToolRegistry(workspaceTools({ root })),
  workspace: new WorkspaceTracker(root, store),
  onEvent: (e) => {
    if (e.type === "call" && e.status === "running") say(`RUNNING ${e.tool}`);
  },
};
if (command === "start") {
  // The session, its inputs and its task are one transaction (AG-16): a kill leaves all or nothing.
  const s = Session.create(store, { title: "workspace-crash", init: (s) => void startRun(s, { ...options, task: "write files slowly" }) });
  say(`SESSION ${s.id}`);
  await runAgent(s, options);
  say("FINISHED");
  setInterval(() => {}, 1000); // waits to be killed
} else {
  const { session } = Session.open(store, arg as never);
  const result = await runAgent(session, options);
  say(
    `RESULT ${JSON.stringify({
      stop: result.stop,
      calls: session.select("body call").map((c) => `${c.attrs.tool}:${c.attrs.status}`),
    })}`,
  );
  store.close();
}
