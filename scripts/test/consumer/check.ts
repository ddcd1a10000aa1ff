// The consumer test's type check (PK-2): the published .d.ts, strict, no skipLibCheck.
import { type RunResult, runAgent, ToolRegistry, type ToolSpec } from "@strata/agent";
import type { Element } from "@strata/dom";
import { Session } from "@strata/engine";
import { ScriptedModel } from "@strata/models";
import { type EventMeta, openStore, type Store } from "@strata/store";

const deploy: ToolSpec = {
  name: "deploy",
  description: "deploy a target",
  parameters: { type: "object", properties: { target: { type: "string" } }, required: ["target"] },
  replayPolicy: "never",
  handler: async (args) => `deployed ${String(args.target)}`,
};
const store: Store = openStore(":memory:");
const session: Session = Session.create(store, { title: "typed" });
const model = new ScriptedModel({ name: "typed", turns: [{ text: "done" }] });
const result: Promise<RunResult> = runAgent(session, { model, registry: new ToolRegistry([deploy]), task: "go" });
const events: EventMeta[] = session.log();
const calls: Element[] = session.select("body call");
const fork: Session = session.fork(events[0]?.id ?? session.head.id, { name: "typed-fork" });

export { calls, fork, result };
