/**
 * File effects in re-runs (WS-29): what each call of a line recorded of the files, read back from
 * the log; the re-run's directory and the files it starts from; and the comparison of a
 * recording's file effects with a re-run's.
 *
 * A call's file effects are the `<file>` ops of its settle event (`call.outcome`, or
 * `call.interrupted`: WS-22). They are read from the events' ops, with the trees on both sides
 * only for the paths the ops touch, so a line of a thousand calls over ten thousand files costs
 * the calls' changes, not calls × files (an event whose ops are not plain `<file>` edits — a
 * whole `<workspace>` inserted or removed — falls back to the full diff of the two records).
 */
import { mkdirSync, readdirSync } from "node:fs";
import type { Element, NodeSpec, NodeRecord as Rec, Tree } from "@strata/dom";
import type { Port } from "@strata/engine";
import { decodeEvent, EngineError, loadTree, materialize, materializeVersion } from "@strata/engine";
import { type EventId, isAsyncStore, type Store, type StoredEvent } from "@strata/store";
import type { Divergence } from "./rerun.ts";
import { LABEL } from "./vocabulary.ts";
import { checkoutWorkspace } from "./workspace/checkout.ts";
import { diffWorkspaces, type FileChange, type FileEntry, type FileMode, WS, workspaceElement } from "./workspace/files.ts";
import { byPath } from "./workspace/paths.ts";
import type { WorkspaceTracker } from "./workspace/tracker.ts";

/** One call's recorded file effects: the changes of its settle event, and the trees either side of it. */
export interface CallFileRecord {
  readonly event: EventId;
  readonly changes: readonly FileChange[];
  readonly before: Tree;
  readonly after: Tree;
}

/** What a line of history recorded of the files after an event. */
export interface LineFiles {
  /** By call element id: the calls whose settle event changed files. */
  readonly calls: ReadonlyMap<number, CallFileRecord>;
  /** The first `workspace.baseline` after the start, and the tree right after it. */
  readonly baseline: { readonly event: EventId; readonly tree: Tree } | undefined;
  /** Whether the line records a workspace anywhere after the start. */
  readonly recorded: boolean;
}

const SETTLE = new Set<string>([LABEL.callOutcome, LABEL.callInterrupted]);
const BATCH = 2000;

/** The events of the chain ending at `head`, after `depth`, in order, read in batches. */
function* chainAfter(store: Store, head: EventId, depth: number): Generator<StoredEvent> {
  for (let d = depth; ; ) {
    const batch = store.chain(head, d, BATCH);
    if (batch.length === 0) return;
    yield* batch;
    d = (batch[batch.length - 1] as StoredEvent).depth;
  }
}

/** The same over the asynchronous port, read ahead whole (the fold that walks it cannot wait). */
async function chainAfterAsync(store: Port, head: EventId, depth: number): Promise<Iterator<StoredEvent>> {
  const all: StoredEvent[] = [];
  for (let d = depth; ; ) {
    const batch = await store.chain(head, d, BATCH);
    if (batch.length === 0) break;
    for (const e of batch) all.push(e);
    d = (batch[batch.length - 1] as StoredEvent).depth;
  }
  return all.values();
}

/**
 * The file effects recorded on the chain from `start` (exclusive) to `head`: one fold of the
 * events after `start`, the ops of each settle event examined on the way. Either port: over the
 * asynchronous one the tree at `start` is loaded whole first, so the fold and the lookups in it
 * read only what is in memory.
 */
export async function lineFiles(store: Port, head: EventId, start: EventId): Promise<LineFiles> {
  const startMeta = await store.eventMeta(start);
  if (startMeta === undefined) throw new Error(`event ${start} does not exist`);
  const calls = new Map<number, CallFileRecord>();
  let baseline: LineFiles["baseline"];
  let recorded = false;
  let prev = await materialize(store, start);
  if (isAsyncStore(store)) await loadTree(prev);
  const events = isAsyncStore(store) ? await chainAfterAsync(store, head, startMeta.depth) : chainAfter(store, head, startMeta.depth);
  if (head !== start)
    await materializeVersion(store, head, {
      from: { tree: prev, depth: startMeta.depth },
      onEvent: (tree, id) => {
        const e = events.next().value as StoredEvent | undefined;
        const before = prev;
        prev = tree;
        if (e === undefined || e.id !== id) throw new Error(`the chain of ${head} changed while it was read`);
        if (!recorded && workspaceElement(tree) !== undefined) recorded = true;
        if (e.label === LABEL.workspaceBaseline && baseline === undefined) baseline = { event: id, tree };
        const call = settledCall(e);
        if (call === undefined) return;
        const decoded = decodeEvent(e);
        if (decoded.kind !== "patch") return;
        const changes = opFileChanges(before, tree, decoded.ops) ?? diffWorkspaces(before, tree);
        if (changes.length > 0) calls.set(call, { event: id, changes, before, after: tree });
      },
    });
  return { calls, baseline, recorded };
}

