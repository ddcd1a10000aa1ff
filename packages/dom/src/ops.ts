/**
 * The closed op set of `patch@1` (DESIGN §3, DOM-7 … DOM-13) and its validated decoder. An op is a
 * JSON array; a patch is an ordered list of ops applied all or nothing.
 */

import { MAX_DEPTH, tooDeep } from "./depth.ts";
import { DomError } from "./errors.ts";
import { DOCUMENT, type DocumentId, isNodeId, type NodeId } from "./ids.ts";
import { checkName, checkText, describe, invalidCharIndex } from "./names.ts";

/** A subtree to insert. `id` is present on every node of a restore-form subtree, or on none. */
export interface NodeSpec {
  readonly tag: string;
  readonly attrs?: Readonly<Record<string, string>>;
  readonly text?: string;
  readonly children?: readonly NodeSpec[];
  readonly id?: NodeId;
}

/** Insert a subtree under `parent` after sibling `after` (null: as first child). */
export type InsOp = readonly ["ins", parent: NodeId, after: NodeId | null, node: NodeSpec];
/** Remove an element and its subtree. */
export type RmOp = readonly ["rm", id: NodeId];
/** Set (string) or remove (null) an attribute; on the document (0) only `hwm`. */
export type SetOp = readonly ["set", id: NodeId | DocumentId, name: string, value: string | null];
/** Move an element under `parent` after sibling `after` (null: first). */
export type MvOp = readonly ["mv", id: NodeId, parent: NodeId, after: NodeId | null];
/** Replace the text content. */
export type TextOp = readonly ["text", id: NodeId, value: string];
/** Append to the text content (streaming). */
export type AppendOp = readonly ["append", id: NodeId, chunk: string];

export type Op = InsOp | RmOp | SetOp | MvOp | TextOp | AppendOp;
export type OpKind = Op[0];
export type Patch = readonly Op[];

/** The op kinds of `patch@1`, in the order DESIGN §3 lists them. */
export const OP_KINDS: readonly OpKind[] = Object.freeze(["ins", "rm", "set", "mv", "text", "append"] as const);

const ARITY: Record<OpKind, number> = { ins: 4, rm: 2, set: 4, mv: 4, text: 3, append: 3 };

/** Largest number of nodes one op may insert, a guard against runaway input. */
export const MAX_SPEC_NODES = 1_000_000;

/**
 * Checks that `op` is a well-formed op and returns it typed. Every string is checked as XML can
 * carry it, every name as a valid name, every id as a positive integer. Does not look at any tree.
 * The op is returned as given (not copied); use {@link decodeOp} for untrusted input you do not own.
 */
export function checkOp(op: unknown): Op {
  if (!Array.isArray(op)) throw new DomError("bad-op", `an op must be an array like ["set", 12, "status", "done"], got ${describe(op)}`);
  const kind = op[0];
  if (typeof kind !== "string" || !Object.hasOwn(ARITY, kind))
    throw new DomError("bad-op", `unknown op kind ${describe(kind)}; patch@1 ops are ${OP_KINDS.join(", ")}`);
  const arity = ARITY[kind as OpKind];
  if (op.length !== arity) throw new DomError("bad-op", `"${kind}" takes ${arity - 1} arguments, got ${op.length - 1}`);
  switch (kind as OpKind) {
    case "ins":
      checkId(op[1], "ins parent");
      checkAnchor(op[2], "ins after");
      checkSpec(op[3]);
      break;
    case "rm":
      checkId(op[1], "rm id");
      break;
    case "set":
      if (op[1] === DOCUMENT) {
        if (op[2] !== "hwm") throw new DomError("bad-op", `the document (id 0) has one settable property, "hwm"; got ${describe(op[2])}`);
        if (typeof op[3] !== "string" || !/^[1-9][0-9]{0,14}$/.test(op[3]) || !isNodeId(Number(op[3])))
          throw new DomError("bad-op", `hwm must be a decimal string of a positive integer, got ${describe(op[3])}`);
        break;
      }
      checkId(op[1], "set id");
      checkName(op[2], "attribute");
      if (op[3] !== null) checkText(op[3], `value of attribute "${op[2]}"`);
      break;
    case "mv":
      checkId(op[1], "mv id");
      checkId(op[2], "mv parent");
      checkAnchor(op[3], "mv after");
      break;
    case "text":
      checkId(op[1], "text id");
      checkText(op[2], "text");
      break;
    case "append":
      checkId(op[1], "append id");
      checkText(op[2], "appended chunk");
      break;
  }
  return op as unknown as Op;
}

