/**
 * @strata/dom — the session tree: immutable versions, the op set of `patch@1`, canonical XML and
 * snapshots, CSS selectors, and structural diffs. Depends on no other strata package.
 */
export { type ApplyOptions, applyPatch, applyWithEffect, tryApplyPatch } from "./apply.ts";
export { emptyTree, skeletonTree } from "./build.ts";
export { depthOf, MAX_DEPTH, specDepth, subtreeHeight } from "./depth.ts";
export {
  type DiffAttr,
  type DiffMove,
  type DiffPosition,
  type DiffSubtree,
  type DiffText,
  diffToPatch,
  diffTrees,
  isEmptyDiff,
  reverseDiff,
  type TreeDiff,
} from "./diff.ts";
export { draft, draftWithEffect, TreeDraft } from "./draft.ts";
export {
  type AttrChange,
  type Change,
  type ChangeType,
  eachInserted,
  type InsertChange,
  type MoveChange,
  type PatchEffect,
  type RemoveChange,
  type TextChange,
} from "./effect.ts";
export { DomError, type DomErrorCode, type DomResult } from "./errors.ts";
export { mapIds, shiftMinted } from "./idmap.ts";
export { DOCUMENT, type DocumentId, isNodeId, MAX_NODE_ID, type NodeId, nodeId } from "./ids.ts";
export { invertPatch } from "./invert.ts";
export { ID_ATTR, invalidCharIndex, MAX_NAME_LENGTH, nameProblem, sanitizeText } from "./names.ts";
// The op kinds (one module each, listed in op/registry.ts).
export type { AppendOp } from "./op/append.ts";
export type { InsOp } from "./op/ins.ts";
export type { MvOp } from "./op/mv.ts";
export type { RmOp } from "./op/rm.ts";
export { MAX_HWM_RAISE, type SetOp } from "./op/set.ts";
export type { TextOp } from "./op/text.ts";
export {
  type AttrVisitor,
  attrsWritten,
  checkOp,
  type DescribeOptions,
  decodeOp,
  decodePatch,
  describeOp,
  type IdMap,
  type MintVisitor,
  mintedIds,
  OP_KINDS,
  type Op,
  type OpKind,
  type OpOf,
  type Patch,
  patchText,
  type Quote,
  textsWritten,
} from "./ops.ts";
export { count, matches, type SelectOptions, select, selectOne } from "./select.ts";
export { MAX_COMPOUNDS, MAX_SELECTOR_NESTING } from "./selector-parse.ts";
export {
  checkStructure,
  decodePage,
  encodePage,
  fromSnapshot,
  headerOf,
  lazyTree,
  type PageCodec,
  RECORD_TEXT,
  SNAPSHOT_FORMAT,
  slotsOf,
  type TreeHeader,
  toPages,
  toSnapshot,
  treeFromPages,
  withStoredPages,
} from "./snapshot.ts";
export { checkSpec, eachSpecNode, MAX_SPEC_NODES, type NodeSpec, specOf, specSize } from "./spec.ts";
export { advanceIndex, ensureIndex, INDEX_MIN_SIZE, indexOf, TagIndex } from "./tagindex.ts";
export {
  ATTRS_PROTO,
  type Attrs,
  type Element,
  LazyPage,
  PAGE_CACHE_LIMIT,
  PAGE_SIZE,
  type Page,
  pageCache,
  type Rec as NodeRecord,
  Tree,
  walk as walkTree,
} from "./tree.ts";
export {
  DEFAULT_MAX_XML_BYTES,
  DEFAULT_MAX_XML_DEPTH,
  escapeAttr,
  escapeText,
  type ParseXmlOptions,
  parseXml,
  type ToXmlOptions,
  toXml,
} from "./xml.ts";
