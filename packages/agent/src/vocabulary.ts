/**
 * The loop's persisted vocabulary (AG-1 … AG-6, AG-15): the element and attribute names the agent
 * writes into `<body>`, the values its `status`, `role` and `reason` attributes take, the kinds of
 * its `<diag>` elements and the labels of its events. Stored sessions hold these strings, so they
 * are a format: a name changes only with a migration. Everything that writes or reads a turn, a
 * call or a stop — the loop, projection, re-runs, the CLI, the inspector — spells them from here.
 *
 *   <turn role="assistant" status="complete" model="openai:gpt-4o" finish="length">
 *     <request …/> <reasoning>…</reasoning> <text>…</text>
 *     <call id="call_0_1" tool="write_file" index="0" replay="never" status="executed" attempt="1"
 *           reason="…" error="TypeError">
 *       <args>{…}</args> <output>progress…</output> <result synthetic="false">…</result>
 *       <diag kind="blob" hash="…" chars="…">…</diag>
 *     </call>
 *     <usage input="812" output="40"/>
 *   </turn>
 *   <stop reason="end-turn" steps="3" effective="2" calls="2" tokens="4210" detail="…"/>
 *
 * A call whose tool may change files (`effects: "workspace"`) carries its file changes as ops on
 * `<meta><workspace>` in its outcome event (workspace/files.ts names that record), and a
 * `<diag kind="workspace-skipped" path size reason>` for each file its capture left out.
 */
import { sanitizeText as clean, type NodeId, type TreeDraft } from "@strata/dom";

/** Element names of the loop's records. */
export const TAG = Object.freeze({
  turn: "turn",
  /** The model's reply text, or a user turn's task. */
  text: "text",
  /** The model's reasoning: recorded, never sent back (AG-15). */
  reasoning: "reasoning",
  /** The digest of the request a turn answered (PR-15); the first child of an assistant turn. */
  request: "request",
  usage: "usage",
  call: "call",
  args: "args",
  /** A call's progress as it streamed. */
  output: "output",
  /** A call's observation as the tool reported it. */
  result: "result",
  diag: "diag",
  /** Why a run ended, with its counters; the last child of `<body>` after a run. */
  stop: "stop",
} as const);

/**
 * Element names the agent keeps in `<meta>` (the recorded inputs' `<config>` is inputs.ts's own).
 * `<compaction through="ID"><summary>…</summary></compaction>` hides the body up to element ID
 * from the projection; `<todo>` holds the plan; `<rerun>` and its `<override>`s say what made a
 * re-run's branch (rerun.ts).
 */
export const META = Object.freeze({
  compaction: "compaction",
  summary: "summary",
  todo: "todo",
  item: "item",
  rerun: "rerun",
  override: "override",
} as const);

/** Attribute names on those elements. */
export const ATTR = Object.freeze({
  /** `<turn>`: a {@link TurnRole}. */
  role: "role",
  /** `<turn>`: a {@link TurnStatus}; `<call>`: a {@link CallStatus}. */
  status: "status",
  /** `<turn>`: the model's `provider:model`. */
  model: "model",
  /** `<turn>`: the model's finish reason, when it is neither `stop` nor `tool_calls`. */
  finish: "finish",
  /** `<call>`: the provider's call id (providers repeat them: never a key on its own). */
  id: "id",
  tool: "tool",
  /** `<call>`: its position in the model's output. */
  index: "index",
  /** `<call>`: the tool's replay policy when the call was made. */
  replay: "replay",
  attempt: "attempt",
  /** `<call>`: why it has the status it has; `<stop>`: a {@link StopReason}. */
  reason: "reason",
  /** `<call>`: the class name of an ordinary exception the handler threw (the call still executed). */
  error: "error",
  /** `<result>`: whether the observation is the executor's own wording rather than the tool's. */
  synthetic: "synthetic",
  /** `<diag>`: a {@link DiagKind}. */
  kind: "kind",
  /** `<usage>`: tokens in and out. */
  input: "input",
  output: "output",
  /** `<stop>`: the counters of the run it ends, and an optional detail. */
  steps: "steps",
  effective: "effective",
  calls: "calls",
  tokens: "tokens",
  detail: "detail",
  /** `<compaction>`: the last body element it hides. */
  through: "through",
  /** `<diag kind="workspace-skipped">`: the file left out, relative to the workspace root, and its bytes. */
  path: "path",
  size: "size",
} as const);

/** Roles of a `<turn>`. */
export const ROLE = Object.freeze({ user: "user", assistant: "assistant" } as const);
export type TurnRole = (typeof ROLE)[keyof typeof ROLE];

/** Statuses of an assistant `<turn>` (a user turn has none). */
export const TURN = Object.freeze({
  /** The reply is streaming in (after a crash: cut off; resume marks it interrupted). */
  streaming: "streaming",
  /** The reply ended; its calls' intent is recorded with it (AG-4). */
  complete: "complete",
  /** The model failed: the turn leaves the projection (it counts as a step). */
  failed: "failed",
  /** Cut off by a cancel or a crash: the turn leaves the projection. */
  interrupted: "interrupted",
} as const);
export type TurnStatus = (typeof TURN)[keyof typeof TURN];

