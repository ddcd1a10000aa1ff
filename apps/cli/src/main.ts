/**
 * `strata`: the command line (CLI-1 … CLI-9). Parses global options and the command, checks the
 * arguments' form before anything is opened, runs the command, and turns every failure into one
 * message that says what is wrong and what to do, with an exit code: 0 success, 1 failure, 2 usage
 * error, 3 conflict (another writer, or files changed outside the agent that a restore would overwrite).
 */
import { type Args, branchName, GLOBAL_OPTIONS, LAST } from "./command.ts";
import { COMMANDS } from "./commands.ts";
import type { Context } from "./context.ts";
import { CliError, EXIT } from "./errors.ts";
import { commandHelp, didYouMean, overview, version } from "./help.ts";
import { makeOut, type OutStreams } from "./output.ts";
import { parseCommandArgs } from "./parse.ts";
import { jsonText } from "./terminal.ts";

export { COMMANDS };

export interface MainIo extends Partial<OutStreams> {
  readonly cwd?: string;
  readonly signal?: AbortSignal;
}

/** The index of the command word: the first argument that is not an option or a global option's value. */
function commandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--") return i + 1 < argv.length ? i + 1 : -1;
    if (!a.startsWith("-") || a === "-") return i;
    const spec = GLOBAL_OPTIONS[a.replace(/^--?/, "")] ?? Object.values(GLOBAL_OPTIONS).find((o) => a === `-${o.short}`);
    if (spec?.type === "string" && !a.includes("=")) i++;
  }
  return -1;
}

export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const streams: OutStreams = { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, env: io.env ?? process.env };
  const first = commandIndex(argv);
  const name = first < 0 ? undefined : argv[first];
  const wantsJson = argv.includes("--json");
  const errOut = makeOut(streams, { json: false, noColor: argv.includes("--no-color"), quiet: false });
  const fail = (code: number, message: string, data: Readonly<Record<string, unknown>> = {}) => {
    if (wantsJson) streams.stdout.write(`${jsonText({ error: { code, message, ...data } })}\n`);
    errOut.error(`${errOut.paint("red", "strata:")} ${message}`);
    return code;
  };
  const print = (text: string): number => {
    streams.stdout.write(text);
    return EXIT.ok;
  };
  const names = COMMANDS.map((c) => c.name);
  if (name === undefined) {
    const globals = argv.filter((a) => a.startsWith("-"));
    if (globals.includes("--version")) return print(`strata ${version()}\n`);
    if (globals.includes("--help") || globals.includes("-h")) return print(overview(COMMANDS));
    if (argv.length === 0) {
      streams.stdout.write(overview(COMMANDS));
      return EXIT.usage;
    }
    const unknown = globals.find(
      (a) => GLOBAL_OPTIONS[a.replace(/^--?/, "").replace(/=.*$/, "")] === undefined && a !== "-q" && a !== "-h",
    );
    if (unknown !== undefined)
      return fail(
        EXIT.usage,
        `unknown option ${unknown}${didYouMean(unknown.replace(/^--?/, ""), Object.keys(GLOBAL_OPTIONS)).replace(/"([^"]+)"/g, '"--$1"')}; strata --help lists commands and options`,
      );
    return fail(EXIT.usage, `no command given (${argv.join(" ")}); commands: ${names.join(", ")} (strata --help)`);
  }
  if (name === "help") {
    const rest = argv.slice(first + 1).filter((a) => !a.startsWith("-"));
    if (rest.length === 0) return print(overview(COMMANDS));
    const topic = rest[0] as string;
    const c = COMMANDS.find((x) => x.name === topic);
    if (c === undefined || rest.length > 1)
      return fail(
        EXIT.usage,
        c === undefined
          ? `no help topic "${topic}"${didYouMean(topic, names)}; topics: ${names.join(", ")}`
          : `strata help takes one topic, got ${rest.length}: ${rest.join(" ")}`,
      );
    streams.stdout.write(commandHelp(c));
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined)
    return fail(EXIT.usage, `unknown command "${name}"${didYouMean(name, names)}; commands: ${names.join(", ")} (strata --help)`);
  let args: Args;
  try {
    args = parseCommandArgs(command, [...argv.slice(0, first), ...argv.slice(first + 1)]);
  } catch (e) {
    return fail(EXIT.usage, (e as Error).message);
  }
  if (args.values.help === true) {
    streams.stdout.write(commandHelp(command));
    return EXIT.ok;
  }
  if (args.values.version === true) return print(`strata ${version()}\n`);
  if (args.values.json === true && !command.json) return fail(EXIT.usage, `strata ${command.name} prints no data; --json does not apply`);
  if (args.values.last === true && command.takesSession === true) {
    if (args.positionals.length > 0)
      return fail(EXIT.usage, `--last names the session; give either --last or SESSION, not both (usage: ${command.usage})`);
    args = { values: args.values, positionals: [LAST, ...args.positionals] };
  }
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
  let ctx: Context | undefined;
  try {
    const branch = branchName(args, "branch");
    const impl = await command.load();
    impl.check?.(args);
    const { makeContext } = await import("./context.ts");
    ctx = makeContext({
      out,
      db: typeof args.values.db === "string" ? args.values.db : undefined,
      branch,
      env: streams.env,
      cwd: io.cwd ?? process.cwd(),
      signal: io.signal ?? new AbortController().signal,
    });
    return (await impl.run(ctx, args)) ?? EXIT.ok;
  } catch (e) {
    out.progressDone();
    // the mapping of every error class to its message and exit code loads when something failed
    const { failure } = await import("./failure.ts");
    const [code, message] = failure(e, ctx?.dbPath, streams.env.STRATA_DEBUG !== undefined && streams.env.STRATA_DEBUG !== "");
    return fail(code, message, e instanceof CliError ? e.data : {});
  } finally {
    try {
      await ctx?.close();
    } catch {
      // closing a damaged or vanished file: the command's own outcome stands
    }
  }
}
