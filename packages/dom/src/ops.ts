/**
 * Ops and patches of `patch@1` (DESIGN §3, DOM-7 … DOM-13, DOM-15): the validated decoder, and what
 * an op says about itself — a line for humans, the attribute values it writes. An op is a JSON
 * array; a patch is an ordered list of ops applied all or nothing. Each kind lives in `op/`.
 */
import { DomError } from "./errors.ts";
import { describe } from "./names.ts";
import type { AttrVisitor, MintVisitor, Quote } from "./op/kind.ts";
import { kindDef, OP_KINDS, type Op, opDef } from "./op/registry.ts";
import type { Tree } from "./tree.ts";

export type { AttrVisitor, IdMap, MintVisitor, Quote } from "./op/kind.ts";
export { OP_KINDS, type Op, type OpKind, type OpOf, type Patch } from "./op/registry.ts";

/**
 * Checks that `op` is a well-formed op and returns it typed. Every string is checked as XML can
 * carry it, every name as a valid name, every id as a positive integer. Does not look at any tree.
 * The op is returned as given (not copied); use {@link decodeOp} for untrusted input you do not own.
 */
export function checkOp(op: unknown): Op {
  if (!Array.isArray(op)) throw new DomError("bad-op", `an op must be an array like ["set", 12, "status", "done"], got ${describe(op)}`);
  const kind = op[0];
  const def = kindDef(kind);
  if (def === undefined) throw new DomError("bad-op", `unknown op kind ${describe(kind)}; patch@1 ops are ${OP_KINDS.join(", ")}`);
  if (op.length !== def.args + 1) throw new DomError("bad-op", `"${kind}" takes ${def.args} arguments, got ${op.length - 1}`);
  def.check(op);
  return op as unknown as Op;
}

/** Decodes one op from untrusted JSON data: validates it and returns a deep copy. */
export function decodeOp(data: unknown): Op {
  const op = checkOp(data);
  return opDef(op).copy(op);
}

/** Decodes a patch from untrusted JSON data; errors carry the failing op's index. */
export function decodePatch(data: unknown): Op[] {
  if (!Array.isArray(data)) throw new DomError("bad-op", `a patch must be an array of ops, got ${describe(data)}`);
  const out: Op[] = [];
  for (let i = 0; i < data.length; i++) {
    try {
      out.push(decodeOp(data[i]));
    } catch (e) {
      if (e instanceof DomError) throw new DomError(e.code, `op ${i}: ${e.message}`, { opIndex: i });
      throw e;
    }
  }
  return out;
}

export interface DescribeOptions {
  /** Writes a string the op carries, cut to about `max` characters (default: JSON, cut with "…"). */
  readonly quote?: Quote;
  /** A version to name elements from (`rm` then shows the removed element's tag). */
  readonly tree?: Tree;
}

const defaultQuote: Quote = (s, max) => JSON.stringify(s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/**
 * One short line saying what `op` does, for humans (`+<note> in #3`, `#12 status="done"`,
 * `#9 +120 chars`); not a format to parse.
 */
export function describeOp(op: Op, options: DescribeOptions = {}): string {
  return opDef(op).describe(op, options.quote ?? defaultQuote, options.tree);
}

/**
 * Calls `visit(tag, name, value, id)` for every attribute value `op` writes, in no particular
 * order: each attribute of an inserted spec (with its element's tag; its id is minted), the value
 * of an attribute `set` (with its element's id; the tag is in the tree). Removals and the
 * document's `hwm` are not values.
 */
export function attrsWritten(op: Op, visit: AttrVisitor): void {
  opDef(op).attrsWritten(op, visit);
}

/**
 * DOM-44: the high-water mark after `ops` apply where it was `hwm`, found without a tree, and each
 * element they add (`visit`: id, spec, parent id, in minting order). What the tree mints, so code
 * that follows a log without materializing it (usage counts, id planning) needs no rule of its own.
 */
export function mintedIds(ops: readonly Op[], hwm: number, visit?: MintVisitor): number {
  let mark = hwm;
  for (const op of ops) mark = opDef(op).minted(op, mark, visit);
  return mark;
}

/** Calls `visit` for every text `op` writes, in document order (see `OpDef.textsWritten`). */
export function textsWritten(op: Op, visit: (text: string) => void): void {
  opDef(op).textsWritten(op, visit);
}

/**
 * The searchable text of a patch (SE-1): every text its ops write, in op order, one per line.
 * "" when it writes none (a patch of attributes, moves and removals).
 */
export function patchText(patch: readonly Op[]): string {
  const parts: string[] = [];
  for (const op of patch) textsWritten(op, (t) => void parts.push(t));
  return parts.join("\n");
}
