/**
 * The workspace as the session tree records it (DESIGN §10, decision 0027, WS-1 … WS-4):
 *
 *   <meta>
 *     <workspace dir="/abs/dir/of/this/branch" cap="16777216">
 *       <file path="src/a.ts" hash="<sha256 of the bytes>" mode="644" size="123"/>
 *       <file path="bin/run.sh" hash="…" mode="755" size="40"/>
 *       <file path="link" hash="<sha256 of the target text>" mode="link" size="9"/>
 *     </workspace>
 *   </meta>
 *
 * Bytes are blobs (`store.putBlob`), shared by every branch and session of the database. A file
 * change is an op on these elements — `ins` a `<file>`, `set` its hash/size/mode, `rm` it — so it
 * rides in the same event as the tool outcome that caused it (L2). Everything here is a pure
 * function of a tree: reading the files, the diff of two trees, and writing changes into a draft.
 */
import type { Element, NodeId, NodeSpec, Op, NodeRecord as Rec, Tree, TreeDraft } from "@strata/dom";
import { WorkspaceStateError } from "./errors.ts";
import { byPath, pathProblem } from "./paths.ts";

/** Element and attribute names of the workspace record: a persisted format. */
export const WS = Object.freeze({
  workspace: "workspace",
  file: "file",
  /** `<workspace dir>`: the branch's working directory (absolute). */
  dir: "dir",
  /** `<workspace cap>`: the size cap per file, in bytes, the record was made with. */
  cap: "cap",
  path: "path",
  hash: "hash",
  mode: "mode",
  size: "size",
} as const);

/** Labels of the workspace's own events (a call's file changes ride in its outcome event instead). */
export const WS_LABEL = Object.freeze({
  /** The full record of the directory, before the first tool that may write runs. */
  baseline: "workspace.baseline",
  /** Changes made outside the agent, recorded (by `--force`) before a restore overwrites them. */
  outside: "workspace.outside",
} as const);

/** `<diag kind>` of a file left out of the record (`path`, `size`, `reason`). */
export const DIAG_WORKSPACE_SKIPPED = "workspace-skipped";

/** The default size cap per file: larger files are left out with a diag (WS-6). */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

export type FileMode = "644" | "755" | "link";
const MODES: ReadonlySet<string> = new Set<FileMode>(["644", "755", "link"]);

export interface FileEntry {
  readonly path: string;
  /** sha256 (hex) of the bytes — a symlink's bytes are its target text. */
  readonly hash: string;
  readonly mode: FileMode;
  /** Bytes. */
  readonly size: number;
}

export type FileChange =
  | { readonly type: "add"; readonly entry: FileEntry }
  | { readonly type: "modify"; readonly before: FileEntry; readonly entry: FileEntry }
  | { readonly type: "delete"; readonly before: FileEntry };

const SHA256 = /^[0-9a-f]{64}$/;
const SIZE = /^(0|[1-9][0-9]{0,15})$/;

function metaRec(tree: Tree): Rec | undefined {
  for (let id = tree.rec(tree.rootId)?.first ?? 0; id !== 0; ) {
    const r = tree.rec(id) as Rec;
    if (r.tag === "meta") return r;
    id = r.next;
  }
  return undefined;
}

function workspaceRec(tree: Tree): Rec | undefined {
  const meta = metaRec(tree);
  for (let id = meta?.first ?? 0; id !== 0; ) {
    const r = tree.rec(id) as Rec;
    if (r.tag === WS.workspace) return r;
    id = r.next;
  }
  return undefined;
}

/** `<meta><workspace>`, or undefined before the baseline (or in a tree without strata's skeleton). */
export function workspaceElement(tree: Tree): Element | undefined {
  const r = workspaceRec(tree);
  return r === undefined ? undefined : tree.get(r.id);
}

/** `<workspace dir>`: the working directory recorded for this branch line, if any. */
export function workspaceDir(tree: Tree): string | undefined {
  return workspaceRec(tree)?.attrs[WS.dir];
}

/** `<workspace cap>` as a number, if recorded and valid. */
export function workspaceCap(tree: Tree): number | undefined {
  const v = workspaceRec(tree)?.attrs[WS.cap];
  return v !== undefined && SIZE.test(v) ? Number(v) : undefined;
}

