/** What a failed command prints and exits with: one message per condition, one exit code (CLI-2, decision 0026). */
import { WorkspaceStateError } from "@strata/agent";
import { DomError } from "@strata/dom";
import { EngineError } from "@strata/engine";
import { HeadConflict, LeaseLost, StoreError } from "@strata/store";
import { NoDatabase } from "./context.ts";
import { CliError, EXIT, UsageError } from "./errors.ts";
import { version } from "./help.ts";
import { describeHolder } from "./lease.ts";
import { modelSpecExit } from "./model-spec.ts";

const DAMAGE = new Set(["bad-event", "bad-snapshot", "corrupt"]);

/** The exit code and message of a failure. */
export function failure(e: unknown, dbPath: string | undefined, debug: boolean): [number, string] {
  if (e instanceof UsageError) return [EXIT.usage, e.message];
  if (e instanceof HeadConflict) return [EXIT.conflict, e.message];
  if (e instanceof LeaseLost)
    return [
      EXIT.conflict,
      `this process no longer drives ${e.session}@${e.branch}: ${e.holder === undefined ? "its lease was released" : `${describeHolder(e.holder)} took it over`}; nothing more was written, and what was committed is kept`,
    ];
  if (e instanceof CliError) return [e.exitCode, e.message];
  const spec = modelSpecExit(e);
  if (spec !== undefined) return spec;
  // An event of a kind this build does not know was most likely written by a newer strata: the
  // file is not damaged, this build is old (docs/compatibility.md).
  if (e instanceof EngineError && e.code === "unknown-kind")
    return [
      EXIT.failure,
      `${dbPath === undefined ? "the database" : `the database ${dbPath}`} holds what this strata (${version()}) cannot read: ${e.message}`,
    ];
  if (e instanceof EngineError && DAMAGE.has(e.code)) {
    const where = dbPath === undefined ? "the database" : `the database ${dbPath}`;
    return [
      EXIT.failure,
      /verify/.test(e.message)
        ? e.message
        : `${where} is damaged: ${e.message}; \`strata verify\` lists the damage — restore the file from a copy, or \`strata export\` the sessions that still read`,
    ];
  }
  // Every reference the user gave was resolved before the command ran: something the database
  // itself refers to and cannot find means the file is damaged.
  if ((e instanceof StoreError || e instanceof EngineError) && e.code === "not-found" && !/verify/.test(e.message))
    return [
      EXIT.failure,
      `${e.message}: ${dbPath === undefined ? "the database" : `the database ${dbPath}`} refers to it, so the file is damaged; \`strata verify\` lists the damage`,
    ];
  if (e instanceof NoDatabase || e instanceof StoreError || e instanceof EngineError || e instanceof DomError)
    return [EXIT.failure, e.message];
  // The workspace record or directory cannot be used as it is (a missing blob, something in the way, an unreadable directory).
  if (e instanceof WorkspaceStateError) return [EXIT.failure, e.message];
  const detail = debug ? `\n${(e as Error).stack}` : " (set STRATA_DEBUG=1 for the stack)";
  return [EXIT.failure, `unexpected error: ${(e as Error)?.message ?? String(e)}${detail}`];
}
