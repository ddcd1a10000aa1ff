/** A command's arguments from its words (CLI-1), for `main` and for the commands `chat` runs in-process. */
import { parseArgs } from "node:util";
import { type Args, type Command, commandOptions, GLOBAL_OPTIONS, type OptionSpec } from "./command.ts";
import { UsageError } from "./errors.ts";
import { didYouMean } from "./help.ts";

function optionsOf(command: Command): Record<string, OptionSpec> {
  return { ...GLOBAL_OPTIONS, ...commandOptions(command) };
}

/**
 * The options and positionals of `argv` (the command word left out) for `command`; an unknown
 * option or a malformed one is a UsageError that suggests the option meant.
 */
export function parseCommandArgs(command: Command, argv: readonly string[]): Args {
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: Object.fromEntries(
        Object.entries(optionsOf(command)).map(([k, o]: [string, OptionSpec]) => [
          k,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as Args["values"], positionals: parsed.positionals };
  } catch (e) {
    const message = (e as Error).message.replace(/\. To specify.*$/s, "");
    const unknown = /Unknown option '--?([^']+)'/.exec(message)?.[1];
    const hint = unknown === undefined ? "" : didYouMean(unknown, Object.keys(optionsOf(command))).replace(/"([^"]+)"/g, '"--$1"');
    throw new UsageError(`${message}${hint} (strata ${command.name} --help)`);
  }
}