/** The call element an event settles (`by="e<id>"` on an outcome or interrupt), if it is one. */
function settledCall(e: StoredEvent): number | undefined {
  if (!SETTLE.has(e.label ?? "") || e.by === null || !/^e[1-9][0-9]*$/.test(e.by)) return undefined;
  return Number(e.by.slice(1));
}

/** Whether a spec holds a `<file>` or `<workspace>` anywhere (an op that is not a plain file edit). */
function holdsRecord(spec: NodeSpec): boolean {
  const stack: NodeSpec[] = [...(spec.children ?? [])];
  while (stack.length > 0) {
    const s = stack.pop() as NodeSpec;
    if (s.tag === WS.file || s.tag === WS.workspace) return true;
    stack.push(...(s.children ?? []));
  }
  return false;
}

/**
 * The file changes of one event from its ops: the paths its `<file>` ops touch, looked up on both
 * sides. Undefined when the ops are more than plain file edits (then the caller diffs the records).
 */
function opFileChanges(before: Tree, after: Tree, ops: readonly import("@strata/dom").Op[]): FileChange[] | undefined {
  const paths = new Set<string>();
  const pathOf = (r: Rec | undefined): void => {
    const p = r?.tag === WS.file ? r.attrs[WS.path] : undefined;
    if (p !== undefined) paths.add(p);
  };
  for (const op of ops) {
    switch (op[0]) {
      case "ins": {
        const spec = op[3];
        if (spec.tag === WS.workspace || holdsRecord(spec)) return undefined;
        const p = spec.tag === WS.file ? spec.attrs?.[WS.path] : undefined;
        if (p !== undefined) paths.add(p);
        break;
      }
      case "set":
        if (typeof op[1] !== "number") break;
        pathOf(before.rec(op[1]));
        pathOf(after.rec(op[1]));
        break;
      case "rm": {
        const r = before.rec(op[1]);
        if (r?.tag === WS.file) pathOf(r);
        // A removed subtree that held the record (its `<workspace>`, or `<meta>`): diff the records.
        else if (r?.tag === WS.workspace) return undefined;
        else if (r !== undefined && r.first !== 0) {
          const held = workspaceElement(before)?.id;
          if (held !== undefined && workspaceElement(after)?.id !== held) return undefined;
        }
        break;
      }
      case "mv": {
        const r = before.rec(op[1]);
        if (r?.tag === WS.file || r?.tag === WS.workspace) return undefined;
        break;
      }
      default:
        break; // text ops never touch a <file> (it has no text)
    }
  }
  if (paths.size === 0) return [];
  const was = entriesFor(before, paths);
  const now = entriesFor(after, paths);
  const out: FileChange[] = [];
  for (const p of [...paths].sort(byPath)) {
    const b = was.get(p);
    const a = now.get(p);
    if (b === undefined && a !== undefined) out.push({ type: "add", entry: a });
    else if (b !== undefined && a === undefined) out.push({ type: "delete", before: b });
    else if (b !== undefined && a !== undefined && (b.hash !== a.hash || b.mode !== a.mode || b.size !== a.size))
      out.push({ type: "modify", before: b, entry: a });
  }
  return out;
}

