/**
 * Who owns a working directory, and how a branch gets one of its own (CLI-31, CLI-34). Two
 * branches never work in one directory: a fork gets its own when it is made; a branch that finds
 * the directory its head records owned by another — the head a rewind kept (`rewound/main/57`
 * records main's directory), or a fork made before forks had directories — gets its own when it
 * is resumed, recorded by one event and checked out from its head.
 */
import { type Capture, checkoutWorkspace } from "@strata/agent";
import type { Tree } from "@strata/dom";
import type { AsyncStore, BranchInfo, EventId, EventMeta, Store } from "@strata/store";
import type { AnySession } from "./port.ts";
import { branchDirLabel, filesAt, isDir, recordBranchDir, trackerFor } from "./workspace.ts";

/** The files a new line of history starts from, and the event that recorded them (if one did). */
export interface StartingFiles {
  readonly source: Tree | Capture | undefined;
  /** The event whose record the files are (the point itself, or the line's baseline); undefined for a fresh capture or nothing. */
  readonly recorded: EventId | undefined;
}

/**
 * The files at `event` (tree `tree`) of the line ending at `head`: recorded there, else the line's
 * baseline after it, else `sourceDir` as it is now (a capture; its bytes go to the blob store).
 */
export async function startingFiles(
  store: Store | AsyncStore,
  dbPath: string,
  head: EventId,
  event: EventId,
  tree: Tree,
  sourceDir: string | undefined,
): Promise<StartingFiles> {
  const recorded = await filesAt(store, head, event, tree);
  if (recorded !== undefined) return { source: recorded.tree, recorded: recorded.event };
  if (sourceDir !== undefined && isDir(sourceDir))
    return { source: await trackerFor(dbPath, sourceDir, store).baseline(tree), recorded: undefined };
  return { source: undefined, recorded: undefined };
}

/** The rank of a branch's claim on a directory: the session's first line, then forks, then heads a rewind kept. */
function rank(b: BranchInfo): number {
  return b.origin === "genesis" ? 0 : b.origin === "fork" ? 1 : 2;
}

/** Another branch of a session and the directory its head records. */
export interface BranchDir {
  readonly branch: BranchInfo;
  readonly dir: string | undefined;
}

/**
 * Another branch of the session that owns `dir` before branch `me` does: its head records `dir`
 * too, and it ranks before it (first line, forks, kept heads; the older first among equals).
 */
export function dirOwner(me: BranchInfo, others: readonly BranchDir[], dir: string): string | undefined {
  for (const { branch: b, dir: d } of others) if (ranksBefore(b, me) && d === dir) return b.name;
  return undefined;
}

/** Whether branch `b`'s claim on a directory comes before `me`'s (see {@link dirOwner}). */
export function ranksBefore(b: BranchInfo, me: BranchInfo): boolean {
  return rank(b) < rank(me) || (rank(b) === rank(me) && (b.created < me.created || (b.created === me.created && b.name < me.name)));
}

/**
 * Gives `session`'s branch `dir` as its own: one event records it (with the head's files, or the
 * line's baseline, or a capture of `sharedDir` when the head records none), then the files are
 * checked out there. The caller holds the branch's lease. Returns the event and the file count.
 */
export async function takeOwnDir(
  session: AnySession,
  dbPath: string,
  dir: string,
  sharedDir: string | undefined,
): Promise<{ event: EventMeta; fileCount: number }> {
  const head = session.durableTree;
  const { source } = await startingFiles(session.store, dbPath, session.head.id, session.head.id, head, sharedDir);
  const event = await session.commit((d) => recordBranchDir(d, dir, source), { label: branchDirLabel(head), by: "strata resume" });
  const report = await checkoutWorkspace(session.durableTree, dir, session.store);
  return { event, fileCount: report.written + report.unchanged };
}
