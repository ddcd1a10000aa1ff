/**
 * The agent loop (AG-1 … AG-14): render the prompt (a projection of the tree), stream the model's
 * reply into the tree as it arrives, run the calls, commit their outcomes, repeat — until a stop
 * reason, which is recorded as an element. Everything the loop knows is in the tree, so a process
 * killed anywhere resumes by calling `runAgent` again: the open calls of the head (the lifecycle
 * work of a resume, L7) are reconciled first, per their replay policy.
 *
 * A call is one element in its turn:
 *
 *   <call id="call_0_1" tool="write_file" replay="never" status="running" attempt="1">
 *     <args>{"path":"a.txt","content":"…"}</args>
 *     <output>progress…</output>
 *     <result synthetic="false">observation</result>
 *     <diag kind="blob" hash="…" chars="…">…</diag>
 *   </call>
 *
 * with status `arguments` (still streaming) → `pending` (intent durable, with its turn's end) →
 * `running` (committed before the handler runs) → `executed` | `not_executed` | `env_error` |
 * `interrupted`. The outcome, the observation, staged tree edits and any stop it causes are one
 * event.
 */
import { sanitizeText as clean, type NodeId, type TreeDraft } from "@strata/dom";
import { StoreError } from "@strata/store";
import { boundObservation, type Diag, executeBounded } from "./calls.ts";
import { bodyOf, type RecordedInputs, readInputs, recordInputs } from "./inputs.ts";
import { lifecycleWork } from "./lifecycle.ts";
import { type Model, ModelError, type ModelRequest, type ModelSettings } from "./model.ts";
import { blobReader, ProjectionMemo, projectRequest } from "./prompt.ts";
import { ReplyWriter } from "./reply.ts";
import { RequestRecorder } from "./requests.ts";
import { type Counts, commitStop, type RunResult, runCounts, runState, type StopReason, stopSpec } from "./runs.ts";
import type { Session } from "./session.ts";
import { noTask, openWork, runInputs, runLimits, startRun, userTurn } from "./start.ts";
import { TemplateError } from "./template/errors.ts";
import {
  type Action,
  type ActionOutcome,
  type CallLimits,
  DEFAULT_CALL_LIMITS,
  type Executor,
  outcome,
  RegistryExecutor,
  type ToolRegistry,
  ToolRegistryError,
  type TreeEdit,
} from "./tools/registry.ts";
import type { SyntheticObservations } from "./tools/synthetic.ts";

export interface RunLimits {
  /** Model turns per run (a run ends at a `<stop>`); invalid calls count here, not as effective actions. */
  readonly maxSteps: number;
  /** Input + output tokens per run, as the model reports them (default: no budget). */
  readonly budgetTokens?: number;
  /** Defaults for every call; a tool's own `limits` win. */
  readonly call?: Partial<CallLimits>;
}

/** Progress, for a UI: nothing here is state (the tree is). */
export type AgentEvent =
  | { readonly type: "turn"; readonly role: "user" | "assistant"; readonly element: NodeId }
  | { readonly type: "text"; readonly delta: string }
  /** The model's reasoning, as it streams (recorded in `<reasoning>`, never sent back: AG-15). */
  | { readonly type: "reasoning"; readonly delta: string }
  | { readonly type: "call"; readonly element: NodeId; readonly tool: string; readonly status: string; readonly detail?: string }
  | {
      readonly type: "reconcile";
      readonly element: NodeId;
      readonly tool: string;
      readonly action: "run" | "rerun" | "interrupted" | "dropped-turn";
    }
  | { readonly type: "stop"; readonly reason: StopReason; readonly detail?: string };

export interface RunAgentOptions {
  readonly model: Model;
  readonly registry: ToolRegistry;
  /** Default: `registry.executor()`. A registry-derived executor must come from `registry`. */
  readonly executor?: Executor;
  /** A new user message to start with (none: continue or resume). */
  readonly task?: string;
  /** Template name → source; recorded (L4) before use. */
  readonly templates?: Readonly<Record<string, string>>;
  /** Context files (e.g. AGENTS.md) → content; recorded before use. */
  readonly context?: Readonly<Record<string, string>>;
  readonly settings?: Omit<ModelSettings, "provider" | "model">;
  /** Extra session settings to record (workspace …). */
  readonly sessionSettings?: Readonly<Record<string, string | number | boolean>>;
  readonly synthetic?: SyntheticObservations;
  readonly limits?: Partial<RunLimits>;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: AgentEvent) => void;
}

