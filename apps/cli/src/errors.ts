/**
 * CLI failures and their exit codes (CLI-2): 1 failure (a bad reference, a missing, unreadable,
 * damaged or foreign file, a run that stopped without completing), 2 usage error (the command line
 * itself is wrong: unknown command or option, wrong number of arguments, a malformed value), 3
 * conflict (another writer, or files changed outside the agent that a restore would overwrite), 130 cancelled.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
    /** Extra keys of the `--json` error object (e.g. `paths` of a refused restore). */
    readonly data: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export const EXIT = { ok: 0, failure: 1, usage: 2, conflict: 3, cancelled: 130 } as const;
