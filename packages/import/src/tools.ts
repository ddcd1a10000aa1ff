/**
 * The tools of an imported session, for a re-run (IM-23). The source recorded which tools were
 * called, not the tools themselves (`unrecorded="tools"`), so a re-run cannot give the model the
 * source's roster; what it can do is what a re-run does with any `replay="never"` tool: answer
 * each call with the recorded outcome. `recordedTools` makes one stand-in per tool name the
 * session's calls use — `never`, taking any JSON object, or free text when a recorded call's
 * arguments are not JSON (a custom tool's input, e.g. Codex's `apply_patch`) — so the loop accepts the recorded calls
 * and the re-run answers them from the recording. Nothing of the source's tools ever runs here: a
 * stand-in's handler refuses, as an environment that cannot run it.
 */
import { TAG, ToolEnvironmentError, type ToolSpec } from "@strata/agent";
import type { Tree } from "@strata/dom";
import { bodyOf, metaOf } from "@strata/engine";
import { IMPORT } from "./write.ts";

/** The names a tool registry takes (`ToolRegistry`); a recorded call to another name is refused in a re-run. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The format an imported session came from (`<meta><import from>`), or undefined for a session of strata's own. */
export function importedFrom(tree: Tree): string | undefined {
  return metaOf(tree).children.find((c) => c.tag === IMPORT.tag)?.attrs.from;
}

/** One stand-in per tool the body's calls name, in order of first use (IM-23); none for a session that was not imported. */
export function recordedTools(tree: Tree): ToolSpec[] {
  const from = importedFrom(tree);
  if (from === undefined) return [];
  const names: string[] = [];
  /** Tools with a recorded call whose arguments are not a JSON object: free-text input (a custom tool). */
  const text = new Set<string>();
  const stack = [...bodyOf(tree).children];
  for (let el = stack.shift(); el !== undefined; el = stack.shift()) {
    if (el.tag === TAG.call) {
      const name = el.attrs.tool;
      if (name !== undefined && NAME.test(name) && !names.includes(name)) names.push(name);
      if (name !== undefined && !isJsonObject(el.children.find((c) => c.tag === TAG.args)?.text ?? "")) text.add(name);
    } else if (el.tag === TAG.turn) stack.unshift(...el.children);
  }
  return names.map((name) => ({
    name,
    description: `${name}, a tool of the session ${from} recorded: a re-run answers its calls with the recorded outcomes (strata does not have the tool)`,
    parameters: { type: "object" },
    ...(text.has(name) ? { input: "text" as const } : {}),
    replayPolicy: "never",
    version: `import:${from}`,
    handler: async () => {
      throw new ToolEnvironmentError(`${name} is a tool of the ${from} session this was imported from; strata cannot run it`);
    },
  }));
}

/** True when `s` is empty (no arguments) or the JSON text of an object. */
function isJsonObject(s: string): boolean {
  if (s.trim() === "") return true;
  try {
    const v: unknown = JSON.parse(s);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}
