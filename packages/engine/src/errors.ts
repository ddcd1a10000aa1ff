/** Engine errors: closed codes, messages that say what, where and what to do. */
export type EngineErrorCode =
  /** An event kind this build does not know (written by a newer strata, or corrupt). */
  | "unknown-kind"
  /** An event payload that does not decode. */
  | "bad-event"
  /** A stored snapshot that cannot be read or does not match its chain. */
  | "bad-snapshot"
  /** An event, session, branch or element that does not exist. */
  | "not-found"
  /**
   * A `Session` object this process closed (or whose creation was rolled back) was used again:
   * open the session again (`Session.open`). Nothing stored is wrong.
   */
  | "closed"
  /**
   * A stream writer was used after its stream ended (EN-27): a commit removed its element or gave
   * it children, the session moved to another line of history, or the session was closed. The
   * message says which; text appended before the end is durable.
   */
  | "stream-ended"
  /** A replica was read, or fed an event, before it received a snapshot frame (EN-30). */
  | "not-ready"
  /** A caller's input that cannot be used (the message says what and how to fix it). */
  | "bad-input"
  /** Stored data that should be there and is not (a missing blob, a damaged record). */
  | "corrupt"
  /**
   * A run asked to continue a session or branch that has no task (no user turn): the process that
   * created it stopped before the task was recorded, or it was forked before the task (AG-17).
   */
  | "no-task"
  /**
   * Over the asynchronous port (decision 0037), a tree read synchronously reached a page or a text
   * that has not been fetched yet: load the tree first (`await session.load()`, `await loadTree(tree)`).
   * Nothing stored is wrong; the engine's own operations load what they touch.
   */
  | "not-loaded";

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
