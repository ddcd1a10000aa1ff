/**
 * The workspace the built-in tools act on (TL-11 … TL-19), as a port: every file and process
 * operation a tool performs goes through a `WorkspaceOps`, so a remote or sandboxed workspace, or a
 * wrapper that records each effect, plugs in without touching a tool (pi-mono's `createWriteTool(cwd,
 * { operations })`). Paths are the model's, relative to the workspace root; an implementation
 * confines them itself. The default is `localWorkspace(root)` (local-workspace.ts): a directory on
 * this machine, confined as confine.ts describes.
 *
 * Failures a model can act on — a path outside the workspace, a missing file, a directory where a
 * file was expected — are `WorkspaceError`s with a message for the model; the registry records
 * them as an `executed` call with that error (TL-5). Anything else is the environment's failure.
 */

/** A path or file the model named that cannot be used (outside the workspace, missing, a directory …). */
export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
}

/** What `read` returns: at most the bytes asked for, and the file's size when it was opened. */
export interface ReadResult {
  readonly bytes: Buffer;
  readonly size: number;
}

/** What `stat` returns for a path that exists. */
export interface WorkspaceStat {
  readonly kind: "file" | "directory" | "other";
  /** Bytes, for a file. */
  readonly size: number;
}

/** Bounds of a listing: entries shown, and entries read at most (a directory of millions costs bounded work). */
export interface ListBounds {
  readonly show: number;
  readonly scan: number;
}

/** A directory's entries, bounded. */
export interface Listing {
  /** The directory as shown to the model (relative to the workspace root; `.` for the root). */
  readonly shown: string;
  /**
   * At most `show` entries, sorted, the first by name among those read: directories end in `/`,
   * names with control characters are JSON-quoted (one entry is always one line).
   */
  readonly entries: readonly string[];
  /** Entries read (at most `scan`). */
  readonly seen: number;
  /** The directory has more than `scan` entries. */
  readonly more: boolean;
}

/** How `exec` runs a command. */
export interface ExecOptions {
  readonly timeoutMs: number;
  /** Bytes of output kept: the first and last halves (the rest is counted, not kept). */
  readonly maxCapture: number;
  readonly signal: AbortSignal;
  /** Receives the output as it comes. */
  readonly output?: ((chunk: string) => void) | undefined;
}

/** Everything the built-in tools do to a workspace. Every method confines its path or fails. */
export interface WorkspaceOps {
  /** Reads at most `max` bytes of the regular file at `path`; only regular files are read. */
  read(path: string, max: number): Promise<ReadResult>;
  /**
   * Creates or replaces the file at `path` with `content` (UTF-8), creating its parent
   * directories; atomic (a reader sees the old file or the new one). Returns the path as shown.
   */
  write(path: string, content: string): Promise<string>;
  /** The directory at `path`, bounded. */
  list(path: string, bounds: ListBounds): Promise<Listing>;
  /** What is at `path`, without following a final symbolic link; `undefined` when nothing is. */
  stat(path: string): Promise<WorkspaceStat | undefined>;
  /** Removes the file (not a directory) at `path`; nothing to remove is no error. */
  remove(path: string): Promise<void>;
  /**
   * Runs a shell command in the workspace root; resolves, when it has exited and its output is
   * drained, to its status line and the captured output (`exit code N\n…`). Rejects on abort.
   */
  exec(command: string, options: ExecOptions): Promise<string>;
}
