/**
 * @strata/engine — the session core: sessions as events over @strata/dom trees stored in
 * @strata/store. Commit, read at any event, fork, rewind, resume (the lifecycle work a resume
 * hands its caller, L7), subscribe, stream, replicate over SSE, replay, verify, and move sessions
 * between files as bundles. It knows nothing of agents: `@strata/agent` is built on it.
 * `docs/sessions.md` is the guide, rules are `docs/spec/engine.md` (EN-).
 *
 * What tests and benchmarks use beyond this surface is in `@strata/engine/internal`.
 */
export { treeBlobRefs } from "./blob-refs.ts";
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
export { exportBundleFrom, importBundleInto } from "./bundle-port.ts";
export { EngineError, type EngineErrorCode } from "./errors.ts";
export { DEFAULT_SKELETON, type DecodedEvent, decodeEvent } from "./events.ts";
export { durableKey, isLifecycle, type LifecycleEntry, type LifecycleWork, lifecycleWork, type Versioned } from "./lifecycle.ts";
export { NotLoaded } from "./loading.ts";
export { type MaterializeOptions, materialize, materializeVersion } from "./materialize.ts";
export type { Answer, Port } from "./port.ts";
export { type ReplayReport, replayVerify } from "./replay.ts";
export { Replica } from "./replica.ts";
export { type IndexBacklogOptions, indexSearchBacklog } from "./search.ts";
export { type Change, type CommitOptions, type CreateOptions, Session, type SessionOptions } from "./session.ts";
export { bodyOf, metaOf } from "./skeleton.ts";
export { loadTree, storedBlobRefs } from "./snapshots.ts";
export { decodeSse, decodeSseMessage, decodeSseStream, encodeSse, type Frame, SseDecoder, type StreamErrorCode } from "./sse.ts";
export { type StreamOptions, StreamWriter } from "./stream.ts";
export { Subscription } from "./subscription.ts";
export { verifyHooks, verifyPort, verifyStore } from "./verify.ts";
