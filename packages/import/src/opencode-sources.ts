/**
 * Finding and reading OpenCode sessions (IM-17 … IM-19), in any of the three shapes OpenCode keeps
 * them in, as the records `openCodeSession` (opencode.ts) maps:
 *
 * - the legacy JSON storage (0.x – 1.1.x; `~/.local/share/opencode/storage/`): `session/<project>/
 *   <ses>.json` (the session: `version` is the marker, `parentID` a child session's parent,
 *   `revert` an undo), `message/<ses>/<msg>.json`, `part/<msg>/<prt>.json`, `session_diff/<ses>.json`
 *   and `todo/<ses>.json`;
 * - the SQLite database of later 1.x (`opencode.db`): tables `session`, `message` and `part`, whose
 *   `data` column is the JSON above without the id columns;
 * - the document `opencode export SESSION` prints: `{info, messages: [{info, parts}], todos}`.
 *
 * A session's source bytes are its canonical text: the export file as it is; for a storage
 * directory the session's files in path order, each after a line `==> PATH (N bytes) <==`; for a
 * database the session's rows as JSON lines. The sha256 of that text is the source's (IM-9), and
 * every element's `line` is the line of that text where its record starts.
 */
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { countUnmapped, ImportError, type ImportProblem, isObject } from "./foreign.ts";
import type { Source } from "./import.ts";
import { type OpenCodeRecord, type OpenCodeRecords, openCodeSession } from "./opencode.ts";
import {
  errorLine,
  type Found,
  isDir,
  isFile,
  isSqlite,
  isStorage,
  list,
  newlines,
  parseJson,
  parseObject,
  readBytes,
  realPath,
} from "./opencode-files.ts";

/**
 * The OpenCode sessions under `path` (IM-17): a directory holding `opencode.db` is read from the
 * database; a storage directory (or a directory holding `storage/`) gives each of its sessions;
 * a session file `session/<project>/<ses>.json` of one gives that session; a SQLite file is a
 * database; any other file, or the `.json` files of any other directory, are `opencode export`
 * documents. Problems found while looking (messages of no session) are returned beside.
 */
export function findOpenCode(path: string): Found {
  if (isDir(path)) {
    const found = openCodeTree(path);
    if (found === undefined)
      throw new ImportError(
        "not-a-session",
        `${path} is not an OpenCode storage directory (session/, message/, part/), holds neither one (storage/) nor an opencode.db, and has no .json file of \`opencode export\`; give ~/.local/share/opencode, its storage/ directory, an opencode.db or an export file`,
        path,
      );
    return found;
  }
  if (isSqlite(path)) return databaseSources(path);
  const sesDir = dirname(path);
  const root = dirname(dirname(sesDir));
  if (path.endsWith(".json") && isStorage(root)) {
    const kind = basename(dirname(sesDir));
    if (kind === "session") return storageSources(root, basename(path, ".json"));
    throw new ImportError(
      "not-a-session",
      `${path} is a ${kind} file of the OpenCode storage directory ${root}, not a session; give that directory, or a session file ${join(root, "session", "<project>", "<ses>.json")}`,
      path,
    );
  }
  return { sources: [exportSource(path)], problems: [] };
}

/**
 * The sessions of a directory searched recursively (IM-1), in path order: a directory holding
 * `opencode.db` is OpenCode's data directory read from that database, one holding `storage/` (or
 * laid out as storage itself) is read from that storage — nothing else in either is looked at
 * (`auth.json`, `snapshot/`, logs); elsewhere every `.json` file is an `opencode export` document.
 * So `~/.local/share/opencode`, a backup holding several machines' data directories, and a
 * directory of exports all import.
 */
function openCodeTree(dir: string): Found | undefined {
  const found: { at: string; get: () => Found }[] = [];
  const stack = [dir];
  // (a directory reached twice through links is read once: a link to an ancestor ends no walk)
  const seen = new Set<string>();
  for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
    const real = realPath(d);
    if (seen.has(real)) continue;
    seen.add(real);
    if (isFile(join(d, "opencode.db"))) {
      const db = join(d, "opencode.db");
      found.push({ at: db, get: () => databaseSources(db) });
      continue;
    }
    const storage = isStorage(d) ? d : isStorage(join(d, "storage")) ? join(d, "storage") : undefined;
    if (storage !== undefined) {
      found.push({ at: storage, get: () => storageSources(storage) });
      continue;
    }
    for (const name of list(d)) {
      const p = join(d, name);
      if (isDir(p)) stack.push(p);
      else if (name.endsWith(".json")) found.push({ at: p, get: () => ({ sources: [exportSource(p)], problems: [] }) });
    }
  }
  // Nothing that could hold a session (a database, a storage directory, a .json file): undefined.
  if (found.length === 0) return undefined;
  const out: Found = { sources: [], problems: [] };
  for (const f of found.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
    let got: Found;
    try {
      got = f.get();
    } catch (e) {
      // One database or storage that cannot be read fails as a source; the others are imported.
      if (!(e instanceof ImportError)) throw e;
      out.sources.push(unreadableSource(f.at, e));
      continue;
    }
    out.sources.push(...got.sources);
    out.problems.push(...got.problems);
  }
  return out;
}