/**
 * Statuses of a `<call>`: `arguments` (still streaming) → `pending` (intent durable, with its
 * turn's end) → `running` (committed before the handler runs) → one of the settled statuses.
 */
export const CALL = Object.freeze({
  arguments: "arguments",
  pending: "pending",
  running: "running",
  /** The handler ran (it may have thrown an ordinary exception: then `error` names its class). */
  executed: "executed",
  /** Nothing ran: validation failed, or the run completed before the call. */
  notExecuted: "not_executed",
  /** The environment is broken, not the call. */
  envError: "env_error",
  /** It may or may not have taken effect: the reply was cut off, or the process stopped while it ran. */
  interrupted: "interrupted",
} as const);
export type CallStatus = (typeof CALL)[keyof typeof CALL];
/** What an executor reports (the seed's outcome statuses). */
export type OutcomeStatus = typeof CALL.executed | typeof CALL.notExecuted | typeof CALL.envError;

/**
 * The statuses of a call that has not settled: what a resume reconciles. The session core's
 * lifecycle (`isLifecycle`, L7) treats exactly these calls as live; a test keeps the two in step.
 */
export const OPEN_CALL: ReadonlySet<string> = new Set<CallStatus>([CALL.arguments, CALL.pending, CALL.running]);

/** Why a run stopped, as `<stop reason>` records it. */
export const STOP = Object.freeze({
  /** A `completesRun` tool executed without error: the agent says it is done (no environment evidence). */
  completedByTool: "completed-by-tool",
  /** The environment reported the goal reached (never merged with the former). */
  envCompleted: "env-completed",
  /** The model answered without calling a tool: it is waiting for the user. */
  endTurn: "end-turn",
  maxSteps: "max-steps",
  budget: "budget",
  contextOverflow: "context-overflow",
  cancelled: "cancelled",
  modelError: "model-error",
  /** The recorded template does not render on the tree (the error names the line). */
  promptError: "prompt-error",
} as const);
export type StopReason = (typeof STOP)[keyof typeof STOP];

/** Stops after which `runAgent` without a new task has nothing to continue. */
export const FINAL_STOPS: ReadonlySet<string> = new Set<StopReason>([STOP.completedByTool, STOP.envCompleted, STOP.endTurn]);

/** Kinds of `<diag>`: what the loop noted about a call or a turn. A failed model turn's is `model-<ModelErrorKind>`. */
export const DIAG = Object.freeze({
  /** The observation is stored whole as a blob (`hash`, `chars`). */
  blob: "blob",
  /** Observation characters beyond the cap were dropped (`dropped`). */
  outputCap: "output-cap",
  /** Progress beyond the inline cap was not kept (`dropped`). */
  outputTruncated: "output-truncated",
  timeout: "timeout",
  /** The handler ignored the abort and was abandoned after the grace period. */
  abandoned: "abandoned",
  cancelled: "cancelled",
  /**
   * A file the workspace record leaves out (`path`, `size`, `reason`: too large for the cap,
   * unreadable, a name a tree cannot carry): under the call whose capture first found it, or under
   * `<workspace>` for the baseline and outside changes (WS-23).
   */
  workspaceSkipped: "workspace-skipped",
  /** The capture after a call failed (the workspace directory is gone, say): its file changes are not recorded (WS-24). */
  workspaceError: "workspace-error",
} as const);
export type DiagKind = (typeof DIAG)[keyof typeof DIAG] | `model-${string}`;

/** Labels of the loop's events (`EventMeta.label`), which re-runs and verification look up. */
export const LABEL = Object.freeze({
  turnUser: "turn.user",
  turnStart: "turn.start",
  turnText: "turn.text",
  turnReasoning: "turn.reasoning",
  turnEnd: "turn.end",
  turnFailed: "turn.failed",
  callOpen: "call.open",
  callArgs: "call.args",
  callStart: "call.start",
  callRetry: "call.retry",
  callOutput: "call.output",
  callOutcome: "call.outcome",
  callInterrupted: "call.interrupted",
  runStop: "run.stop",
  reconcile: "resume.reconcile",
  inputsRecord: "inputs.record",
  inputsUpdate: "inputs.update",
  rerun: "replay.rerun",
  counterfactual: "replay.counterfactual",
  /** The record of the workspace's files, before the first call that may write starts (WS-21). */
  workspaceBaseline: "workspace.baseline",
  /** Changes made to the workspace outside the agent, recorded before the next call that may write (WS-25). */
  workspaceOutside: "workspace.outside",
  /** The directory a branch line works in, recorded when it changes (WS-25). */
  workspaceDir: "workspace.dir",
} as const);

/** The `by` of the events that settle call element `call` (`e<id>`), so its outcome is found in the log. */
export function byCall(call: number): string {
  return `e${call}`;
}

/** Sets a call's status, and the reason for it when given (sanitized: it may quote a model or a tool). */
export function setCallStatus(d: TreeDraft, call: NodeId, status: CallStatus, reason?: string): void {
  d.set(call, ATTR.status, status);
  if (reason !== undefined) d.set(call, ATTR.reason, clean(reason));
}

/** Sets an assistant turn's status. */
export function setTurnStatus(d: TreeDraft, turn: NodeId, status: TurnStatus): void {
  d.set(turn, ATTR.status, status);
}