/**
 * Drives the loop until a stop. Never throws for model or tool failures (they are recorded);
 * throws for misuse (a registry and executor that do not match, a closed session, no task to
 * continue: `EngineError` "no-task", AG-17) and for store failures — the log cannot be written
 * (`StoreError`; a `HeadConflict` when another process moved the branch head, from any commit
 * of the loop, streamed text and tool output included: AG-18). What was committed before stays.
 */
export async function runAgent(session: Session, options: RunAgentOptions): Promise<RunResult> {
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
  const signal = options.signal ?? new AbortController().signal;
  const emit = options.onEvent ?? (() => {});
  const limits = runLimits(options);
  const loop = (): Loop => new Loop(session, model, registry, executor, limits, signal, emit);
  const task = options.task;
  if (task === undefined) {
    // Nothing is written before it is known that there is a task to continue (AG-17).
    const state = runState(session);
    if (state.kind === "no-task") throw noTask(session);
    if (state.kind === "finished") return loop().result(state.stop);
  } else if (openWork(session) === undefined) {
    // A new task on a settled branch: inputs and task as one group commit (AG-16).
    startRun(session, { ...options, task });
    emit({ type: "turn", role: "user", element: lastBodyChild(session) });
    return loop().run();
  }
  recordInputs(session, runInputs(options, limits));
  // What a crash left open is settled first, so a new task follows a consistent history (AG-9).
  const reconciled = await loop().reconcile();
  if (task === undefined) {
    if (reconciled !== undefined) return reconciled;
    const last = session.durableTree.get(lastBodyChild(session));
    if (last?.tag === "turn" && last.attrs.role === "user") emit({ type: "turn", role: "user", element: last.id });
    return loop().run();
  }
  if (reconciled !== undefined && signal.aborted) return reconciled;
  // The settled run may have stopped (a completing call): the task starts a new one either way.
  session.commit((d) => void d.appendChild(bodyOf(d.tree).id, userTurn(task)), { label: "turn.user" });
  emit({ type: "turn", role: "user", element: lastBodyChild(session) });
  return loop().run();
}

function lastBodyChild(session: Session): NodeId {
  const tree = session.durableTree;
  return (tree.rec(bodyOf(tree).id)?.last ?? 0) as NodeId;
}

class Loop {
  readonly #inputs: () => RecordedInputs;
  /** The request records of this line (PR-15) and the projection memo that keeps each turn's cost to what is new. */
  readonly #recorder: RequestRecorder;
  readonly #memo = new ProjectionMemo();

  constructor(
    readonly session: Session,
    readonly model: Model,
    readonly registry: ToolRegistry,
    readonly executor: Executor,
    readonly limits: RunLimits,
    readonly signal: AbortSignal,
    readonly emit: (e: AgentEvent) => void,
  ) {
    this.#inputs = () => readInputs(session.durableTree);
    this.#recorder = new RequestRecorder(session.store, session.durableTree);
    const { steps, effective, calls, tokens } = runCounts(session);
    this.#counts = { steps, effective, calls, tokens };
  }

  /** The current run's counters: read from the tree once, then kept up to date with each commit. */
  readonly #counts: Counts;

  async run(): Promise<RunResult> {
    for (;;) {
      const counts = this.#counts;
      if (this.signal.aborted) return this.stop("cancelled", "the run was cancelled");
      if (counts.steps >= this.limits.maxSteps)
        return this.stop("max-steps", `${counts.steps} model turns reached the limit of ${this.limits.maxSteps}`);
      if (this.limits.budgetTokens !== undefined && counts.tokens >= this.limits.budgetTokens)
        return this.stop("budget", `${counts.tokens} tokens used of a budget of ${this.limits.budgetTokens}`);
      const turn = await this.modelTurn();
      if (turn.stopped !== undefined) return turn.stopped;
      for (const call of turn.calls) {
        const stopped = await this.runCall(call, false);
        if (stopped !== undefined) return stopped;
      }
    }
  }