function badEntry(r: Rec, why: string): never {
  throw new WorkspaceStateError("bad-entry", `<file> element ${r.id} ${why}; the workspace record was not written by strata`);
}

/** The `<file>` record `r` as an entry; `bad-entry` (naming the element) when it is malformed. */
function entryOf(r: Rec): FileEntry & { readonly id: NodeId } {
  const { path, hash, mode, size } = r.attrs;
  if (path === undefined) return badEntry(r, "has no path");
  const problem = pathProblem(path);
  if (problem !== undefined) return badEntry(r, `has path ${JSON.stringify(path)}: ${problem}`);
  if (hash === undefined || !SHA256.test(hash)) return badEntry(r, `(${path}) has no sha256 hash`);
  if (mode === undefined || !MODES.has(mode)) return badEntry(r, `(${path}) has mode ${JSON.stringify(mode)}; expected 644, 755 or link`);
  if (size === undefined || !SIZE.test(size)) return badEntry(r, `(${path}) has size ${JSON.stringify(size)}; expected a byte count`);
  return Object.freeze({ path, hash, mode: mode as FileMode, size: Number(size), id: r.id });
}

/**
 * Checked entries by record. Records are immutable and shared by every version that did not
 * change them, so a record is parsed and checked once, not once per capture of a large tree.
 */
const ENTRIES = new WeakMap<Rec, FileEntry & { readonly id: NodeId }>();

/**
 * Checked entries by element id, across trees: a tree materialized afresh (`session.at`, a
 * checkout at another event) has new records for the same elements, and most of them carry the
 * attributes already checked. An entry is reused only when every attribute it was made from is
 * the same string, so the check it passed holds. Bounded: cleared when full.
 */
const BY_ID = new Map<NodeId, FileEntry & { readonly id: NodeId }>();
const BY_ID_MAX = 1 << 18;

/** The entry checked before for `r`'s element with exactly `r`'s attributes, if any. */
function sameAsSeen(r: Rec): (FileEntry & { readonly id: NodeId }) | undefined {
  const seen = BY_ID.get(r.id);
  if (seen === undefined) return undefined;
  const a = r.attrs;
  return a[WS.path] === seen.path && a[WS.hash] === seen.hash && a[WS.mode] === seen.mode && a[WS.size] === String(seen.size)
    ? seen
    : undefined;
}

/** The last trees read, with their files (a capture and the commit of its changes read the same tree). */
const BY_TREE = new WeakMap<Tree, ReadonlyMap<string, FileEntry & { readonly id: NodeId }>>();

/**
 * The tracked files of `tree`, by path (empty before the baseline). Each entry is checked (WS-2):
 * a malformed `<file>`, an unsafe path or a path recorded twice is `bad-entry`. The map is the
 * caller's own (a fresh one each call); its entries are frozen.
 */
export function workspaceFiles(tree: Tree): Map<string, FileEntry & { readonly id: NodeId }> {
  return new Map(trackedFiles(tree));
}

/** `workspaceFiles` without the copy, for this module's own readers (which never change it). */
export function trackedFiles(tree: Tree): ReadonlyMap<string, FileEntry & { readonly id: NodeId }> {
  const cached = BY_TREE.get(tree);
  if (cached !== undefined) return cached;
  const out = new Map<string, FileEntry & { readonly id: NodeId }>();
  for (const entry of fileList(tree)) {
    const twice = out.get(entry.path);
    if (twice !== undefined) throw duplicate(entry.path, twice.id, entry.id);
    out.set(entry.path, entry);
  }
  BY_TREE.set(tree, out);
  return out;
}

/** `bad-entry` for a path recorded twice. */
export function duplicate(path: string, a: NodeId, b: NodeId): WorkspaceStateError {
  return new WorkspaceStateError("bad-entry", `path ${JSON.stringify(path)} is recorded twice (elements ${a} and ${b})`);
}

