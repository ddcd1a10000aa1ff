/** Help text, the version, and "did you mean" suggestions (CLI-1, CLI-2). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Command, commandOptions, GLOBAL_OPTIONS, type OptionSpec } from "./command.ts";

/** The version of this build (apps/cli/package.json). */
export function version(): string {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { version?: string };
  return pkg.version ?? "unknown";
}

/** Edit distance with adjacent transpositions (optimal string alignment). */
function distance(a: string, b: string): number {
  const w = b.length + 1;
  const d = new Uint16Array((a.length + 1) * w);
  const at = (i: number, j: number): number => d[i * w + j] as number;
  for (let i = 0; i <= a.length; i++) d[i * w] = i;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * w + j] = v;
    }
  return at(a.length, b.length);
}

/** The candidates closest to `word` (a typo, a prefix, or a word that contains one), best first. */
export function suggestions(word: string, candidates: readonly string[]): string[] {
  if (word.length > 64) return [];
  const w = word.toLowerCase();
  const scored = candidates
    .map((c) => {
      const d = distance(w, c.toLowerCase());
      const near = d <= Math.max(1, Math.floor(c.length / 3)) || (w.length >= 2 && (c.startsWith(w) || w.startsWith(c)));
      return { c, d, near };
    })
    .filter((x) => x.near)
    .sort((a, b) => a.d - b.d);
  return scored.map((x) => x.c);
}

/** ` (did you mean "ls"?)`, or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const s = suggestions(word, candidates).slice(0, 3);
  return s.length === 0 ? "" : ` (did you mean ${s.map((x) => `"${x}"`).join(" or ")}?)`;
}

export function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    "strata — event-sourced sessions for LLM agents: resume, fork, rewind, replay.",
    "",
    "usage: strata <command> [options]",
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    "Sessions are named by the handle `strata ls` shows (the end of the id), any unique prefix of the",
    "id, or @last (the most recently active session; --last does the same). SESSION@BRANCH,",
    "SESSION@EVENT and SESSION@BRANCH~N name a branch, an event, or N events before a branch head.",
    "`strata help <command>` or `strata <command> --help` for more.",
    "Exit codes: 0 success, 1 failure, 2 usage error, 3 conflict (another writer), 130 cancelled.",
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

export function commandHelp(c: Command): string {
  const globals = Object.fromEntries(Object.entries(GLOBAL_OPTIONS).filter(([k]) => (c.json || k !== "json") && k !== "version"));
  return [
    `strata ${c.name} — ${c.summary}`,
    "",
    `usage: ${c.usage}`,
    ...(c.description ? ["", c.description] : []),
    ...(Object.keys(commandOptions(c)).length > 0 ? ["", "options:", ...optionLines(commandOptions(c))] : []),
    "",
    "global options:",
    ...optionLines(globals),
    "",
    "examples:",
    ...c.examples.map((e) => `  ${e}`),
    "",
  ].join("\n");
}
