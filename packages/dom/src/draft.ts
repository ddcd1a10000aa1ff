/**
 * Authoring changes the natural way (DOM-32): call methods on a draft, read the draft's current
 * version as you go, and get back the ops — the only thing ever persisted. Every method applies its
 * op at once through `applyPatch`, so a draft fails at the call that is wrong, not later.
 */
import { type ApplyOptions, applyPatch } from "./apply.ts";
import type { Change, InsertChange, PatchEffect } from "./effect.ts";
import type { NodeId } from "./ids.ts";
import type { Op } from "./ops.ts";
import { type SelectOptions, select, selectOne } from "./select.ts";
import type { NodeSpec } from "./spec.ts";
import type { Element, Tree } from "./tree.ts";

export class TreeDraft {
  #tree: Tree;
  readonly #ops: Op[] = [];

  constructor(
    readonly base: Tree,
    private readonly options: ApplyOptions = {},
  ) {
    this.#tree = base;
  }

  /** The version with every op so far applied. */
  get tree(): Tree {
    return this.#tree;
  }

  /** The ops recorded so far, in order. */
  get ops(): readonly Op[] {
    return this.#ops;
  }

  /** Applies and records one op. Throws `DomError` (and records nothing) if it does not apply. */
  apply(op: Op): this {
    this.#tree = applyPatch(this.#tree, [op], this.options);
    this.#ops.push(op);
    return this;
  }

  /**
   * Applies and records `ops` as one patch (each page they touch is copied once, not once per op:
   * thousands of inserts cost one pass). Throws `DomError` (and records nothing) if any does not apply.
   */
  applyAll(ops: readonly Op[]): this {
    this.#tree = applyPatch(this.#tree, ops, this.options);
    for (const op of ops) this.#ops.push(op);
    return this;
  }

  /** Inserts `spec` under `parent` after `after` (null: first). Returns the new subtree root's id. */
  insert(parent: NodeId, after: NodeId | null, spec: NodeSpec): NodeId {
    const op: Op = ["ins", parent, after, spec];
    let root: NodeId | undefined;
    // The effect names the root the tree gave the subtree (DOM-2, DOM-39).
    this.#tree = applyPatch(this.#tree, [op], {
      ...this.options,
      onEffect: (e) => {
        root = (e.changes[0] as InsertChange).root;
        this.options.onEffect?.(e);
      },
    });
    this.#ops.push(op);
    return root as NodeId;
  }

  /** Inserts `spec` as the last child of `parent`. Returns the new element's id. */
  appendChild(parent: NodeId, spec: NodeSpec): NodeId {
    const last = this.#tree.rec(parent)?.last ?? 0;
    return this.insert(parent, last === 0 ? null : (last as NodeId), spec);
  }

  remove(id: NodeId): this {
    return this.apply(["rm", id]);
  }

  /** Sets attribute `name` (or removes it with `null`). */
  set(id: NodeId, name: string, value: string | null): this {
    return this.apply(["set", id, name, value]);
  }

  /** Moves `id` under `parent` after `after` (default: as the last child). */
  move(id: NodeId, parent: NodeId, after?: NodeId | null): this {
    let anchor = after;
    if (anchor === undefined) {
      const last = this.#tree.rec(parent)?.last ?? 0;
      // Already the last child: stay put (anchor on the current predecessor).
      const anchorId = last === id ? (this.#tree.rec(id)?.prev ?? 0) : last;
      anchor = anchorId === 0 ? null : (anchorId as NodeId);
    }
    return this.apply(["mv", id, parent, anchor]);
  }

  text(id: NodeId, value: string): this {
    return this.apply(["text", id, value]);
  }

  appendText(id: NodeId, chunk: string): this {
    return this.apply(["append", id, chunk]);
  }

  get(id: number): Element | undefined {
    return this.#tree.get(id);
  }

  select(selector: string, options?: SelectOptions): Element[] {
    return select(this.#tree, selector, options);
  }

  selectOne(selector: string, options?: SelectOptions): Element | undefined {
    return selectOne(this.#tree, selector, options);
  }
}

/**
 * Runs `recipe` on a draft of `tree` and returns the resulting version with the ops that produce it
 * (`applyPatch(tree, ops)` gives the same tree). If the recipe throws, nothing is returned.
 */
export function draft(tree: Tree, recipe: (d: TreeDraft) => void, options: ApplyOptions = {}): { tree: Tree; ops: Op[] } {
  const d = new TreeDraft(tree, options);
  recipe(d);
  return { tree: d.tree, ops: [...d.ops] };
}

/**
 * {@link draft}, with the ops' effect as one patch: what `applyPatch(tree, ops, { onEffect })`
 * reports, each change numbered by its op's place in the patch (DOM-32). The draft applied every
 * op already, so a caller that needs the patch's effect does not apply the ops a second time.
 */
export function draftWithEffect(
  tree: Tree,
  recipe: (d: TreeDraft) => void,
  options: Omit<ApplyOptions, "onEffect"> = {},
): { tree: Tree; ops: Op[]; effect: PatchEffect } {
  const changes: Change[] = [];
  const d: TreeDraft = new TreeDraft(tree, {
    ...options,
    onEffect: (e) => {
      const at = d.ops.length; // the op being applied is recorded after its effect
      for (const c of e.changes) changes.push(at === 0 ? c : { ...c, op: c.op + at });
    },
  });
  recipe(d);
  return { tree: d.tree, ops: [...d.ops], effect: { hwm: { before: tree.hwm, after: d.tree.hwm }, changes } };
}
