/** `["append", id, chunk]` (DOM-13): extends the text of an element that has no children (streaming). */
import type { NodeId } from "../ids.ts";
import { checkText } from "../names.ts";
import { checkId, type OpDef } from "./kind.ts";
import { textInverse, writeText } from "./text.ts";

/** Append to the text content (streaming). */
export type AppendOp = readonly ["append", id: NodeId, chunk: string];

export const append: OpDef<AppendOp> = {
  kind: "append",
  args: 2,
  check(op) {
    checkId(op[1], "append id");
    checkText(op[2], "appended chunk");
  },
  copy: (op) => ["append", op[1], op[2]],
  apply: (w, op, _options, fx) => writeText(w, op[1], op[2], "append", fx),
  invert: textInverse,
  mapIds: (op, map) => ["append", map(op[1]), op[2]],
  movesMark: () => false,
  minted: (_op, hwm) => hwm,
  attrsWritten() {},
  textsWritten: (op, visit) => visit(op[2]),
  describe: (op) => `#${op[1]} +${op[2].length} chars`,
};
