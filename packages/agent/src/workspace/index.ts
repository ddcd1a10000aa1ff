/**
 * The workspace in the log (DESIGN §10, decision 0027, WS rules in docs/spec/agent.md): the
 * record of a directory's files in the session tree, the tracker that captures what changed on
 * disk with a stat index, ignore rules with git's semantics, and checkout of a record into a
 * directory.
 */
export { type CheckoutOptions, type CheckoutReport, checkoutWorkspace, outsideChanges } from "./checkout.ts";
export { WorkspaceStateError, type WorkspaceStateErrorCode } from "./errors.ts";
export {
  addSkippedDiags,
  applyFileChanges,
  changePath,
  DEFAULT_MAX_FILE_BYTES,
  DIAG_WORKSPACE_SKIPPED,
  diffWorkspaces,
  ensureWorkspace,
  type FileChange,
  type FileEntry,
  type FileMode,
  type SkippedFile,
  type SkipReason,
  WS,
  WS_LABEL,
  workspaceCap,
  workspaceDir,
  workspaceElement,
  workspaceFiles,
} from "./files.ts";
export { type IgnoreOptions, IgnoreRules } from "./ignore.ts";
export { pathProblem } from "./paths.ts";
export type { ScanStats } from "./scan.ts";
export { type Capture, type TrackerOptions, WorkspaceTracker } from "./tracker.ts";
export { DEFAULT_MAX_EDITS, DEFAULT_MAX_WORK, headerPath, type Unified, type UnifiedOptions, unifiedDiff } from "./unified.ts";
