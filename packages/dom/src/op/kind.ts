/**
 * The contract every op kind implements (STYLE habit 1, 13): one module per kind holds how it is
 * checked and copied, applied (reporting its effect), inverted, re-authored under an id map, what
 * attribute values it writes and how it reads to a human. `registry.ts` lists the kinds; nothing
 * else in strata switches over them.
 */
import type { ApplyOptions } from "../apply.ts";
import type { EffectLog } from "../effect.ts";
import { DomError } from "../errors.ts";
import { isNodeId, type NodeId } from "../ids.ts";
import { describe } from "../names.ts";
import type { NodeSpec } from "../spec.ts";
import type { Tree } from "../tree.ts";
import type { TreeWriter } from "../writer.ts";
import type { Op } from "./registry.ts";

/**
 * A renaming of ids, applied to every id an op names (ProseMirror's `StepMap`). It must keep ids
 * in order (`a < b` ⇒ `map(a) < map(b)`), as `shiftMinted`'s does: the high-water mark of
 * `["set", 0, "hwm", n]` is mapped like an id.
 */
export type IdMap = (id: NodeId) => NodeId;

/**
 * Receives one attribute value an op writes, with what the op says of its element: the tag when
 * the op carries it (`ins`, whose ids are minted), the id when the op names it (`set`).
 */
export type AttrVisitor = (tag: string | undefined, name: string, value: string, id: NodeId | undefined) => void;

/** Receives one element an op adds: its id, its spec and its parent's id (DOM-44). */
export type MintVisitor = (id: NodeId, spec: NodeSpec, parent: NodeId) => void;

/** How `describeOp` writes a string an op carries, at most about `max` characters. */
export type Quote = (s: string, max: number) => string;

export interface OpDef<O extends Op> {
  readonly kind: O[0];
  /** Number of arguments after the kind. */
  readonly args: number;
  /**
   * Checks the arguments of an array that has this kind and the right length (DOM-15): ids,
   * anchors, names, strings, specs. Throws a `DomError`; never looks at a tree.
   */
  check(op: readonly unknown[]): void;
  /** A copy of a checked op that shares nothing mutable with it (decoding untrusted data). */
  copy(op: O): O;
  /**
   * Applies the op to the version being written (DOM-9 … DOM-13), checking it against that state
   * first, and reports what it did to `fx` when one is given (DOM-39). Throws a `DomError`.
   */
  apply(w: TreeWriter, op: O, options: ApplyOptions, fx: EffectLog | undefined): void;
  /**
   * The ops undoing `op`, from the state just before it (DOM-14); `[]` when `op` does not apply
   * there (applying it reports the error). Never an `hwm` op: `invertPatch` adds the one it needs.
   */
  invert(w: TreeWriter, op: O): Op[];
  /** `op` with every id it names passed through `map` (DOM-40); `op` itself shares no mutable part with the result. */
  mapIds(op: O, map: IdMap): O;
  /** True when applying the op may move the high-water mark (it mints, or sets the mark). */
  movesMark(op: O): boolean;
  /**
   * DOM-44: the high-water mark after the op applies where it was `hwm`, without a tree; `visit`
   * gets every element it adds, in the order the tree mints them (pre-order), with its id, spec
   * (children included) and parent's id.
   */
  minted(op: O, hwm: number, visit: MintVisitor | undefined): number;
  /** Calls `visit` for every attribute value the op writes (`null` removals are not values). */
  attrsWritten(op: O, visit: AttrVisitor): void;
  /**
   * Calls `visit` for every text the op writes, in document order: the texts of an inserted
   * subtree, a replaced text, an appended chunk (what search indexes, SE-1). Moves, removals and
   * attributes write none.
   */
  textsWritten(op: O, visit: (text: string) => void): void;
  /** One short line for humans (`strata log`); `tree`, when given, names elements. */
  describe(op: O, quote: Quote, tree: Tree | undefined): string;
}

/** Throws `bad-op` unless `v` is a node id. */
export function checkId(v: unknown, what: string): void {
  if (!isNodeId(v)) throw new DomError("bad-op", `${what} must be a node id (an integer from 1 to 2^31 - 1), got ${describe(v)}`);
}

/** Throws `bad-op` unless `v` is a node id or `null` (the first position). */
export function checkAnchor(v: unknown, what: string): void {
  if (v !== null && !isNodeId(v)) throw new DomError("bad-op", `${what} must be a node id or null (first position), got ${describe(v)}`);
}

/** An anchor (`null`: first position) through an id map. */
export function mapAnchor(after: NodeId | null, map: IdMap): NodeId | null {
  return after === null ? null : map(after);
}
