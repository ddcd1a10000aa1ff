/**
 * Each branch's working directory (CLI-31 … CLI-34, decision 0027). The session tree records the
 * files (`<meta><workspace dir>` with one `<file>` per path); this module finds the directory a
 * line of history works in, derives a fork's own directory, finds the files at an event recorded
 * before the baseline, and records the events the CLI adds to keep the record honest: a fork's
 * directory (`workspace.dir`, or `workspace.baseline` when the fork point had no files yet) and
 * a change made outside the agent (`workspace.outside`), so a restore never destroys anything.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  addSkippedDiags,
  applyFileChanges,
  type Capture,
  diffWorkspaces,
  ensureWorkspace,
  IgnoreRules,
  LABEL,
  readInputs,
  WorkspaceTracker,
  WS,
  WS_LABEL,
  workspaceDir,
  workspaceElement,
} from "@strata/agent";
import { Tree, type TreeDraft } from "@strata/dom";
import { loadTree } from "@strata/engine";
import { type AsyncStore, type EventId, type EventMeta, isAsyncStore, type Store } from "@strata/store";
import { CliError, EXIT, UsageError } from "./errors.ts";
import { type AnySession, settled, wholeTreeAt } from "./port.ts";

/** Labels of the workspace's own events (the loop records a call's file changes in its outcome event). */
export const WS_EVENT = Object.freeze({
  ...WS_LABEL,
  /** A branch's own working directory recorded (a fork, or a rewind past the event that recorded it). */
  dir: LABEL.workspaceDir,
} as const);

/**
 * The directory a line of history works in, as its tree records it: `<workspace dir>`, else the
 * `workspace` setting the run recorded (a session before its baseline), else undefined.
 */
export function lineDir(tree: Tree): string | undefined {
  return workspaceDir(tree) ?? readInputs(tree).settings.workspace;
}

/** A path as the user best reads it: relative to the current directory when inside it. */
export function shownPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? path : rel;
}

/** What is at `dir`: nothing, an empty directory, a directory with entries, or something else. */
export function dirState(dir: string): "missing" | "empty" | "full" | "not-dir" {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dir);
  } catch {
    return "missing";
  }
  if (!st.isDirectory()) return "not-dir";
  return readdirSync(dir).length === 0 ? "empty" : "full";
}

/**
 * Checks that `dir` may receive a fresh copy of a workspace: it must not exist or be empty,
 * unless `force`; never a file. A usage error (exit 2) otherwise, before anything is opened.
 */
export function checkFreshDir(dir: string, option: string, force: boolean): void {
  const state = dirState(dir);
  if (state === "not-dir") throw new UsageError(`${option} ${dir} is a file, not a directory; give a new or empty directory`);
  if (state === "full" && !force)
    throw new UsageError(
      `${option} ${dir} is not empty; give a new or empty directory${option === "--to" ? ", or --force to make it hold exactly the workspace (files the record does not have are removed)" : ""}`,
    );
}

/**
 * The default working directory of a new branch: `<home>/workspaces/<handle>/<branch>` (a branch
 * name's `/` makes subdirectories; `home` is `ctx.home`, the database's directory), with `-2`,
 * `-3` … appended when that one is taken.
 */
export function defaultBranchDir(home: string, handle: string, branch: string): string {
  const root = join(home, "workspaces", handle);
  const base = join(root, ...branch.split("/"));
  // Branch names have no "." or ".." parts (BRANCH_NAME); a name from an older file is checked here too.
  if (!within(root, base) || base === root)
    throw new CliError(`the branch name ${JSON.stringify(branch)} would put its working directory outside ${root}; pass --workspace DIR`);
  for (let n = 1; ; n++) {
    const dir = n === 1 ? base : `${base}-${n}`;
    const state = dirState(dir);
    if (state === "missing" || state === "empty") return dir;
  }
}

/** True when `inner` is `outer` or lies inside it. */
function within(outer: string, inner: string): boolean {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Refuses a new branch directory that contains the source branch's directory, or lies inside it
 * where the source would record it as its own files: not in its `.strata`, not in the
 * database's `workspaces/` (which every tracker leaves out), and not ignored there.
 */
export function checkApart(dir: string, sourceDir: string | undefined, home: string): void {
  if (sourceDir === undefined) return;
  if (within(dir, sourceDir))
    throw new UsageError(`--workspace ${dir} contains the source branch's directory ${sourceDir}; give a directory of its own`);
  if (!within(sourceDir, dir) || within(join(home, "workspaces"), dir)) return;
  const rel = relative(sourceDir, dir).split(sep).join("/");
  if (rel.split("/")[0] === ".strata") return;
  const rules = IgnoreRules.load(sourceDir);
  const parts = rel.split("/");
  for (let i = 1; i <= parts.length; i++) if (rules.ignores(parts.slice(0, i).join("/"), true)) return;
  throw new UsageError(
    `--workspace ${dir} is inside the source branch's directory ${sourceDir}, which would record the fork's files as its own; give a directory outside it (or ignore it there in .strataignore)`,
  );
}

/**
 * A tracker of `dir` whose stat index is kept between processes in the database's directory
 * (`index/`) — for a PostgreSQL URL, in the user's cache directory (`$XDG_CACHE_HOME/strata/index`,
 * else `~/.cache/strata/index`) — so a resume hashes only what changed since the last process looked.
 */
export function trackerFor(dbPath: string, dir: string, store: Store | AsyncStore): WorkspaceTracker {
  const key = createHash("sha256").update(resolve(dir)).digest("hex").slice(0, 20);
  const folder = /^postgres(ql)?:\/\//i.test(dbPath)
    ? join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "strata", "index")
    : join(dirname(dbPath), "index");
  try {
    mkdirSync(folder, { recursive: true });
  } catch {
    // a directory nobody may write: every process hashes once instead
    return new WorkspaceTracker(dir, store);
  }
  return new WorkspaceTracker(dir, store, { indexFile: join(folder, `${key}.json`) });
}