/** The entries of `tree`'s record at `paths` (one walk of `<workspace>`'s children, reading only `path`). */
function entriesFor(tree: Tree, paths: ReadonlySet<string>): Map<string, FileEntry> {
  const out = new Map<string, FileEntry>();
  const ws: Element | undefined = workspaceElement(tree);
  for (let id = ws === undefined ? 0 : (tree.rec(ws.id)?.first ?? 0); id !== 0; ) {
    const r = tree.rec(id) as Rec;
    id = r.next;
    const p = r.tag === WS.file ? r.attrs[WS.path] : undefined;
    if (p === undefined || !paths.has(p)) continue;
    out.set(p, {
      path: p,
      hash: r.attrs[WS.hash] ?? "",
      mode: (r.attrs[WS.mode] ?? "644") as FileMode,
      size: Number(r.attrs[WS.size] ?? 0),
    });
  }
  return out;
}

/** What a change leaves at its path, for comparing and for a report: `644 12 bytes sha256:…`, or `deleted`. */
export function resultOf(c: FileChange | undefined, absent = "unchanged"): string {
  if (c === undefined) return absent;
  if (c.type === "delete") return "deleted";
  const e = c.entry;
  return `${e.mode === "link" ? "link" : `mode ${e.mode}`}, ${e.size} bytes, sha256 ${e.hash.slice(0, 12)}`;
}

/**
 * The first path whose resulting state differs between two change lists, with both states
 * (`absent` for a path one list does not name); undefined when none.
 */
export function firstFileDifference(
  a: readonly FileChange[],
  b: readonly FileChange[],
  absent = "unchanged",
): { path: string; before: string; after: string } | undefined {
  const key = (c: FileChange): string => (c.type === "delete" ? c.before.path : c.entry.path);
  const left = new Map(a.map((c) => [key(c), c]));
  const right = new Map(b.map((c) => [key(c), c]));
  for (const p of [...new Set([...left.keys(), ...right.keys()])].sort(byPath)) {
    const x = resultOf(left.get(p), absent);
    const y = resultOf(right.get(p), absent);
    if (x !== y) return { path: p, before: x, after: y };
  }
  return undefined;
}

/**
 * The tree whose record holds the files at the fork point: its own, else the line's first
 * baseline (before it no tool had written, so the files were those it recorded); else none.
 */
export function startingFiles(atFork: Tree, line: LineFiles): Tree | undefined {
  return workspaceElement(atFork) !== undefined ? atFork : line.baseline?.tree;
}

/** The re-run's directory: new or empty (it is written), then given the starting files. */
export async function prepareDirectory(ws: WorkspaceTracker, initial: Tree | undefined, store: Port): Promise<void> {
  let entries: string[] = [];
  try {
    entries = readdirSync(ws.root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      throw new EngineError(
        "bad-input",
        `the re-run's workspace ${ws.root} cannot be read (${(e as Error).message}); give a new or empty directory`,
      );
  }
  if (entries.length > 0)
    throw new EngineError(
      "bad-input",
      `the re-run's workspace ${ws.root} is not empty; give a new or empty directory (the re-run writes the recorded files there)`,
    );
  mkdirSync(ws.root, { recursive: true });
  if (initial !== undefined) await checkoutWorkspace(initial, ws.root, store);
}

/** The files of both lines, when they are compared. */
export interface FilePair {
  readonly source: LineFiles;
  readonly rerun: LineFiles;
}

/** The baselines differ: the re-run did not start from the recorded files. */
export function baselineDivergence(session: { readonly branch: string }, files: FilePair): Divergence | undefined {
  const a = files.source.baseline;
  const b = files.rerun.baseline;
  if (a === undefined && b === undefined) return undefined;
  const diff = firstFileDifference(
    a === undefined ? [] : diffWorkspaces(undefined, a.tree),
    b === undefined ? [] : diffWorkspaces(undefined, b.tree),
    "not recorded",
  );
  if (diff === undefined && (a === undefined) === (b === undefined)) return undefined;
  const path = diff?.path;
  return {
    what: "files",
    source: { element: null, event: a?.event ?? null },
    rerun: { element: null, event: b?.event ?? null },
    before: diff?.before ?? (a === undefined ? "(no baseline)" : "(baseline)"),
    after: diff?.after ?? (b === undefined ? "(no baseline)" : "(baseline)"),
    message:
      path === undefined
        ? `the workspace baseline is ${a === undefined ? "missing from the recording" : "missing from the re-run"}`
        : `the re-run's workspace baseline differs from the recording's at ${path} (${session.branch}: ${diff?.before}; re-run: ${diff?.after})`,
    ...(path !== undefined ? { path } : {}),
  };
}
