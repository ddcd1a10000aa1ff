/**
 * What a patch did (DOM-39, STYLE habit 13): the ids it minted, the subtrees it removed, the
 * attributes and texts it wrote, the elements it moved, and the high-water mark before and after.
 * The writer that applies the ops records it as it goes, when asked to (`applyPatch`'s `onEffect`,
 * `applyWithEffect`), so no consumer re-derives from the ops what each kind does. Like a diff it
 * carries before and after; unlike a diff it lists what each op did, in op order.
 *
 * The vocabulary is closed and smaller than the op set: a new op kind reports its effect in these
 * five change types, so code that reads effects does not change when an op kind is added.
 */
import type { DiffPosition } from "./diff.ts";
import type { NodeId } from "./ids.ts";
import { eachSpecNode, type NodeSpec } from "./spec.ts";

/** A subtree was inserted at `at`. */
export interface InsertChange {
  readonly type: "insert";
  /** Index of the op in its patch. */
  readonly op: number;
  readonly root: NodeId;
  readonly at: DiffPosition;
  /** The inserted subtree as the op gave it. */
  readonly spec: NodeSpec;
  /**
   * True when the tree minted the ids: they are `root … root + count - 1`, in the spec's pre-order
   * (DOM-2). False for a restore-form insert, whose ids are the spec's own.
   */
  readonly minted: boolean;
  /** Number of elements inserted. */
  readonly count: number;
}

/** A subtree was removed from `at`. */
export interface RemoveChange {
  readonly type: "remove";
  readonly op: number;
  readonly root: NodeId;
  readonly at: DiffPosition;
  /** Every removed id, in pre-order (`root` first). */
  readonly ids: readonly NodeId[];
}

/** Attribute `name` of `id` was written (`null`: absent). Reported also when the value stays the same. */
export interface AttrChange {
  readonly type: "attr";
  readonly op: number;
  readonly id: NodeId;
  readonly name: string;
  readonly before: string | null;
  readonly after: string | null;
}

/** The text of `id` was replaced (`set`) or extended (`append`). Reported also when it stays the same. */
export interface TextChange {
  readonly type: "text";
  readonly op: number;
  readonly id: NodeId;
  readonly mode: "set" | "append";
  readonly before: string;
  readonly after: string;
}

/** Element `id` was moved (with its subtree). Reported also when it was already there (`from` equals `to`). */
export interface MoveChange {
  readonly type: "move";
  readonly op: number;
  readonly id: NodeId;
  readonly from: DiffPosition;
  readonly to: DiffPosition;
}

export type Change = InsertChange | RemoveChange | AttrChange | TextChange | MoveChange;
export type ChangeType = Change["type"];

/** What one patch did. `changes` are in the order the ops made them. */
export interface PatchEffect {
  readonly hwm: { readonly before: number; readonly after: number };
  readonly changes: readonly Change[];
}

/**
 * Calls `visit` for every inserted element, in pre-order: its id, its node of the spec, and its
 * index in the subtree (DOM-2; for a minted insert, `id` is `root + index`).
 */
export function eachInserted(change: InsertChange, visit: (id: NodeId, node: NodeSpec, index: number) => void): void {
  const root = change.root as number;
  const minted = change.minted;
  eachSpecNode(change.spec, (node, index) => visit((minted ? root + index : node.id) as NodeId, node, index));
}

/** @internal the recorder the op kinds write to while a patch is applied. */
export class EffectLog {
  /** Index of the op being applied. */
  op = 0;
  readonly #changes: Change[] = [];

  constructor(readonly hwmBefore: number) {}

  insert(root: NodeId, at: DiffPosition, spec: NodeSpec, minted: boolean, count: number): void {
    this.#changes.push({ type: "insert", op: this.op, root, at, spec, minted, count });
  }

  remove(root: NodeId, at: DiffPosition, ids: readonly NodeId[]): void {
    this.#changes.push({ type: "remove", op: this.op, root, at, ids });
  }

  attr(id: NodeId, name: string, before: string | null, after: string | null): void {
    this.#changes.push({ type: "attr", op: this.op, id, name, before, after });
  }

  text(id: NodeId, mode: "set" | "append", before: string, after: string): void {
    this.#changes.push({ type: "text", op: this.op, id, mode, before, after });
  }

  move(id: NodeId, from: DiffPosition, to: DiffPosition): void {
    this.#changes.push({ type: "move", op: this.op, id, from, to });
  }

  finish(hwmAfter: number): PatchEffect {
    return { hwm: { before: this.hwmBefore, after: hwmAfter }, changes: this.#changes };
  }
}
