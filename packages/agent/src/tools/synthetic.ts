/**
 * The texts that enter the model's history when a call has no observation of its own (TL-10,
 * the seed's decision 0007-2): `not_executed`, `env_error`, `interrupted`, and a call that has no
 * outcome yet at the event a prompt is rendered for. They are configuration, recorded in the tree
 * (`<meta><config><synthetic>`), so the same session renders the same history forever; the
 * executor's own wording stays in the call's `<result>` for audit.
 *
 * `{tool}` and `{detail}` are replaced by the tool's name and the recorded reason; nothing else is
 * interpreted.
 */
export interface SyntheticObservations {
  readonly notExecuted: string;
  readonly envError: string;
  readonly interrupted: string;
  readonly missing: string;
}

export const DEFAULT_SYNTHETIC: SyntheticObservations = Object.freeze({
  notExecuted: "The call to {tool} was not executed: {detail}",
  envError: "The call to {tool} failed because the environment is broken, not because of the call: {detail}",
  interrupted:
    "The call to {tool} was interrupted before it reported a result (the process stopped). It may or may not have taken effect; check before repeating it.",
  missing: "The call to {tool} has no result yet.",
});

export type SyntheticKind = keyof SyntheticObservations;

/** The synthetic text for a call, with its placeholders filled. */
export function syntheticText(texts: SyntheticObservations, kind: SyntheticKind, vars: { tool: string; detail?: string }): string {
  return texts[kind].replace(/\{(tool|detail)\}/g, (_, k: string) => (k === "tool" ? vars.tool : (vars.detail ?? "")));
}
