/**
 * File changes for people and scripts (CLI-35): what `diff`, `bisect` and `rewind` show of the
 * workspace next to the tree. A text file (valid UTF-8, no NUL, at most {@link MAX_TEXT_BYTES})
 * gets a unified diff; anything else — binary, too large, a symlink's target — its sizes and
 * short hashes. The bytes come from the blob store, where every branch's files are.
 */
import { unifiedDiff as agentUnified, type FileChange, type FileEntry, headerPath } from "@strata/agent";
import type { Port } from "@strata/engine";
import { isAsyncStore, type Store } from "@strata/store";
import { CliError } from "./errors.ts";
import type { Out } from "./output.ts";

/** Larger files are compared by size and hash only. */
export const MAX_TEXT_BYTES = 256 * 1024;
/** Lines of one file's diff shown at most (the rest is counted). */
const MAX_DIFF_LINES = 400;

export type ChangeKind = "added" | "modified" | "deleted";

/** A file's record at one side of a change, for --json. */
export interface FileSide {
  readonly hash: string;
  readonly mode: string;
  readonly size: number;
}

/** One file change in every --json document (`files` arrays). */
export interface FileChangeJson {
  readonly path: string;
  readonly change: ChangeKind;
  readonly before: FileSide | null;
  readonly after: FileSide | null;
}

export interface FileDiffJson extends FileChangeJson {
  /** True when the bytes are not shown as text (binary, too large, or a symlink). */
  readonly binary: boolean;
  /** The unified diff of a text file, or null. */
  readonly diff: string | null;
}

const side = (e: FileEntry): FileSide => ({ hash: e.hash, mode: e.mode, size: e.size });

export function fileChangeJson(c: FileChange): FileChangeJson {
  switch (c.type) {
    case "add":
      return { path: c.entry.path, change: "added", before: null, after: side(c.entry) };
    case "modify":
      return { path: c.entry.path, change: "modified", before: side(c.before), after: side(c.entry) };
    case "delete":
      return { path: c.before.path, change: "deleted", before: side(c.before), after: null };
    default:
      return c satisfies never;
  }
}

/** The change counts of a list (what `log` marks). */
export function changeCounts(changes: readonly FileChange[]): { added: number; modified: number; deleted: number } {
  let added = 0;
  let modified = 0;
  let deleted = 0;
  for (const c of changes) {
    if (c.type === "add") added++;
    else if (c.type === "modify") modified++;
    else deleted++;
  }
  return { added, modified, deleted };
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** The text of a blob, or undefined when it is not text (or too large to show). */
function textOf(store: BlobSource, e: FileEntry | undefined, path: string): string | undefined {
  if (e === undefined) return "";
  if (e.mode === "link" || e.size > MAX_TEXT_BYTES) return undefined;
  const bytes = store.getBlob(e.hash);
  if (bytes === undefined)
    throw new CliError(
      `the database ${store.path} is damaged: it has no bytes for ${path} (blob ${e.hash}); \`strata verify\` lists the damage`,
    );
  if (bytes.includes(0)) return undefined;
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * A unified diff of two texts (`undefined`: the file does not exist on that side), as `diff -u`
 * and `git diff` write it (`@strata/agent`'s `unifiedDiff`, the inspector's too, checked against
 * GNU `patch`): at most {@link MAX_DIFF_LINES} lines of hunks, then a line saying how many more.
 */
export function unifiedDiff(path: string, before: string | undefined, after: string | undefined): string {
  const u = agentUnified(
    before ?? "",
    after ?? "",
    before === undefined ? "/dev/null" : headerPath("a/", path),
    after === undefined ? "/dev/null" : headerPath("b/", path),
  );
  const lines = u.text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  // Two header lines, then the hunks.
  if (lines.length <= MAX_DIFF_LINES + 2) return u.text;
  const rest = lines.length - 2 - MAX_DIFF_LINES;
  return `${lines.slice(0, MAX_DIFF_LINES + 2).join("\n")}\n… (${rest} more line${rest === 1 ? "" : "s"} of this diff not shown)\n`;
}

/** Each change with its unified diff (text) or sizes and hashes (anything else). */
export function fileDiffs(store: BlobSource, changes: readonly FileChange[]): FileDiffJson[] {
  return changes.map((c) => {
    const j = fileChangeJson(c);
    const before = c.type === "add" ? undefined : c.before;
    const after = c.type === "delete" ? undefined : c.entry;
    const a = before === undefined ? "" : textOf(store, before, j.path);
    const b = after === undefined ? "" : textOf(store, after, j.path);
    if (a === undefined || b === undefined) return { ...j, binary: true, diff: null };
    if (before !== undefined && after !== undefined && before.hash === after.hash) return { ...j, binary: false, diff: null };
    return { ...j, binary: false, diff: unifiedDiff(j.path, before === undefined ? undefined : a, after === undefined ? undefined : b) };
  });
}

/** Where a diff reads the bytes of files. */
type BlobSource = Pick<Store, "getBlob" | "path">;

/**
 * {@link fileDiffs} on either port: over the network (PostgreSQL) the bytes of every file it may
 * show are fetched first, in one call.
 */
export async function fileDiffsOn(store: Port, changes: readonly FileChange[]): Promise<FileDiffJson[]> {
  if (!isAsyncStore(store)) return fileDiffs(store, changes);
  const wanted = new Set<string>();
  for (const c of changes)
    for (const e of [c.type === "add" ? undefined : c.before, c.type === "delete" ? undefined : c.entry])
      if (e !== undefined && e.mode !== "link" && e.size <= MAX_TEXT_BYTES) wanted.add(e.hash);
  const got = wanted.size === 0 ? new Map<string, Buffer>() : await store.getBlobs([...wanted]);
  return fileDiffs({ path: store.path, getBlob: (h) => got.get(h) }, changes);
}

const short = (hash: string): string => hash.slice(0, 12);

/** The human view of file changes: one line per file, then its diff. */
export function fileDiffView(out: Out, diffs: readonly FileDiffJson[]): string[] {
  const lines: string[] = [];
  for (const d of diffs) {
    const b = d.before;
    const a = d.after;
    const mode = b !== null && a !== null && b.mode !== a.mode ? `, mode ${b.mode} → ${a.mode}` : a === null ? "" : `, mode ${a.mode}`;
    const sizes =
      b === null
        ? `${a?.size} bytes`
        : a === null
          ? `${b.size} bytes`
          : b.size === a.size
            ? `${a.size} bytes`
            : `${b.size} → ${a.size} bytes`;
    const mark = d.change === "added" ? "+" : d.change === "deleted" ? "-" : "~";
    const colour = d.change === "added" ? "green" : d.change === "deleted" ? "red" : "yellow";
    const hashes = d.binary
      ? `  ${b === null ? "∅" : short(b.hash)} → ${a === null ? "∅" : short(a.hash)}${a?.mode === "link" || b?.mode === "link" ? " (symlink)" : " (binary or large: not shown as text)"}`
      : "";
    lines.push(out.paint(colour, `${mark} ${d.path}  (${d.change}, ${sizes}${mode})${hashes}`));
    if (d.diff === null) continue;
    for (const l of d.diff.replace(/\n$/, "").split("\n"))
      lines.push(
        l.startsWith("+++") || l.startsWith("---")
          ? out.paint("bold", l)
          : l.startsWith("@@")
            ? out.paint("cyan", l)
            : l.startsWith("+")
              ? out.paint("green", l)
              : l.startsWith("-")
                ? out.paint("red", l)
                : l,
      );
  }
  return lines;
}
