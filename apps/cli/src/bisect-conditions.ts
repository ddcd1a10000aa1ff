/**
 * What `strata bisect` searches for (CLI-21, CLI-36): conditions on the state at an event, all of
 * which must hold. `--until CSS` — a selector matches an element; `--until-file PATH` — the
 * workspace the event records has the file; `--until-file PATH~REGEX` — and its content matches
 * (JavaScript syntax; `PATH~/REGEX/FLAGS` takes flags i, m, s, u). The path is everything before
 * the first `~`. Each condition's form is checked before any file is opened.
 */
import { pathProblem, workspaceFiles } from "@strata/agent";
import { DomError, type NodeId, select, type Tree } from "@strata/dom";
import type { AsyncStore, Store } from "@strata/store";
import { CliError, UsageError } from "./errors.ts";

export interface Condition {
  /** How the condition reads in a sentence: `call[status=failed] matches`, `SUMMARY.md exists`. */
  readonly text: string;
  /** The element ids that make it hold at `tree`, or undefined when it does not hold (a file's bytes may be fetched). */
  holds(tree: Tree): NodeId[] | undefined | Promise<NodeId[] | undefined>;
}

interface FileCondition {
  readonly path: string;
  readonly pattern: RegExp | undefined;
}

/** Parses `PATH` or `PATH~REGEX`; a usage error names what is wrong. */
export function parseFileCondition(spec: string): FileCondition {
  const cut = spec.indexOf("~");
  const raw = (cut < 0 ? spec : spec.slice(0, cut)).replace(/^(\.\/)+/, "");
  const problem = pathProblem(raw);
  if (problem !== undefined)
    throw new UsageError(`--until-file ${JSON.stringify(spec)}: ${problem} (give a path relative to the workspace, e.g. src/app.ts)`);
  if (cut < 0) return { path: raw, pattern: undefined };
  const source = spec.slice(cut + 1);
  if (source === "") throw new UsageError(`--until-file ${JSON.stringify(spec)}: nothing after "~"; give PATH~REGEX, or PATH alone`);
  const slashed = /^\/(.*)\/([imsu]*)$/s.exec(source);
  try {
    return { path: raw, pattern: slashed === null ? new RegExp(source) : new RegExp(slashed[1] as string, slashed[2]) };
  } catch (e) {
    throw new UsageError(`--until-file ${JSON.stringify(spec)}: ${(e as Error).message}`);
  }
}

/** The CSS condition: some element matches. */
export function selectorCondition(css: string): Condition {
  return {
    text: `${css} matches`,
    holds(tree) {
      try {
        const ids = select(tree, css).map((e) => e.id);
        return ids.length > 0 ? ids : undefined;
      } catch (e) {
        if (e instanceof DomError) throw new UsageError(e.message);
        throw e;
      }
    },
  };
}

/** A file condition: the path is in the event's workspace (and its bytes, read as UTF-8, match). */
export function fileCondition(store: Store | AsyncStore, spec: string): Condition {
  const { path, pattern } = parseFileCondition(spec);
  const texts = new Map<string, boolean>();
  return {
    text: pattern === undefined ? `${path} exists` : `${path} matches ${pattern}`,
    async holds(tree) {
      const entry = workspaceFiles(tree).get(path);
      if (entry === undefined) return undefined;
      if (pattern === undefined) return [entry.id];
      let hit = texts.get(entry.hash);
      if (hit === undefined) {
        const bytes = await store.getBlob(entry.hash);
        if (bytes === undefined)
          throw new CliError(
            `the database ${store.path} is damaged: it has no bytes for ${path} (blob ${entry.hash}); \`strata verify\` lists the damage`,
          );
        hit = pattern.test(bytes.toString("utf8"));
        texts.set(entry.hash, hit);
      }
      return hit ? [entry.id] : undefined;
    },
  };
}

/** All conditions hold: the union of the ids that make them hold, or undefined. */
export async function allHold(conditions: readonly Condition[], tree: Tree): Promise<NodeId[] | undefined> {
  const ids = new Set<NodeId>();
  for (const c of conditions) {
    const got = await c.holds(tree);
    if (got === undefined) return undefined;
    for (const id of got) ids.add(id);
  }
  return [...ids];
}