  /** Records a stop and returns the run's result. */
  stop(reason: StopReason, detail?: string): RunResult {
    commitStop(this.session, reason, this.#counts, detail);
    this.emit({ type: "stop", reason, ...(detail !== undefined ? { detail } : {}) });
    return this.result(reason, detail);
  }

  /** The result of the run that just ended: the counters its `<stop>` recorded. */
  result(reason: StopReason, detail?: string): RunResult {
    const tree = this.session.durableTree;
    const stop = tree.get(bodyOf(tree).id)?.lastChild;
    const n = (k: string): number => Number(stop?.tag === "stop" ? (stop.attrs[k] ?? 0) : 0);
    return {
      stop: reason,
      ...(detail !== undefined ? { detail } : {}),
      steps: n("steps"),
      effective: n("effective"),
      calls: n("calls"),
      tokens: n("tokens"),
    };
  }

  /**
   * Resume (L7): the lifecycle work from nothing to the head lists every open call. A turn whose
   * reply never finished is marked interrupted (it leaves the projection, so the model is asked
   * again); a call that never started runs; a started call re-runs if `safe`, else it becomes
   * `interrupted` with the recorded synthetic observation. Calls go in the model's order.
   */
  async reconcile(): Promise<RunResult | undefined> {
    const s = this.session;
    const work = lifecycleWork(undefined, { tree: s.durableTree, live: s.live });
    const open = work.spawn.map((e) => e.element).filter((e) => e.tag === "call");
    const turns = new Map<number, NodeId[]>();
    for (const call of open) {
      const turn = call.parent;
      if (turn === null) continue;
      const list = turns.get(turn.id) ?? [];
      list.push(call.id);
      turns.set(turn.id, list);
    }
    const last = s.durableTree.get(bodyOf(s.durableTree).id)?.lastChild;
    if (last?.tag === "turn" && last.attrs.status === "streaming" && !turns.has(last.id)) turns.set(last.id, []);
    for (const [turnId] of [...turns].sort((a, b) => a[0] - b[0])) {
      const turn = s.durableTree.get(turnId);
      if (turn === undefined) continue;
      if (turn.attrs.status === "streaming") {
        const calls = turn.children.filter((c) => c.tag === "call");
        s.commit(
          (d) => {
            d.set(turnId as NodeId, "status", "interrupted");
            for (const c of calls) {
              d.set(c.id, "status", "interrupted");
              d.set(c.id, "reason", "the model's reply was cut off before this call was complete");
            }
          },
          { label: "resume.reconcile" },
        );
        this.emit({ type: "reconcile", element: turnId as NodeId, tool: "", action: "dropped-turn" });
        continue;
      }
      // the calls of a finished turn, in the model's order
      for (const call of turn.children.filter((c) => c.tag === "call")) {
        const status = call.attrs.status;
        if (status !== "pending" && status !== "running" && status !== "arguments") continue;
        const tool = call.attrs.tool ?? "";
        if (status === "running" && call.attrs.replay !== "safe") {
          s.commit(
            (d) => {
              d.set(call.id, "status", "interrupted");
              d.set(call.id, "reason", "the process stopped while the call was running");
            },
            { label: "call.interrupted", by: `e${call.id}` },
          );
          this.emit({ type: "reconcile", element: call.id, tool, action: "interrupted" });
          this.emit({
            type: "call",
            element: call.id,
            tool,
            status: "interrupted",
            detail: "the process stopped while the call was running",
          });
          continue;
        }
        this.emit({ type: "reconcile", element: call.id, tool, action: status === "running" ? "rerun" : "run" });
        const stopped = await this.runCall(this.pendingOf(call.id), status === "running");
        if (stopped !== undefined) return stopped;
      }
    }
    return undefined;
  }

  pendingOf(id: NodeId): PendingCall {
    const call = this.session.durableTree.get(id);
    if (call === undefined) throw new Error(`call element ${id} is gone`);
    return {
      element: id,
      tool: call.attrs.tool ?? "",
      args: call.children.find((c) => c.tag === "args")?.text ?? "",
      attempt: Number(call.attrs.attempt ?? 0),
    };
  }

  /**
   * One model request: the request's digest recorded (PR-15) and the reply streamed into a new
   * assistant turn — text into `<text>`, reasoning into `<reasoning>` (AG-15), arguments into each
   * call's `<args>`. A model failure is an outcome; a failure of the loop's own writes (the log
   * cannot take them: a moved head, a full disk) ends the run with that error (AG-18).
   */
  async modelTurn(): Promise<{ calls: PendingCall[]; stopped?: RunResult }> {
    const s = this.session;
    let request: ModelRequest;
    try {
      request = projectRequest(s.durableTree, blobReader(s.store), this.#inputs(), this.#memo);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { calls: [], stopped: this.stop("prompt-error", clean(error.message)) };
    }
    const record = this.#recorder.record(request);
    let turnId = 0 as NodeId;
    let textId = 0 as NodeId;
    let recordId = 0 as NodeId;
    s.commit(
      (d) => {
        turnId = d.appendChild(bodyOf(d.tree).id, { tag: "turn", attrs: { role: "assistant", status: "streaming", model: this.model.id } });
        recordId = d.appendChild(turnId, record);
        textId = d.appendChild(turnId, { tag: "text" });
      },
      { label: "turn.start" },
    );
    this.#recorder.recorded(recordId);
    this.emit({ type: "turn", role: "assistant", element: turnId });
    const reply = new ReplyWriter(s, turnId, recordId, textId, (tool) => this.registry.get(tool)?.replayPolicy ?? "never", this.emit);
    try {
      for await (const ev of this.model.stream(request, this.signal)) reply.take(ev);
    } catch (error) {
      reply.closeQuietly();
      // The log refused one of the turn's writes (a moved head, a full disk): not a model failure.
      if (reply.failure !== undefined) throw reply.failure.error;
      if (error instanceof StoreError) throw error;
      const calls = [...reply.calls.values()].map((c) => c.element);
      return { calls: [], stopped: this.failTurn(turnId, calls, error, reply.usage) };
    }
    reply.close();
    const { usage, finish } = reply;
    // The turn's end and every call's intent are one event (AG-4).
    const ordered = reply.ordered();
    const counts = this.#counts;
    const after: Counts = {
      ...counts,
      steps: counts.steps + 1,
      calls: counts.calls + ordered.length,
      tokens: counts.tokens + (usage ? usage.input + usage.output : 0),
    };
    s.commit(
      (d) => {
        d.set(turnId, "status", "complete");
        if (finish !== "stop" && finish !== "tool_calls") d.set(turnId, "finish", finish);
        if (usage !== undefined)
          d.appendChild(turnId, { tag: "usage", attrs: { input: String(usage.input), output: String(usage.output) } });
        for (const c of ordered) d.set(c.element, "status", "pending");
        if (ordered.length === 0) d.appendChild(bodyOf(d.tree).id, stopSpec("end-turn", after));
      },
      { label: "turn.end" },
    );
    Object.assign(this.#counts, after);
    for (const c of ordered) this.emit({ type: "call", element: c.element, tool: c.tool, status: "pending" });
    if (ordered.length === 0) {
      this.emit({ type: "stop", reason: "end-turn" });
      return { calls: [], stopped: this.result("end-turn") };
    }
    return { calls: ordered.map((c) => ({ ...this.pendingOf(c.element), attempt: 0 })) };
  }

  /** A model failure: the turn is marked failed (it leaves the projection), the run stops. */
  failTurn(turnId: NodeId, calls: readonly NodeId[], error: unknown, usage: { input: number; output: number } | undefined): RunResult {
    const cancelled = this.signal.aborted || (error instanceof ModelError && error.kind === "cancelled");
    const e =
      error instanceof ModelError
        ? error
        : new ModelError(
            "protocol",
            `the model client failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
          );
    const reason: StopReason = cancelled ? "cancelled" : e.kind === "context-overflow" ? "context-overflow" : "model-error";
    const counts = this.#counts;
    const used = usage === undefined ? 0 : usage.input + usage.output;
    const after: Counts = {
      ...counts,
      steps: counts.steps + (cancelled ? 0 : 1),
      calls: counts.calls + calls.length,
      tokens: counts.tokens + used,
    };
    this.session.commit(
      (d) => {
        d.set(turnId, "status", cancelled ? "interrupted" : "failed");
        for (const c of calls) {
          d.set(c, "status", "interrupted");
          d.set(c, "reason", "the model's reply ended before this call was complete");
        }
        if (usage !== undefined)
          d.appendChild(turnId, { tag: "usage", attrs: { input: String(usage.input), output: String(usage.output) } });
        d.appendChild(turnId, { tag: "diag", attrs: { kind: cancelled ? "cancelled" : `model-${e.kind}` }, text: clean(e.message) });
        d.appendChild(bodyOf(d.tree).id, stopSpec(reason, after, clean(e.message)));
      },
      { label: cancelled ? "run.stop" : "turn.failed" },
    );
    Object.assign(this.#counts, after);
    this.emit({ type: "stop", reason, detail: e.message });
    return this.result(reason, e.message);
  }

  /** Runs one call to its outcome; returns a result when the run stops because of it. */
  async runCall(call: PendingCall, retry: boolean): Promise<RunResult | undefined> {
    const s = this.session;
    const spec = this.registry.get(call.tool);
    const callLimits: CallLimits = { ...DEFAULT_CALL_LIMITS, ...this.limits.call, ...spec?.limits };
    const action: Action = { kind: "tool-call", call: { name: call.tool, arguments: call.args } };
    const by = `e${call.element}`;
    // Cancelled before it started: it stays pending, like any call that never started (AG-11).
    if (this.signal.aborted) return this.stop("cancelled", "the run was cancelled");
    const checked = this.registry.validate(action.call);
    if (!checked.ok) {
      // Nothing runs, whatever the executor: the seed table's row for a failed validation.
      const refused = outcome("not_executed", `The call to ${call.tool} was not executed: ${checked.message}.`, true);
      return this.settle(call, refused, checked.message, [], callLimits, []);
    }
    const attempt = call.attempt + 1;
    s.commit(
      (d) => {
        d.set(call.element, "status", "running");
        d.set(call.element, "attempt", String(attempt));
      },
      { label: retry ? "call.retry" : "call.start", by },
    );
    this.emit({ type: "call", element: call.element, tool: call.tool, status: "running" });
    const done = await executeBounded(s, call.element, this.executor, action, this.signal, callLimits);
    // The log refused the call's progress (another process moved the head): the run ends with that error (AG-18).
    if ("failed" in done) throw done.failed.error;
    if ("cancelled" in done) {
      this.interrupt(call, "the run was cancelled while the call was running", done.diags);
      return this.stop("cancelled", "the run was cancelled");
    }
    const o = done.outcome;
    return this.settle(call, o, o.status === "env_error" ? o.observation : undefined, done.staged, callLimits, done.diags);
  }

  /** Marks a call interrupted (synthetic observation from the record). */
  interrupt(call: PendingCall, reason: string, diags: Diag[] = []): void {
    this.session.commit(
      (d) => {
        d.set(call.element, "status", "interrupted");
        d.set(call.element, "reason", clean(reason));
        for (const g of diags) d.appendChild(call.element, { tag: "diag", attrs: { kind: g.kind, ...g.attrs }, text: clean(g.text) });
      },
      { label: "call.interrupted", by: `e${call.element}` },
    );
    this.emit({ type: "call", element: call.element, tool: call.tool, status: "interrupted", detail: reason });
  }

  /** Commits an outcome with its observation, staged edits and the stop it causes, as one event. */
  settle(
    call: PendingCall,
    outcome: ActionOutcome,
    reason: string | undefined,
    staged: readonly TreeEdit[],
    limits: CallLimits,
    diags: Diag[],
  ): RunResult | undefined {
    const s = this.session;
    const spec = this.registry.get(call.tool);
    const inline = boundObservation(outcome.observation, limits, (text) => s.store.putBlob(text), diags);
    const completes = outcome.status === "executed" && outcome.errorClass === undefined && spec?.completesRun === true;
    const envDone = outcome.envReportedCompletion;
    const after: Counts = { ...this.#counts, effective: this.#counts.effective + (outcome.status === "executed" ? 1 : 0) };
    // The calls of this turn after a completing one never run: they are settled with it.
    const rest: NodeId[] = [];
    if (completes || envDone)
      for (let c = s.durableTree.get(call.element)?.nextSibling ?? null; c !== null; c = c.nextSibling)
        if (c.tag === "call" && (c.attrs.status === "pending" || c.attrs.status === "arguments")) rest.push(c.id);
    s.commit(
      (d: TreeDraft) => {
        d.set(call.element, "status", outcome.status);
        if (reason !== undefined) d.set(call.element, "reason", clean(reason.replace(/\.$/, "")));
        if (outcome.errorClass !== undefined) d.set(call.element, "error", clean(outcome.errorClass));
        d.appendChild(call.element, { tag: "result", attrs: { synthetic: String(outcome.observationIsSynthetic) }, text: clean(inline) });
        for (const g of diags) d.appendChild(call.element, { tag: "diag", attrs: { kind: g.kind, ...g.attrs }, text: clean(g.text) });
        if (outcome.status === "executed" && outcome.errorClass === undefined) for (const edit of staged) edit(d);
        if (envDone || completes)
          for (const id of rest) {
            d.set(id, "status", "not_executed");
            d.set(id, "reason", "the run completed before this call");
          }
        if (envDone) d.appendChild(bodyOf(d.tree).id, stopSpec("env-completed", after));
        else if (completes) d.appendChild(bodyOf(d.tree).id, stopSpec("completed-by-tool", after, `${call.tool} completed the run`));
      },
      { label: "call.outcome", by: `e${call.element}` },
    );
    Object.assign(this.#counts, after);
    this.emit({ type: "call", element: call.element, tool: call.tool, status: outcome.status, detail: inline });
    if (envDone) {
      this.emit({ type: "stop", reason: "env-completed" });
      return this.result("env-completed");
    }
    if (completes) {
      this.emit({ type: "stop", reason: "completed-by-tool", detail: `${call.tool} completed the run` });
      return this.result("completed-by-tool", `${call.tool} completed the run`);
    }
    return undefined;
  }
}

interface PendingCall {
  readonly element: NodeId;
  readonly tool: string;
  readonly args: string;
  readonly attempt: number;
}
