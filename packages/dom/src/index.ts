/**
 * @strata/dom — the session tree: immutable versions, the op set of `patch@1`, canonical XML and
 * snapshots, CSS selectors, and structural diffs. Depends on no other strata package.
 */
export { type ApplyOptions, applyPatch, MAX_HWM_RAISE, tryApplyPatch } from "./apply.ts";
export { emptyTree, skeletonTree, specOf, specSize } from "./build.ts";
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
export { draft, TreeDraft } from "./draft.ts";
export { DomError, type DomErrorCode, type DomResult } from "./errors.ts";
export { DOCUMENT, type DocumentId, isNodeId, MAX_NODE_ID, type NodeId, nodeId } from "./ids.ts";
export { invertPatch } from "./invert.ts";
export { ID_ATTR, invalidCharIndex, MAX_NAME_LENGTH, nameProblem, sanitizeText } from "./names.ts";
export {
  type AppendOp,
  checkOp,
  checkSpec,
  decodeOp,
  decodePatch,
  type InsOp,
  MAX_SPEC_NODES,
  type MvOp,
  type NodeSpec,
  OP_KINDS,
  type Op,
  type OpKind,
  type Patch,
  type RmOp,
  type SetOp,
  type TextOp,
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
} from "./snapshot.ts";
export { advanceIndex, ensureIndex, INDEX_MIN_SIZE, indexOf, TagIndex } from "./tagindex.ts";
export { type Attrs, type Element, LazyPage, PAGE_SIZE, type Page, type Rec as NodeRecord, Tree, walk as walkTree } from "./tree.ts";
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
