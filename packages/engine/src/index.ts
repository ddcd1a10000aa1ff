/**
 * @strata/engine — sessions as events over @strata/dom trees stored in @strata/store.
 */
export { type AgentEvent, type RunAgentOptions, type RunLimits, runAgent } from "./agent.ts";
export { BLOB_REF_ATTRS, BLOB_REFS, isBlobRef, isSha256, opsHashes, specHashes, treeBlobRefs } from "./blob-refs.ts";
export {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_V1,
  BUNDLE_LIMITS,
  type Bundle,
  type BundleBranch,
  BundleError,
  type BundleErrorCode,
  type BundleEvent,
  type BundleFormat,
  type BundleLimits,
} from "./bundle.ts";
export { type DecodeBundleOptions, decodeBundle, parseBundle } from "./bundle-decode.ts";
export { type ExportBundleOptions, exportBundle } from "./bundle-export.ts";
export { type ImportBundleOptions, type ImportReport, importBundle } from "./bundle-import.ts";
export { EngineError, type EngineErrorCode } from "./errors.ts";
export {
  DEFAULT_SKELETON,
  type DecodedEvent,
  decodeEvent,
  encodeGenesis,
  encodePatch,
  foldEvent,
  GENESIS_KIND,
  PATCH_KIND,
  SKELETON_IDS,
} from "./events.ts";
export { type RequestMismatch, type RequestPart, type RequestsReport, type VerifyRequestsOptions, verifyRequests } from "./fidelity.ts";
export {
  blobText,
  bodyOf,
  inputsPatch,
  metaOf,
  type RecordedInputs,
  type RecordedTool,
  type RunInputs,
  readInputs,
  recordInputs,
} from "./inputs.ts";
export { type CommitInput, DEFAULT_SNAPSHOT_EVERY, ID_BLOCK, Journal, type JournalOptions } from "./journal.ts";
export {
  durableKey,
  isLifecycle,
  type LifecycleEntry,
  type LifecycleWork,
  lifecycleWork,
  NO_WORK,
  scanLifecycle,
  updateLifecycle,
  type Versioned,
} from "./lifecycle.ts";
export { type MaterializeOptions, materialize, materializeVersion } from "./materialize.ts";
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
export {
  type BlobText,
  blobReader,
  contribute,
  DEFAULT_SYSTEM_TEMPLATE,
  observationOf,
  ProjectionMemo,
  projectMessages,
  projectRequest,
  renderPrompt,
} from "./prompt.ts";
export { type ReplayReport, replayVerify } from "./replay.ts";
export { Replica } from "./replica.ts";
export { type RequestDigest, type RequestRecord, readRecord, requestDigest } from "./requests.ts";
export { type Divergence, type Override, type RerunOptions, type RerunReport, rerun } from "./rerun.ts";
export { type RunResult, type RunState, runCounts, runState, type StopReason } from "./runs.ts";
export { type Change, type CommitOptions, type CreateOptions, Session, type SessionOptions } from "./session.ts";
export { loadSnapshot, loadSnapshotVersion, SNAPSHOT_HEADER_FORMAT, SnapshotWriter } from "./snapshots.ts";
export { decodeSse, decodeSseMessage, decodeSseStream, encodeSse, type Frame, SseDecoder, type StreamErrorCode } from "./sse.ts";
export { DEFAULT_MAX_STEPS, openWork, startRun } from "./start.ts";
export { type StreamOptions, StreamWriter } from "./stream.ts";
export { Subscription } from "./subscription.ts";
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
export { TEXT_REF_MIN, TextIndex, type TextRef, TextResolver } from "./texts.ts";
export { confine, runCommand, WorkspaceError, type WorkspaceOptions, workspaceTools } from "./tools/builtin.ts";
export {
  type Action,
  type ActionOutcome,
  type CallLimits,
  canonicalJson,
  contentHash,
  DEFAULT_CALL_LIMITS,
  type Executor,
  type OutcomeStatus,
  RegistryExecutor,
  type ReplayPolicy,
  type ToolCall,
  type ToolContext,
  ToolEnvironmentError,
  type ToolHandler,
  ToolRegistry,
  ToolRegistryError,
  type ToolSpec,
  type TreeEdit,
  type Validation,
} from "./tools/registry.ts";
export { DEFAULT_SYNTHETIC, type SyntheticKind, type SyntheticObservations, syntheticText } from "./tools/synthetic.ts";
export { verifyHooks, verifyStore } from "./verify.ts";
