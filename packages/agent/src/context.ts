/**
 * What a run is given and what its phases share (AG-1 … AG-9, AG-11 … AG-14). `runAgent` (loop.ts) builds one
 * `RunContext` per run; the phases — reconcile on resume (reconcile.ts), one model turn (turn.ts),
 * one call (call.ts) — are free functions of it. Nothing here is state beyond the run: the tree is
 * the state, and the counters are read back from it when a run starts (runs.ts).
 */
import type { NodeId } from "@strata/dom";
import type { LoopWorkspace } from "./effects.ts";
import { type RecordedInputs, readInputs } from "./inputs.ts";
import type { Model, ModelSettings } from "./model.ts";
import { AgentBlobs, type AnySession } from "./port.ts";
import { ProjectionMemo } from "./prompt.ts";
import { RequestRecorder } from "./requests.ts";
import { type Counts, runCounts } from "./runs.ts";
import type { CallLimits, Executor, ToolRegistry } from "./tools/registry.ts";
import type { SyntheticObservations } from "./tools/synthetic.ts";
import { ATTR, type CallStatus, type StopReason, TAG, type TurnRole } from "./vocabulary.ts";
import type { WorkspaceTracker } from "./workspace/tracker.ts";

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
  | { readonly type: "turn"; readonly role: TurnRole; readonly element: NodeId }
  | { readonly type: "text"; readonly delta: string }
  /** The model's reasoning, as it streams (recorded in `<reasoning>`, never sent back: AG-15). */
  | { readonly type: "reasoning"; readonly delta: string }
  | { readonly type: "call"; readonly element: NodeId; readonly tool: string; readonly status: CallStatus; readonly detail?: string }
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
  /**
   * The workspace the tools act on, as a tracker of its directory (WS-20 … WS-27): the run then
   * records its files in the tree. Before the first call whose tool has `effects` starts, the
   * baseline (`workspace.baseline`, when the tree has no `<workspace>` yet) or the changes made
   * outside the agent since the tree (`workspace.outside`); after each such call, whatever its
   * outcome, the files it changed, as ops in the same event as its outcome (L2). The tracker's
   * directory must be the one the registry's tools act on. Absent: no file is recorded (as
   * before). A directory that cannot be read before a call starts throws `WorkspaceStateError`.
   */
  readonly workspace?: WorkspaceTracker;
}

/** A call the loop is about to run: its element and what the model asked. */
export interface PendingCall {
  readonly element: NodeId;
  readonly tool: string;
  readonly args: string;
  /** Attempts recorded so far (0 for a call that never started). */
  readonly attempt: number;
}

/** What every phase of one run reads and updates. */
export interface RunContext {
  readonly session: AnySession;
  readonly model: Model;
  readonly registry: ToolRegistry;
  readonly executor: Executor;
  readonly limits: RunLimits;
  readonly signal: AbortSignal;
  readonly emit: (e: AgentEvent) => void;
  /** The current run's counters: read from the tree once, then kept up to date with each commit. */
  readonly counts: Counts;
  /** The inputs as recorded at the head (read per turn: a run may update them). */
  readonly inputs: () => RecordedInputs;
  /** The request records of this line (PR-15). */
  readonly recorder: RequestRecorder;
  /** Keeps each turn's projection cost to what is new. */
  readonly memo: ProjectionMemo;
  /** The run's workspace (one for all its phases), when it records files. */
  readonly workspace: LoopWorkspace | undefined;
}

/** A fresh context for a run (or a part of one) over the session's current head. */
export function runContext(
  session: AnySession,
  run: Pick<RunContext, "model" | "registry" | "executor" | "limits" | "signal" | "emit"> & {
    readonly workspace?: LoopWorkspace | undefined;
  },
): RunContext {
  const { steps, effective, calls, tokens } = runCounts(session);
  return {
    session,
    ...run,
    counts: { steps, effective, calls, tokens },
    inputs: () => readInputs(session.durableTree),
    recorder: new RequestRecorder(AgentBlobs.of(session.store), session.durableTree),
    memo: new ProjectionMemo(),
    workspace: run.workspace,
  };
}

/** The call element `id` as a call to run (its recorded tool, arguments and attempts). */
export function pendingOf(session: AnySession, id: NodeId): PendingCall {
  const call = session.durableTree.get(id);
  if (call === undefined) throw new Error(`call element ${id} is gone`);
  return {
    element: id,
    tool: call.attrs[ATTR.tool] ?? "",
    args: call.children.find((c) => c.tag === TAG.args)?.text ?? "",
    attempt: Number(call.attrs[ATTR.attempt] ?? 0),
  };
}
