/**
 * The child process of the agent crash test (AG-14). Usage:
 *   node --import tsx agent-child.ts <db> <runs-file> start <mode>   prints `SESSION <id>`, runs until killed
 *   node --import tsx agent-child.ts <db> <runs-file> resume <id>    resumes and prints `RESULT <json>`
 * Modes say where the parent will kill it: `safe` (the safe call is running), `never` (the never
 * call is running), `intent` (the never call's intent is durable but it has not started).
 * Tool handlers append their name to <runs-file> when they start, so the parent counts executions.
 */
import { appendFileSync } from "node:fs";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { renderPrompt, runAgent, ToolRegistry, type ToolSpec } from "../src/index.ts";
import { InlineModel, providerValid } from "./agent-kit.ts";

const [db, runsFile, command, arg] = process.argv.slice(2) as [string, string, string, string];
const hang = command === "start";
const say = (line: string): void => void process.stdout.write(`${line}\n`);

function tool(name: string, replayPolicy: "safe" | "never"): ToolSpec {
  return {
    name,
    description: `${name} something`,
    parameters: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
    replayPolicy,
    handler: async (args) => {
      appendFileSync(runsFile, `${name}\n`);
      if (hang && ((arg === "safe" && name === "fetch") || (arg === "never" && name === "deploy"))) {
        say(`RUNNING ${name}`);
        await new Promise(() => {});
      }
      return `${name} ${args.target as string}: ok`;
    },
  };
}

const registry = new ToolRegistry([tool("fetch", "safe"), tool("deploy", "never")]);
const model = new InlineModel(
  [
    {
      text: "Fetching, then deploying.",
      calls: [
        { name: "fetch", args: { target: "a" } },
        { name: "deploy", args: { target: "b" } },
      ],
    },
    { text: "All done." },
  ],
  "crash",
);
const store = openStore(db);
if (command === "start") {
  const s = Session.create(store, { title: `crash-${arg}` });
  say(`SESSION ${s.id}`);
  await runAgent(s, {
    model,
    registry,
    task: "fetch a and deploy b",
    onEvent: (e) => {
      if (arg === "intent" && e.type === "call" && e.tool === "deploy" && e.status === "pending") {
        say("PENDING deploy");
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // blocks until killed
      }
    },
  });
  say("UNEXPECTED-END");
} else {
  const { session, work } = Session.open(store, arg as never);
  const result = await runAgent(session, { model, registry });
  const invalid = session
    .log()
    .map((e) => providerValid(renderPrompt(session, { at: e.id })))
    .filter((x) => x !== undefined);
  say(
    `RESULT ${JSON.stringify({
      spawn: work.spawn.map((e) => `${e.element.attrs.tool}:${e.element.attrs.status}`),
      stop: result.stop,
      calls: session.select("body call").map((c) => `${c.attrs.tool}:${c.attrs.status}:${c.attrs.attempt ?? ""}`),
      observations: renderPrompt(session)
        .messages.filter((m) => m.role === "tool")
        .map((m) => m.content),
      labels: session.log().map((e) => e.label),
      invalid,
    })}`,
  );
  store.close();
}
