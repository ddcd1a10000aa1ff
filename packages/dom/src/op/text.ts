/** `["text", id, value]` (DOM-13): replaces the text of an element that has no children. */

import type { EffectLog } from "../effect.ts";
import { DomError } from "../errors.ts";
import type { NodeId } from "../ids.ts";
import { checkText } from "../names.ts";
import type { TreeWriter } from "../writer.ts";
import { checkId, type OpDef } from "./kind.ts";
import { label, need } from "./place.ts";

/** Replace the text content. */
export type TextOp = readonly ["text", id: NodeId, value: string];

export const text: OpDef<TextOp> = {
  kind: "text",
  args: 2,
  check(op) {
    checkId(op[1], "text id");
    checkText(op[2], "text");
  },
  copy: (op) => ["text", op[1], op[2]],
  apply: (w, op, _options, fx) => writeText(w, op[1], op[2], "set", fx),
  invert: textInverse,
  mapIds: (op, map) => ["text", map(op[1]), op[2]],
  movesMark: () => false,
  minted: (_op, hwm) => hwm,
  attrsWritten() {},
  textsWritten: (op, visit) => visit(op[2]),
  describe: (op, quote) => `#${op[1]} text ${quote(op[2], 24)}`,
};

/** Sets (or, `append`, extends) the text of `id`, which must have no children (DOM-4). */
export function writeText(w: TreeWriter, id: NodeId, value: string, mode: "set" | "append", fx: EffectLog | undefined): void {
  const r = need(w, id, mode === "append" ? "append target" : "text target");
  if (r.first !== 0) throw new DomError("mixed-content", `${label(r)} has child elements, so it cannot also have text`);
  const text = mode === "append" ? r.text + value : value;
  fx?.text(id, mode, r.text, text);
  if (text === r.text) return;
  w.edit(id).text = text;
}

/** The inverse of a `text` or `append` op: the text as it was. */
export function textInverse(w: TreeWriter, op: readonly [string, NodeId, string]): [["text", NodeId, string]] | [] {
  const r = w.rec(op[1]);
  if (r === undefined) return [];
  return [["text", op[1], r.text]];
}
