/** Engine errors: closed codes, messages that say what, where and what to do. */
export type EngineErrorCode =
  /** An event kind this build does not know (written by a newer strata, or corrupt). */
  | "unknown-kind"
  /** An event payload that does not decode. */
  | "bad-event"
  /** A stored snapshot that cannot be read or does not match its chain. */
  | "bad-snapshot"
  /** An event, session or branch that does not exist. */
  | "not-found"
  /** A caller's input that cannot be used (the message says what and how to fix it). */
  | "bad-input"
  /** Stored data that should be there and is not (a missing blob, a damaged record). */
  | "corrupt"
  /**
   * A run asked to continue a session or branch that has no task (no user turn): the process that
   * created it stopped before the task was recorded, or it was forked before the task (AG-17).
   */
  | "no-task";

export class EngineError extends Error {
  override readonly name = "EngineError";
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
