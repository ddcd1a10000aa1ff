/**
 * The strata side of the workspace benchmarks, through the public API only: a real SQLite store
 * (`openStore`), a real `Session`, and `@strata/agent`'s `WorkspaceTracker` / `applyFileChanges`
 * / `checkoutWorkspace`. A benchmarked tool call is one event carrying the capture's file changes
 * (what the loop puts in the call's outcome event, L2).
 */
import { applyFileChanges, type Capture, checkoutWorkspace, type FileChange, WorkspaceTracker, workspaceFiles } from "@strata/agent";
import type { Tree } from "@strata/dom";
import { Session } from "@strata/engine";
import type { EventId, EventMeta, SqliteStore } from "@strata/store";
import { openStore } from "@strata/store";
import type { WorkspaceModel } from "./generate.ts";
import type { CallEffect } from "./mutate.ts";

export interface StrataWorkspace {
  readonly store: SqliteStore;
  readonly session: Session;
  readonly tracker: WorkspaceTracker;
}

/** Opens a fresh store file and session and a tracker over `root`. */
export function openWorkspace(dbPath: string, root: string): StrataWorkspace {
  const store = openStore(dbPath);
  const session = Session.create(store, { title: "workspace bench" });
  return { store, session, tracker: new WorkspaceTracker(root, store) };
}

/** Commits a capture's changes as one event. */
export function commitChanges(ws: StrataWorkspace, changes: readonly FileChange[], label: string): EventMeta {
  return ws.session.commit((d) => applyFileChanges(d, changes), { label });
}

/** The baseline: a full scan (timed by the caller) and its event. */
export async function baseline(ws: StrataWorkspace): Promise<Capture> {
  return ws.tracker.baseline(ws.session.tree);
}

/**
 * Checks that a capture found exactly the tracked paths a call changed (a benchmark of a capture
 * that misses changes, or reports ignored ones, would measure the wrong thing): throws otherwise.
 */
export function checkCapture(capture: Capture, effect: CallEffect, call: number): void {
  const got = capture.changes
    .map((c) => (c.type === "delete" ? c.before.path : c.entry.path))
    .sort()
    .join("\n");
  const want = effect.paths.join("\n");
  if (got !== want)
    throw new Error(
      `call ${call}: the capture reported ${capture.changes.length} changed paths, the call changed ${effect.paths.length}:\n` +
        `  capture: ${got.replace(/\n/g, ", ")}\n  changed: ${want.replace(/\n/g, ", ")}`,
    );
}

/** Checks that the tree's workspace lists exactly the model's tracked files with their sizes and modes. */
export function checkTree(tree: Tree, model: WorkspaceModel, where: string): void {
  const files = workspaceFiles(tree);
  const problems: string[] = [];
  for (const [path, f] of model.files) {
    const e = files.get(path);
    if (e === undefined) problems.push(`${path}: missing`);
    else if (e.size !== f.size || e.mode !== (f.exec ? "755" : "644"))
      problems.push(`${path}: size ${e.size} mode ${e.mode}, expected ${f.size} ${f.exec ? "755" : "644"}`);
  }
  for (const path of files.keys()) if (!model.files.has(path)) problems.push(`${path}: tracked but not in the workspace (ignored?)`);
  if (problems.length > 0)
    throw new Error(
      `${where}: the tree's workspace differs from the files on disk (${problems.length}): ${problems.slice(0, 10).join("; ")}`,
    );
}

/** Materializes the tree of `event` into `dir` (the directory held `from` before, when given). */
export async function checkoutAt(ws: StrataWorkspace, event: EventId, dir: string, from?: Tree): Promise<Tree> {
  const tree = ws.session.at(event);
  await checkoutWorkspace(tree, dir, ws.store, from === undefined ? {} : { from });
  return tree;
}

/** Bytes of the database file (after a WAL checkpoint) and of the blob table. */
export function storeBytes(store: SqliteStore): { file: number; blobs: number; blobCount: number } {
  const db = store.database;
  db.pragma("wal_checkpoint(TRUNCATE)");
  const pages = Number(db.pragma("page_count", { simple: true }));
  const size = Number(db.pragma("page_size", { simple: true }));
  const row = db.prepare("SELECT coalesce(sum(size), 0) AS bytes, count(*) AS n FROM blobs").get() as { bytes: number; n: number };
  return { file: pages * size, blobs: Number(row.bytes), blobCount: Number(row.n) };
}

/** Sizes of the blobs with these hashes that the store holds (for "bytes of file content stored"). */
export function blobSizes(store: SqliteStore, hashes: Iterable<string>): number {
  const get = store.database.prepare("SELECT size FROM blobs WHERE hash = ?").pluck();
  let n = 0;
  for (const h of hashes) n += Number(get.get(Buffer.from(h, "hex")) ?? 0);
  return n;
}
