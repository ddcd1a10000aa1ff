/** A `--select`/`--until` selector, checked for form before any file is opened (CLI-2). */
import { DomError, select, skeletonTree } from "@strata/dom";
import { UsageError } from "./errors.ts";

/** Checks a selector's syntax on an empty tree, before any file is opened (a malformed one is a usage error). */
export function checkSelector(option: string, css: string | undefined): void {
  if (css === undefined) return;
  try {
    select(skeletonTree({ tag: "session" }), css);
  } catch (e) {
    if (e instanceof DomError) throw new UsageError(`--${option}: ${e.message}`);
    throw e;
  }
}
