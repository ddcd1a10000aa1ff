/**
 * One model turn (AG-1, AG-4, AG-15, PR-15): the request projected from the tree and its digest
 * recorded, the reply streamed into a new assistant turn — text into `<text>`, reasoning into
 * `<reasoning>`, arguments into each call's `<args>` — and the turn's end committed with every
 * call's intent as one event. A model failure is an outcome (the turn is marked failed and the run
 * stops); a failure of the loop's own writes (the log cannot take them: a moved head, a full disk)
 * ends the run with that error (AG-18).
 */
import { sanitizeText as clean, type NodeId } from "@strata/dom";
import { bodyOf } from "@strata/engine";
import { drive, StoreError } from "@strata/store";
import { type PendingCall, pendingOf, type RunContext } from "./context.ts";
import { ModelError, type ModelRequest } from "./model.ts";
import { AgentBlobs, commit } from "./port.ts";
import { blobReader, inputBlobs, projectRequest } from "./prompt.ts";
import { ReplyWriter } from "./reply.ts";
import { type Counts, type RunResult, runResult, stopRun, stopSpec } from "./runs.ts";
import { TemplateError } from "./template/errors.ts";
import { ATTR, CALL, DIAG, LABEL, ROLE, STOP, type StopReason, setCallStatus, setTurnStatus, TAG, TURN } from "./vocabulary.ts";

/** What a turn leaves to do: its calls in the model's order, or the stop it caused. */
export interface TurnOutcome {
  readonly calls: readonly PendingCall[];
  readonly stopped?: RunResult;
}

type Usage = { readonly input: number; readonly output: number };

/** Runs one model request to the end of its turn. */
export async function modelTurn(run: RunContext): Promise<TurnOutcome> {
  const s = run.session;
  let request: ModelRequest;
  const inputs = run.inputs();
  // Over the asynchronous port the blobs the projection reads are fetched first (once per process).
  await drive(AgentBlobs.of(s.store).fetchSteps(inputBlobs(inputs)));
  try {
    request = projectRequest(s.durableTree, blobReader(s.store), inputs, run.memo);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return { calls: [], stopped: await stopRun(run, STOP.promptError, clean(error.message)) };
  }
  const { turn, record, text } = await openTurn(run, request);
  const reply = new ReplyWriter(s, turn, record, text, (tool) => run.registry.get(tool)?.replayPolicy ?? "never", run.emit);
  try {
    for await (const ev of run.model.stream(request, run.signal)) await reply.take(ev);
  } catch (error) {
    await reply.closeQuietly();
    // The log refused one of the turn's writes (a moved head, a full disk): not a model failure.
    if (reply.failure !== undefined) throw reply.failure.error;
    if (error instanceof StoreError) throw error;
    const calls = [...reply.calls.values()].map((c) => c.element);
    return { calls: [], stopped: await failTurn(run, turn, calls, error, reply.usage) };
  }
  await reply.close();
  return endTurn(run, turn, reply);
}

/** The assistant turn, streaming, with the request's record and an empty `<text>`: one event. */
async function openTurn(run: RunContext, request: ModelRequest): Promise<{ turn: NodeId; record: NodeId; text: NodeId }> {
  const record = run.recorder.record(request);
  let turn = 0 as NodeId;
  let text = 0 as NodeId;
  let recordId = 0 as NodeId;
  await commit(
    run.session,
    (d) => {
      turn = d.appendChild(bodyOf(d.tree).id, {
        tag: TAG.turn,
        attrs: { [ATTR.role]: ROLE.assistant, [ATTR.status]: TURN.streaming, [ATTR.model]: run.model.id },
      });
      recordId = d.appendChild(turn, record);
      text = d.appendChild(turn, { tag: TAG.text });
    },
    { label: LABEL.turnStart },
  );
  run.recorder.recorded(recordId);
  run.emit({ type: "turn", role: ROLE.assistant, element: turn });
  return { turn, record: recordId, text };
}

/** The turn's end and every call's intent as one event (AG-4); a turn without calls stops the run (`end-turn`). */
async function endTurn(run: RunContext, turn: NodeId, reply: ReplyWriter): Promise<TurnOutcome> {
  const { usage, finish } = reply;
  const ordered = reply.ordered();
  const counts = run.counts;
  const after: Counts = {
    ...counts,
    steps: counts.steps + 1,
    calls: counts.calls + ordered.length,
    tokens: counts.tokens + (usage ? usage.input + usage.output : 0),
  };
  await commit(
    run.session,
    (d) => {
      setTurnStatus(d, turn, TURN.complete);
      if (finish !== "stop" && finish !== "tool_calls") d.set(turn, ATTR.finish, finish);
      if (usage !== undefined) d.appendChild(turn, usageSpec(usage));
      for (const c of ordered) setCallStatus(d, c.element, CALL.pending);
      if (ordered.length === 0) d.appendChild(bodyOf(d.tree).id, stopSpec(STOP.endTurn, after));
    },
    { label: LABEL.turnEnd },
  );
  Object.assign(run.counts, after);
  for (const c of ordered) run.emit({ type: "call", element: c.element, tool: c.tool, status: CALL.pending });
  if (ordered.length === 0) {
    run.emit({ type: "stop", reason: STOP.endTurn });
    return { calls: [], stopped: runResult(run.session, STOP.endTurn) };
  }
  return { calls: ordered.map((c) => ({ ...pendingOf(run.session, c.element), attempt: 0 })) };
}

/** A model failure: the turn is marked failed (it leaves the projection), the run stops. */
async function failTurn(
  run: RunContext,
  turn: NodeId,
  calls: readonly NodeId[],
  error: unknown,
  usage: Usage | undefined,
): Promise<RunResult> {
  const cancelled = run.signal.aborted || (error instanceof ModelError && error.kind === "cancelled");
  const e =
    error instanceof ModelError
      ? error
      : new ModelError(
          "protocol",
          `the model client failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        );
  const reason: StopReason = cancelled ? STOP.cancelled : e.kind === "context-overflow" ? STOP.contextOverflow : STOP.modelError;
  const counts = run.counts;
  const after: Counts = {
    ...counts,
    steps: counts.steps + (cancelled ? 0 : 1),
    calls: counts.calls + calls.length,
    tokens: counts.tokens + (usage === undefined ? 0 : usage.input + usage.output),
  };
  await commit(
    run.session,
    (d) => {
      setTurnStatus(d, turn, cancelled ? TURN.interrupted : TURN.failed);
      for (const c of calls) setCallStatus(d, c, CALL.interrupted, "the model's reply ended before this call was complete");
      if (usage !== undefined) d.appendChild(turn, usageSpec(usage));
      d.appendChild(turn, {
        tag: TAG.diag,
        attrs: { [ATTR.kind]: cancelled ? DIAG.cancelled : `model-${e.kind}` },
        text: clean(e.message),
      });
      d.appendChild(bodyOf(d.tree).id, stopSpec(reason, after, clean(e.message)));
    },
    { label: cancelled ? LABEL.runStop : LABEL.turnFailed },
  );
  Object.assign(run.counts, after);
  run.emit({ type: "stop", reason, detail: e.message });
  return runResult(run.session, reason, e.message);
}

function usageSpec(usage: Usage): { tag: string; attrs: Record<string, string> } {
  return { tag: TAG.usage, attrs: { [ATTR.input]: String(usage.input), [ATTR.output]: String(usage.output) } };
}
