/**
 * The file diff between two events (IN-24): which files were added, modified or deleted from one
 * tree's workspace to the other's (`diffWorkspaces`, the same diff `strata diff` and the lifecycle
 * use), and for each a unified diff when both sides are text — bounded per file and per response,
 * so one request's cost does not grow with what the workspace holds.
 */
import { changePath, diffWorkspaces, type FileChange, type FileEntry, headerPath, unifiedDiff } from "@strata/agent";
import type { Tree } from "@strata/dom";
import type { AsyncStore, EventId, Store } from "@strata/store";
import { textOf } from "./files.ts";
import type { FileDelta, FileDiffResponse, FileDiffRow, FileRow } from "./protocol.ts";

/** A file larger than this on either side is shown by size and hash only (`too-large`). */
export const DIFF_FILE_MAX = 1024 * 1024;
/** Bytes one response reads to diff (both sides of every file); files past it are `omitted`. */
export const DIFF_BUDGET = 8 * 1024 * 1024;

/** One side of the diff: an event and its tree. */
export interface DiffSide {
  readonly event: EventId;
  readonly tree: Tree;
}

export interface FileDiffPage {
  readonly offset: number;
  readonly limit: number;
  /** Only this path's change. */
  readonly path?: string;
}

function rowOf(e: FileEntry): FileRow {
  return { path: e.path, mode: e.mode, size: e.size, hash: e.hash };
}

/** What is shown of `c`'s content; `budget.left` is what this response may still read. */
async function deltaOf(store: Store | AsyncStore, c: FileChange, budget: { left: number }): Promise<FileDelta> {
  const before = c.type === "add" ? undefined : c.before;
  const after = c.type === "delete" ? undefined : c.entry;
  if (before !== undefined && after !== undefined && before.hash === after.hash) return { kind: "same" };
  if ((before?.size ?? 0) > DIFF_FILE_MAX || (after?.size ?? 0) > DIFF_FILE_MAX) return { kind: "too-large", limit: DIFF_FILE_MAX };
  const need = (before?.size ?? 0) + (after?.size ?? 0);
  if (need > budget.left) return { kind: "omitted", budget: DIFF_BUDGET };
  budget.left -= need;
  const a = before === undefined ? undefined : await store.getBlob(before.hash);
  const b = after === undefined ? undefined : await store.getBlob(after.hash);
  const missing = [
    before !== undefined && a === undefined ? before.hash : undefined,
    after !== undefined && b === undefined ? after.hash : undefined,
  ];
  if (missing.some((h) => h !== undefined)) return { kind: "missing", hashes: missing.filter((h): h is string => h !== undefined) };
  const at = a === undefined ? "" : textOf(a);
  const bt = b === undefined ? "" : textOf(b);
  if (at === undefined || bt === undefined) return { kind: "binary" };
  const path = changePath(c);
  const u = unifiedDiff(
    at,
    bt,
    before === undefined ? "/dev/null" : headerPath("a/", path),
    after === undefined ? "/dev/null" : headerPath("b/", path),
  );
  return { kind: "text", unified: u.text, added: u.added, removed: u.removed, coarse: u.coarse };
}

/** `…/filediff`: the changed files from `from`'s workspace to `to`'s, in path order, one page of them. */
export async function fileDiff(store: Store | AsyncStore, from: DiffSide, to: DiffSide, page: FileDiffPage): Promise<FileDiffResponse> {
  let changes = diffWorkspaces(from.tree, to.tree);
  if (page.path !== undefined) changes = changes.filter((c) => changePath(c) === page.path);
  const budget = { left: DIFF_BUDGET };
  const rows: FileDiffRow[] = [];
  // In path order, one at a time: the byte budget is spent in that order.
  for (const c of changes.slice(page.offset, page.offset + page.limit))
    rows.push({
      path: changePath(c),
      change: c.type === "add" ? "added" : c.type === "modify" ? "modified" : "deleted",
      before: c.type === "add" ? null : rowOf(c.before),
      after: c.type === "delete" ? null : rowOf(c.entry),
      delta: await deltaOf(store, c, budget),
    });
  return { from: from.event, to: to.event, total: changes.length, offset: page.offset, changes: rows };
}
