/**
 * @strata/import — the sessions other agent tools recorded, as strata sessions (IM-1 …): each
 * foreign session becomes a session whose tree holds its turns, messages, tool calls with
 * arguments and results, model and usage, with the source's timestamps on its events and its
 * branches as strata branches; the source itself is kept verbatim as a blob, and its sha256 makes
 * re-importing idempotent. Rules are `docs/spec/import.md` (IM-), the choices decision 0032.
 */
export { parseClaudeCode } from "./claude-code.ts";
export { parseCodex } from "./codex.ts";
export {
  FORMATS,
  type ForeignCall,
  type ForeignResult,
  type ForeignSession,
  type ForeignUsage,
  type Format,
  ImportError,
  type ImportErrorCode,
  type ImportProblem,
  type Step,
} from "./foreign.ts";
export {
  findSources,
  type ImportedSession,
  type ImportForeignOptions,
  type ImportForeignReport,
  importForeign,
  importForeignInto,
  type Source,
} from "./import.ts";
export { type OpenCodeRecord, type OpenCodeRecords, openCodeSession, REVERTED_BRANCH } from "./opencode.ts";
export { findOpenCode } from "./opencode-sources.ts";
export { parsePi } from "./pi.ts";
export { importedFrom, recordedTools } from "./tools.ts";
export { IMPORT, type SourceFile, type WriteOptions, type Written, writeSession } from "./write.ts";
