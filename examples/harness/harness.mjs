// @ts-check
/**
 * A minimal harness on strata's public API (README.md here, docs/embedding.md).
 *   node harness.mjs start DB            new session in the SQLite file DB, run the agent (deploy is slow: kill -9 it)
 *   node harness.mjs resume DB ID        resume after the kill and finish
 *   node harness.mjs fork DB ID EVENT    fork at EVENT and run one more step on the fork
 *   node harness.mjs rewind DB ID EVENT  move main back to EVENT (the old head is kept as a branch)
 *   node harness.mjs prompt DB ID EVENT  the exact request the model is sent at EVENT
 * The model is the inline script below; STRATA_MODEL=openai:NAME (OPENAI_API_KEY, OPENAI_BASE_URL) uses a real one.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { renderPrompt, runAgent, startRun, ToolRegistry } from "@strata/agent";
import { EngineError, Session } from "@strata/engine";
import { checkModelSpec, createModel, parseScript, ScriptedModel } from "@strata/models";
import { eventId, openStore, StoreError, sessionId } from "@strata/store";

const USAGE = "usage: node harness.mjs start DB | resume DB ID | fork|rewind|prompt DB ID EVENT";
const [command = "", db = "", id = "", at = ""] = process.argv.slice(2);
let current = id; // the session the tools act for (set by start)
const SLOW_MS = Number(process.env.HARNESS_SLOW_MS ?? 5000);
const object = (/** @type {Record<string, unknown>} */ properties) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** @type {import("@strata/agent").ToolSpec[]} */
const tools = [
  {
    name: "lookup",
    description: "Look a term up in the team glossary.",
    parameters: object({ term: { type: "string", minLength: 1 } }),
    replayPolicy: "safe", // a pure read: if the process dies while it runs, resume runs it again
    handler: async ({ term }) => (term === "strata" ? "an event-sourced session engine" : `no entry for ${term}`),
  },
  {
    name: "deploy",
    description: "Deploy the current build to an environment (takes a few seconds).",
    parameters: object({ env: { enum: ["staging", "production"] } }),
    replayPolicy: "never", // an effect outside the tree: if the process dies while it runs, resume marks it interrupted
    handler: async ({ env }, { signal }) => {
      appendFileSync(`${db}.deploys`, `${current} ${new Date().toISOString()} deploy ${env}\n`); // the effect, outside strata
      await sleep(0); // the live feed prints call.start first
      console.log(`SLOW deploy to ${env} started (${SLOW_MS / 1000} s): kill -9 now to test resume`);
      await sleep(SLOW_MS, undefined, { signal });
      return `deployed the build to ${env}`;
    },
  },
];
const registry = new ToolRegistry(tools);

// The system prompt: a template over the session tree (docs/spec/templates.md), recorded in the session.
const SYSTEM = `You are a release assistant. Work only through these tools:
{% for t in select("meta > config > tools > tool") -%}
- {{ t.attrs.name }} (replay: {{ t.attrs.replay }})
{% endfor -%}
Calls so far: {{ count(select("call[status=executed]")) }} executed, {{ count(select("call[status=interrupted]")) }} interrupted.
{%- for c in select("call[status=interrupted]") %}
Never assume the interrupted {{ c.attrs.tool }} call took effect.
{%- endfor %}`;

const lookup = { name: "lookup", arguments: { term: "strata" } };
const deploy = { name: "deploy", arguments: { env: "staging" } };
const SCRIPT = parseScript({
  name: "harness",
  turns: [
    { text: "Checking the glossary, then deploying.", toolCalls: [lookup, deploy] },
    { text: "Done: see the deploy call's outcome." },
  ],
});
// Turn N answers a request holding N assistant messages (MO-1): a fork at any event gets this one reply.
const FORK_SCRIPT = parseScript({ name: "harness-fork", turns: Array(8).fill({ text: "Here I would read the staging logs first." }) });

class Usage extends Error {}
const usage = (/** @type {string} */ message) => new Usage(`${message} (${USAGE})`);

/** @returns {import("@strata/agent").RunAgentOptions} */
function options(/** @type {import("@strata/models").ModelScript} */ script) {
  const spec = process.env.STRATA_MODEL ?? "";
  const problems = spec === "" ? [] : checkModelSpec(spec); // no network: a missing key is one line, nothing created
  if (problems.length > 0) throw new Usage(`STRATA_MODEL=${spec}: ${problems.map((p) => p.message).join("; ")}`);
  return {
    model: spec === "" ? new ScriptedModel(script) : createModel(spec),
    registry,
    templates: { system: SYSTEM },
    limits: { maxSteps: 6 },
    onEvent: (e) => e.type === "reconcile" && console.log(`↺ ${e.tool} was left open: ${e.action}`),
  };
}

