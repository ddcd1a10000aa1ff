/**
 * @strata/agent — an LLM agent above the session core (`@strata/engine`): the tool registry and
 * built-in tools, the template language, recorded inputs (L4), prompt projection, the agent loop
 * with its resume, re-runs and request fidelity, and the model boundary that model clients
 * implement. Everything it knows is in the session tree; `docs/agent.md` is the guide, rules are
 * `docs/spec/agent.md` (AG-, TL-, PR-, RR-) and `docs/spec/templates.md` (TP-).
 *
 * What tests and benchmarks use beyond this surface is in `@strata/agent/internal`.
 */

// The loop: start, continue or resume a run; what a branch has to continue.
export type { AgentEvent, RunAgentOptions, RunLimits } from "./context.ts";
// Checking a session: request fidelity and re-runs.
export { type RequestMismatch, type RequestPart, type RequestsReport, type VerifyRequestsOptions, verifyRequests } from "./fidelity.ts";
// Recorded inputs (L4) and prompts as projections of the tree.
export { blobText, type RecordedInputs, type RecordedTool, type RunInputs, readInputs, recordInputs } from "./inputs.ts";
export { runAgent } from "./loop.ts";
// The model boundary (also `@strata/agent/model`, which imports nothing).
export {
  type ChatMessage,
  type Model,
  ModelError,
  type ModelErrorKind,
  type ModelEvent,
  type ModelRequest,
  type ModelSettings,
  type ToolCallRequest,
  type ToolSchema,
} from "./model.ts";
// Blobs on either port: fetched ahead of a synchronous read (a projection, a comparison).
export { type FetchedBlobs, fetchBlobs, missingBlob } from "./port.ts";
export { type BlobText, blobReader, DEFAULT_SYSTEM_TEMPLATE, projectRequest, renderPrompt } from "./prompt.ts";
export { type Divergence, type Override, type RerunOptions, type RerunReport, rerun } from "./rerun.ts";
export { type RunResult, type RunState, runState } from "./runs.ts";
export { DEFAULT_MAX_STEPS, openWork, startRun } from "./start.ts";
export {
  checkTemplate,
  DEFAULT_LIMITS as TEMPLATE_LIMITS,
  type Limits as TemplateLimits,
  type RenderOptions,
  renderTemplate,
  TemplateError,
  type TemplateErrorCode,
  type TemplateLimit,
} from "./template/index.ts";
export { type WorkspaceOptions, workspaceTools } from "./tools/builtin.ts";
export { createEditFileTool, type EditFileOptions } from "./tools/edit-file.ts";
// Tools: the registry, executors and outcomes, the built-in tools and the workspace they act on.
export { createListDirTool, type ListDirOptions } from "./tools/list-dir.ts";
export { localWorkspace } from "./tools/local-workspace.ts";
export { createReadFileTool, type ReadFileOptions } from "./tools/read-file.ts";
export {
  type Action,
  type ActionOutcome,
  type CallLimits,
  DEFAULT_CALL_LIMITS,
  type Executor,
  type OutcomeStatus,
  outcome,
  RegistryExecutor,
  type ReplayPolicy,
  type ToolCall,
  type ToolContext,
  type ToolEffects,
  ToolEnvironmentError,
  type ToolHandler,
  ToolRegistry,
  ToolRegistryError,
  type ToolSpec,
  type TreeEdit,
  type Validation,
} from "./tools/registry.ts";
export { createRunTool, type RunToolOptions } from "./tools/run.ts";
export { createSubmitTool } from "./tools/submit.ts";
export { DEFAULT_SYNTHETIC, type SyntheticKind, type SyntheticObservations, syntheticText } from "./tools/synthetic.ts";
export { createTodoTool, TODO_STATUSES, type TodoStatus } from "./tools/todo.ts";
export {
  type ExecOptions,
  type ListBounds,
  type Listing,
  type ReadResult,
  WorkspaceError,
  type WorkspaceOps,
  type WorkspaceStat,
} from "./tools/workspace-ops.ts";
export { createWriteFileTool } from "./tools/write-file.ts";
// The persisted vocabulary of turns, calls and stops.
export {
  ATTR,
  byCall,
  CALL,
  type CallStatus,
  DIAG,
  type DiagKind,
  FINAL_STOPS,
  LABEL,
  META,
  OPEN_CALL,
  ROLE,
  STOP,
  type StopReason,
  TAG,
  TURN,
  type TurnRole,
  type TurnStatus,
} from "./vocabulary.ts";
// The workspace in the log: the record of the files in the tree, capture with a stat index, checkout,
// and the unified diff of two versions of a file.
export {
  addSkippedDiags,
  applyFileChanges,
  type Capture,
  type CheckoutOptions,
  type CheckoutReport,
  changePath,
  checkoutWorkspace,
  DEFAULT_MAX_EDITS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_WORK,
  DIAG_WORKSPACE_SKIPPED,
  diffWorkspaces,
  ensureWorkspace,
  type FileChange,
  type FileEntry,
  type FileMode,
  headerPath,
  type IgnoreOptions,
  IgnoreRules,
  outsideChanges,
  pathProblem,
  type ScanStats,
  type SkippedFile,
  type SkipReason,
  type TrackerOptions,
  type Unified,
  type UnifiedOptions,
  unifiedDiff,
  WorkspaceStateError,
  type WorkspaceStateErrorCode,
  WorkspaceTracker,
  WS,
  WS_LABEL,
  workspaceCap,
  workspaceDir,
  workspaceElement,
  workspaceFiles,
} from "./workspace/index.ts";
// The files a rewind, fork or resume restores (L7, WS-28).
export { type WorkspaceWork, workspaceWork } from "./workspace-work.ts";
