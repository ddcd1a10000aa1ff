/** The shape of a command and the options every command accepts (CLI-1). */
import { BRANCH_NAME } from "@strata/store";
import type { Context } from "./context.ts";
import { UsageError } from "./errors.ts";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
  readonly value?: string;
  readonly description: string;
}

/** A command as the table lists it: everything help and argument parsing need, and how to load its code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** `strata <name> …` */
  readonly usage: string;
  readonly description?: string;
  readonly examples: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** How many positionals it takes. */
  readonly positionals: { readonly min: number; readonly max: number };
  /** Its first positional is a session address: `--last` stands for `@last` there. */
  readonly takesSession?: boolean;
  /** Prints data: accepts --json. */
  readonly json: boolean;
  /** Its code, loaded only when it runs (the packages it needs come with it). */
  load(): Promise<CommandImpl>;
}

/** What a command does, in the module `Command.load` imports. */
export interface CommandImpl {
  /**
   * Checks the arguments' form before any file is opened or created (CLI-2); throws UsageError.
   * Everything `run` would reject for its form must be rejected here.
   */
  check?(args: Args): void;
  run(ctx: Context, args: Args): Promise<number | undefined> | number | undefined;
}

export interface Args {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly positionals: readonly string[];
}

export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  db: {
    type: "string",
    value: "PATH",
    description:
      "the database (default $STRATA_DB, else the nearest .strata/strata.db up to the git work tree's root, else ./.strata/strata.db)",
  },
  branch: { type: "string", value: "NAME", description: "the branch to act on (default main)" },
  json: { type: "boolean", description: "print one JSON document on stdout, nothing else" },
  "no-color": { type: "boolean", description: "no colour (also: NO_COLOR set, or output not a terminal)" },
  quiet: { type: "boolean", short: "q", description: "print only what was asked for: no banners, headers, hints or notes" },
  help: { type: "boolean", short: "h", description: "show help" },
  version: { type: "boolean", description: "print the version" },
};

/** The session address of the most recently active session; `--last` stands for it. */
export const LAST = "@last";

/** `--last`, for commands that take a session. */
export const LAST_OPTION: OptionSpec = { type: "boolean", description: "the most recently active session (same as giving @last)" };

/** A command's own options, `--last` included when it takes a session. */
export function commandOptions(c: Command): Readonly<Record<string, OptionSpec>> {
  return c.takesSession === true ? { ...c.options, last: LAST_OPTION } : c.options;
}

export function str(args: Args, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === "string" ? v : undefined;
}

export function flag(args: Args, name: string): boolean {
  return args.values[name] === true;
}

export function list(args: Args, name: string): string[] {
  const v = args.values[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
}

export function int(args: Args, name: string, fallback: number): number {
  const v = str(args, name);
  if (v === undefined) return fallback;
  if (!/^[0-9]+$/.test(v)) throw new UsageError(`--${name} takes a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** A branch name given as `--OPTION NAME`, checked for form (letters, digits, `. _ / -`). */
export function branchName(args: Args, option: string): string | undefined {
  const v = str(args, option);
  if (v !== undefined && !BRANCH_NAME.test(v))
    throw new UsageError(
      `--${option} ${JSON.stringify(v)} is not a branch name: use letters, digits and . _ / - (starting with a letter or digit, no empty, "." or ".." part between slashes, at most 100 characters), e.g. try-2`,
    );
  return v;
}

/** Refuses options that cannot be used together. */
export function exclusive(args: Args, ...names: string[]): void {
  const given = names.filter((n) => args.values[n] !== undefined && args.values[n] !== false);
  if (given.length > 1) throw new UsageError(`${given.map((n) => `--${n}`).join(" and ")} cannot be used together`);
}
