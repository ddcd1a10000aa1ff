/**
 * `["set", id, name, value|null]` (DOM-11): writes or removes an attribute; on the document
 * (`0`), `["set", 0, "hwm", "N"]` sets the high-water mark.
 */
import { withAttr } from "../attrs.ts";
import { DomError } from "../errors.ts";
import { DOCUMENT, type DocumentId, isNodeId, type NodeId } from "../ids.ts";
import { checkName, checkText, describe } from "../names.ts";
import { checkId, type OpDef } from "./kind.ts";
import { need } from "./place.ts";

/** Set (string) or remove (null) an attribute; on the document (0) only `hwm`. */
export type SetOp = readonly ["set", id: NodeId | DocumentId, name: string, value: string | null];

/** Largest single raise of the high-water mark a monotonic patch may make (keeps trees dense). */
export const MAX_HWM_RAISE = 2 ** 24;

export const set: OpDef<SetOp> = {
  kind: "set",
  args: 3,
  check(op) {
    if (op[1] === DOCUMENT) {
      if (op[2] !== "hwm") throw new DomError("bad-op", `the document (id 0) has one settable property, "hwm"; got ${describe(op[2])}`);
      if (typeof op[3] !== "string" || !/^[1-9][0-9]{0,14}$/.test(op[3]) || !isNodeId(Number(op[3])))
        throw new DomError("bad-op", `hwm must be a decimal string of a positive integer, got ${describe(op[3])}`);
      return;
    }
    checkId(op[1], "set id");
    checkName(op[2], "attribute");
    if (op[3] !== null) checkText(op[3], `value of attribute "${op[2]}"`);
  },
  copy: (op) => ["set", op[1], op[2], op[3]],
  apply(w, op, options, fx) {
    const [, id, name, value] = op;
    if (id === DOCUMENT) {
      const hwm = Number(value);
      if (hwm < w.hwm) {
        if (options.monotonic) throw new DomError("bad-hwm", `the high-water mark only rises in journaled patches (${w.hwm} → ${hwm})`);
        const max = w.maxLiveId();
        if (hwm < max) throw new DomError("bad-hwm", `cannot lower the high-water mark to ${hwm}: element ${max} is live`);
      }
      if (options.monotonic && hwm - w.hwm > MAX_HWM_RAISE)
        throw new DomError(
          "bad-hwm",
          `a journaled patch may raise the high-water mark by at most ${MAX_HWM_RAISE} at once (${w.hwm} → ${hwm})`,
        );
      w.hwm = hwm; // the effect reports the mark once, for the whole patch
      return;
    }
    const r = need(w, id, "set target");
    const has = Object.hasOwn(r.attrs, name);
    fx?.attr(id as NodeId, name, has ? (r.attrs[name] as string) : null, value);
    if (value === null ? !has : has && r.attrs[name] === value) return;
    w.edit(id).attrs = withAttr(r.attrs, name, value);
  },
  invert(w, op) {
    if (op[1] === DOCUMENT) return [];
    const r = w.rec(op[1]);
    if (r === undefined) return [];
    return [["set", op[1], op[2], Object.hasOwn(r.attrs, op[2]) ? (r.attrs[op[2]] as string) : null]];
  },
  mapIds: (op, map) =>
    op[1] === DOCUMENT ? ["set", DOCUMENT, op[2], String(map(Number(op[3]) as NodeId))] : ["set", map(op[1]), op[2], op[3]],
  movesMark: (op) => op[1] === DOCUMENT,
  minted: (op, hwm) => (op[1] === DOCUMENT ? Number(op[3]) : hwm),
  attrsWritten(op, visit) {
    if (op[1] !== DOCUMENT && op[3] !== null) visit(undefined, op[2], op[3], op[1] as NodeId);
  },
  textsWritten() {},
  describe: (op, quote) => (op[1] === DOCUMENT ? `hwm=${op[3]}` : `#${op[1]} ${op[2]}=${op[3] === null ? "∅" : quote(op[3], 24)}`),
};
