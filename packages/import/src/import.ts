/**
 * `importForeign` (IM-1, IM-9 … IM-10): finds the sessions under a path (a file, or a directory of
 * them), and imports each as a new strata session — one transaction each, so a failure leaves
 * what is stored as it was, and a file already imported (the same sha256) creates nothing.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { exportBundle, importBundleInto } from "@strata/engine";
import { type AsyncStore, openStore, type SessionId, type SessionInfo, type Store } from "@strata/store";
import { type AgentTranscript, parseClaudeCode } from "./claude-code.ts";
import { parseCodex } from "./codex.ts";
import { FORMATS, type ForeignSession, type Format, ImportError, type ImportErrorCode, type ImportProblem } from "./foreign.ts";
import { findOpenCode } from "./opencode-sources.ts";
import { parsePi } from "./pi.ts";
import { type SourceFile, writeSession } from "./write.ts";

export interface ImportForeignOptions {
  readonly from: Format;
  /** A session file, or a directory holding sessions (searched recursively); for OpenCode also a storage directory or an opencode.db (IM-17). */
  readonly path: string;
  /** Called before each source is imported (for progress on a directory of many). */
  readonly progress?: (done: number, total: number, file: string) => void;
}

/** One session created. */
export interface ImportedSession {
  readonly session: SessionId;
  readonly file: string;
  readonly sourceId: string;
  readonly version: string;
  readonly branchCount: number;
  readonly eventCount: number;
}

/** What an import did (IM-9): created, skipped as already imported, failed, and the problems found. */
export interface ImportForeignReport {
  readonly from: Format;
  readonly sessions: ImportedSession[];
  /** Sources whose sha256 an earlier import recorded: nothing was created for them. */
  readonly skipped: { readonly file: string; readonly session: SessionId }[];
  /**
   * Files found in a directory that hold no session of the format — every line a JSON record, none
   * a session's (the tool's `history.jsonl`, a session file of summaries only) — with what was found.
   * A file named on its own that is no session is `failed`.
   */
  readonly ignored: { readonly file: string; readonly message: string }[];
  /** Sources that could not be imported at all (nothing was stored for them). */
  readonly failed: { readonly file: string; readonly code: ImportErrorCode; readonly message: string }[];
  /** Lines and records that could not be read, with file and line (IM-5). */
  readonly problems: ImportProblem[];
}

/** A source found under the path: a file, or (OpenCode) one session of a storage directory or a database. */
export interface Source {
  readonly file: string;
  readonly sha256: string;
  readonly files: readonly SourceFile[];
  readonly parse: () => ForeignSession;
  /** Drops what reading it held (an OpenCode session's canonical text), once it is imported. */
  readonly release?: () => void;
}

/** The parsers of the line-oriented formats, by format. */
const JSONL: Partial<Record<Format, (text: string, file: string) => ForeignSession>> = {
  "claude-code": parseClaudeCode,
  pi: parsePi,
  codex: parseCodex,
};

/** sha256 of bytes, hex. */
export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Imports every session under `options.path`. Throws `ImportError` only when the path itself
 * cannot be read (`unreadable`) or names no session; each source's own failure is in `failed`.
 */
export function importForeign(store: Store, options: ImportForeignOptions): ImportForeignReport {
  return importWith(store, options, importedHashes(store.listSessions()));
}

/**
 * {@link importForeign} into a store behind the asynchronous port (PostgreSQL, decision 0038): each
 * source is written into a scratch in-memory store exactly as into SQLite, then moved as a bundle
 * (`importBundleInto`: one transaction per session, the same events and digests). What the target
 * imported before (by the source's sha256) is skipped, as on SQLite.
 */
export async function importForeignInto(port: AsyncStore, options: ImportForeignOptions): Promise<ImportForeignReport> {
  const known = importedHashes(await port.listSessions());
  const scratch = openStore(":memory:");
  try {
    const report = importWith(scratch, options, known);
    const sessions: ImportedSession[] = [];
    for (const s of report.sessions) {
      const moved = await importBundleInto(port, exportBundle(scratch, s.session));
      sessions.push({ ...s, session: moved.session });
    }
    return { ...report, sessions };
  } finally {
    scratch.close();
  }
}

function importWith(store: Store, options: ImportForeignOptions, known: Map<string, SessionId>): ImportForeignReport {
  if (!(FORMATS as readonly string[]).includes(options.from))
    throw new ImportError("bad-input", `unknown format ${JSON.stringify(options.from)}; strata imports ${FORMATS.join(", ")}`);
  const { sources, problems } = findAll(options.from, options.path);
  const report: ImportForeignReport = { from: options.from, sessions: [], skipped: [], ignored: [], failed: [], problems: [...problems] };
  sources.forEach((src, i) => {
    try {
      importOne(store, src, i, sources.length, known, report, options);
    } finally {
      src.release?.();
    }
  });
  options.progress?.(sources.length, sources.length, "");
  return report;
}

