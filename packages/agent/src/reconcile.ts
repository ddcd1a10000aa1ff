/**
 * Reconcile on resume (AG-9, L7): what a crash left open is settled before the loop goes on. The
 * lifecycle work from nothing to the head lists every open call. A turn whose reply never finished
 * is marked interrupted (it leaves the projection, so the model is asked again); a call that never
 * started runs; a started call re-runs if its replay policy is `safe`, else it becomes `interrupted`
 * with the recorded synthetic observation. Calls go in the model's order. A call left running
 * whose tool has effects, in a run with a workspace tracker, settles with the files it changed
 * before the process stopped, in the same event (WS-26): the tree and the disk agree again.
 */
import type { Element } from "@strata/dom";
import { bodyOf, lifecycleWork } from "@strata/engine";
import { filesOf, runCall } from "./call.ts";
import { pendingOf, type RunContext } from "./context.ts";
import { writeCallFiles } from "./effects.ts";
import { commit } from "./port.ts";
import type { RunResult } from "./runs.ts";
import { ATTR, byCall, CALL, LABEL, OPEN_CALL, setCallStatus, setTurnStatus, TAG, TURN } from "./vocabulary.ts";

const CUT_OFF = "the model's reply was cut off before this call was complete";
const STOPPED = "the process stopped while the call was running";

/** Settles the head's open work; returns a result when a settled call stops the run. */
export async function reconcile(run: RunContext): Promise<RunResult | undefined> {
  for (const turnId of [...openTurns(run)].sort((a, b) => a - b)) {
    const turn = run.session.durableTree.get(turnId);
    if (turn === undefined) continue;
    if (turn.attrs[ATTR.status] === TURN.streaming) {
      await dropTurn(run, turn);
      continue;
    }
    // the calls of a finished turn, in the model's order
    for (const call of turn.children.filter((c) => c.tag === TAG.call)) {
      const stopped = await reconcileCall(run, call);
      if (stopped !== undefined) return stopped;
    }
  }
  return undefined;
}

/** The turns holding open calls, and a last turn still streaming (a reply cut off before any call). */
function openTurns(run: RunContext): Set<number> {
  const s = run.session;
  const work = lifecycleWork(undefined, { tree: s.durableTree, live: s.live });
  const turns = new Set<number>();
  for (const { element } of work.spawn) if (element.tag === TAG.call && element.parent !== null) turns.add(element.parent.id);
  const last = s.durableTree.get(bodyOf(s.durableTree).id)?.lastChild;
  if (last?.tag === TAG.turn && last.attrs[ATTR.status] === TURN.streaming) turns.add(last.id);
  return turns;
}

/** A reply cut off: the turn and every call in it are interrupted, in one event. */
async function dropTurn(run: RunContext, turn: Element): Promise<void> {
  const calls = turn.children.filter((c) => c.tag === TAG.call);
  await commit(
    run.session,
    (d) => {
      setTurnStatus(d, turn.id, TURN.interrupted);
      for (const c of calls) setCallStatus(d, c.id, CALL.interrupted, CUT_OFF);
    },
    { label: LABEL.reconcile },
  );
  run.emit({ type: "reconcile", element: turn.id, tool: "", action: "dropped-turn" });
}

/** One call of a finished turn: run it, re-run it (`safe`), or mark it interrupted. Settled calls are left alone. */
async function reconcileCall(run: RunContext, call: Element): Promise<RunResult | undefined> {
  const status = call.attrs[ATTR.status] ?? "";
  if (!OPEN_CALL.has(status)) return undefined;
  const tool = call.attrs[ATTR.tool] ?? "";
  if (status === CALL.running && call.attrs[ATTR.replay] !== "safe") {
    // What the call changed on disk before the process stopped is its own effect (WS-26).
    const ws = filesOf(run, tool);
    await ws?.prepare(run.session, true);
    const files = await ws?.settle(run.session);
    await commit(
      run.session,
      (d) => {
        setCallStatus(d, call.id, CALL.interrupted, STOPPED);
        writeCallFiles(d, call.id, files);
      },
      { label: LABEL.callInterrupted, by: byCall(call.id) },
    );
    run.emit({ type: "reconcile", element: call.id, tool, action: "interrupted" });
    run.emit({ type: "call", element: call.id, tool, status: CALL.interrupted, detail: STOPPED });
    return undefined;
  }
  run.emit({ type: "reconcile", element: call.id, tool, action: status === CALL.running ? "rerun" : "run" });
  return runCall(run, pendingOf(run.session, call.id), status === CALL.running);
}
