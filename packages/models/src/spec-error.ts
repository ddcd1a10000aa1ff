/**
 * What can be wrong with a model spec before anything is created (MO-16). Closed codes, so a caller
 * (the CLI) can pick an exit code; the message says what, where and how to fix it.
 */
export type ModelSpecProblemCode =
  /** The provider before the colon is not `scripted` or `openai`. */
  | "unknown-provider"
  /** `scripted:` with no file after it. */
  | "script-path-missing"
  /** The script file does not exist. */
  | "script-not-found"
  /** The script file exists but cannot be read (permissions, a directory …). */
  | "script-unreadable"
  /** The script file, or one reply in it, is over its size limit. */
  | "script-too-large"
  /** The script is not JSON, or not a valid script. */
  | "script-invalid"
  /** `openai:` with no model name and no `OPENAI_MODEL`. */
  | "model-name-missing"
  /** `OPENAI_BASE_URL` (or the configured base URL) is not a usable http(s) URL. */
  | "base-url-invalid"
  /** The server is not on this machine or a private network, and no `OPENAI_API_KEY` is set. */
  | "api-key-missing"
  /** `OPENAI_API_KEY` holds characters an HTTP header cannot carry. */
  | "api-key-invalid";

export interface ModelSpecProblem {
  readonly code: ModelSpecProblemCode;
  readonly message: string;
  /** The file the problem is about, when there is one (absolute). */
  readonly path?: string;
}

/** Thrown by `createModel` and `openAIConfigFromEnv` for a spec that cannot be used. */
export class ModelSpecError extends Error {
  override readonly name = "ModelSpecError";
  readonly code: ModelSpecProblemCode;
  constructor(readonly problems: readonly [ModelSpecProblem, ...ModelSpecProblem[]]) {
    super(problems.map((p) => p.message).join("; "));
    this.code = problems[0].code;
  }
}
