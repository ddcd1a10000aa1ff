/**
 * @strata/engine — sessions as events over @strata/dom trees stored in @strata/store.
 */
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
export { type ReplayReport, replayVerify } from "./replay.ts";
export { Replica } from "./replica.ts";
export { type Change, type CommitOptions, type CreateOptions, Session, type SessionOptions } from "./session.ts";
export { loadSnapshot, loadSnapshotVersion, SNAPSHOT_HEADER_FORMAT, SnapshotWriter } from "./snapshots.ts";
export { decodeSse, decodeSseStream, encodeSse, type Frame } from "./sse.ts";
export { type StreamOptions, StreamWriter } from "./stream.ts";
export { Subscription } from "./subscription.ts";
export { TEXT_REF_MIN, TextIndex, type TextRef, TextResolver } from "./texts.ts";
export { verifyHooks, verifyStore } from "./verify.ts";