/** A source that could not even be listed: importing it fails with `e`, as a source of its own. */
function unreadableSource(file: string, e: ImportError): Source {
  return {
    file,
    sha256: createHash("sha256").update(`unreadable\u0000${file}`).digest("hex"),
    files: [],
    parse: () => {
      throw e;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The legacy storage directory (IM-19).

/** The files of one session of a storage directory, relative to it, in path order. */
function sessionFiles(root: string, sessionRel: string, sessionId: string): string[] {
  const rels = [sessionRel];
  for (const extra of [`session_diff/${sessionId}.json`, `todo/${sessionId}.json`]) if (isFile(join(root, extra))) rels.push(extra);
  for (const m of list(join(root, "message", sessionId))) {
    if (!m.endsWith(".json")) continue;
    rels.push(`message/${sessionId}/${m}`);
    const msg = m.slice(0, -".json".length);
    for (const p of list(join(root, "part", msg))) if (p.endsWith(".json")) rels.push(`part/${msg}/${p}`);
  }
  return rels.sort();
}

/** The canonical text of a session of a storage directory: each file after `==> PATH (N bytes) <==`, in path order. */
function storageText(root: string, rels: readonly string[]): { bytes: Buffer; lines: Map<string, number> } {
  const chunks: Buffer[] = [];
  const lines = new Map<string, number>();
  let line = 1;
  for (const rel of rels) {
    const b = readBytes(join(root, ...rel.split("/")));
    chunks.push(Buffer.from(`==> ${rel} (${b.length} bytes) <==\n`), b, Buffer.from("\n"));
    lines.set(rel, line + 1);
    line += 1 + newlines(b) + 1;
  }
  return { bytes: Buffer.concat(chunks), lines };
}

function storageSources(root: string, only?: string): Found {
  const problems: ImportProblem[] = [];
  const sessions: { rel: string; id: string }[] = [];
  for (const project of list(join(root, "session"))) {
    if (!isDir(join(root, "session", project))) continue;
    for (const f of list(join(root, "session", project)))
      if (f.endsWith(".json")) sessions.push({ rel: `session/${project}/${f}`, id: f.slice(0, -".json".length) });
  }
  // Child sessions name their parent (`parentID`): read every session file once for the links.
  const parentOf = new Map<string, string>();
  for (const s of sessions) {
    try {
      const v = JSON.parse(readBytes(join(root, ...s.rel.split("/"))).toString("utf8"));
      if (isObject(v) && typeof v.parentID === "string") parentOf.set(s.id, v.parentID);
    } catch (e) {
      if (e instanceof ImportError) throw e;
      // reported when that session is read
    }
  }
  const childrenOf = (id: string): string[] => [...parentOf].filter(([, p]) => p === id).map(([c]) => c);
  const chosen = only === undefined ? sessions : sessions.filter((s) => s.id === only);
  if (only === undefined) {
    // Messages and parts no session names: OpenCode shows them nowhere; said, not skipped in silence (IM-5).
    const known = new Set(sessions.map((s) => s.id));
    const messages = new Set<string>();
    for (const sid of list(join(root, "message"))) {
      const dir = join(root, "message", sid);
      const names = list(dir).filter((m) => m.endsWith(".json"));
      for (const m of names) messages.add(m.slice(0, -".json".length));
      if (!known.has(sid) && names.length > 0)
        problems.push({
          file: dir,
          line: 0,
          message: `${names.length} message(s) of session ${sid}, which has no session file under ${join(root, "session")}; not imported`,
        });
    }
    for (const mid of list(join(root, "part")))
      if (!messages.has(mid) && list(join(root, "part", mid)).some((p) => p.endsWith(".json")))
        problems.push({
          file: join(root, "part", mid),
          line: 0,
          message: `parts of message ${mid}, which no message file names; not imported`,
        });
  }
  const sources = chosen.map((s): Source => {
    const file = join(root, ...s.rel.split("/"));
    const children = childrenOf(s.id);
    const text = () => storageText(root, sessionFiles(root, s.rel, s.id));
    const sha = createHash("sha256").update(text().bytes).digest("hex");
    let loaded: { text: string; records: OpenCodeRecords } | undefined;
    const load = () => {
      if (loaded !== undefined) return loaded;
      const { bytes, lines } = text();
      loaded = { text: bytes.toString("utf8"), records: storageRecords(root, s, file, lines, children) };
      return loaded;
    };
    return {
      file,
      sha256: sha,
      get files() {
        return [{ path: root, text: load().text }];
      },
      parse: () => openCodeSession(load().records),
      release: () => {
        loaded = undefined;
      },
    };
  });
  return { sources, problems };
}

function storageRecords(
  root: string,
  s: { rel: string; id: string },
  file: string,
  lines: Map<string, number>,
  children: readonly string[],
): OpenCodeRecords {
  const problems: ImportProblem[] = [];
  const unmapped = new Map<string, number>();
  const rec = (rel: string, what: string): OpenCodeRecord | undefined => {
    const where = { file: join(root, ...rel.split("/")), line: 0 };
    const value = parseObject(readBytes(where.file).toString("utf8"), where, what, problems);
    return value === undefined ? undefined : { value, line: lines.get(rel) ?? 0, file: rel, where, what };
  };
  const info = rec(s.rel, `session ${s.id}`);
  if (info === undefined) {
    const p = problems[0] as ImportProblem;
    throw new ImportError(
      "not-a-session",
      `${p.file}${p.line > 0 ? `:${p.line}` : ""}: ${p.message.replace(/; kept in the source blob only$/, "")}; nothing of session ${s.id} was imported`,
      file,
    );
  }
  // The ids are the file names, as OpenCode's own migration reads them.
  const sessionInfo: OpenCodeRecord = { ...info, value: { ...info.value, id: s.id } };
  const messages: { rec: OpenCodeRecord; parts: OpenCodeRecord[] }[] = [];
  const byMessage = new Map<string, OpenCodeRecord[]>();
  for (const rel of lines.keys()) {
    const [kind, owner, name] = rel.split("/") as [string, string, string | undefined];
    if (rel === s.rel) continue;
    if (kind === "session_diff" || kind === "todo") {
      // Lists, kept in the blob only; a malformed one is a problem like any other file.
      const where = { file: join(root, ...rel.split("/")), line: 0 };
      if (parseJson(readBytes(where.file).toString("utf8"), where, kind, problems) !== undefined) countUnmapped(unmapped, kind);
      continue;
    }
    const id = (name ?? "").slice(0, -".json".length);
    if (kind === "message") {
      const r = rec(rel, `message ${id}`);
      if (r === undefined) continue;
      const parts: OpenCodeRecord[] = [];
      byMessage.set(id, parts);
      messages.push({ rec: { ...r, value: { ...r.value, id, sessionID: s.id } }, parts });
    } else if (kind === "part") {
      const r = rec(rel, `part ${id}`);
      if (r === undefined) continue;
      const parts = byMessage.get(owner);
      if (parts === undefined)
        problems.push({ ...r.where, message: `part ${id}: its message ${owner} could not be read; kept in the source blob only` });
      else parts.push({ ...r, value: { ...r.value, id } });
    }
  }
  return { file, info: sessionInfo, messages, unmapped, problems, children };
}

// ---------------------------------------------------------------------------------------------
// The SQLite database (IM-19).

/** The columns the reader needs, by table. */
const COLUMNS: Readonly<Record<string, readonly string[]>> = {
  session: ["id", "version", "time_created"],
  message: ["id", "session_id", "data"],
  part: ["id", "message_id", "session_id", "data"],
};

function openDb(file: string): Database.Database {
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new ImportError("unreadable", `cannot open ${file} read-only as a SQLite database: ${(e as Error).message}`, file);
  }
}

function tablesOf(db: Database.Database, file: string): Set<string> {
  let names: { name: string }[];
  try {
    names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  } catch (e) {
    throw new ImportError("unreadable", `cannot read ${file} as a SQLite database: ${(e as Error).message}`, file);
  }
  const tables = new Set(names.map((r) => r.name));
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const have = tables.has(table)
      ? new Set((db.prepare(`PRAGMA table_info(\`${table}\`)`).all() as { name: string }[]).map((c) => c.name))
      : new Set<string>();
    const missing = columns.filter((c) => !have.has(c));
    if (missing.length > 0)
      throw new ImportError(
        "not-a-session",
        `${file} is a SQLite database but not OpenCode's: ${tables.has(table) ? `its table ${table} has no ${missing.join(", ")}` : `it has no table ${table}`}; give ~/.local/share/opencode/opencode.db`,
        file,
      );
  }
  return tables;
}

type Row = Record<string, unknown>;

/** One session's rows as canonical JSON lines, with the records they are. */
function sessionRows(
  db: Database.Database,
  tables: Set<string>,
  file: string,
  row: Row,
  children: readonly string[],
): { text: string; records: OpenCodeRecords } {
  const id = String(row.id);
  const lines: string[] = [];
  const problems: ImportProblem[] = [];
  const unmapped = new Map<string, number>();
  const where = { file, line: 0 };
  const add = (table: string, r: Row): number => lines.push(JSON.stringify({ table, row: r }));
  const json = (text: unknown, what: string): unknown => {
    if (typeof text !== "string") return text ?? undefined;
    try {
      return JSON.parse(text);
    } catch (e) {
      problems.push({ ...where, message: `${what} is not JSON (${(e as Error).message}); ignored` });
      return undefined;
    }
  };
  const infoLine = add("session", row);
  const summary = { additions: row.summary_additions, deletions: row.summary_deletions, files: row.summary_files };
  const value: Record<string, unknown> = {
    id,
    ...(row.project_id === undefined ? {} : { projectID: row.project_id }),
    ...(typeof row.parent_id === "string" ? { parentID: row.parent_id } : {}),
    ...(typeof row.slug === "string" ? { slug: row.slug } : {}),
    ...(typeof row.directory === "string" ? { directory: row.directory } : {}),
    ...(typeof row.title === "string" ? { title: row.title } : {}),
    ...(typeof row.version === "string" ? { version: row.version } : {}),
    ...(typeof row.share_url === "string" ? { share: { url: row.share_url } } : {}),
    summary,
    ...(row.revert === null || row.revert === undefined ? {} : { revert: json(row.revert, `session ${id}: its revert`) }),
    time: { created: row.time_created, updated: row.time_updated, compacting: row.time_compacting, archived: row.time_archived },
  };
  const info: OpenCodeRecord = { value, line: infoLine, where, what: `session ${id}` };
  if (tables.has("todo")) {
    for (const t of db.prepare("SELECT * FROM todo WHERE session_id = ? ORDER BY position").all(id) as Row[]) {
      add("todo", t);
      countUnmapped(unmapped, "todo");
    }
  }
  const messages: { rec: OpenCodeRecord; parts: OpenCodeRecord[] }[] = [];
  const parts = new Map<string, Row[]>();
  for (const p of db.prepare("SELECT * FROM part WHERE session_id = ? ORDER BY message_id, id").all(id) as Row[]) {
    const list = parts.get(String(p.message_id));
    if (list === undefined) parts.set(String(p.message_id), [p]);
    else list.push(p);
  }
  for (const m of db.prepare("SELECT * FROM message WHERE session_id = ? ORDER BY id").all(id) as Row[]) {
    const mid = String(m.id);
    const line = add("message", m);
    const what = `message ${mid} of session ${id}`;
    const data = parseObject(String(m.data), where, what, problems, false);
    const mine: OpenCodeRecord[] = [];
    if (data !== undefined) messages.push({ rec: { value: { ...data, id: mid, sessionID: id }, line, where, what }, parts: mine });
    for (const p of parts.get(mid) ?? []) {
      const pl = add("part", p);
      const pwhat = `part ${String(p.id)} of message ${mid}`;
      const pd = parseObject(String(p.data), where, pwhat, problems, false);
      if (pd !== undefined) mine.push({ value: { ...pd, id: String(p.id), messageID: mid, sessionID: id }, line: pl, where, what: pwhat });
    }
    parts.delete(mid);
  }
  for (const [mid, rest] of parts) {
    for (const p of rest) add("part", p);
    problems.push({
      ...where,
      message: `${rest.length} part(s) of message ${mid} of session ${id}, which is not in the message table; kept in the source blob only`,
    });
  }
  if (tables.has("session_message")) {
    const rows = db.prepare("SELECT * FROM session_message WHERE session_id = ? ORDER BY id").all(id) as Row[];
    for (const r of rows) add("session_message", r);
    if (rows.length > 0)
      problems.push({
        ...where,
        message: `session ${id} has ${rows.length} row(s) in session_message, a message table strata does not read yet; kept in the source blob only`,
      });
  }
  return { text: `${lines.join("\n")}\n`, records: { file: `${file}#${id}`, info, messages, unmapped, problems, children } };
}

function databaseSources(file: string): Found {
  const db = openDb(file);
  let rows: Row[];
  let tables: Set<string>;
  const hashes = new Map<string, string>();
  try {
    tables = tablesOf(db, file);
    rows = db.prepare("SELECT * FROM session ORDER BY id").all() as Row[];
    for (const r of rows)
      hashes.set(
        String(r.id),
        createHash("sha256")
          .update(sessionRows(db, tables, file, r, []).text)
          .digest("hex"),
      );
  } finally {
    db.close();
  }
  const childrenOf = (id: string): string[] => rows.filter((r) => r.parent_id === id).map((r) => String(r.id));
  const sources = rows.map((row): Source => {
    const id = String(row.id);
    let loaded: { text: string; records: OpenCodeRecords } | undefined;
    const load = () => {
      if (loaded !== undefined) return loaded;
      const again = openDb(file);
      try {
        const current = again.prepare("SELECT * FROM session WHERE id = ?").get(id) as Row | undefined;
        if (current === undefined)
          throw new ImportError("unreadable", `${file}: session ${id} was deleted while it was being imported`, file);
        loaded = sessionRows(again, tablesOf(again, file), file, current, childrenOf(id));
      } finally {
        again.close();
      }
      return loaded;
    };
    return {
      file: `${file}#${id}`,
      sha256: hashes.get(id) as string,
      get files() {
        return [{ path: `${file}#${id}`, text: load().text }];
      },
      parse: () => openCodeSession(load().records),
      release: () => {
        loaded = undefined;
      },
    };
  });
  return { sources, problems: [] };
}

// ---------------------------------------------------------------------------------------------
// `opencode export` (IM-19).

/** The 1-based line of each `"id": "…"` in a JSON text: where each record of an export starts. */
function idLines(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const re = /"id"\s*:\s*"((?:[^"\\]|\\.)*)"/g;
  let line = 1;
  let at = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    for (let i = text.indexOf("\n", at); i !== -1 && i < m.index; i = text.indexOf("\n", i + 1)) line++;
    at = m.index;
    if (!out.has(m[1] as string)) out.set(m[1] as string, line);
  }
  return out;
}

