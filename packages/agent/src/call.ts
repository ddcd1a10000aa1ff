/**
 * One call (AG-4, AG-5, AG-7, AG-8, AG-11), as phases: `prepareCall` (validate against the roster:
 * a refused call is settled `not_executed` without running) → `startCall` (`running` and its
 * attempt committed before the handler runs: intent before effect) → `executeBounded` (execute.ts:
 * the handler under the call limits) → `finalizeCall` (the outcome, its observation, the staged
 * tree edits and any stop it causes, as one event). A cancel while the call runs marks it
 * `interrupted` (`interruptCall`). For a tool with `effects` in a run with a workspace tracker
 * (effects.ts), the baseline or the outside changes are recorded before `running`, and the files
 * the handler changed are captured after it and ride in the settle event, whatever the outcome
 * (WS-21, WS-22).
 */
import { sanitizeText as clean, type NodeId, type TreeDraft } from "@strata/dom";
import { bodyOf } from "@strata/engine";
import type { PendingCall, RunContext } from "./context.ts";
import { type CallFiles, hasEffects, type LoopWorkspace, writeCallFiles } from "./effects.ts";
import { appendDiags, boundObservation, type Diag, executeBounded } from "./execute.ts";
import { AgentBlobs, commit } from "./port.ts";
import { type Counts, type RunResult, runResult, stopRun, stopSpec } from "./runs.ts";
import { type Action, type ActionOutcome, type CallLimits, DEFAULT_CALL_LIMITS, refusedOutcome, type TreeEdit } from "./tools/registry.ts";
import { ATTR, byCall, CALL, LABEL, STOP, setCallStatus, TAG } from "./vocabulary.ts";

/** Runs one call to its outcome; returns a result when the run stops because of it. `retry`: a re-run on resume. */
export async function runCall(run: RunContext, call: PendingCall, retry: boolean): Promise<RunResult | undefined> {
  const limits = callLimits(run, call.tool);
  // Cancelled before it started: it stays pending, like any call that never started (AG-11).
  if (run.signal.aborted) return stopRun(run, STOP.cancelled, "the run was cancelled");
  const prepared = prepareCall(run, call);
  if (!prepared.ok) return finalizeCall(run, call, prepared.refused, prepared.reason, [], limits, []);
  const files = filesOf(run, call.tool);
  if (files !== undefined) {
    // The files as they were before the call, recorded before its intent to run (WS-21, WS-25).
    await files.prepare(run.session, retry);
    if (run.signal.aborted) return stopRun(run, STOP.cancelled, "the run was cancelled");
  }
  await startCall(run, call, retry);
  const done = await executeBounded(run.session, call.element, run.executor, prepared.action, run.signal, limits);
  // The log refused the call's progress (another process moved the head): the run ends with that error (AG-18).
  if ("failed" in done) throw done.failed.error;
  // What the handler changed on disk, whatever its outcome: it settles with the call (WS-22).
  const changed = files === undefined ? undefined : await files.settle(run.session);
  if ("cancelled" in done) {
    await interruptCall(run, call, "the run was cancelled while the call was running", done.diags, changed);
    return stopRun(run, STOP.cancelled, "the run was cancelled");
  }
  const o = done.outcome;
  return finalizeCall(run, call, o, o.status === CALL.envError ? o.observation : undefined, done.staged, limits, done.diags, changed);
}

/** The run's workspace when a call to `tool` may change files and the run records them; else undefined. */
export function filesOf(run: RunContext, tool: string): LoopWorkspace | undefined {
  return run.workspace !== undefined && hasEffects(run.registry.get(tool)) ? run.workspace : undefined;
}

/** The call's limits: the defaults, under the run's, under the tool's own. */
function callLimits(run: RunContext, tool: string): CallLimits {
  return { ...DEFAULT_CALL_LIMITS, ...run.limits.call, ...run.registry.get(tool)?.limits };
}

/**
 * The call checked against the roster. Nothing runs for a call that fails validation, whatever the
 * executor: the seed table's row for a failed validation, with the validator's message as reason.
 */
function prepareCall(
  run: RunContext,
  call: PendingCall,
): { ok: true; action: Action } | { ok: false; refused: ActionOutcome; reason: string } {
  const action: Action = { kind: "tool-call", call: { name: call.tool, arguments: call.args } };
  const checked = run.registry.validate(action.call);
  if (checked.ok) return { ok: true, action };
  return { ok: false, refused: refusedOutcome(call.tool, checked.message), reason: checked.message };
}

