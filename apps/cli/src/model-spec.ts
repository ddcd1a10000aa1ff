/**
 * Exit codes for a model spec that cannot be used (CLI-2, MO-16). `@strata/models` reports the
 * problem with a closed code (`ModelSpecError`); the CLI decides what kind of mistake it is: a
 * malformed value, a missing setting, or a script file that is missing or unreadable is a usage
 * error (2), like every other input file named on the command line; a script that exists but is
 * too large or invalid is a failure (1), like every other damaged or foreign file.
 */
import { EXIT } from "./errors.ts";

const USAGE = new Set([
  "script-not-found",
  "script-unreadable",
  "unknown-provider",
  "script-path-missing",
  "model-name-missing",
  "base-url-invalid",
  "api-key-missing",
  "api-key-invalid",
]);

/** The code of a model spec problem, when `e` is one (matched by name and code, not by class identity). */
export function modelSpecCode(e: unknown): string | undefined {
  if (!(e instanceof Error) || e.name !== "ModelSpecError") return undefined;
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** `[exit code, message]` for a model spec problem; undefined for any other error. */
export function modelSpecExit(e: unknown): [number, string] | undefined {
  const code = modelSpecCode(e);
  if (code === undefined) return undefined;
  const message = `cannot use the model: ${(e as Error).message}`;
  // anything else (a script that is too large or invalid) is a failure
  return [USAGE.has(code) ? EXIT.usage : EXIT.failure, message];
}
