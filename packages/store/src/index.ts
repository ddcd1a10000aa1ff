/**
 * @strata/store — the SQLite event log: sessions, events, branches with compare-and-swap heads,
 * forks and rewinds as pointer moves, snapshots as content-addressed pages, blobs. It stores
 * events, heads, snapshots and blobs as opaque data and imports no other strata package.
 */
export { TS_MAX } from "./checks.ts";
export { eventDigest } from "./digest.ts";
export { fromSqlite, HeadConflict, LeaseLost, StoreError, type StoreErrorCode } from "./errors.ts";
export { isHash, sha256 } from "./hash.ts";
export { BRANCH_NAME, newSessionId } from "./ids.ts";
export { QUICK_CHECK_LIMIT } from "./integrity.ts";
export type { OpenOptions, StoreAccess } from "./open.ts";
export { COPY_LIMIT } from "./read-only.ts";
export { APPLICATION_ID, MIGRATIONS, type Migration, SCHEMA_VERSION } from "./schema.ts";
export { openStore, SqliteStore, type StoreOptions } from "./sqlite-store.ts";
export type { CreateSessionInput, Store, VerifyHooks } from "./store.ts";
export {
  type AppendOptions,
  type BranchInfo,
  type BranchOrigin,
  type EventId,
  type EventInput,
  type EventMeta,
  eventId,
  type LeaseInfo,
  type LeaseResult,
  type LogQuery,
  type SessionId,
  type SessionInfo,
  type SnapshotRecord,
  type StoredEvent,
  sessionId,
  type VerifyFinding,
  type VerifyReport,
} from "./types.ts";
