/**
 * OpenCode sessions (IM-17 … IM-22), from any of the three shapes OpenCode keeps them in:
 *
 * - the legacy JSON storage (0.x – 1.1.x; `~/.local/share/opencode/storage/`): `session/<project>/
 *   <ses>.json` (the session: `version` is the marker, `parentID` a child session's parent,
 *   `revert` an undo), `message/<ses>/<msg>.json`, `part/<msg>/<prt>.json`, `session_diff/<ses>.json`
 *   and `todo/<ses>.json`;
 * - the SQLite database of later 1.x (`opencode.db`): tables `session`, `message` and `part`, whose
 *   `data` column is the JSON above without the id columns;
 * - the document `opencode export SESSION` prints: `{info, messages: [{info, parts}], todos}`.
 *
 * Each shape is read into the same records (`OpenCodeRecords`) and `openCodeSession` maps them
 * onto the step format: messages in id order (ids grow with time), a user message is a user turn,
 * an assistant message (one per model step; 0.x wrote several steps into one, split at their
 * `step-start` parts) is an assistant turn, a `tool` part is a call and — when it finished — its
 * result, in one record. A session's source bytes are its canonical text: the export file as it
 * is; for a storage directory the session's files in path order, each after a line `==> PATH (N
 * bytes) <==`; for a database the session's rows as JSON lines. The sha256 of that text is the
 * source's (IM-9), and every element's `line` is the line of that text where its record starts.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import {
  countUnmapped,
  type ForeignCall,
  type ForeignResult,
  type ForeignSession,
  type ForeignUsage,
  ImportError,
  type ImportProblem,
  isObject,
  jsonText,
  num,
  type Step,
  str,
  timeOf,
} from "./foreign.ts";
import type { Source } from "./import.ts";

/** The OpenCode versions this reader knows (IM-10): 0.x and 1.x (1.16 writes a leading `v`). */
const KNOWN_VERSION = /^v?[01]\.\d+/;

/** The branch a session's undone messages are written on (IM-20). */
export const REVERTED_BRANCH = "reverted";

/** One record of a session: a JSON object, where it is in the canonical text, and where to report it. */
export interface OpenCodeRecord {
  readonly value: Record<string, unknown>;
  /** 1-based line of the session's canonical text (the source blob) where the record starts. */
  readonly line: number;
  /** The file of a storage directory it is (relative to the directory); undefined for the other shapes. */
  readonly file?: string;
  /** Where a problem with it is reported: the file (or database) and a line in it (0: the whole record). */
  readonly where: { readonly file: string; readonly line: number };
  /** What it is, for a problem's message (`message msg_…`). */
  readonly what: string;
}

