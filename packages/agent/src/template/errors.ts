/**
 * Template errors (TP-20): the template's name, line and column, what was expected, and a closed
 * code saying what kind of failure it is (TP-23). Nothing but a `TemplateError` leaves
 * `renderTemplate` or `checkTemplate`.
 */

/**
 * What kind of failure a `TemplateError` is:
 * - `syntax`: the template does not parse (an unclosed tag, an unknown tag, a bad expression);
 * - `render`: it parses but does not render on this tree (printing undefined, adding a list to
 *   a number, a bad argument to a built-in, an invalid selector);
 * - `options`: the render options are not valid (a variable that is not plain data, a limit that
 *   is not a whole number ≥ 0);
 * - `limit`: a bound of TP-22/TP-23 was reached; `limit` names which one.
 */
export type TemplateErrorCode = "syntax" | "render" | "options" | "limit";

/**
 * The bounds of TP-22 and TP-23. `template-size`, `depth` (expression, block and value nesting)
 * and `cache` never depend on the tree; the others are counted during one render.
 */
export type TemplateLimit =
  | "template-size"
  | "depth"
  | "output"
  | "iterations"
  | "calls"
  | "queries"
  | "steps"
  | "string-length"
  | "list-length"
  | "allocation";

export class TemplateError extends Error {
  override readonly name = "TemplateError";
  constructor(
    message: string,
    readonly templateName: string,
    readonly line: number,
    readonly column: number,
    readonly code: TemplateErrorCode = "render",
    /** Which bound was reached, when `code` is `limit`. */
    readonly limit?: TemplateLimit,
  ) {
    super(`${templateName}:${line}:${column}: ${message}`);
  }
}

/**
 * A bound reached somewhere below the evaluator (a built-in, the budget); the evaluator turns it
 * into a `TemplateError` at the position of the expression it was evaluating.
 */
export class LimitError extends Error {
  constructor(
    readonly limit: TemplateLimit,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A piece of the template (or of what it computed) quoted in a message, cut to `max` characters:
 * an error is recorded in the session (`prompt-error`), so a million-character identifier or
 * selector must not make a million-character message.
 */
export function brief(s: string, max = 60): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length} characters)`;
}

/** Where a piece of a template starts. */
export interface Pos {
  readonly line: number;
  readonly column: number;
}