/** The `<file>` entries of `tree` in document order, each checked (finding duplicates is the caller's). */
export function fileList(tree: Tree): (FileEntry & { readonly id: NodeId })[] {
  const out: (FileEntry & { readonly id: NodeId })[] = [];
  const ws = workspaceRec(tree);
  for (let id = ws?.first ?? 0; id !== 0; ) {
    const r = tree.rec(id) as Rec;
    id = r.next;
    if (r.tag !== WS.file) continue;
    let entry = ENTRIES.get(r);
    if (entry === undefined) {
      entry = sameAsSeen(r) ?? entryOf(r);
      ENTRIES.set(r, entry);
      if (BY_ID.size >= BY_ID_MAX) BY_ID.clear();
      BY_ID.set(r.id, entry);
    }
    out.push(entry);
  }
  return out;
}

/**
 * Checks that no tracked path lies below another tracked path (`a` and `a/b`): such a record
 * cannot exist on a disk, and writing it would follow `a` if it were a link. `bad-entry` if so.
 */
export function checkNoNesting(paths: Iterable<string>): void {
  const all = new Set(paths);
  for (const p of all)
    for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) {
      const above = p.slice(0, i);
      if (all.has(above))
        throw new WorkspaceStateError("bad-entry", `the record tracks both ${JSON.stringify(above)} and ${JSON.stringify(p)} below it`);
    }
}

function fileSpec(e: FileEntry): NodeSpec {
  return { tag: WS.file, attrs: { [WS.path]: e.path, [WS.hash]: e.hash, [WS.mode]: e.mode, [WS.size]: String(e.size) } };
}

/**
 * Makes sure the draft has `<meta><workspace>` and returns its id; `attrs` (e.g. `dir`, `cap`) are
 * set on it when given and different. `bad-entry` when the tree has no `<meta>`.
 */
export function ensureWorkspace(d: TreeDraft, attrs: Readonly<Partial<Record<typeof WS.dir | typeof WS.cap, string>>> = {}): NodeId {
  let ws = workspaceRec(d.tree);
  if (ws === undefined) {
    const meta = metaRec(d.tree);
    if (meta === undefined)
      throw new WorkspaceStateError("bad-entry", "the session tree has no <meta>; it was not created by strata's default skeleton");
    d.appendChild(meta.id, { tag: WS.workspace });
    ws = workspaceRec(d.tree) as Rec;
  }
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && ws.attrs[k] !== v) d.set(ws.id, k, v);
  return ws.id;
}

/**
 * Writes `changes` into a draft of the tree they were computed against (WS-3): an add inserts a
 * `<file>` (creating `<workspace>` if the tree has none), a modify sets only the attributes that
 * differ, a delete removes the element. `bad-change` when a change does not fit the draft (adding
 * a tracked path, modifying or deleting an untracked one); nothing is applied then.
 */
export function applyFileChanges(d: TreeDraft, changes: readonly FileChange[]): void {
  if (changes.length === 0) return;
  // The elements of the changed paths only: one pass over the (cached) entries, no map of them all.
  const named = new Set(changes.map(changePath));
  const files = new Map<string, FileEntry & { readonly id: NodeId }>();
  for (const e of BY_TREE.has(d.tree)
    ? (BY_TREE.get(d.tree) as ReadonlyMap<string, FileEntry & { readonly id: NodeId }>).values()
    : fileList(d.tree))
    if (named.has(e.path)) {
      const twice = files.get(e.path);
      if (twice !== undefined) throw duplicate(e.path, twice.id, e.id);
      files.set(e.path, e);
    }
  // Check everything first, so a bad list leaves the draft as it was.
  const seen = new Set<string>();
  for (const c of changes) {
    const path = changePath(c);
    if (c.type === "modify" && c.before.path !== c.entry.path)
      throw new WorkspaceStateError(
        "bad-change",
        `a modify of ${JSON.stringify(c.before.path)} names another path (${JSON.stringify(c.entry.path)})`,
      );
    if (seen.has(path)) throw new WorkspaceStateError("bad-change", `the change list names ${JSON.stringify(path)} twice`);
    seen.add(path);
    const tracked = files.has(path);
    if (c.type === "add" && tracked)
      throw new WorkspaceStateError("bad-change", `cannot add ${JSON.stringify(path)}: it is already tracked`);
    if (c.type !== "add" && !tracked)
      throw new WorkspaceStateError("bad-change", `cannot ${c.type} ${JSON.stringify(path)}: it is not tracked`);
    if (c.type !== "delete") {
      const problem = pathProblem(path);
      if (problem !== undefined) throw new WorkspaceStateError("bad-change", `cannot record ${JSON.stringify(path)}: ${problem}`);
      if (!SHA256.test(c.entry.hash) || !MODES.has(c.entry.mode) || !Number.isSafeInteger(c.entry.size) || c.entry.size < 0)
        throw new WorkspaceStateError(
          "bad-change",
          `the entry for ${JSON.stringify(path)} needs a sha256 hash, a mode of 644/755/link and a byte size`,
        );
    }
  }
  const ws = ensureWorkspace(d);
  // One patch for all of it: a baseline's ten thousand inserts are one pass, not ten thousand.
  // Adds go in front of the record, last first, so they keep their order without naming ids.
  const ops: Op[] = [];
  for (const c of changes) {
    switch (c.type) {
      case "add":
        break;
      case "modify": {
        const id = (files.get(c.entry.path) as { id: NodeId }).id;
        const cur = d.tree.rec(id)?.attrs ?? {};
        if (cur[WS.hash] !== c.entry.hash) ops.push(["set", id, WS.hash, c.entry.hash]);
        if (cur[WS.mode] !== c.entry.mode) ops.push(["set", id, WS.mode, c.entry.mode]);
        if (cur[WS.size] !== String(c.entry.size)) ops.push(["set", id, WS.size, String(c.entry.size)]);
        break;
      }
      case "delete":
        ops.push(["rm", (files.get(c.before.path) as { id: NodeId }).id]);
        break;
      default:
        c satisfies never;
    }
  }
  for (let i = changes.length - 1; i >= 0; i--) {
    const c = changes[i] as FileChange;
    if (c.type === "add") ops.push(["ins", ws, null, fileSpec(c.entry)]);
  }
  d.applyAll(ops);
}

