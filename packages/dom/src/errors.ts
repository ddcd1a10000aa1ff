/**
 * Errors of the dom package (DOM-20). Expected failures carry a closed `code`; the message says
 * what was wrong, where (op index, line and column) and what to do about it.
 */

/** Every way a dom operation can fail. Closed: callers may switch over it exhaustively. */
export type DomErrorCode =
  /** An op, patch, node spec or option is malformed (wrong arity, wrong type, unknown kind). */
  | "bad-op"
  /** An op names an element the tree does not have. */
  | "unknown-node"
  /** The `after` anchor of `ins`/`mv` is not a child of the target parent. */
  | "bad-anchor"
  /** `mv` would put an element inside itself. */
  | "cycle"
  /** `rm`/`mv` of a fixed skeleton element. */
  | "fixed-node"
  /** A tag or attribute name is not a string or not allowed (syntax, reserved, prototype-polluting). */
  | "bad-name"
  /** A text or attribute value is not a string, or holds characters XML 1.0 cannot carry. */
  | "bad-text"
  /** An element would hold both child elements and text (DOM-4). */
  | "mixed-content"
  /** A restore-form `ins` names an id that is live, repeated, or out of range. */
  | "bad-id"
  /** `["set", 0, "hwm", n]` would lower the high-water mark below a live id. */
  | "bad-hwm"
  /** Malformed or unsupported XML input. */
  | "bad-xml"
  /** Malformed, inconsistent or foreign snapshot bytes. */
  | "bad-snapshot"
  /** A CSS selector that cannot be parsed or uses an unsupported feature. */
  | "bad-selector"
  /** Input over a configured limit (size, depth). */
  | "too-large";

/** Where in a patch or document an error was found. */
export interface DomErrorLocation {
  /** Index of the failing op within its patch. */
  readonly opIndex?: number;
  /** 1-based line and column in an XML document or a selector. */
  readonly line?: number;
  readonly column?: number;
}

/** The one error type the dom package throws for expected failures. */
export class DomError extends Error {
  override readonly name = "DomError";
  readonly code: DomErrorCode;
  readonly opIndex: number | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(code: DomErrorCode, message: string, where: DomErrorLocation = {}) {
    super(message);
    this.code = code;
    this.opIndex = where.opIndex;
    this.line = where.line;
    this.column = where.column;
  }
}

/** The value-returning form of a fallible operation (`tryApplyPatch`, …). */
export type DomResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: DomError };

/** Re-throws a DomError with the op index prefixed to its message (keeps code and position). */
export function atOp(error: DomError, opIndex: number): DomError {
  if (error.opIndex !== undefined) return error;
  return new DomError(error.code, `op ${opIndex}: ${error.message}`, { opIndex, line: error.line, column: error.column });
}