/**
 * The tree whose `<workspace>` describes the files at `event` of the line ending at `head`: the
 * tree at `event` when it records them; else the first baseline after it on that line — before
 * the baseline no tool that writes had run, so the files were those it recorded. Undefined when
 * the line never recorded its files.
 */
export async function filesAt(
  store: Store | AsyncStore,
  head: EventId,
  event: EventId,
  tree: Tree,
): Promise<{ tree: Tree; event: EventId } | undefined> {
  // Over the asynchronous port the tree handed back is loaded whole (its files are read next).
  if ((await settled(() => workspaceElement(tree))) !== undefined)
    return { tree: isAsyncStore(store) ? await loadTree(tree) : tree, event };
  const meta = await store.eventMeta(event);
  if (meta === undefined) return undefined;
  // The baselines after `event`, one index lookup each (a line that never recorded its files costs
  // one lookup, not a read of its history: issue 14).
  let e = await store.firstLabeled(head, WS_EVENT.baseline, meta.depth);
  while (e !== undefined) {
    const at = await wholeTreeAt(store, e.id);
    if (workspaceElement(at) !== undefined) return { tree: at, event: e.id };
    e = await store.firstLabeled(head, WS_EVENT.baseline, e.depth);
  }
  return undefined;
}

/**
 * Writes into `d` the branch's own directory: `dir` on `<workspace>` when the tree records the
 * files already; else the files of `source` — the line's baseline (a tree) or a fresh capture of
 * the source directory — recorded with `dir`; else an empty `<workspace dir>` (the directory is
 * new and empty). The event's label is {@link branchDirLabel}.
 */
export function recordBranchDir(d: TreeDraft, dir: string, source: Tree | Capture | undefined): void {
  const fresh = workspaceElement(d.tree) === undefined;
  const cap = source instanceof Tree ? workspaceElement(source)?.attrs[WS.cap] : undefined;
  ensureWorkspace(d, { [WS.dir]: dir, ...(fresh && cap !== undefined ? { [WS.cap]: cap } : {}) });
  if (!fresh) return;
  if (source instanceof Tree) applyFileChanges(d, diffWorkspaces(undefined, source));
  else if (source !== undefined) applyCapture(d, source);
}

/** The label of the event {@link recordBranchDir} writes on `tree`: a baseline when the tree had no files recorded. */
export function branchDirLabel(tree: Tree): string {
  return workspaceElement(tree) === undefined ? WS_EVENT.baseline : WS_EVENT.dir;
}

/** Writes a capture into a draft: its file changes, and a `<diag>` under `<workspace>` for each file left out. */
export function applyCapture(d: TreeDraft, capture: Capture): void {
  applyFileChanges(d, capture.changes);
  if (capture.skipped.length > 0) addSkippedDiags(d, ensureWorkspace(d), capture.skipped);
}

/**
 * Records what changed in the branch's directory outside the agent as its own event
 * (`workspace.outside`), so a restore that follows overwrites nothing unrecorded (L5). Returns the
 * event, or undefined when the directory holds exactly what the tree says.
 */
export async function recordOutside(session: AnySession, tracker: WorkspaceTracker, by: string): Promise<EventMeta | undefined> {
  const capture = await tracker.capture(session.durableTree);
  if (capture.changes.length === 0) return undefined;
  return await session.commit((d) => applyCapture(d, capture), { label: WS_EVENT.outside, by });
}

/** How many paths a message lists (the `--json` error lists them all). */
const SHOWN = 20;

/**
 * The refusal of a restore that would overwrite changes made outside the agent (exit 3): the
 * paths, and the two ways on.
 */
export function outsideRefusal(doing: string, dir: string, event: EventId, paths: readonly string[]): CliError {
  const one = paths.length === 1;
  const list = paths
    .slice(0, SHOWN)
    .map((p) => `  ${p}`)
    .join("\n");
  const more = paths.length > SHOWN ? `\n  … and ${paths.length - SHOWN} more` : "";
  return new CliError(
    `cannot ${doing}: ${paths.length} ${one ? "path" : "paths"} in ${dir} changed outside the agent since event ${event}, and restoring the files would overwrite ${one ? "it" : "them"}:\n${list}${more}\nundo ${one ? "that change" : "those changes"}, or give --force to record ${one ? "it" : "them"} first as an event of ${one ? "its" : "their"} own (\`strata checkout\` of that event brings ${one ? "it" : "them"} back)`,
    EXIT.conflict,
    { paths: [...paths], dir },
  );
}

/** True when `dir` exists as a directory. */
export function isDir(dir: string): boolean {
  return existsSync(dir) && dirState(dir) !== "not-dir";
}
