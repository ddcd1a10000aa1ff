// The consumer test's harness (PK-2): plain node, the packed packages, nothing of the repository.
//   node agent.mjs start DB RUNS   prints SESSION <id>, then RUNNING deploy, and hangs in that call until killed
//   node agent.mjs resume DB RUNS ID   resumes, forks at an earlier event, commits there, reads the prompt then; prints RESULT <json>
import { appendFileSync } from "node:fs";
import { renderPrompt, runAgent, startRun, ToolRegistry } from "@strata/agent";
import { Session } from "@strata/engine";
import { parseScript, ScriptedModel } from "@strata/models";
import { openStore } from "@strata/store";

const [command, db, runs, id] = process.argv.slice(2);
const say = (line) => void process.stdout.write(`${line}\n`);
const hang = command === "start";

/** A tool of the consumer's own: its schema, its replay policy; it notes each start in RUNS. */
const tool = (name, replayPolicy) => ({
  name,
  description: `${name} a target`,
  parameters: {
    type: "object",
    properties: { target: { type: "string", minLength: 1 } },
    required: ["target"],
    additionalProperties: false,
  },
  replayPolicy,
  handler: async (args) => {
    appendFileSync(runs, `${name}\n`);
    if (hang && name === "deploy") {
      say("RUNNING deploy");
      await new Promise(() => {});
    }
    return `${name} ${args.target}: ok`;
  },
});
const registry = new ToolRegistry([tool("fetch", "safe"), tool("deploy", "never")]);
const model = new ScriptedModel(
  parseScript({
    name: "consumer",
    turns: [
      {
        text: "Fetching, then deploying.",
        toolCalls: [
          { name: "fetch", arguments: { target: "a" } },
          { name: "deploy", arguments: { target: "b" } },
        ],
      },
      { text: "All done." },
    ],
  }),
);
const templates = { system: 'You are the consumer harness; {{ count(select("meta > config > tools > tool")) }} tools.' };
const store = openStore(db);
if (command === "start") {
  const options = { model, registry, templates, task: "fetch a and deploy b" };
  const s = Session.create(store, { title: "consumer", init: (s) => void startRun(s, options) });
  say(`SESSION ${s.id}`);
  await runAgent(s, options);
  say("UNEXPECTED-END");
} else {
  const { session, work } = Session.open(store, id);
  const result = await runAgent(session, { model, registry, templates });
  const log = session.log();
  const first = log[0].id;
  const earlier = renderPrompt(session, { at: log[Math.floor(log.length / 2)].id });
  const fork = session.fork(first, { name: "try-2" });
  fork.commit((d) => void d.appendChild(d.selectOne("body").id, { tag: "note", text: "on the fork" }), { label: "consumer.note" });
  say(
    `RESULT ${JSON.stringify({
      stop: result.stop,
      interrupted: work.spawn.map((e) => `${e.element.attrs.tool}:${e.element.attrs.status}`),
      calls: session.select("body call").map((c) => `${c.attrs.tool}:${c.attrs.status}`),
      system: earlier.system,
      earlierMessages: earlier.messages.length,
      headMessages: renderPrompt(session).messages.length,
      branches: session
        .branches()
        .map((b) => b.name)
        .sort(),
      forkNotes: fork.select("note").length,
      mainNotes: session.select("note").length,
    })}`,
  );
  store.close();
}