/** Decodes one op from untrusted JSON data: validates it and returns a deep copy. */
export function decodeOp(data: unknown): Op {
  return copyOp(checkOp(data));
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

function checkId(v: unknown, what: string): void {
  if (!isNodeId(v)) throw new DomError("bad-op", `${what} must be a node id (an integer from 1 to 2^31 - 1), got ${describe(v)}`);
}

function checkAnchor(v: unknown, what: string): void {
  if (v !== null && !isNodeId(v)) throw new DomError("bad-op", `${what} must be a node id or null (first position), got ${describe(v)}`);
}

const SPEC_KEYS = new Set(["tag", "attrs", "text", "children", "id"]);

/** Where a node sits in the spec being checked; the path string is only built for an error. */
interface SpecFrame {
  readonly node: unknown;
  readonly parent: SpecFrame | undefined;
  readonly index: number;
  readonly depth: number;
}

function pathOf(frame: SpecFrame): string {
  const parts: string[] = [];
  for (let f: SpecFrame | undefined = frame; f?.parent !== undefined; f = f.parent) parts.push(`.children[${f.index}]`);
  return `node${parts.reverse().join("")}`;
}

/**
 * Validates a node spec (iteratively: specs can be deep). Enforces DOM-4 (text or children, not
 * both), the all-or-none rule for explicit ids, at most {@link MAX_SPEC_NODES} nodes and at most
 * {@link MAX_DEPTH} levels (DOM-34), failing before looking any deeper.
 */
export function checkSpec(spec: unknown): NodeSpec {
  let withIds: boolean | undefined;
  let count = 0;
  const stack: SpecFrame[] = [{ node: spec, parent: undefined, index: 0, depth: 1 }];
  while (stack.length > 0) {
    const frame = stack.pop() as SpecFrame;
    const node = frame.node;
    if (++count > MAX_SPEC_NODES) throw new DomError("too-large", `an ins op may insert at most ${MAX_SPEC_NODES} nodes`);
    if (frame.depth > MAX_DEPTH) throw tooDeep("a node of the inserted spec", frame.depth);
    if (typeof node !== "object" || node === null || Array.isArray(node))
      throw new DomError("bad-op", `${pathOf(frame)} must be an object like {"tag": "todo"}, got ${describe(node)}`);
    for (const key of Object.keys(node))
      if (!SPEC_KEYS.has(key))
        throw new DomError("bad-op", `${pathOf(frame)} has unknown key ${JSON.stringify(key)}; allowed: tag, attrs, text, children, id`);
    const n = node as Record<string, unknown>;
    checkName(n.tag, "tag");
    if (n.attrs !== undefined) {
      const attrs = n.attrs;
      if (typeof attrs !== "object" || attrs === null || Array.isArray(attrs))
        throw new DomError("bad-op", `${pathOf(frame)}.attrs must be an object of strings, got ${describe(attrs)}`);
      for (const [k, v] of Object.entries(attrs)) {
        checkName(k, "attribute");
        // The path is only spelled out when the check fails.
        if (typeof v !== "string" || invalidCharIndex(v) >= 0) checkText(v, `${pathOf(frame)}.attrs.${k}`);
      }
    }
    if (n.text !== undefined && (typeof n.text !== "string" || invalidCharIndex(n.text) >= 0)) checkText(n.text, `${pathOf(frame)}.text`);
    const hasId = n.id !== undefined;
    if (hasId && !isNodeId(n.id)) throw new DomError("bad-op", `${pathOf(frame)}.id must be a node id, got ${describe(n.id)}`);
    if (withIds === undefined) withIds = hasId;
    else if (withIds !== hasId)
      throw new DomError("bad-op", `${pathOf(frame)}: either every node of an inserted subtree carries an id (restore form) or none does`);
    if (n.children !== undefined) {
      if (!Array.isArray(n.children))
        throw new DomError("bad-op", `${pathOf(frame)}.children must be an array, got ${describe(n.children)}`);
      if (n.children.length > 0 && typeof n.text === "string" && n.text !== "")
        throw new DomError("mixed-content", `${pathOf(frame)} has both text and children; an element holds one or the other`);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push({ node: n.children[i], parent: frame, index: i, depth: frame.depth + 1 });
    }
  }
  return spec as NodeSpec;
}

/** True when the subtree carries explicit ids (restore form). */
export function specHasIds(spec: NodeSpec): boolean {
  return spec.id !== undefined;
}

function copyOp(op: Op): Op {
  if (op[0] === "ins") return ["ins", op[1], op[2], copySpec(op[3])];
  return [...op] as unknown as Op;
}

/** Deep copy of a validated spec, preserving exactly the keys it had (JSON round-trip law). */
export function copySpec(spec: NodeSpec): NodeSpec {
  type Mutable = { -readonly [K in keyof NodeSpec]: NodeSpec[K] };
  const shallow = (n: NodeSpec): Mutable => {
    const out: Mutable = { tag: n.tag };
    if (n.id !== undefined) out.id = n.id;
    if (n.attrs !== undefined) out.attrs = { ...n.attrs };
    if (n.text !== undefined) out.text = n.text;
    return out;
  };
  const root = shallow(spec);
  // Iterative: specs may be deeper than the call stack.
  const stack: Array<[NodeSpec, Mutable]> = [[spec, root]];
  while (stack.length > 0) {
    const [src, dst] = stack.pop() as [NodeSpec, Mutable];
    if (src.children === undefined) continue;
    const kids: Mutable[] = [];
    for (const c of src.children) {
      const k = shallow(c);
      kids.push(k);
      stack.push([c, k]);
    }
    dst.children = kids;
  }
  return root;
}
