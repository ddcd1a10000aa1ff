/**
 * File effects in the loop (WS-20 … WS-27; decision 0027): a run given a `WorkspaceTracker`
 * records the files its tools change as patches in the same log as the conversation.
 *
 *   before the first call whose tool has `effects` starts   → the baseline, one event (WS-21),
 *                                                            or the changes made outside the
 *                                                            agent since the tree (WS-25)
 *   after its handler, whatever the outcome                  → a capture, whose file ops ride in
 *                                                            the call's settle event (WS-22)
 *
 * The tracker compares the disk with the tree it is given (the tree is the truth), so what a
 * call's event records is what changed on disk while it ran. A run without a tracker records no
 * file and captures nothing (WS-27). This is the loop's side; the record itself, the stat index
 * and checkout are `workspace/`.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { NodeId, TreeDraft } from "@strata/dom";
import { appendDiags, type Diag } from "./execute.ts";
import { type AnySession, commit } from "./port.ts";
import type { ToolSpec } from "./tools/registry.ts";
import { ATTR, DIAG, LABEL } from "./vocabulary.ts";
import { WorkspaceStateError } from "./workspace/errors.ts";
import {
  applyFileChanges,
  ensureWorkspace,
  type FileChange,
  type SkippedFile,
  WS,
  workspaceDir,
  workspaceElement,
} from "./workspace/files.ts";
import type { WorkspaceTracker } from "./workspace/tracker.ts";

/** What a call's settle event records of the files: the ops' changes, and diagnostics for the call. */
export interface CallFiles {
  readonly changes: readonly FileChange[];
  readonly diags: readonly Diag[];
}

/** Whether a call to `spec` may change the workspace's files (WS-20). */
export function hasEffects(spec: Pick<ToolSpec, "effects"> | undefined): boolean {
  return spec?.effects === "workspace";
}

/** `p` resolved through symlinks when it exists (two spellings of one directory compare equal). */
function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** The `<diag>` of a file the record leaves out. */
function skippedDiag(s: SkippedFile, cap: number): Diag {
  const reason = s.reason ?? "too-large";
  const why =
    reason === "too-large"
      ? `it has ${s.size} bytes, over the ${cap}-byte cap of the workspace record`
      : reason === "unreadable"
        ? "it could not be read"
        : "its name cannot be stored in the session tree";
  return {
    kind: DIAG.workspaceSkipped,
    attrs: { [ATTR.path]: s.path, [ATTR.size]: String(s.size), [ATTR.reason]: reason },
    text: `${s.path} is not in the workspace record: ${why}; a restore leaves it as it is`,
  };
}

/**
 * One run's workspace (shared by its phases: reconcile, then the loop). It remembers whether the
 * directory was compared with the tree yet in this run, and which skipped files it reported, so
 * a file over the cap is reported once per run (and again when its size or reason changes), not
 * under every call.
 */
export class LoopWorkspace {
  #checked = false;
  readonly #reported = new Map<string, string>();

  constructor(readonly tracker: WorkspaceTracker) {}

  /**
   * Before a call with effects starts (before its `running`): with no `<workspace>` in the tree,
   * the baseline as one event (WS-21); otherwise, once per run, what changed outside the agent
   * since the tree, as one `workspace.outside` event (and a new working directory as
   * `workspace.dir`: WS-25). `own`: the call was running before (a resume settles or re-runs
   * it), so what changed since the tree is its own effect, recorded with it, not an outside
   * change; a new working directory is still recorded first (`workspace.dir`). Throws `WorkspaceStateError` when the directory cannot be read (nothing is written).
   */
  async prepare(session: AnySession, own: boolean): Promise<void> {
    if (workspaceElement(session.durableTree) === undefined) {
      await this.#baseline(session);
      this.#checked = true;
      return;
    }
    if (this.#checked) return;
    this.#checked = true;
    const tree = session.durableTree;
    const moved = real(workspaceDir(tree) ?? "") !== real(this.tracker.root);
    if (own) {
      // The changes are the resumed call's own (settled with it); a new directory is still the run's.
      if (moved) await commit(session, (d) => void this.#ensure(d), { label: LABEL.workspaceDir });
      return;
    }
    const { changes, skipped } = await this.tracker.capture(tree);
    if (changes.length === 0 && !moved) return;
    await this.#record(session, changes, skipped, changes.length > 0 ? LABEL.workspaceOutside : LABEL.workspaceDir);
  }

  /**
   * After a call's handler (whatever its outcome): the capture as the settle event's file
   * changes (WS-22), with a `<diag>` for each file newly left out (WS-23). A capture the file
   * system refuses (the directory is gone) is a `workspace-error` diag, not a throw: the outcome
   * is recorded, and the next capture records what changed (WS-24). Store failures propagate.
   */
  async settle(session: AnySession): Promise<CallFiles> {
    try {
      const { changes, skipped } = await this.tracker.capture(session.durableTree);
      return { changes, diags: this.#fresh(skipped) };
    } catch (error) {
      if (!(error instanceof WorkspaceStateError)) throw error;
      return {
        changes: [],
        diags: [
          {
            kind: DIAG.workspaceError,
            attrs: { code: error.code },
            text: `the workspace could not be captured after this call, so its file changes are not recorded with it (${error.message}); the next capture records them`,
          },
        ],
      };
    }
  }

  async #baseline(session: AnySession): Promise<void> {
    const { changes, skipped } = await this.tracker.baseline(session.durableTree);
    await this.#record(session, changes, skipped, LABEL.workspaceBaseline);
  }

  /** One event of the workspace's own: the directory's record, `changes`, and a diag per newly skipped file. */
  async #record(session: AnySession, changes: readonly FileChange[], skipped: readonly SkippedFile[], label: string): Promise<void> {
    const diags = this.#fresh(skipped);
    await commit(
      session,
      (d) => {
        const ws = this.#ensure(d);
        applyFileChanges(d, changes);
        appendDiags(d, ws, diags);
      },
      { label },
    );
  }

  /** `<workspace dir cap>` of this run's directory in the draft (created or updated). */
  #ensure(d: TreeDraft): ReturnType<typeof ensureWorkspace> {
    const recorded = workspaceDir(d.tree);
    // The same directory spelled another way keeps its recorded spelling.
    const dir = recorded !== undefined && real(recorded) === real(this.tracker.root) ? recorded : this.tracker.root;
    return ensureWorkspace(d, { [WS.dir]: dir, [WS.cap]: String(this.tracker.maxFileBytes) });
  }

  /** The skipped files not reported yet in this run (or reported with another size or reason). */
  #fresh(skipped: readonly SkippedFile[]): Diag[] {
    const out: Diag[] = [];
    const now = new Set<string>();
    for (const s of skipped) {
      now.add(s.path);
      const key = `${s.size} ${s.reason ?? "too-large"}`;
      if (this.#reported.get(s.path) === key) continue;
      this.#reported.set(s.path, key);
      out.push(skippedDiag(s, this.tracker.maxFileBytes));
    }
    // A file no longer skipped is reported again if it is skipped again later.
    for (const p of [...this.#reported.keys()]) if (!now.has(p)) this.#reported.delete(p);
    return out;
  }
}

/** Writes a call's file changes and their diagnostics into its settle event's draft. */
export function writeCallFiles(d: TreeDraft, call: NodeId, files: CallFiles | undefined): void {
  if (files === undefined) return;
  applyFileChanges(d, files.changes);
  appendDiags(d, call, files.diags);
}
