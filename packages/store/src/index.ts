/**
 * @strata/store — the event log: sessions, events, branches with compare-and-swap heads, forks and
 * rewinds as pointer moves, snapshots as content-addressed pages, blobs. It stores events, heads,
 * snapshots and blobs as opaque data and imports no other strata package.
 *
 * Two parts (decision 0023): the `Store` contract, the same for every backend — its vocabulary,
 * errors, argument checks (`checkedStore`) and formats — and the SQLite backend (`openStore`).
 */

// ── the asynchronous port (decision 0035) ───────────────────────────────────────────────────
export { AsyncCheckedStore, type AsyncStore, asyncStore, checkedAsyncStore, isAsyncStore } from "./async-store.ts";
// ── the contract, for every backend ─────────────────────────────────────────────────────────
export { CheckedStore, checkedStore, type ErrorMapping } from "./checked-store.ts";
export { TS_MAX } from "./checks.ts";
export { eventDigest } from "./digest.ts";
export { MAX_PAGES } from "./directory.ts";
export { HeadConflict, InUse, LeaseLost, StoreError, type StoreErrorCode, toStoreError } from "./errors.ts";
export { isHash, sha256 } from "./hash.ts";
export { BRANCH_NAME, newSessionId } from "./ids.ts";
export { textRefs } from "./reach.ts";
export { MAX_SEARCH_LIMIT, registerSearchText, SEARCH_LIMIT, type SearchTerms, searchTerms } from "./search.ts";
// ── the SQLite backend ──────────────────────────────────────────────────────────────────────
export { fromSqlite } from "./sqlite/errors.ts";
export { QUICK_CHECK_LIMIT } from "./sqlite/integrity.ts";
export type { OpenOptions, StoreAccess } from "./sqlite/open.ts";
export { COPY_LIMIT } from "./sqlite/read-only.ts";
export { APPLICATION_ID, MIGRATIONS, type Migration, SCHEMA_VERSION } from "./sqlite/schema.ts";
export { openStore, SqliteStore, type StoreOptions } from "./sqlite/sqlite-store.ts";
export { drive, value } from "./steps.ts";
export { type CreateSessionInput, STORE_METHODS, type Store, type StoreMethod, type VerifyHooks } from "./store.ts";
export {
  type AppendOptions,
  type BranchInfo,
  type BranchOrigin,
  type CollectOptions,
  type CollectReport,
  type EventId,
  type EventInput,
  type EventMeta,
  eventId,
  type LeaseInfo,
  type LeaseResult,
  type LogQuery,
  MAX_SEARCH_TERMS,
  type RemovedSession,
  type RemoveOptions,
  type SearchEntry,
  type SearchHit,
  type SearchQuery,
  type SessionActivity,
  type SessionId,
  type SessionInfo,
  type SessionQuery,
  type SnapshotRecord,
  type StoredEvent,
  sessionId,
  type VerifyFinding,
  type VerifyReport,
} from "./types.ts";
