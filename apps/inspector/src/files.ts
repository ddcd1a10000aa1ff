/**
 * The workspace as the inspector serves it (IN-22, IN-23): the files a tree records, in path
 * order, and one file's bytes as text — or, for bytes that are not text, only what the record says
 * (size and hash). Reads the `<workspace>` record through `@strata/agent` (its checks included: a
 * malformed record is a `WorkspaceStateError`, answered 422) and the bytes from the store's blobs.
 */
import { pathProblem, workspaceDir, workspaceElement, workspaceFiles } from "@strata/agent";
import type { Tree } from "@strata/dom";
import type { AsyncStore, EventId, Store } from "@strata/store";
import { HttpError } from "./failure.ts";
import type { FileContent, FileResponse, FileRow, FilesResponse } from "./protocol.ts";

/** The largest file `…/file` sends as text (413 beyond: `strata checkout` writes any file). */
export const FILE_TEXT_MAX = 4 * 1024 * 1024;

interface Listing {
  readonly rows: readonly FileRow[];
  readonly bytes: number;
}

/** Listings by tree: a tree is immutable, and scrubbing asks for the same few again and again. */
const LISTINGS = new WeakMap<Tree, Listing>();

function listing(tree: Tree): Listing {
  const hit = LISTINGS.get(tree);
  if (hit !== undefined) return hit;
  const rows: FileRow[] = [];
  let bytes = 0;
  for (const e of workspaceFiles(tree).values()) {
    rows.push({ path: e.path, mode: e.mode, size: e.size, hash: e.hash });
    bytes += e.size;
  }
  rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const out = { rows, bytes };
  LISTINGS.set(tree, out);
  return out;
}

/** The files `tree` records, sorted by path (code-unit order, as every change list); empty before the baseline. */
export function fileRows(tree: Tree): readonly FileRow[] {
  return listing(tree).rows;
}

/** One page of the workspace at `event`: `limit` files from index `offset`. */
export function filesPage(tree: Tree, event: EventId, offset: number, limit: number): FilesResponse {
  const { rows, bytes } = listing(tree);
  return {
    event,
    tracked: workspaceElement(tree) !== undefined,
    dir: workspaceDir(tree) ?? null,
    total: rows.length,
    bytes,
    offset,
    files: rows.slice(offset, offset + limit),
  };
}

/** The row of `path` by binary search in path order, or undefined. */
export function findRow(rows: readonly FileRow[], path: string): FileRow | undefined {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const p = (rows[mid] as FileRow).path;
    if (p === path) return rows[mid];
    if (p < path) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}

/** `?path=` as a workspace path: 400 when absent or not a path a workspace can hold (WS-2). */
export function pathParam(text: string | null): string {
  if (text === null || text === "") throw new HttpError(400, "a file path is required (?path=PATH, relative to the workspace root)");
  const problem = pathProblem(text);
  if (problem !== undefined) throw new HttpError(400, `${JSON.stringify(text.slice(0, 200))} is not a workspace path: ${problem}`);
  return text;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `bytes` as text when they are UTF-8 without a NUL byte (git's test for binary is a NUL), else undefined. */
export function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The blob of `row`, or 500 naming the file when the store does not have it (a damaged database). */
export async function blobOf(store: Store | AsyncStore, row: FileRow, event: EventId): Promise<Buffer> {
  const bytes = await store.getBlob(row.hash);
  if (bytes === undefined)
    throw new HttpError(
      500,
      `the store has no bytes for ${JSON.stringify(row.path)} at event ${event} (blob ${row.hash}): the database is damaged or was imported without its blobs`,
    );
  return bytes;
}

/** `…/file`: the file `path` at `event` and its content, text up to `FILE_TEXT_MAX` (413 beyond). */
export async function fileAt(store: Store | AsyncStore, tree: Tree, event: EventId, path: string): Promise<FileResponse> {
  const row = findRow(fileRows(tree), path);
  if (row === undefined)
    throw new HttpError(
      404,
      workspaceElement(tree) === undefined
        ? `no file ${JSON.stringify(path)} at event ${event}: the session records no workspace there yet (it starts at the workspace.baseline event)`
        : `no file ${JSON.stringify(path)} in the workspace at event ${event}`,
    );
  if (row.size > FILE_TEXT_MAX)
    throw new HttpError(
      413,
      `${JSON.stringify(path)} at event ${event} has ${row.size} bytes (sha256 ${row.hash}); …/file serves at most ${FILE_TEXT_MAX} (strata checkout writes the whole workspace)`,
    );
  const bytes = await blobOf(store, row, event);
  const text = textOf(bytes);
  const content: FileContent =
    text === undefined ? { kind: "binary" } : row.mode === "link" ? { kind: "link", target: text } : { kind: "text", text };
  return { event, file: row, content };
}