function importOne(
  store: Store,
  src: Source,
  i: number,
  total: number,
  known: Map<string, SessionId>,
  report: ImportForeignReport,
  options: ImportForeignOptions,
): void {
  options.progress?.(i, total, src.file);
  const existing = known.get(src.sha256);
  if (existing !== undefined) {
    report.skipped.push({ file: src.file, session: existing });
    return;
  }
  let foreign: ForeignSession;
  try {
    foreign = src.parse();
  } catch (e) {
    if (!(e instanceof ImportError)) throw e;
    // Found by searching a directory (not named itself): a file that holds no session is ignored, not failed.
    if (e.notSession && isDirectory(options.path)) report.ignored.push({ file: src.file, message: e.message });
    else report.failed.push({ file: src.file, code: e.code, message: e.message });
    return;
  }
  const written = writeSession(store, foreign, { sha256: src.sha256, file: src.file, sources: src.files });
  known.set(src.sha256, written.session);
  report.problems.push(...foreign.problems, ...written.problems);
  report.sessions.push({
    session: written.session,
    file: src.file,
    sourceId: foreign.sourceId,
    version: foreign.version,
    branchCount: written.branches,
    eventCount: written.events,
  });
}

/** sha256 → session, of every session an earlier import created (IM-9). */
function importedHashes(sessions: readonly SessionInfo[]): Map<string, SessionId> {
  const out = new Map<string, SessionId>();
  for (const s of sessions) {
    const imp = (s.metadata as Record<string, unknown> | undefined)?.import;
    const h = typeof imp === "object" && imp !== null ? (imp as Record<string, unknown>).sha256 : undefined;
    if (typeof h === "string" && !out.has(h)) out.set(h, s.id);
  }
  return out;
}

/** The sources under a path, in a stable order. */
export function findSources(from: Format, path: string): Source[] {
  return findAll(from, path).sources;
}

