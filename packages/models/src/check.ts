/**
 * Checking a model spec before anything is created (MO-16): the CLI calls `checkModelSpec` before it
 * makes a session, so a missing key, a malformed `OPENAI_BASE_URL` or a missing script is one clear
 * line, not a failed session. Nothing here touches the network; a scripted spec reads its file.
 */
import { resolve } from "node:path";
import { checkOpenAIConfig, type OpenAIConfig, openAIConfigFromEnv } from "./config.ts";
import { loadScript, type ModelScript, ScriptError } from "./script.ts";
import { ModelSpecError, type ModelSpecProblem } from "./spec-error.ts";

export interface CreateModelOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Directory relative script paths resolve against (default: the process's). */
  readonly cwd?: string;
}

/** A spec taken apart and checked: what `createModel` builds from. */
export type ResolvedModelSpec =
  | { readonly provider: "scripted"; readonly path: string; readonly script: ModelScript }
  | { readonly provider: "openai"; readonly config: OpenAIConfig };

/**
 * Resolves `scripted:<file.json>` or `openai:<model>` (base URL, key and default model from
 * `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL` in `options.env`), returning every problem
 * found instead of throwing.
 */
export function resolveModelSpec(
  spec: string,
  options: CreateModelOptions = {},
):
  | { readonly ok: true; readonly value: ResolvedModelSpec }
  | { readonly ok: false; readonly problems: readonly [ModelSpecProblem, ...ModelSpecProblem[]] } {
  const fail = (problems: ModelSpecProblem[]) => ({ ok: false as const, problems: problems as [ModelSpecProblem, ...ModelSpecProblem[]] });
  const colon = spec.indexOf(":");
  const provider = colon < 0 ? spec : spec.slice(0, colon);
  const rest = colon < 0 ? "" : spec.slice(colon + 1);
  switch (provider) {
    case "scripted": {
      if (rest === "")
        return fail([{ code: "script-path-missing", message: "`scripted:` needs a script file, e.g. scripted:fixtures/models/demo.json" }]);
      const path = resolve(options.cwd ?? process.cwd(), rest);
      try {
        return { ok: true, value: { provider: "scripted", path, script: loadScript(path) } };
      } catch (error) {
        if (!(error instanceof ScriptError)) throw error;
        return fail([{ code: `script-${error.code}`, message: error.message, path }]);
      }
    }
    case "openai": {
      const env = options.env ?? process.env;
      let config: OpenAIConfig;
      try {
        config = openAIConfigFromEnv(env, rest === "" ? {} : { model: rest });
      } catch (error) {
        if (!(error instanceof ModelSpecError)) throw error;
        return fail([...error.problems]);
      }
      const problems = checkOpenAIConfig(config, env.OPENAI_BASE_URL !== undefined && env.OPENAI_BASE_URL.trim() !== "");
      return problems.length > 0 ? fail(problems) : { ok: true, value: { provider: "openai", config } };
    }
    default:
      return fail([
        {
          code: "unknown-provider",
          message: `unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(spec)}: use scripted:<file.json> or openai:<model>`,
        },
      ]);
  }
}

/** Every problem with `spec` (empty when `createModel` will succeed). */
export function checkModelSpec(spec: string, options: CreateModelOptions = {}): readonly ModelSpecProblem[] {
  const r = resolveModelSpec(spec, options);
  return r.ok ? [] : r.problems;
}
