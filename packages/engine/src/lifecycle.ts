/**
 * One lifecycle operation (L7, EN-20 … EN-22). Rewind, fork and resume all materialize a target
 * tree and diff its lifecycle-bearing elements against what is live; the result says what to
 * terminate, what to spawn, and what to leave alone. Feature code consumes this list; it never
 * registers rewind, fork or resume hooks of its own.
 *
 * Finding those elements must not read a whole tree (a target is loaded lazily): every version
 * comes with the set of its lifecycle-bearing ids, kept up to date per patch from what the patch
 * did (only elements a patch touches can change membership) and stored in snapshot headers.
 */
import { type Attrs, type Element, eachInserted, type PatchEffect, type Tree, walkTree } from "@strata/dom";

const OPEN_CALL = new Set(["arguments", "pending", "running"]);
const ENDED = new Set(["done", "failed", "cancelled", "exited"]);

/**
 * Whether an element stands for something running outside the tree: a tool call not yet settled
 * (status arguments, pending or running), or a job or subagent that has not ended.
 */
export function isLifecycle(tag: string, attrs: Attrs | Readonly<Record<string, string>>): boolean {
  if (tag === "call") return OPEN_CALL.has(attrs.status ?? "");
  if (tag === "job" || tag === "subagent") return !ENDED.has(attrs.status ?? "");
  return false;
}

/** The lifecycle-bearing ids of a tree, by scanning it (for small trees and tests). */
export function scanLifecycle(tree: Tree): Set<number> {
  const out = new Set<number>();
  walkTree(tree, tree.rootId, (r) => {
    if (isLifecycle(r.tag, r.attrs)) out.add(r.id);
  });
  return out;
}

/**
 * Updates `live` in place to the lifecycle set of `after`, which a patch with effect `effect` made
 * (the dom reports it: `applyPatch`'s `onEffect`). Only elements the patch inserted or wrote
 * attributes of can enter or leave the set, and only a removal can take an untouched one away.
 * Costs the size of the effect: no walk of the tree.
 */
export function updateLifecycle(live: Set<number>, after: Tree, effect: PatchEffect): Set<number> {
  const check = (id: number): void => {
    const r = after.rec(id);
    if (r !== undefined && isLifecycle(r.tag, r.attrs)) live.add(id);
    else live.delete(id);
  };
  for (const c of effect.changes)
    switch (c.type) {
      case "insert":
        eachInserted(c, check);
        break;
      case "attr":
        check(c.id);
        break;
      case "remove":
        // Against `after`: a later op of the patch may have brought an element back (restore form).
        for (const id of c.ids) if (live.has(id) && !after.has(id)) live.delete(id);
        break;
      case "text":
      case "move":
        break; // membership depends on tag and attributes only
      default: {
        const never: never = c;
        throw new Error(`unknown change ${(never as { type: string }).type}`);
      }
    }
  return live;
}

export interface LifecycleEntry {
  /** Durable identity: `tag:…` (see {@link durableKey}). */
  readonly key: string;
  readonly element: Element;
}

export interface LifecycleWork {
  /** Live before, gone in the target: stop them (kill the process, cancel the call). */
  readonly terminate: readonly LifecycleEntry[];
  /** In the target, not live before: start or resume them. */
  readonly spawn: readonly LifecycleEntry[];
  /** In both: leave the process alone (the element may have moved or changed attributes). */
  readonly retained: readonly { readonly key: string; readonly before: Element; readonly after: Element }[];
}

export const NO_WORK: LifecycleWork = Object.freeze({ terminate: [], spawn: [], retained: [] });

/**
 * The durable identity of a lifecycle element. An explicit `key` attribute (the tool layer stamps
 * one on every call) wins; a job or subagent is known by its `id`; otherwise the node id, which in
 * strata is durable too (minted by replay, never reused in a session, L5). A call's provider id
 * (`id` on `<call>`) is never used alone: providers repeat them.
 */
export function durableKey(e: Element): string {
  const key = e.attr("key");
  if (key !== undefined) return `${e.tag}:key=${key}`;
  const id = e.attr("id");
  if (id !== undefined && (e.tag === "job" || e.tag === "subagent")) return `${e.tag}:id=${id}`;
  return `${e.tag}:node=${e.id}`;
}

/** The elements of `ids` grouped by durable key, each group in id order (a key may be shared). */
function byKey(tree: Tree, ids: ReadonlySet<number>): Map<string, Element[]> {
  const out = new Map<string, Element[]>();
  for (const id of [...ids].sort((a, b) => a - b)) {
    const e = tree.get(id);
    if (e === undefined) continue;
    const key = durableKey(e);
    const group = out.get(key);
    if (group === undefined) out.set(key, [e]);
    else group.push(e);
  }
  return out;
}

/** A tree version with its lifecycle set. */
export interface Versioned {
  readonly tree: Tree;
  readonly live: ReadonlySet<number>;
}

/**
 * The work to go from `live` to `target` (`live` undefined: resume from nothing). Elements are
 * matched by durable key. Several elements sharing a key (two running `<job id="build">`) are each
 * their own entry, with the same key: they are paired first by node id (the same element on both
 * sides), then in id order; the unpaired ones are terminated or spawned.
 */
export function lifecycleWork(live: Versioned | undefined, target: Versioned): LifecycleWork {
  const before = live === undefined ? new Map<string, Element[]>() : byKey(live.tree, live.live);
  const after = byKey(target.tree, target.live);
  const terminate: LifecycleEntry[] = [];
  const spawn: LifecycleEntry[] = [];
  const retained: { key: string; before: Element; after: Element }[] = [];
  for (const [key, olds] of before) {
    const news = after.get(key) ?? [];
    const paired = new Set<Element>();
    const unpaired: Element[] = [];
    for (const element of olds) {
      const same = news.find((e) => e.id === element.id && !paired.has(e));
      if (same === undefined) unpaired.push(element);
      else {
        paired.add(same);
        retained.push({ key, before: element, after: same });
      }
    }
    const rest = news.filter((e) => !paired.has(e));
    for (let i = 0; i < unpaired.length; i++) {
      const element = unpaired[i] as Element;
      const next = rest[i];
      if (next === undefined) terminate.push({ key, element });
      else retained.push({ key, before: element, after: next });
    }
    for (let i = unpaired.length; i < rest.length; i++) spawn.push({ key, element: rest[i] as Element });
  }
  for (const [key, news] of after) if (!before.has(key)) for (const element of news) spawn.push({ key, element });
  return { terminate, spawn, retained };
}