/** A session as read from any shape, before it is mapped. */
export interface OpenCodeRecords {
  /** The source as reported and recorded: the session file, `DB#ses_…`, or the export file. */
  readonly file: string;
  readonly info: OpenCodeRecord;
  readonly messages: readonly { readonly rec: OpenCodeRecord; readonly parts: readonly OpenCodeRecord[] }[];
  /** Records read but kept only in the blob (session_diff, todo …). */
  readonly unmapped: Map<string, number>;
  readonly problems: ImportProblem[];
  /** Ids of the sessions the source holds whose parent is this one (child sessions of the task tool). */
  readonly children: readonly string[];
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const idOf = (r: OpenCodeRecord): string => str(r.value, "id") ?? "";

/** The parts that keep an aborted reply in OpenCode's next request (`toModelMessages`). */
const keepsAborted = (parts: readonly OpenCodeRecord[]): boolean =>
  parts.some((p) => p.value.type !== "step-start" && p.value.type !== "reasoning");

/** The finish reasons that are neither a plain stop nor a tool-call stop. */
const finishOf = (reason: string | undefined): string | undefined =>
  reason === undefined || reason === "stop" || reason === "tool-calls" ? undefined : reason;

/** An assistant `error` as the failed turn's diag: `APIError 400: …`. */
function errorText(error: Record<string, unknown>): string {
  const name = str(error, "name") ?? "error";
  const data = isObject(error.data) ? error.data : {};
  const status = num(data, "statusCode");
  const message = str(data, "message") ?? str(error, "message");
  return `${name}${status === undefined ? "" : ` ${status}`}${message === undefined || message === "" ? "" : `: ${message}`}`;
}

function usageOf(tokens: unknown, cost: number | undefined): ForeignUsage | undefined {
  if (!isObject(tokens)) return undefined;
  const cache = isObject(tokens.cache) ? tokens.cache : undefined;
  const u: { -readonly [K in keyof ForeignUsage]: ForeignUsage[K] } = {
    input: num(tokens, "input") ?? 0,
    output: num(tokens, "output") ?? 0,
  };
  if (num(cache, "read") !== undefined) u.cacheRead = num(cache, "read") as number;
  if (num(cache, "write") !== undefined) u.cacheWrite = num(cache, "write") as number;
  if (num(tokens, "reasoning") !== undefined) u.reasoning = num(tokens, "reasoning") as number;
  if (cost !== undefined) u.cost = cost;
  return u;
}

/**
 * Maps a session's records onto the step format (IM-17 … IM-21). Throws `ImportError`
 * (`unknown-version`) for a version it does not know; malformed records are problems.
 */
export function openCodeSession(src: OpenCodeRecords): ForeignSession {
  const info = src.info.value;
  const sessionId = str(info, "id") ?? "";
  const version = str(info, "version");
  if (version === undefined || !KNOWN_VERSION.test(version))
    throw new ImportError(
      "unknown-version",
      `${src.info.where.file}${src.info.where.line > 0 ? `:${src.info.where.line}` : ""}: ${src.info.what} was written by OpenCode ${JSON.stringify(version ?? null)}, not a version strata reads (it reads 0.x and 1.x); nothing of it was imported — a newer strata may read it`,
      src.file,
    );
  const problems = src.problems;
  const unmapped = new Map(src.unmapped);
  const steps: Step[] = [];
  const aliases = new Map<string, string | null>();
  const said = new Set<string>();
  const bad = (r: OpenCodeRecord, message: string): void => {
    // (once, though a record main keeps part of is read for both lines)
    const p = { file: r.where.file, line: r.where.line, message: `${r.what}: ${message}` };
    if (said.has(p.message)) return;
    said.add(p.message);
    problems.push(p);
  };
  // A record is counted once, though the message main keeps part of is written on two lines (IM-20).
  const counted = new Set<OpenCodeRecord>();
  const unmappedOnce = (p: OpenCodeRecord, what = `part/${String(p.value.type)}`): void => {
    if (counted.has(p)) return;
    counted.add(p);
    countUnmapped(unmapped, what);
  };
  const typed = (p: OpenCodeRecord): boolean => {
    if (typeof p.value.type === "string") return true;
    bad(p, "a part without a type; kept in the source blob only");
    return false;
  };
  const messages = [...src.messages]
    .map((m) => ({ rec: m.rec, parts: m.parts.filter(typed).sort((a, b) => byId(idOf(a), idOf(b))) }))
    .sort((a, b) => byId(idOf(a.rec), idOf(b.rec)));

  // An undo (IM-20): the messages from revert.messageID on are still stored; main ends before them.
  const revert = isObject(info.revert) ? info.revert : undefined;
  const revertMessage = revert === undefined ? undefined : str(revert, "messageID");
  const revertPart = revert === undefined ? undefined : str(revert, "partID");
  let revertAt = revertMessage === undefined ? -1 : messages.findIndex((m) => idOf(m.rec) === revertMessage);
  if (revertMessage !== undefined && revertAt === -1)
    bad(src.info, `its revert names message ${revertMessage}, which is not in the session; every message is on main`);
  if (revertAt === -1) revertAt = messages.length;

  /** Compaction requests (a user message with a `compaction` part): message id → the tail it keeps. */
  const requests = new Map<string, string | undefined>();
  let system: string | undefined;
  let lastModel: string | undefined;
  let prev: string | null = null;
  /** The name the next step's line gets: set when the reverted messages start. */
  let lineName: string | undefined;
  const push = (s: Step): void => {
    steps.push(lineName === undefined ? s : { ...s, lineName });
    lineName = undefined;
    prev = s.key;
  };
  const alias = (key: string): void => {
    aliases.set(key, prev);
    prev = key;
  };

  /** Writes one message as steps; `suffix` makes the keys of a second copy unique (the reverted branch). */
  const writeMessage = (rec: OpenCodeRecord, parts: readonly OpenCodeRecord[], suffix: string): void => {
    const m = rec.value;
    const id = idOf(rec);
    const key = `${id}${suffix}`;
    const where = { line: rec.line, ...(rec.file === undefined ? {} : { file: rec.file }) };
    const role = str(m, "role");
    const ts = timeOf(isObject(m.time) ? m.time.created : undefined);
    if (role === "user") {
      const texts: string[] = [];
      let typed = false;
      let request = false;
      let tail: string | undefined;
      for (const p of parts) {
        const v = p.value;
        switch (v.type) {
          case "text":
            if (v.ignored === true) unmappedOnce(p, "part/text/ignored");
            else if (typeof v.text === "string") {
              texts.push(v.text);
              if (v.synthetic !== true) typed = true;
            } else bad(p, "a text part without text; kept in the source blob only");
            break;
          case "file": {
            unmappedOnce(p);
            // text/plain and directories reach the model as synthetic text parts beside the file part.
            const mime = str(v, "mime") ?? "";
            if (mime !== "text/plain" && mime !== "application/x-directory") {
              texts.push(`[Attached ${mime || "file"}: ${str(v, "filename") ?? "file"}]`);
              typed = true;
            }
            break;
          }
          case "subtask":
            // What OpenCode puts in the request for a command run as a subtask.
            unmappedOnce(p);
            texts.push("The following tool was executed by the user");
            typed = true;
            break;
          case "compaction":
            unmappedOnce(p);
            request = true;
            tail = str(v, "tail_start_id");
            break;
          default:
            unmappedOnce(p);
        }
      }
      if (request) requests.set(id, tail);
      if (texts.length === 0) {
        if (!request) unmappedOnce(rec, "message/user-empty");
        alias(key);
        return;
      }
      push({
        kind: "user",
        key,
        ...(suffix === "" ? {} : { ref: id }),
        parent: prev,
        ts,
        ...where,
        text: texts.join("\n\n"),
        ...(typed ? {} : { origin: "synthetic" }),
      });
      return;
    }
    if (role !== "assistant") {
      if (role === undefined) bad(rec, "a message without a role; kept in the source blob only");
      else unmappedOnce(rec, `message/${role}`);
      alias(key);
      return;
    }
    if (system === undefined && Array.isArray(m.system) && m.system.every((x) => typeof x === "string") && m.system.length > 0)
      system = (m.system as string[]).join("\n\n");
    const error = isObject(m.error) ? m.error : undefined;
    const aborted = error !== undefined && str(error, "name") === "MessageAbortedError" && keepsAborted(parts);
    const failed = error !== undefined && !aborted;
    // A compaction's summary (IM-21): it hides what came before, as the agent's own element.
    if (m.summary === true && error === undefined) {
      const summary = parts
        .filter((p) => p.value.type === "text" && typeof p.value.text === "string")
        .map((p) => p.value.text as string)
        .join("\n\n");
      for (const p of parts) if (p.value.type !== "text") unmappedOnce(p);
      const parentId = str(m, "parentID");
      const kept = parentId === undefined ? undefined : requests.get(parentId);
      push({
        kind: "compaction",
        key,
        ...(suffix === "" ? {} : { ref: id }),
        parent: prev,
        ts: timeOf(isObject(m.time) ? (m.time.completed ?? m.time.created) : undefined),
        ...where,
        summary,
        ...(kept === undefined ? {} : { firstKept: kept }),
      });
      return;
    }
    const provider = str(m, "providerID");
    const modelId = str(m, "modelID");
    if (provider !== undefined && modelId !== undefined && `${provider}:${modelId}` !== lastModel) {
      lastModel = `${provider}:${modelId}`;
      push({ kind: "model", key: `${key}#model`, ref: id, parent: prev, ts, ...where, provider, model: modelId });
    }
    const model = provider !== undefined && modelId !== undefined ? `${provider}:${modelId}` : modelId;
    // One model step a group: a `step-start` after content starts the next (0.x wrote several in one message).
    const groups: OpenCodeRecord[][] = [[]];
    for (const p of parts) {
      const g = groups.at(-1) as OpenCodeRecord[];
      if (!failed && p.value.type === "step-start" && g.some((x) => ["text", "reasoning", "tool"].includes(String(x.value.type))))
        groups.push([p]);
      else g.push(p);
    }
    let written = 0;
    let stepTs = ts;
    for (const [gi, group] of groups.entries()) {
      const text: string[] = [];
      const reasoning: string[] = [];
      const calls: ForeignCall[] = [];
      const results: { part: OpenCodeRecord; result: ForeignResult; ts: number | undefined }[] = [];
      let finish: { reason: string | undefined; tokens: unknown; cost: number | undefined } | undefined;
      let start: number | undefined;
      for (const p of group) {
        const v = p.value;
        const t = isObject(v.time) ? timeOf(v.time.start) : undefined;
        switch (v.type) {
          case "text":
            if (typeof v.text === "string") text.push(v.text);
            else bad(p, "a text part without text; kept in the source blob only");
            start ??= t;
            break;
          case "reasoning":
            if (typeof v.text === "string" && v.text !== "") reasoning.push(v.text);
            start ??= t;
            break;
          case "tool": {
            const call = toolCall(p, bad);
            if (call === undefined) break;
            calls.push(call.call);
            start ??= call.start;
            if (call.result !== undefined) {
              if (failed) unmappedOnce(p, "part/tool/result-of-failed-turn");
              else results.push({ part: p, result: call.result, ts: call.end });
            }
            break;
          }
          case "step-finish":
            // Its usage is the step's when a message holds several; its snapshot is in the blob only.
            unmappedOnce(p);
            finish = { reason: str(v, "reason"), tokens: v.tokens, cost: num(v, "cost") };
            break;
          default:
            // step-start, patch, file, snapshot, retry, agent, subtask, compaction and types this
            // reader does not know: kept in the source blob only (FORMATS: ignore unknown).
            unmappedOnce(p);
        }
      }
      if (text.length === 0 && reasoning.length === 0 && calls.length === 0 && !failed) continue;
      const single = groups.length === 1;
      const usage = single
        ? (usageOf(m.tokens, num(m, "cost")) ?? usageOf(finish?.tokens, finish?.cost))
        : usageOf(finish?.tokens, finish?.cost);
      const reason = aborted ? "aborted" : finishOf(single ? (str(m, "finish") ?? finish?.reason) : finish?.reason);
      if (gi > 0) stepTs = start ?? stepTs;
      // The first step is the message; a later one is named by its step-start part.
      const head = written === 0 ? rec : (group[0] as OpenCodeRecord);
      const stepRef = idOf(head);
      const stepKey = `${stepRef}${suffix}`;
      push({
        kind: "assistant",
        key: stepKey,
        ...(stepKey === stepRef ? {} : { ref: stepRef }),
        parent: prev,
        ts: stepTs,
        line: head.line,
        ...(head.file === undefined ? {} : { file: head.file }),
        ...(model === undefined ? {} : { model }),
        text: text.join("\n\n"),
        reasoning: reasoning.join("\n\n"),
        calls,
        ...(usage === undefined ? {} : { usage }),
        ...(reason === undefined ? {} : { finish: reason }),
        ...(failed ? { error: errorText(error as Record<string, unknown>) } : {}),
      });
      written++;
      for (const r of results) {
        const pid = idOf(r.part);
        push({
          kind: "results",
          key: `${pid}${suffix}`,
          ...(suffix === "" ? {} : { ref: pid }),
          parent: prev,
          ts: r.ts ?? stepTs,
          line: r.part.line,
          ...(r.part.file === undefined ? {} : { file: r.part.file }),
          results: [r.result],
        });
      }
    }
    if (written === 0) {
      // No text, reasoning or call: OpenCode leaves such a reply out of the next request too.
      unmappedOnce(rec, "message/assistant-empty");
      alias(key);
    }
  };

  for (let i = 0; i < revertAt; i++) {
    const m = messages[i] as (typeof messages)[number];
    writeMessage(m.rec, m.parts, "");
  }
  if (revertAt < messages.length) {
    const at = messages[revertAt] as (typeof messages)[number];
    const partial = revertPart === undefined ? -1 : at.parts.findIndex((p) => idOf(p) === revertPart);
    if (revertPart !== undefined && partial === -1)
      bad(src.info, `its revert names part ${revertPart}, which is not a part of message ${revertMessage}; the whole message is undone`);
    // Reverted from a part on: main keeps the message's parts before it.
    const keep = partial > 0;
    const forkFrom = prev;
    const modelAtFork = lastModel;
    if (keep) writeMessage(at.rec, at.parts.slice(0, partial), "");
    // The undone messages, whole, on a branch forked where main's history stops being theirs.
    prev = forkFrom;
    lastModel = modelAtFork;
    lineName = REVERTED_BRANCH;
    for (let i = revertAt; i < messages.length; i++) {
      const m = messages[i] as (typeof messages)[number];
      // The message main keeps part of is on both lines: its second copy's keys are told apart.
      writeMessage(m.rec, m.parts, keep && i === revertAt ? "@reverted" : "");
    }
  }

  const title = str(info, "title") || steps.find((s): s is Extract<Step, { kind: "user" }> => s.kind === "user")?.text.slice(0, 200);
  const cwd = str(info, "directory");
  const links: Record<string, string> = {};
  if (str(info, "parentID") !== undefined) links["parent-session"] = str(info, "parentID") as string;
  if (src.children.length > 0) links["child-sessions"] = [...src.children].sort().join(" ");
  return {
    from: "opencode",
    version,
    sourceId: sessionId,
    ...(title === undefined || title === "" ? {} : { title }),
    ...(cwd === undefined || cwd === "" ? {} : { cwd }),
    ...(system === undefined ? {} : { system }),
    steps,
    aliases,
    unmapped,
    problems,
    ...(Object.keys(links).length === 0 ? {} : { links }),
  };
}

/** A `tool` part as a call, with its result when it finished (IM-18). */
function toolCall(
  p: OpenCodeRecord,
  bad: (r: OpenCodeRecord, message: string) => void,
): { call: ForeignCall; result?: ForeignResult; start?: number; end?: number } | undefined {
  const v = p.value;
  const callId = str(v, "callID");
  const tool = str(v, "tool");
  const state = isObject(v.state) ? v.state : undefined;
  if (callId === undefined || tool === undefined || state === undefined) {
    bad(
      p,
      `a tool part without ${callId === undefined ? "callID" : tool === undefined ? "tool" : "a state object"}; kept in the source blob only`,
    );
    return undefined;
  }
  const meta = isObject(state.metadata) ? state.metadata : undefined;
  const child = tool === "task" ? str(meta ?? {}, "sessionId") : undefined;
  const call: ForeignCall = {
    id: callId,
    name: tool,
    args: jsonText(state.input ?? {}),
    at: { ref: idOf(p), line: p.line, ...(p.file === undefined ? {} : { file: p.file }) },
    ...(child === undefined ? {} : { links: { "child-session": child } }),
  };
  const time = isObject(state.time) ? state.time : undefined;
  const start = timeOf(time?.start);
  const end = timeOf(time?.end);
  const at = { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) };
  switch (state.status) {
    case "completed":
      return {
        call,
        result: { callId, output: typeof state.output === "string" ? state.output : jsonText(state.output ?? ""), isError: false },
        ...at,
      };
    case "error":
      // An interrupted tool that had output: OpenCode sends that output as the result.
      if (meta?.interrupted === true && typeof meta.output === "string")
        return { call, result: { callId, output: meta.output, isError: false }, ...at };
      return { call, result: { callId, output: str(state, "error") ?? "", isError: true }, ...at };
    case "pending":
    case "running":
      // The recording ends before its result: left open, interrupted by import.end (IM-2).
      return { call, ...at };
    default:
      bad(p, `a tool part whose state.status is ${JSON.stringify(state.status ?? null)}; its call is kept without a result`);
      return { call, ...at };
  }
}

