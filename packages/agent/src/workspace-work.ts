/**
 * The file side of the lifecycle operation (L7, WS-28). Rewind, fork and resume stay one
 * operation of the session core (`lifecycleWork`: what to terminate, spawn, retain); the files
 * they imply are computed here by the same kind of diff — of the two trees' workspace records —
 * so the CLI (or any driver) restores files from one list, next to the lifecycle work.
 */
import type { Tree } from "@strata/dom";
import { diffWorkspaces, type FileChange, workspaceDir, workspaceElement } from "./workspace/files.ts";

export interface WorkspaceWork {
  /**
   * The file changes that turn a directory holding `from`'s files into one holding `to`'s,
   * sorted by path: an add or modify is written from the blob store (`entry`), a delete removed.
   * Empty when `to` records no files (see `recorded`) — never "delete everything".
   */
  readonly restore: readonly FileChange[];
  /** `to`'s `<workspace dir>`: the directory its line works in, if recorded. */
  readonly dir: string | undefined;
  /**
   * Whether `to` records the files. When it does not, `to` precedes its line's baseline: the
   * files then were the ones that baseline recorded (no tool had written before it), so pass the
   * baseline's tree as `to` to restore them; with no baseline on the line nothing is known and
   * nothing is restored.
   */
  readonly recorded: boolean;
}

/**
 * The file restorations a move from `from` to `to` implies (a rewind from the head to an earlier
 * event, a fork at an event, a branch switch; `from` undefined: a resume into an empty directory,
 * every file written). The caller checks first that the directory holds `from`'s files
 * (`outsideChanges`) and applies the list with `checkoutWorkspace(to, dir, store, { from })`.
 */
export function workspaceWork(from: Tree | undefined, to: Tree): WorkspaceWork {
  const dir = workspaceDir(to);
  if (workspaceElement(to) === undefined) return { restore: [], dir, recorded: false };
  return { restore: diffWorkspaces(from, to), dir, recorded: true };
}
