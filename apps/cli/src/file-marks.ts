/**
 * Which events of a chain changed files, and how many (CLI-35, `strata log`): the chain is folded
 * once from the state before the first event shown, and each event's ops are read against the
 * state before it — a `<file>` inserted, removed or set — so a log costs one materialization, one
 * fold and time in the size of the ops, not of the workspace.
 */
import { diffWorkspaces } from "@strata/agent";
import type { Op, Tree } from "@strata/dom";
import { loadTree, materializeVersion, type Port } from "@strata/engine";
import { type EventId, type EventMeta, isAsyncStore } from "@strata/store";
import { changeCounts } from "./filediff.ts";

export interface FileCounts {
  readonly added: number;
  readonly modified: number;
  readonly deleted: number;
}

/**
 * The file counts of `ops` applied to `before`, read off the ops (O(ops)): an inserted `<file>`
 * is an add, a removed one a delete, one whose attributes are set a modify. `"diff"` when the ops
 * move or remove the record itself, or insert files inside a new element: then the two states
 * are compared. Undefined when the ops do not touch the record.
 */
function countOps(ops: readonly Op[], before: Tree | undefined): FileCounts | "diff" | undefined {
  const tagOf = (id: number): string | undefined => before?.rec(id as never)?.tag;
  let added = 0;
  const deleted = new Set<number>();
  const modified = new Set<number>();
  for (const op of ops) {
    switch (op[0]) {
      case "ins":
        // under the record (or under a `<workspace>` this event creates)
        if (op[3].tag === FILE && (tagOf(op[1] as number) ?? WORKSPACE) === WORKSPACE) added++;
        else if (op[3].tag === WORKSPACE && (op[3].children ?? []).length > 0) return "diff";
        break;
      case "set":
        if (tagOf(op[1] as number) === FILE) modified.add(op[1] as number);
        break;
      case "rm":
      case "mv": {
        const tag = tagOf(op[1] as number);
        if (tag === FILE && op[0] === "rm") deleted.add(op[1] as number);
        else if (tag === FILE || tag === WORKSPACE || tag === "meta") return "diff";
        break;
      }
      case "text":
      case "append":
        break;
      default:
        op satisfies never;
    }
  }
  for (const id of deleted) modified.delete(id);
  if (added + deleted.size + modified.size === 0) return undefined;
  return { added, modified: modified.size, deleted: deleted.size };
}

const FILE = "file";
const WORKSPACE = "workspace";

/**
 * The file change counts of each event of `shown` (events of the chain ending at `head`, oldest
 * first) that changed any file; `ops` gives each shown event's ops (undefined: not a patch).
 */
export async function fileMarks(
  store: Port,
  head: EventId,
  shown: readonly EventMeta[],
  ops: ReadonlyMap<EventId, readonly Op[]>,
): Promise<Map<EventId, FileCounts>> {
  const marks = new Map<EventId, FileCounts>();
  const first = shown[0];
  const last = shown.at(-1);
  if (first === undefined || last === undefined) return marks;
  const wanted = new Set(shown.map((e) => e.id));
  const before = first.depth > 1 ? await store.atDepth(head, first.depth - 1) : undefined;
  // The state before the first shown event with its lifecycle set (from the snapshot header), so
  // folding on from it walks no tree (CLI-37).
  const start = before === undefined ? undefined : await materializeVersion(store, before.id);
  // Over the network the folds below read the tree's structure from memory (decision 0037): its
  // pages are fetched first, in one call (tags and attributes; no text is read).
  if (start !== undefined && isAsyncStore(store)) await loadTree(start.tree, { texts: false });
  let prev: Tree | undefined = start?.tree;
  await materializeVersion(store, last.id, {
    ...(start === undefined ? { fromGenesis: true } : { from: { tree: start.tree, depth: (before as EventMeta).depth, live: start.live } }),
    onEvent(tree, id) {
      const o = ops.get(id);
      const counted = wanted.has(id) && o !== undefined ? countOps(o, prev) : undefined;
      const counts = counted === "diff" ? changeCounts(diffWorkspaces(prev, tree)) : counted;
      if (counts !== undefined && counts.added + counts.modified + counts.deleted > 0) marks.set(id, counts);
      prev = tree;
    },
  });
  return marks;
}

/** `files:+1 ~2 -0`, as `log` shows it. */
export function marksText(c: FileCounts): string {
  return `files:+${c.added} ~${c.modified} -${c.deleted}`;
}
