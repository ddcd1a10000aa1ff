/**
 * The plain-object layout immer was measured on in the library research (libraries.md §3): records
 * `{id, type, name, attrs, text, children, parent}` in buckets of 256 (`buckets[id >> 8][id & 255]`).
 * Used as the same-run baseline for edits and retained memory.
 */
import type { Tree } from "@strata/dom";

export interface BucketRec {
  id: number;
  type: "element";
  name: string;
  attrs: Record<string, string>;
  text: string;
  children: number[];
  parent: number | null;
}
export interface BucketState {
  buckets: Record<number, BucketRec>[];
  root: number;
  nextId: number;
}

/** The same tree as plain records in buckets of 256. */
export function bucketState(tree: Tree): BucketState {
  const buckets: Record<number, BucketRec>[] = [];
  for (let b = 0; b <= tree.hwm >> 8; b++) buckets.push({});
  for (let id = 1; id <= tree.hwm; id++) {
    const e = tree.get(id);
    if (e === undefined) continue;
    (buckets[id >> 8] as Record<number, BucketRec>)[id & 255] = {
      id,
      type: "element",
      name: e.tag,
      attrs: { ...e.attrs },
      text: e.text,
      children: e.children.map((c) => c.id),
      parent: e.parent?.id ?? null,
    };
  }
  return { buckets, root: tree.rootId, nextId: tree.hwm + 1 };
}
