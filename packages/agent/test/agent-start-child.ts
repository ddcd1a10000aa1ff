/**
 * The child process of the run-start crash test (AG-16, AG-17). Usage:
 *   node --import tsx agent-start-child.ts <db> <mode>
 * It starts a session the way `mode` says and, at the point the parent kills it, prints a line and
 * blocks until it is killed:
 *   genesis  — the session is created (genesis only), nothing else yet     → `SESSION <id>` then `AT genesis`
 *   inputs   — the run's inputs are recorded, the task is not               → `SESSION <id>` then `AT inputs`
 *   atomic   — inside `Session.create({ init })`, after `startRun` wrote   → `AT init` (the transaction is open)
 *   started  — `Session.create({ init })` has returned                      → `SESSION <id>` then `AT started`
 */

import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { recordInputs, startRun } from "../src/index.ts";
import { startOptions } from "./agent-start-kit.ts";

const [db, mode] = process.argv.slice(2) as [string, string];
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const block = (): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
const store = openStore(db);
const options = startOptions();
if (mode === "genesis" || mode === "inputs") {
  const s = Session.create(store, { title: "the user's task" });
  say(`SESSION ${s.id}`);
  if (mode === "inputs") recordInputs(s, { tools: options.registry.list(), model: { provider: "scripted", model: "start" } });
  say(`AT ${mode}`);
  block();
} else if (mode === "atomic") {
  Session.create(store, {
    title: "the user's task",
    init: (s) => {
      startRun(s, { ...options, task: "the user's task" });
      say("AT init");
      block();
    },
  });
} else if (mode === "started") {
  const s = Session.create(store, { title: "the user's task", init: (s) => void startRun(s, { ...options, task: "the user's task" }) });
  say(`SESSION ${s.id}`);
  say("AT started");
  block();
}
say("UNEXPECTED-END");