/** Whether `path` is a directory (false when it cannot be read). */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The sources under a path, and the problems found while looking for them (OpenCode: messages of no session). */
function findAll(from: Format, path: string): { sources: Source[]; problems: ImportProblem[] } {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new ImportError("unreadable", `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, path);
  }
  if (from === "opencode") return findOpenCode(path);
  const parse = JSONL[from];
  if (parse === undefined)
    throw new ImportError(
      "bad-input",
      `importing ${from} sessions is not built yet (strata imports ${Object.keys(JSONL).join(", ")} sessions); nothing was imported from ${path}`,
      path,
    );
  const found = isDir ? jsonlFiles(path) : [path];
  if (isDir && found.length === 0)
    throw new ImportError("not-a-session", `${path} holds no .jsonl file; give a ${from} session file or a directory of them`, path);
  if (from === "claude-code") return { sources: claudeCodeSources(found), problems: [] };
  const files = found;
  const sources = files.map((file): Source => {
    const bytes = readSource(file);
    const text = bytes.toString("utf8");
    const shown = isDir ? join(path, relative(path, file)) : file;
    return { file: shown, sha256: sha256(bytes), files: [{ path: shown, text, bytes }], parse: () => parse(text, shown) };
  });
  return { sources, problems: [] };
}

/**
 * Claude Code sources (IM-24): each session file with what a 2.x session keeps in the directory
 * of its name beside it — sub-agent transcripts (`subagents/agent-<agentId>.jsonl`, read as
 * branches of the session, and their `.meta.json`) and saved large outputs (`tool-results/*`,
 * kept verbatim). A transcript found that way is part of its session, never a session of its own;
 * one given by itself (or with no session file beside its directory) is one.
 */
function claudeCodeSources(found: readonly string[]): Source[] {
  const legacy = new Map<string, Map<string, { path: string; agentId: string }[]>>();
  const withDir = found.map((file) => ({ file, parts: [...legacyAgents(file, legacy), ...sessionDirFiles(file)] }));
  const owned = new Set(withDir.flatMap((f) => f.parts.map((p) => p.path)));
  return withDir
    .filter((f) => !owned.has(f.file))
    .map(({ file, parts }): Source => {
      const bytes = readSource(file);
      const text = bytes.toString("utf8");
      const read = parts.map((p) => ({ ...p, bytes: readSource(p.path) }));
      const agents: AgentTranscript[] = read
        .filter((p) => p.agentId !== undefined)
        .map((p) => ({ path: p.path, text: p.bytes.toString("utf8"), agentId: p.agentId as string }));
      return {
        file,
        sha256: read.length === 0 ? sha256(bytes) : sha256Of(file, bytes, read),
        files: [{ path: file, text, bytes }, ...read.map((p) => ({ path: p.path, text: p.bytes.toString("utf8"), bytes: p.bytes }))],
        parse: () => parseClaudeCode(text, file, agents),
      };
    });
}

/** A transcript file's name: `agent-<agentId>.jsonl`. */
const AGENT_FILE = /^agent-(.+)\.jsonl$/;

/**
 * The sub-agent transcripts Claude Code wrote beside the session file before 2.1.2
 * (`<dir>/agent-<agentId>.jsonl`, in the same directory as `<dir>/<session>.jsonl`): those whose
 * records name the session (`sessionId`). The directory's transcripts are read once per import
 * (`cache`: directory → session id → transcripts).
 */
function legacyAgents(
  file: string,
  cache: Map<string, Map<string, { path: string; agentId: string }[]>>,
): { path: string; agentId: string }[] {
  if (!file.endsWith(".jsonl") || AGENT_FILE.test(basename(file))) return [];
  const dir = dirname(file);
  let bySession = cache.get(dir);
  if (bySession === undefined) {
    bySession = new Map();
    cache.set(dir, bySession);
    for (const name of listFiles(dir)) {
      const m = AGENT_FILE.exec(name);
      if (m === null) continue;
      const path = join(dir, name);
      const session = sessionIdOf(readSource(path).toString("utf8"));
      if (session === undefined) continue;
      const list = bySession.get(session) ?? [];
      list.push({ path, agentId: branchPart(m[1] as string) });
      bySession.set(session, list);
    }
  }
  return bySession.get(basename(file, ".jsonl")) ?? [];
}

/** The `sessionId` the first records of a transcript name (the parent session's), if any of its first 50 lines does. */
function sessionIdOf(text: string): string | undefined {
  let start = 0;
  for (let line = 0; line < 50 && start < text.length; line++) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    try {
      const r = JSON.parse(text.slice(start, end)) as { sessionId?: unknown };
      if (typeof r?.sessionId === "string") return r.sessionId;
    } catch {
      // not a record: the next line
    }
    start = end + 1;
  }
  return undefined;
}

/** The files of a 2.x session's directory (`<dir>/<session>/` beside `<dir>/<session>.jsonl`), sorted; sub-agent transcripts with their agent id. */
function sessionDirFiles(file: string): { path: string; agentId?: string }[] {
  if (!file.endsWith(".jsonl")) return [];
  const dir = join(dirname(file), basename(file, ".jsonl"));
  const out: { path: string; agentId?: string }[] = [];
  const agents = join(dir, "subagents");
  for (const name of listFiles(agents)) {
    const m = AGENT_FILE.exec(name);
    out.push(m === null ? { path: join(agents, name) } : { path: join(agents, name), agentId: branchPart(m[1] as string) });
  }
  const results = join(dir, "tool-results");
  for (const name of listFiles(results)) out.push({ path: join(results, name) });
  return out;
}

/** The names of the files in `dir`, sorted; none when it is not a directory. */
function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort();
  } catch (e) {
    throw new ImportError("unreadable", `cannot read ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, dir);
  }
}

/** An agent id as part of a branch name: letters, digits, `.`, `_` and `-` (others become `-`), at most 80. */
function branchPart(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 80);
  return /^[A-Za-z0-9]/.test(clean) ? clean : `x${clean}`.slice(0, 80);
}

/**
 * The sha256 of a session file with the files of its directory (IM-24): the file's bytes, then
 * for each part its path relative to the file's directory, its length and its bytes — so adding,
 * removing or changing any of them is a new source, and the same set is the same source.
 */
function sha256Of(file: string, bytes: Buffer, parts: readonly { path: string; bytes: Buffer }[]): string {
  const h = createHash("sha256").update(bytes);
  for (const p of parts) h.update(`\u0000${relative(dirname(file), p.path)}\u0000${p.bytes.length}\u0000`).update(p.bytes);
  return h.digest("hex");
}

function readSource(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new ImportError("unreadable", `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, file);
  }
}

/** Every `.jsonl` file under `dir`, sorted by path. */
function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (e) {
      throw new ImportError("unreadable", `cannot read ${d}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, d);
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile() && e.name.endsWith(".jsonl")) out.push(p);
    }
  }
  return out.sort();
}
