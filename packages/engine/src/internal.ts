/**
 * `@strata/engine/internal`: what the tests and benchmarks reach for beyond the public surface —
 * the journal under `Session`, the patch payload codec, text references and snapshot loading,
 * the lifecycle scan and the table of blob-naming attributes (EN-33). No compatibility promise:
 * these change with the code they belong to.
 */
export { BLOB_REF_ATTRS, BLOB_REFS, isBlobRef, treeBlobRefs } from "./blob-refs.ts";
export { encodePatch, PATCH_KIND } from "./events.ts";
export { type CommitInput, DEFAULT_SNAPSHOT_EVERY, ID_BLOCK, Journal, type JournalOptions } from "./journal.ts";
export { scanLifecycle } from "./lifecycle.ts";
export { loadSnapshot } from "./snapshots.ts";
export { TEXT_REF_MIN, TextIndex, type TextRef, TextResolver } from "./texts.ts";
