/**
 * Starting a run (AG-2, AG-16, AG-17): what a run records before its first request — its inputs
 * (L4) and the user's task — and the check that a run continued without a task has one. The
 * inputs and the task are one group commit, and inside `Session.create({ init })` one transaction
 * with the session's genesis: a crash leaves no session, or a session with its task, never a
 * session that a later resume would run without the task the user gave.
 */
import { sanitizeText as clean, type NodeSpec } from "@strata/dom";
import { type Answer, bodyOf, EngineError, type Port, type Session } from "@strata/engine";
import { drive, type EventMeta, isAsyncStore, value } from "@strata/store";
import type { RunAgentOptions, RunLimits } from "./context.ts";
import { inputsPatch, type RunInputs } from "./inputs.ts";
import { AgentBlobs, type AnySession } from "./port.ts";
import { DEFAULT_SYNTHETIC } from "./tools/synthetic.ts";
import { ATTR, LABEL, ROLE, TAG, TURN } from "./vocabulary.ts";

/** The default limits of a run. */
export const DEFAULT_MAX_STEPS = 50;

/** A run's limits: the caller's over the defaults. */
export function runLimits(options: Pick<RunAgentOptions, "limits">): RunLimits {
  return { maxSteps: DEFAULT_MAX_STEPS, ...options.limits };
}

/** What a run records as its inputs (PR-1): roster, model, settings, templates, context, synthetic texts. */
export function runInputs(options: RunAgentOptions, limits: RunLimits): RunInputs {
  const [provider, ...rest] = options.model.id.split(":");
  return {
    ...(options.templates !== undefined ? { templates: options.templates } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    tools: options.registry.list(),
    model: { provider: provider ?? options.model.id, model: rest.join(":"), ...options.settings },
    settings: {
      "max-steps": limits.maxSteps,
      ...(limits.budgetTokens !== undefined ? { "budget-tokens": limits.budgetTokens } : {}),
      ...options.sessionSettings,
    },
    synthetic: options.synthetic ?? DEFAULT_SYNTHETIC,
  };
}

/** The user turn of a task. */
export function userTurn(task: string): NodeSpec {
  return { tag: TAG.turn, attrs: { [ATTR.role]: ROLE.user }, children: [{ tag: TAG.text, text: clean(task) }] };
}

/**
 * Why the branch cannot take a new task before a reconciliation, or undefined: calls still open
 * or a reply cut off (what a resume settles first, AG-9).
 */
export function openWork(session: AnySession): string | undefined {
  if (session.live.size > 0) return `${session.live.size} call(s) or job(s) are still open`;
  const tree = session.durableTree;
  const last = tree.rec(tree.rec(bodyOf(tree).id)?.last ?? 0);
  if (last?.tag === TAG.turn && last.attrs[ATTR.status] === TURN.streaming) return "the model's last reply was cut off";
  return undefined;
}

/**
 * The synchronous first phase of a run with a task (AG-16): records the run's inputs and the
 * user turn in one group commit (one transaction: both or neither). Inside
 * `Session.create(store, { init: (s) => startRun(s, options) })` it makes the session's creation,
 * inputs and task one atomic group; then `runAgent(session, options)` without a task continues it.
 * Refuses (`bad-input`) a branch with open work — calls not settled, a reply cut off — which
 * `runAgent` with the task settles first. Returns the events (the last is `turn.user`).
 */
export function startRun<P extends Port>(
  session: Session<P>,
  options: RunAgentOptions & { readonly task: string },
): Answer<P, EventMeta[]> {
  if (typeof options.task !== "string" || options.task.trim() === "")
    throw new EngineError("bad-input", "startRun needs the user's task: a non-empty string");
  return drive(startRunSteps(session, options)) as Answer<P, EventMeta[]>;
}

function* startRunSteps(session: AnySession, options: RunAgentOptions & { readonly task: string }): Generator<unknown, EventMeta[]> {
  if (isAsyncStore(session.store)) yield* value(session.load());
  const open = openWork(session);
  if (open !== undefined)
    throw new EngineError(
      "bad-input",
      `branch "${session.branch}" of session ${session.id} has open work (${open}); call runAgent with the task, which settles it first`,
    );
  const patch = inputsPatch(session, runInputs(options, runLimits(options)));
  const task = options.task;
  yield* AgentBlobs.of(session.store).flushSteps();
  return yield* value(
    session.commitMany([
      ...(patch === undefined ? [] : [{ change: patch.ops, label: patch.label }]),
      { change: (d) => void d.appendChild(bodyOf(d.tree).id, userTurn(task)), label: LABEL.turnUser },
    ]),
  );
}

/** The refusal of `runAgent` without a task on a branch that has none (AG-17). */
export function noTask(session: AnySession): EngineError {
  return new EngineError(
    "no-task",
    `branch "${session.branch}" of session ${session.id} has no task to continue: it has no user turn (the process that created it stopped before the task was recorded, or the branch was forked before it); start a run with a task instead`,
  );
}
