/** Template errors (TP-20): the template's name, line and column, and what was expected. */
export class TemplateError extends Error {
  override readonly name = "TemplateError";
  constructor(
    message: string,
    readonly templateName: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${templateName}:${line}:${column}: ${message}`);
  }
}

/** Where a piece of a template starts. */
export interface Pos {
  readonly line: number;
  readonly column: number;
}
