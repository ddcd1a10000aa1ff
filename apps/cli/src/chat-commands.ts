/**
 * The slash commands of `strata chat` (CLI-42): what `/help` lists, what each command takes, and
 * how a command line is split into words. The commands themselves run in chat.ts, each the CLI
 * command of its name.
 */

/** The slash commands, in the order `/help` lists them. */
export const SLASH: readonly (readonly [string, string])[] = [
  ["/help", "this list"],
  ["/session", "which session, branch, head, model and workspace"],
  ["/branches", "the session's branches (the tree of forks)"],
  ["/fork [NAME]", "branch here and go on on the new branch, in a working directory of its own"],
  ["/switch BRANCH", "go on on another branch of this session"],
  ["/rewind EVENT [--force]", "move this branch back to EVENT (an id, or head~N), files included"],
  ["/undo [--force]", "take back your last message and everything it did, files included"],
  ["/prompt [--at EVENT]", "the exact request the model gets next (or got at EVENT)"],
  ["/diff [EVENT]", "what changed since EVENT (default: since your last message), files included"],
  ["/tree [--select CSS] [--depth N]", "the session's tree"],
  ["/files", "the workspace's files as the session records them"],
  ["/log [--limit N]", "the branch's latest events"],
  ["/exit", "leave (the session stays: strata chat -c comes back to it)"],
];

/** What each slash command takes: how many words besides options, and its options (those that take a value end in `=`). */
const TAKES: Readonly<
  Record<string, { readonly words: readonly [number, number]; readonly options: readonly string[]; readonly usage: string }>
> = {
  help: { words: [0, 0], options: [], usage: "/help" },
  exit: { words: [0, 0], options: [], usage: "/exit" },
  quit: { words: [0, 0], options: [], usage: "/exit" },
  q: { words: [0, 0], options: [], usage: "/exit" },
  session: { words: [0, 0], options: [], usage: "/session" },
  branches: { words: [0, 0], options: [], usage: "/branches" },
  fork: { words: [0, 1], options: [], usage: "/fork [NAME]" },
  switch: { words: [1, 1], options: [], usage: "/switch BRANCH" },
  rewind: { words: [1, 1], options: ["--force"], usage: "/rewind EVENT [--force] (EVENT: an id, or head~N; /log lists them)" },
  undo: { words: [0, 0], options: ["--force"], usage: "/undo [--force]" },
  prompt: { words: [0, 0], options: ["--at="], usage: "/prompt [--at EVENT]" },
  diff: { words: [0, 2], options: [], usage: "/diff [EVENT]" },
  tree: { words: [0, 0], options: ["--select=", "--depth="], usage: "/tree [--select CSS] [--depth N]" },
  files: { words: [0, 0], options: [], usage: "/files" },
  log: { words: [0, 0], options: ["--limit=", "--label="], usage: "/log [--limit N] [--label LABEL]" },
};

/** What is wrong with a slash command's words, or undefined (an unknown command is the dispatcher's to say). */
export function argumentsWrong(name: string, rest: readonly string[]): string | undefined {
  const takes = TAKES[name];
  if (takes === undefined) return undefined;
  let given = 0;
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w.startsWith("--")) {
      const [flag = "", inline] = w.split(/=(.*)/s, 2);
      if (takes.options.includes(flag)) {
        if (inline !== undefined) return `${flag} takes no value: ${takes.usage}`;
        continue;
      }
      if (takes.options.includes(`${flag}=`)) {
        if (inline === undefined && (i + 1 >= rest.length || (rest[i + 1] as string).startsWith("--")))
          return `${flag} needs a value: ${takes.usage}`;
        if (inline === undefined) i++;
        continue;
      }
      return `/${name} has no option ${flag}: ${takes.usage}`;
    }
    given++;
  }
  const [min, max] = takes.words;
  if (given < min || given > max)
    return `/${name} takes ${max === 0 ? "no argument" : min === max ? `${min} argument${min === 1 ? "" : "s"}` : `at most ${max}`}${takes.options.length > 0 ? " besides its options" : ""}, got ${given}: ${takes.usage}`;
  return undefined;
}

/** The words of a slash command: spaces separate them, quotes group them. */
export function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
  return out;
}