// ---------------------------------------------------------------------------------------------
// Finding the sessions under a path (IM-17).

type Found = { sources: Source[]; problems: ImportProblem[] };

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};
const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** A directory laid out as OpenCode's legacy storage: `session/` beside `message/` or `project/`. */
const isStorage = (dir: string): boolean => isDir(join(dir, "session")) && (isDir(join(dir, "message")) || isDir(join(dir, "project")));

function unreadable(path: string, e: unknown): ImportError {
  return new ImportError("unreadable", `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, path);
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw unreadable(dir, e);
  }
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw unreadable(path, e);
  }
}

/** True when the file starts with SQLite's header. */
function isSqlite(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(16);
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString("latin1") === "SQLite format 3\u0000";
  } catch (e) {
    throw unreadable(path, e);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The OpenCode sessions under `path` (IM-17): a directory holding `opencode.db` is read from the
 * database; a storage directory (or a directory holding `storage/`) gives each of its sessions;
 * a session file `session/<project>/<ses>.json` of one gives that session; a SQLite file is a
 * database; any other file, or the `.json` files of any other directory, are `opencode export`
 * documents. Problems found while looking (messages of no session) are returned beside.
 */
export function findOpenCode(path: string): Found {
  if (isDir(path)) {
    if (isFile(join(path, "opencode.db"))) return databaseSources(join(path, "opencode.db"));
    if (isStorage(path)) return storageSources(path);
    if (isStorage(join(path, "storage"))) return storageSources(join(path, "storage"));
    const files = jsonFiles(path);
    if (files.length === 0)
      throw new ImportError(
        "not-a-session",
        `${path} is not an OpenCode storage directory (session/, message/, part/), holds neither one (storage/) nor an opencode.db, and has no .json file of \`opencode export\`; give ~/.local/share/opencode, its storage/ directory, an opencode.db or an export file`,
        path,
      );
    return { sources: files.map(exportSource), problems: [] };
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

function jsonFiles(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  for (let d = stack.pop(); d !== undefined; d = stack.pop())
    for (const name of list(d)) {
      const p = join(d, name);
      if (isDir(p)) stack.push(p);
      else if (name.endsWith(".json")) out.push(p);
    }
  return out.sort();
}

/**
 * A JSON text's value; a problem when it is not JSON — with the line of the error when the text is
 * the file's (`inFile`), not a column of a database.
 */
function parseJson(
  text: string,
  where: { file: string; line: number },
  what: string,
  problems: ImportProblem[],
  inFile = true,
): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    const line = inFile ? errorLine(text, e) : 0;
    problems.push({ ...where, line, message: `${what}: not JSON (${(e as Error).message}); kept in the source blob only` });
    return undefined;
  }
}

/** A JSON text as an object; a problem (with the line of the error) when it is not one. */
function parseObject(
  text: string,
  where: { file: string; line: number },
  what: string,
  problems: ImportProblem[],
  inFile = true,
): Record<string, unknown> | undefined {
  const parsed = parseJson(text, where, what, problems, inFile);
  if (parsed === undefined) return undefined;
  const v = parsed.value;
  if (!isObject(v)) {
    problems.push({
      ...where,
      message: `${what}: a JSON ${Array.isArray(v) ? "array" : typeof v}, not a record; kept in the source blob only`,
    });
    return undefined;
  }
  return v;
}

/** The 1-based line of a JSON.parse error in `text` (0 when the message names no position). */
function errorLine(text: string, e: unknown): number {
  const message = (e as Error).message;
  const m = /line (\d+)/.exec(message);
  if (m !== null) return Number(m[1]);
  // A text cut short: the error is at its end.
  if (/end of JSON input/.test(message)) return text.trimEnd().split("\n").length;
  const p = /position (\d+)/.exec(message);
  if (p === null) return 0;
  let line = 1;
  for (let i = 0; i < Number(p[1]) && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function newlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
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
    throw new ImportError("not-a-session", `${file}: no session info and messages in it; ${hint}`, file);
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
