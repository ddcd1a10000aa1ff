/**
 * OpenCode sessions (IM-17 … IM-22), mapped onto the step format. Every shape OpenCode keeps a
 * session in is read into the same records (`OpenCodeRecords`, by `opencode-sources.ts`), and
 * `openCodeSession` maps them: messages in id order (ids grow with time), a user message is a user
 * turn, an assistant message (one per model step; 0.x wrote several steps into one, split at their
 * `step-start` parts) is an assistant turn, a `tool` part is a call and — when it finished — its
 * result, in one record.
 */
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

/** The OpenCode versions this reader knows (IM-10): 0.x and 1.x (1.16 writes a leading `v`). */
const KNOWN_VERSION = /^v?[01]\.\d+/;
/** The version OpenCode records when it runs from its sources rather than a release (`Installation.VERSION`). */
const DEV_VERSION = "local";

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
  const at = `${src.info.where.file}${src.info.where.line > 0 ? `:${src.info.where.line}` : ""}`;
  if (version === undefined)
    throw new ImportError(
      "unknown-version",
      `${at}: ${src.info.what} records no version (info.version), which every OpenCode session has; nothing of it was imported`,
      src.file,
    );
  if (version !== DEV_VERSION && !KNOWN_VERSION.test(version))
    throw new ImportError(
      "unknown-version",
      `${at}: ${src.info.what} was written by OpenCode ${JSON.stringify(version)}, not a version strata reads (it reads 0.x and 1.x); nothing of it was imported — a newer strata may read it`,
      src.file,
    );
  const problems = src.problems;
  // OpenCode run from its sources (not a release) records "local": read as the newest format, and said so.
  if (version === DEV_VERSION)
    problems.push({
      file: src.info.where.file,
      line: src.info.where.line,
      message: `${src.info.what} was written by a development build of OpenCode (version "local", not a release): read as 1.x, the newest format strata reads`,
    });
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
