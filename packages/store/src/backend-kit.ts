/**
 * What a second backend of the `Store` contract reuses from the first (`@strata/store/backend`,
 * decision 0035): the argument and clock checks, the digest chain (ST-21), the chain walk over
 * segments (ST-7), the snapshot page-directory format and its chunk reuse (ST-13), the row
 * mappings, and what verify judges (ST-17). None of it touches a database; a backend brings its
 * own queries.
 */
export { ARGS, WRITES } from "./arg-checks.ts";
export { badTimestamp, checkBranchName, isTimestamp, notFound, show } from "./checks.ts";
export { digestBytes } from "./digest.ts";
export { decodeDirectory } from "./directory.ts";
export { messageOf, refuseDriven } from "./errors.ts";
export { hashesIn, Reach, textRefs } from "./reach.ts";
export { branchOf, leaseOf, sessionOf, withPriors } from "./rows.ts";
export {
  candidateHolds,
  derivable,
  derivedKinds,
  derivedSearchText,
  fts5Query,
  keptSearchText,
  MAX_SEARCH_LIMIT,
  matchesTerms,
  SEARCH_LIMIT,
  type SearchHitRow,
  type SearchTerms,
  searchHit,
  searchLimit,
  searchTerms,
  searchWords,
  snippetOf,
} from "./search.ts";
export { PageDirectories, type PageHost } from "./snapshot-pages.ts";
export { chainSpans, damaged, type Segment, type Span } from "./spans.ts";
export {
  answerOf,
  blobFinding,
  branchFindings,
  cycleFindings,
  digestFinding,
  eventHookFinding,
  forkFinding,
  linkFindings,
  missingPayloadFinding,
  segmentFindings,
  snapshotFinding,
  snapshotPlaceFinding,
  snapshotReadFinding,
} from "./verify-rules.ts";
