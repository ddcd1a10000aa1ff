/**
 * Picks a model client from a short spec, as the CLI and the config take it (MO-6, MO-16):
 * `scripted:<path-to-script.json>` or `openai:<model-name>` (base URL and key from the environment).
 */
import type { Model } from "@strata/agent/model";
import { type CreateModelOptions, resolveModelSpec } from "./check.ts";
import { OpenAICompatibleModel } from "./openai.ts";
import { ScriptedModel } from "./scripted.ts";
import { ModelSpecError } from "./spec-error.ts";

/** Builds the model `spec` names; throws `ModelSpecError` with every problem `checkModelSpec` finds. */
export function createModel(spec: string, options: CreateModelOptions = {}): Model {
  const r = resolveModelSpec(spec, options);
  if (!r.ok) throw new ModelSpecError(r.problems);
  switch (r.value.provider) {
    case "scripted":
      return new ScriptedModel(r.value.script);
    case "openai":
      return new OpenAICompatibleModel(r.value.config);
    default:
      return r.value satisfies never;
  }
}
