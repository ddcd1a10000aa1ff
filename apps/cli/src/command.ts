/** The shape of a command and the options every command accepts (CLI-1). */
import type { Context } from "./context.ts";
import { UsageError } from "./errors.ts";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
  readonly value?: string;
  readonly description: string;
}

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
  /** Prints data: accepts --json. */
  readonly json: boolean;
  run(ctx: Context, args: Args): Promise<number | undefined> | number | undefined;
}

export interface Args {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly positionals: readonly string[];
}

export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  db: { type: "string", value: "PATH", description: "the database (default ./.strata/strata.db, or $STRATA_DB)" },
  branch: { type: "string", value: "NAME", description: "the branch to act on (default main)" },
  json: { type: "boolean", description: "print one JSON document on stdout, nothing else" },
  "no-color": { type: "boolean", description: "no colour (also: NO_COLOR set, or output not a terminal)" },
  quiet: { type: "boolean", short: "q", description: "print only what was asked for" },
  help: { type: "boolean", short: "h", description: "show help" },
};

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
