/**
 * The workspace module's one error class (WS rules in docs/spec/agent.md). Expected conditions of
 * the disk — files vanishing, growing past the cap, unreadable — are not errors: a capture reports
 * them. These are the conditions a caller must act on: a tree whose `<workspace>` cannot be
 * trusted, a blob the store does not have, a checkout that would have to destroy something it
 * does not own, a misused change list.
 */

export type WorkspaceStateErrorCode =
  /** A `<file>` element is malformed or names an unsafe path (WS-2): the tree was not written by strata. */
  | "bad-entry"
  /** A change list does not fit the tree it is applied to (an add of a tracked path, a modify of an untracked one). */
  | "bad-change"
  /** The store lacks the bytes of a tracked file (WS-13): nothing was written. */
  | "missing-blob"
  /** Checkout would have to remove a file or directory that it does not own (WS-14): nothing was written. */
  | "path-blocked"
  /** The workspace directory is not a directory, or the file system refused an operation (the message names the path). */
  | "io";

export class WorkspaceStateError extends Error {
  override readonly name = "WorkspaceStateError";
  constructor(
    readonly code: WorkspaceStateErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Wraps a file-system error as `io`, naming what was being done and where. */
export function ioError(what: string, path: string, e: unknown): WorkspaceStateError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const detail = e instanceof Error ? e.message : String(e);
  return new WorkspaceStateError("io", `${what} ${JSON.stringify(path)} failed (${code ?? "error"}): ${detail}`, { cause: e });
}

/** The errno code of a file-system error, or undefined. */
export function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}