function sameEntry(a: FileEntry, b: FileEntry): boolean {
  return a.hash === b.hash && a.mode === b.mode && a.size === b.size;
}

/** Strips the element id (change lists carry entries, not elements). */
function plain(e: FileEntry): FileEntry {
  return { path: e.path, hash: e.hash, mode: e.mode, size: e.size };
}

/**
 * The file changes that turn `a`'s workspace into `b`'s (WS-4), sorted by path: what diff, log
 * marks, lifecycle restorations and re-run comparisons use. `a` undefined (or without a
 * workspace) means every file of `b` is an add.
 */
export function diffWorkspaces(a: Tree | undefined, b: Tree): FileChange[] {
  const before: ReadonlyMap<string, FileEntry> = a === undefined ? new Map<string, FileEntry>() : trackedFiles(a);
  const after = trackedFiles(b);
  const out: FileChange[] = [];
  for (const [path, e] of after) {
    const was = before.get(path);
    if (was === undefined) out.push({ type: "add", entry: plain(e) });
    else if (!sameEntry(was, e)) out.push({ type: "modify", before: plain(was), entry: plain(e) });
  }
  for (const [path, was] of before) if (!after.has(path)) out.push({ type: "delete", before: plain(was) });
  return out.sort((x, y) => byPath(changePath(x), changePath(y)));
}

/** The path a change is about. */
export function changePath(c: FileChange): string {
  return c.type === "delete" ? c.before.path : c.entry.path;
}

/**
 * Records files left out of the workspace (too large, unreadable, unstorable name) as
 * `<diag kind="workspace-skipped" path size reason>` children of `parent` (the call element, or
 * `<workspace>` for the baseline). Paths are sanitized for XML by the caller's capture.
 */
export function addSkippedDiags(d: TreeDraft, parent: NodeId, skipped: readonly SkippedFile[]): void {
  for (const s of skipped)
    d.appendChild(parent, {
      tag: "diag",
      attrs: { kind: DIAG_WORKSPACE_SKIPPED, path: s.path, size: String(s.size), reason: s.reason ?? "too-large" },
    });
}

/** Why a file on disk has no `<file>` record. */
export type SkipReason = "too-large" | "unreadable" | "bad-name";

export interface SkippedFile {
  /** Its path (made storable: characters XML cannot carry are replaced). */
  readonly path: string;
  /** Its size in bytes when it was seen (0 when unknown). */
  readonly size: number;
  /** Absent means "too-large". */
  readonly reason?: SkipReason;
}