function exportSource(file: string): Source {
  const bytes = readBytes(file);
  const text = bytes.toString("utf8");
  return {
    file,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    files: [{ path: file, text }],
    parse: () => openCodeSession(exportRecords(text, file)),
  };
}

function exportRecords(text: string, file: string): OpenCodeRecords {
  const hint = "an OpenCode export is the JSON document `opencode export SESSION` prints ({info, messages})";
  let doc: unknown;
  try {
    doc = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    const line = errorLine(text, e);
    throw new ImportError("not-a-session", `${file}${line > 0 ? `:${line}` : ""}: not JSON (${(e as Error).message}); ${hint}`, file);
  }
  if (!isObject(doc) || !isObject(doc.info) || typeof doc.info.id !== "string" || !Array.isArray(doc.messages))
    throw new ImportError("not-a-session", `${file}: no session info and messages in it; ${hint}`, file, true);
  const lines = idLines(text);
  const problems: ImportProblem[] = [];
  const unmapped = new Map<string, number>();
  const record = (value: Record<string, unknown>, what: string): OpenCodeRecord => {
    const line = lines.get(String(value.id)) ?? 0;
    return { value, line, where: { file, line }, what };
  };
  const sessionId = doc.info.id;
  const info = record(doc.info, `session ${sessionId}`);
  const messages: { rec: OpenCodeRecord; parts: OpenCodeRecord[] }[] = [];
  for (const [i, m] of doc.messages.entries()) {
    if (!isObject(m) || !isObject(m.info) || typeof m.info.id !== "string") {
      problems.push({ file, line: 0, message: `messages[${i}]: not {info: {id, …}, parts}; kept in the source blob only` });
      continue;
    }
    const parts: OpenCodeRecord[] = [];
    const rec = record(m.info, `message ${m.info.id}`);
    for (const [j, p] of (Array.isArray(m.parts) ? m.parts : []).entries()) {
      if (!isObject(p) || typeof p.id !== "string") {
        problems.push({
          file,
          line: rec.line,
          message: `message ${m.info.id}: parts[${j}] is not a part with an id; kept in the source blob only`,
        });
        continue;
      }
      parts.push(record(p, `part ${p.id}`));
    }
    if (!Array.isArray(m.parts))
      problems.push({ file, line: rec.line, message: `message ${m.info.id}: no parts list; read as a message without parts` });
    messages.push({ rec, parts });
  }
  if (Array.isArray(doc.todos)) for (const _ of doc.todos) countUnmapped(unmapped, "todo");
  return { file, info, messages, unmapped, problems, children: [] };
}