/** Runs the agent on `session`, printing every event committed to it (subscribe: a snapshot frame, then events). */
async function live(/** @type {Session} */ session, /** @type {import("@strata/agent").RunAgentOptions} */ opts) {
  const sub = session.subscribe();
  const feed = (async () => {
    for await (const f of sub) if (f.type === "event") console.log(`  event ${f.id} ${f.label} (${f.ops.length} ops)`);
  })();
  const r = await runAgent(session, opts).finally(async () => {
    while (sub.cursor !== session.head.id) await sleep(1); // close() drops frames not read yet
    sub.close();
    await feed;
  });
  console.log(`STOP ${r.stop}${r.detail ? `: ${r.detail}` : ""} (${r.steps} steps, ${r.calls} calls)`);
}

function show(/** @type {Session} */ s) {
  for (const b of s.branches())
    console.log(`  branch ${b.name}: head ${b.head}${b.originEvent ? ` (${b.origin} at ${b.originEvent})` : ""}`);
}

async function main() {
  const need = { start: 1, resume: 2, fork: 3, rewind: 3, prompt: 3 }[command];
  if (need === undefined) throw usage(command === "" ? "no command" : `unknown command ${command}`);
  if ([db, id, at].slice(0, need).includes("")) throw usage(`${command} needs ${["DB", "ID", "EVENT"].slice(0, need).join(" ")}`);
  if (need === 3 && !/^[1-9]\d*$/.test(at)) throw usage(`EVENT must be an event number, not ${at}`);
  if (need > 1 && !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) throw usage(`not a session id: ${id}`);
  const opts = options(command === "fork" ? FORK_SCRIPT : SCRIPT); // checks STRATA_MODEL before anything is opened
  const store = openStore(db, { create: command === "start", readonly: command === "prompt" }); // after every check
  try {
    if (command === "start") {
      const init = (/** @type {Session} */ s) => void startRun(s, { ...opts, task: "Deploy the current build to staging." });
      const session = Session.create(store, { title: "harness demo", init }); // session, inputs and task: one transaction
      console.log(`SESSION ${(current = session.id)}`);
      return await live(session, opts);
    }
    const { session, work } = Session.open(store, sessionId(id)); // work: what was running at the head (L7)
    if (command === "resume") {
      for (const w of work.spawn) console.log(`open: ${w.element.attrs.tool} ${w.element.attrs.status} (replay ${w.element.attrs.replay})`);
      await live(session, opts);
      for (const c of session.select("body call")) console.log(`call ${c.attrs.tool}: ${c.attrs.status} (attempt ${c.attrs.attempt})`);
      for (const m of renderPrompt(session).messages) if (m.role === "tool") console.log(`the model saw for ${m.toolCallId}: ${m.content}`);
      const log = existsSync(`${db}.deploys`) ? readFileSync(`${db}.deploys`, "utf8") : "";
      return console.log(`deploy handler started ${log.split(id).length - 1} time(s) in this session (${db}.deploys)`);
    }
    if (command === "fork") {
      const fork = session.fork(eventId(Number(at))); // one branch row; the fork is a live session of its own
      console.log(`forked at event ${at} as branch ${fork.branch}`);
      for (const w of fork.work.spawn) console.log(`open at the fork point: ${w.element.attrs.tool} ${w.element.attrs.status}`);
      await live(fork, { ...opts, task: "Before deploying again: what would you check?" });
      return show(session);
    }
    if (command === "rewind") {
      const old = session.head.id;
      const moved = session.rewind(eventId(Number(at))); // the old head stays, as branch rewound/main/<old>
      console.log(`rewound ${session.branch} from event ${old} to ${session.head.id}`);
      for (const w of moved.spawn) console.log(`open again: ${w.element.attrs.tool} ${w.element.attrs.status} (resume settles it)`);
      return show(session);
    }
    const request = renderPrompt(session, { at: eventId(Number(at)) }); // the tree at that event + recorded blobs only
    console.log(`── system ──\n${request.system}`);
    for (const m of request.messages) {
      const calls = m.role === "assistant" ? (m.toolCalls ?? []).map((c) => `\n  → ${c.name} ${c.arguments}`).join("") : "";
      console.log(`── ${m.role}${m.role === "tool" ? ` ${m.toolCallId}` : ""} ──\n${m.content}${calls}`);
    }
    console.log(`── tools ── ${request.tools.map((t) => t.name).join(", ")}`);
  } finally {
    store.close();
  }
}

main().catch((/** @type {any} */ e) => {
  const bad = e instanceof Usage || ((e instanceof EngineError || e instanceof StoreError) && e.code === "not-found"); // a name not in DB
  console.error(`harness: ${String(e?.message ?? e).split("\n")[0]}`);
  process.exit(bad ? 2 : 1);
});
