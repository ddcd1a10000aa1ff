/**
 * `strata`: the command line (CLI-1 … CLI-9). Parses global options and the command, runs it, and
 * turns every failure into a message that says what is wrong and what to do, with an exit code:
 * 0 success, 1 failure, 2 usage error, 3 conflict (another writer).
 */
import { parseArgs } from "node:util";
import { DomError } from "@strata/dom";
import { EngineError } from "@strata/engine";
import { HeadConflict, StoreError } from "@strata/store";
import { type Args, type Command, GLOBAL_OPTIONS, type OptionSpec } from "./command.ts";
import { prompt, resume, run } from "./commands/agent.ts";
import { exportCmd, importCmd } from "./commands/bundle.ts";
import { bisect, replay, verify } from "./commands/check.ts";
import { fork, rewind } from "./commands/history.ts";
import { branches, diff, log, ls, show } from "./commands/read.ts";
import { serve } from "./commands/serve.ts";
import { makeContext, NoDatabase } from "./context.ts";
import { CliError, EXIT, UsageError } from "./errors.ts";
import { makeOut, type OutStreams } from "./output.ts";

export const COMMANDS: readonly Command[] = [
  run,
  resume,
  ls,
  log,
  show,
  diff,
  branches,
  prompt,
  fork,
  rewind,
  bisect,
  replay,
  exportCmd,
  importCmd,
  verify,
  serve,
];

export interface MainIo extends Partial<OutStreams> {
  readonly cwd?: string;
  readonly signal?: AbortSignal;
}

export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const streams: OutStreams = { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, env: io.env ?? process.env };
  // The command is the first word that is not an option or the value of a global option.
  let first = -1;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith("-")) {
      first = i;
      break;
    }
    const spec = GLOBAL_OPTIONS[a.replace(/^--?/, "")] ?? Object.values(GLOBAL_OPTIONS).find((o) => a === `-${o.short}`);
    if (spec?.type === "string" && !a.includes("=")) i++;
  }
  const name = first < 0 ? undefined : argv[first];
  const command = COMMANDS.find((c) => c.name === name);
  const wantsJson = argv.includes("--json");
  const errOut = makeOut(streams, { json: false, noColor: argv.includes("--no-color"), quiet: false });
  const fail = (code: number, message: string) => {
    if (wantsJson) streams.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    streams.stderr.write(`${errOut.paint("red", "strata:")} ${message}\n`);
    return code;
  };
  if (name === undefined || name === "help") {
    const topic = name === "help" ? argv[first + 1] : undefined;
    const c = COMMANDS.find((x) => x.name === topic);
    streams.stdout.write(c === undefined ? overview() : commandHelp(c));
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (command === undefined)
    return fail(EXIT.usage, `unknown command "${name}"; commands: ${COMMANDS.map((c) => c.name).join(", ")} (strata --help)`);
  let args: Args;
  try {
    const options = { ...GLOBAL_OPTIONS, ...command.options };
    const parsed = parseArgs({
      args: [...argv.slice(0, first), ...argv.slice(first + 1)],
      options: Object.fromEntries(
        Object.entries(options).map(([k, o]: [string, OptionSpec]) => [
          k,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
    args = { values: parsed.values as Args["values"], positionals: parsed.positionals };
  } catch (e) {
    return fail(EXIT.usage, `${(e as Error).message.replace(/\. To specify.*$/s, "")} (strata ${command.name} --help)`);
  }
  if (args.values.help === true) {
    streams.stdout.write(commandHelp(command));
    return EXIT.ok;
  }
  if (args.values.json === true && !command.json) return fail(EXIT.usage, `strata ${command.name} prints no data; --json does not apply`);
  const { min, max } = command.positionals;
  if (args.positionals.length < min || args.positionals.length > max)
    return fail(
      EXIT.usage,
      `strata ${command.name} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? "" : "s"}, got ${args.positionals.length}; usage: ${command.usage}`,
    );
  const out = makeOut(streams, {
    json: args.values.json === true,
    noColor: args.values["no-color"] === true,
    quiet: args.values.quiet === true,
  });
  const ctx = makeContext({
    out,
    db: typeof args.values.db === "string" ? args.values.db : undefined,
    branch: typeof args.values.branch === "string" ? args.values.branch : undefined,
    env: streams.env,
    cwd: io.cwd ?? process.cwd(),
    signal: io.signal ?? new AbortController().signal,
  });
  try {
    return (await command.run(ctx, args)) ?? EXIT.ok;
  } catch (e) {
    out.progressDone();
    if (e instanceof UsageError) return fail(EXIT.usage, e.message);
    if (e instanceof HeadConflict) return fail(EXIT.conflict, e.message);
    if (e instanceof CliError) return fail(e.exitCode, e.message);
    if (e instanceof NoDatabase || e instanceof StoreError || e instanceof EngineError || e instanceof DomError)
      return fail(EXIT.failure, e.message);
    if (streams.env.STRATA_DEBUG) streams.stderr.write(`${(e as Error).stack}\n`);
    return fail(EXIT.failure, `unexpected error: ${(e as Error).message} (set STRATA_DEBUG=1 for the stack)`);
  } finally {
    ctx.close();
  }
}

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "strata — event-sourced sessions for LLM agents: resume, fork, rewind, replay.",
    "",
    "usage: strata <command> [options]",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "Sessions are named by id or unique id prefix; SESSION@BRANCH, SESSION@EVENT and SESSION@BRANCH~N",
    "name a branch, an event, or N events before a branch head. `strata <command> --help` for more.",
    "Exit codes: 0 success, 1 failure, 2 usage error, 3 conflict (another writer).",
    "",
  ].join("\n");
}

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  const entries = Object.entries(options).map(
    ([k, o]) => [`${o.short ? `-${o.short}, ` : ""}--${k}${o.value ? ` ${o.value}` : ""}`, o.description] as const,
  );
  const width = Math.max(0, ...entries.map(([a]) => a.length));
  return entries.map(([a, d]) => `  ${a.padEnd(width)}  ${d}`);
}

function commandHelp(c: Command): string {
  const globals = Object.fromEntries(Object.entries(GLOBAL_OPTIONS).filter(([k]) => c.json || k !== "json"));
  return [
    `strata ${c.name} — ${c.summary}`,
    "",
    `usage: ${c.usage}`,
    ...(c.description ? ["", c.description] : []),
    ...(Object.keys(c.options).length > 0 ? ["", "options:", ...optionLines(c.options)] : []),
    "",
    "global options:",
    ...optionLines(globals),
    "",
    "examples:",
    ...c.examples.map((e) => `  ${e}`),
    "",
  ].join("\n");
}