/** `running` and the attempt, committed before the handler runs (intent before effect, AG-4). */
async function startCall(run: RunContext, call: PendingCall, retry: boolean): Promise<void> {
  await commit(
    run.session,
    (d) => {
      setCallStatus(d, call.element, CALL.running);
      d.set(call.element, ATTR.attempt, String(call.attempt + 1));
    },
    { label: retry ? LABEL.callRetry : LABEL.callStart, by: byCall(call.element) },
  );
  run.emit({ type: "call", element: call.element, tool: call.tool, status: CALL.running });
}

/**
 * Marks a call interrupted (its observation is the recorded synthetic text), with the files it
 * changed before it stopped (WS-22).
 */
export async function interruptCall(
  run: RunContext,
  call: PendingCall,
  reason: string,
  diags: readonly Diag[] = [],
  files?: CallFiles,
): Promise<void> {
  await commit(
    run.session,
    (d) => {
      setCallStatus(d, call.element, CALL.interrupted, reason);
      appendDiags(d, call.element, diags);
      writeCallFiles(d, call.element, files);
    },
    { label: LABEL.callInterrupted, by: byCall(call.element) },
  );
  run.emit({ type: "call", element: call.element, tool: call.tool, status: CALL.interrupted, detail: reason });
}

/**
 * Commits an outcome with its observation (bounded: AG-7), its diagnostics, the staged edits (only
 * when it executed without error), the files it changed (`files`, captured just before: every
 * outcome records them, the disk changed regardless) and the stop it causes, as one event. A call
 * that completes the run — a `completesRun` tool, or an environment reporting completion — settles
 * the calls after it in its turn as `not_executed`.
 */
async function finalizeCall(
  run: RunContext,
  call: PendingCall,
  outcome: ActionOutcome,
  reason: string | undefined,
  staged: readonly TreeEdit[],
  limits: CallLimits,
  diags: Diag[],
  files?: CallFiles,
): Promise<RunResult | undefined> {
  const s = run.session;
  const spec = run.registry.get(call.tool);
  const inline = boundObservation(outcome.observation, limits, (text) => AgentBlobs.of(s.store).put(text), diags);
  const succeeded = outcome.status === CALL.executed && outcome.errorClass === undefined;
  const completes = succeeded && spec?.completesRun === true;
  const envDone = outcome.envReportedCompletion;
  const after: Counts = { ...run.counts, effective: run.counts.effective + (outcome.status === CALL.executed ? 1 : 0) };
  const rest = completes || envDone ? notStarted(run, call.element) : [];
  await commit(
    s,
    (d: TreeDraft) => {
      setCallStatus(d, call.element, outcome.status, reason?.replace(/\.$/, ""));
      if (outcome.errorClass !== undefined) d.set(call.element, ATTR.error, clean(outcome.errorClass));
      d.appendChild(call.element, {
        tag: TAG.result,
        attrs: { [ATTR.synthetic]: String(outcome.observationIsSynthetic) },
        text: clean(inline),
      });
      appendDiags(d, call.element, diags);
      writeCallFiles(d, call.element, files);
      if (succeeded) for (const edit of staged) edit(d);
      for (const id of rest) setCallStatus(d, id, CALL.notExecuted, "the run completed before this call");
      if (envDone) d.appendChild(bodyOf(d.tree).id, stopSpec(STOP.envCompleted, after));
      else if (completes) d.appendChild(bodyOf(d.tree).id, stopSpec(STOP.completedByTool, after, `${call.tool} completed the run`));
    },
    { label: LABEL.callOutcome, by: byCall(call.element) },
  );
  Object.assign(run.counts, after);
  run.emit({ type: "call", element: call.element, tool: call.tool, status: outcome.status, detail: inline });
  if (envDone) {
    run.emit({ type: "stop", reason: STOP.envCompleted });
    return runResult(s, STOP.envCompleted);
  }
  if (completes) {
    run.emit({ type: "stop", reason: STOP.completedByTool, detail: `${call.tool} completed the run` });
    return runResult(s, STOP.completedByTool, `${call.tool} completed the run`);
  }
  return undefined;
}

/** The calls of the turn after `element` that never started: they are settled with a completing call. */
function notStarted(run: RunContext, element: NodeId): NodeId[] {
  const rest: NodeId[] = [];
  for (let c = run.session.durableTree.get(element)?.nextSibling ?? null; c !== null; c = c.nextSibling)
    if (c.tag === TAG.call && (c.attrs[ATTR.status] === CALL.pending || c.attrs[ATTR.status] === CALL.arguments)) rest.push(c.id);
  return rest;
}
