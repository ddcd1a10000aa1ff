/**
 * The two sections of the default skeleton (DESIGN §2, `DEFAULT_SKELETON`): `<meta>` holds what
 * describes the session (its recorded inputs, plans, compactions), `<body>` what happened in it.
 * Whatever writes or reads a section finds it here, so the skeleton has one home.
 */
import type { Element, Tree } from "@strata/dom";
import { EngineError } from "./errors.ts";

function section(tree: Tree, tag: "meta" | "body"): Element {
  const found = tree.root.children.find((c) => c.tag === tag);
  if (found === undefined)
    throw new EngineError("bad-input", `the session tree has no <${tag}> element; it was not created by strata's default skeleton`);
  return found;
}

/** `<meta>` of a session tree; `bad-input` when the tree does not have strata's default skeleton. */
export function metaOf(tree: Tree): Element {
  return section(tree, "meta");
}

/** `<body>` of a session tree; `bad-input` when the tree does not have strata's default skeleton. */
export function bodyOf(tree: Tree): Element {
  return section(tree, "body");
}
