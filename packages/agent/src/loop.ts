/**
 * The agent loop (AG-1 … AG-9, AG-11 … AG-14): render the prompt (a projection of the tree), stream the model's
 * reply into the tree as it arrives, run the calls, commit their outcomes, repeat — until a stop
 * reason, which is recorded as an element. Everything the loop knows is in the tree, so a process
 * killed anywhere resumes by calling `runAgent` again: the open calls of the head (the lifecycle
 * work of a resume, L7) are reconciled first, per their replay policy.
 *
 * The phases are free functions of a `RunContext` (context.ts), read in the order they run:
 *
 *   runAgent ─► reconcile (reconcile.ts: what a crash left open)
 *            └► runLoop: limits ─► modelTurn (turn.ts) ─► runCall × n (call.ts) ─► …
 *
 * The persisted turn, call and stop vocabulary is in vocabulary.ts; the outcome, the observation,
 * staged tree edits, the files the call changed (effects.ts, with a `workspace` tracker) and any
 * stop a call causes are one event.
 */
import type { NodeId } from "@strata/dom";
import { bodyOf, EngineError } from "@strata/engine";
import { isAsyncStore } from "@strata/store";
import { runCall } from "./call.ts";
import { type RunAgentOptions, type RunContext, runContext } from "./context.ts";
import { LoopWorkspace } from "./effects.ts";
import { recordInputs } from "./inputs.ts";
import { type AnySession, commit } from "./port.ts";
import { reconcile } from "./reconcile.ts";
import { type RunResult, runResult, runState, stopRun } from "./runs.ts";
import { noTask, openWork, runInputs, runLimits, startRun, userTurn } from "./start.ts";
import { RegistryExecutor, ToolRegistryError } from "./tools/registry.ts";
import { modelTurn } from "./turn.ts";
import { ATTR, LABEL, ROLE, STOP, TAG } from "./vocabulary.ts";
import type { WorkspaceTracker } from "./workspace/tracker.ts";

/**
 * Drives the loop until a stop. Never throws for model or tool failures (they are recorded);
 * throws for misuse (a registry and executor that do not match, a closed session, no task to
 * continue: `EngineError` "no-task", AG-17; a `workspace` that is not a tracker, or whose directory
 * cannot be read before a call that may write starts: `WorkspaceStateError`, WS-21) and for store failures — the log cannot be written
 * (`StoreError`; a `HeadConflict` when another process moved the branch head, from any commit
 * of the loop, streamed text and tool output included: AG-18). What was committed before stays.
 */
export async function runAgent(session: AnySession, options: RunAgentOptions): Promise<RunResult> {
  const { model, registry } = options;
  const executor = options.executor ?? registry.executor();
  if (executor instanceof RegistryExecutor && !executor.registry.sameAs(registry))
    throw new ToolRegistryError(
      `the executor was derived from a registry with tools [${executor.registry
        .list()
        .map((s) => s.name)
        .join(", ")}] but the model is shown [${registry
        .list()
        .map((s) => s.name)
        .join(", ")}]; derive the executor from the same registry (registry.executor())`,
    );
  const ws = options.workspace as Partial<WorkspaceTracker> | undefined;
  if (ws !== undefined && (typeof ws.capture !== "function" || typeof ws.baseline !== "function" || typeof ws.root !== "string"))
    throw new EngineError("bad-input", "the workspace option must be a WorkspaceTracker of the directory the tools act on");
  // Over the asynchronous port the loop reads the tree whole (the prompt is a projection of it):
  // it is loaded once, and stays loaded through the run's commits (decision 0037).
  if (isAsyncStore(session.store)) await session.load();
  const signal = options.signal ?? new AbortController().signal;
  const emit = options.onEvent ?? (() => {});
  const limits = runLimits(options);
  // One for the whole run: the outside-change check and the skipped-file reports span its phases.
  const workspace = options.workspace === undefined ? undefined : new LoopWorkspace(options.workspace);
  // Each phase starts from the tree as it is then: counters, request records and memo are read afresh.
  const context = (): RunContext => runContext(session, { model, registry, executor, limits, signal, emit, workspace });
  const task = options.task;
  if (task === undefined) {
    // Nothing is written before it is known that there is a task to continue (AG-17).
    const state = runState(session);
    if (state.kind === "no-task") throw noTask(session);
    if (state.kind === "finished") return runResult(session, state.stop);
  } else if (openWork(session) === undefined) {
    // A new task on a settled branch: inputs and task as one group commit (AG-16).
    await startRun(session, { ...options, task });
    emit({ type: "turn", role: ROLE.user, element: lastBodyChild(session) });
    return runLoop(context());
  }
  await recordInputs(session, runInputs(options, limits));
  // What a crash left open is settled first, so a new task follows a consistent history (AG-9).
  const reconciled = await reconcile(context());
  if (task === undefined) {
    if (reconciled !== undefined) return reconciled;
    const last = session.durableTree.get(lastBodyChild(session));
    if (last?.tag === TAG.turn && last.attrs[ATTR.role] === ROLE.user) emit({ type: "turn", role: ROLE.user, element: last.id });
    return runLoop(context());
  }
  if (reconciled !== undefined && signal.aborted) return reconciled;
  // The settled run may have stopped (a completing call): the task starts a new one either way.
  await commit(session, (d) => void d.appendChild(bodyOf(d.tree).id, userTurn(task)), { label: LABEL.turnUser });
  emit({ type: "turn", role: ROLE.user, element: lastBodyChild(session) });
  return runLoop(context());
}

/**
 * Model turns and their calls until a stop: cancelled, the step limit, the token budget, a turn
 * that stops (no calls, a model or prompt error), or a call that stops (it completes the run).
 */
export async function runLoop(run: RunContext): Promise<RunResult> {
  const { counts, limits } = run;
  for (;;) {
    if (run.signal.aborted) return stopRun(run, STOP.cancelled, "the run was cancelled");
    if (counts.steps >= limits.maxSteps)
      return stopRun(run, STOP.maxSteps, `${counts.steps} model turns reached the limit of ${limits.maxSteps}`);
    if (limits.budgetTokens !== undefined && counts.tokens >= limits.budgetTokens)
      return stopRun(run, STOP.budget, `${counts.tokens} tokens used of a budget of ${limits.budgetTokens}`);
    const turn = await modelTurn(run);
    if (turn.stopped !== undefined) return turn.stopped;
    for (const call of turn.calls) {
      const stopped = await runCall(run, call, false);
      if (stopped !== undefined) return stopped;
    }
  }
}

function lastBodyChild(session: AnySession): NodeId {
  const tree = session.durableTree;
  return (tree.rec(bodyOf(tree).id)?.last ?? 0) as NodeId;
}
