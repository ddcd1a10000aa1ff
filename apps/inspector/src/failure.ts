/**
 * What a failed request answers (IN-6, IN-19): JSON `{"error": {"status", "message", …}}` with a
 * status that says whose problem it is. One request's failure is that request's answer and
 * nothing more: the server goes on serving every other request.
 */
import { TemplateError, WorkspaceStateError } from "@strata/agent";
import { DomError } from "@strata/dom";
import { EngineError } from "@strata/engine";
import { StoreError } from "@strata/store";
import type { ErrorBody } from "./protocol.ts";

/** A refusal with an HTTP status, thrown by the server's own checks. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The answer for an error: 400 bad input (event id, selector), 404 unknown session, event, branch
 * or element, 413 a file too large to send, 422 a recorded template that cannot be rendered at that
 * event (its name, line and column) or a `<workspace>` record that cannot be read, 500 a damaged store or anything unexpected (`internal error: …`).
 */
export function errorBody(e: unknown): ErrorBody {
  if (e instanceof HttpError) return { status: e.status, message: e.message };
  if (e instanceof TemplateError)
    return {
      status: 422,
      code: "template-error",
      message: `the session's ${e.templateName} template cannot be rendered here: ${e.message}`,
      template: e.templateName,
      line: e.line,
      column: e.column,
      reason: e.code,
      ...(e.limit !== undefined ? { limit: e.limit } : {}),
    };
  if (e instanceof WorkspaceStateError && e.code === "bad-entry")
    return {
      status: 422,
      code: "workspace-error",
      message: `the session's workspace record cannot be read here: ${e.message}`,
      reason: e.code,
    };
  if (e instanceof DomError && e.code === "bad-selector") return { status: 400, message: e.message };
  if ((e instanceof EngineError || e instanceof StoreError) && e.code === "not-found") return { status: 404, message: e.message };
  if (e instanceof EngineError && e.code === "bad-input") return { status: 400, message: e.message };
  if (e instanceof EngineError || e instanceof StoreError || e instanceof DomError) return { status: 500, message: e.message };
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return { status: 500, message: `internal error: ${message}` };
}
