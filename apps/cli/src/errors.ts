/** CLI failures and their exit codes (CLI-2): 1 failure, 2 usage error, 3 conflict (another writer). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export const EXIT = { ok: 0, failure: 1, usage: 2, conflict: 3 } as const;
