/**
 * Picks a model client from a short spec, as the CLI and the config take it (MO-15):
 * `scripted:<path-to-script.json>` or `openai:<model-name>` (base URL and key from the environment).
 */
import { resolve } from "node:path";
import type { Model } from "@strata/engine";
import { OpenAICompatibleModel, openAIConfigFromEnv } from "./openai.ts";
import { ScriptedModel } from "./scripted.ts";

export interface CreateModelOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Directory relative script paths resolve against (default: the process's). */
  readonly cwd?: string;
}

export function createModel(spec: string, options: CreateModelOptions = {}): Model {
  const colon = spec.indexOf(":");
  const provider = colon < 0 ? spec : spec.slice(0, colon);
  const rest = colon < 0 ? "" : spec.slice(colon + 1);
  switch (provider) {
    case "scripted":
      if (rest === "") throw new Error("`scripted:` needs a script file, e.g. scripted:fixtures/models/demo.json");
      return ScriptedModel.fromFile(resolve(options.cwd ?? process.cwd(), rest));
    case "openai":
      return new OpenAICompatibleModel(openAIConfigFromEnv(options.env ?? process.env, rest === "" ? {} : { model: rest }));
    default:
      throw new Error(
        `unknown model provider ${JSON.stringify(provider)} in ${JSON.stringify(spec)}: use scripted:<file.json> or openai:<model>`,
      );
  }
}
