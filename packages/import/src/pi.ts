/**
 * Pi coding agent session JSONL (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`; IM-14).
 * Line 1 is a header `{type:"session", version, id, timestamp, cwd, parentSession?}` — `version`
 * is the format marker (1: linear, entries without ids; 2: a tree through `id`/`parentId`; 3: the
 * `hookMessage` role renamed `custom`). Every later line is an entry `{type, id, parentId,
 * timestamp}`: `message` (an AgentMessage: `user`, `assistant`, `toolResult`, `bashExecution`,
 * `custom`/`hookMessage`, …), `model_change`, `compaction` (summary, `firstKeptEntryId`),
 * `branch_summary` and `custom_message` (both in the model's context), and bookkeeping with no
 * place in the tree (`thinking_level_change`, `custom`, `label`, `session_info`). The current leaf
 * is the last entry; a second child of an earlier entry is a branch (IM-6).
 */
import {
  assistantBlocks,
  contentText,
  countUnmapped,
  type ForeignSession,
  ImportError,
  isObject,
  num,
  type Step,
  str,
  timeOf,
} from "./foreign.ts";
import { lineKey, readJsonLines } from "./lines.ts";

/** The header versions this reader knows (IM-10). */
const KNOWN_VERSIONS: ReadonlySet<number> = new Set([1, 2, 3]);

/** What Pi sends the model for a `!command` the user ran (its `bashExecutionToText`). */
function bashText(m: Record<string, unknown>): string {
  const output = str(m, "output") ?? "";
  let text = `Ran \`${str(m, "command") ?? ""}\`\n${output === "" ? "(no output)" : `\`\`\`\n${output}\n\`\`\``}`;
  const code = num(m, "exitCode");
  if (m.cancelled === true) text += "\n\n(command cancelled)";
  else if (code !== undefined && code !== 0) text += `\n\nCommand exited with code ${code}`;
  return text;
}

type Base = { parent: string | null; ts: number | undefined; line: number };

/** Parses a Pi session file's text. Throws `ImportError` for a version it does not know or a file that is no Pi session. */
export function parsePi(text: string, file: string): ForeignSession {
  const { records, problems, unreadable } = readJsonLines(text, file);
  const header = records[0];
  if (header === undefined || str(header.value, "type") !== "session" || str(header.value, "id") === undefined)
    throw new ImportError(
      "not-a-session",
      `${file}: the first record is not a Pi session header ({"type":"session","version":3,"id":…}) in ${records.length} record(s)${unreadable > 0 ? ` (${unreadable} line(s) not JSON)` : ""}; is it a Pi session file (~/.pi/agent/sessions/…/<time>_<uuid>.jsonl)?`,
      file,
      unreadable === 0,
    );
  const h = header.value;
  const rawVersion = h.version ?? 1;
  if (typeof rawVersion !== "number" || !KNOWN_VERSIONS.has(rawVersion))
    throw new ImportError(
      "unknown-version",
      `${file}:${header.line}: Pi session format version ${JSON.stringify(rawVersion)} is not one strata reads (it reads 1, 2 and 3); nothing was imported — a newer strata may read it`,
      file,
    );
  const version = rawVersion;
  const steps: Step[] = [];
  const aliases = new Map<string, string | null>();
  const unmapped = new Map<string, number>();
  /** Every entry's parent, mapped or not: the path a compaction keeps is walked on it. */
  const parentOf = new Map<string, string | null>();
  const lineOf = new Map<string, number>();
  /** Keys of steps that make a body element (a turn, or a result inside one). */
  const inBody = new Set<string>();
  const compactions: { index: number; firstKept: string | undefined }[] = [];
  let name: string | undefined;
  let prev: string | null = null;
  const bad = (line: number, message: string): void => void problems.push({ file, line, message });
  const push = (s: Step): void => {
    steps.push(s);
    if (s.kind === "user" || s.kind === "assistant" || s.kind === "results") inBody.add(s.key);
  };

  for (let i = 1; i < records.length; i++) {
    const { line, value: r } = records[i] as (typeof records)[number];
    const type = str(r, "type") ?? "untyped";
    if (type === "session") {
      bad(line, "a second session header; kept in the source blob only");
      continue;
    }
    // Version 1 entries have no ids: each follows the one before (Pi's own v1 → v2 migration).
    let key: string;
    let parent: string | null;
    if (version === 1) {
      key = str(r, "id") ?? lineKey(records[i] as (typeof records)[number]);
      parent = prev;
    } else {
      const id = str(r, "id");
      if (id === undefined) {
        bad(line, `a ${type} entry without an id; kept in the source blob only`);
        continue;
      }
      key = id;
      parent = typeof r.parentId === "string" ? r.parentId : null;
    }
    if (lineOf.has(key)) {
      bad(line, `the id ${key} is already the entry of line ${lineOf.get(key)}; this entry is kept in the source blob only`);
      continue;
    }
    lineOf.set(key, line);
    parentOf.set(key, parent);
    prev = key;
    const base: Base = { parent, ts: timeOf(r.timestamp), line };
    const skip = (what: string): void => {
      aliases.set(key, parent);
      countUnmapped(unmapped, what);
    };
    switch (type) {
      case "message": {
        const m = r.message;
        if (!isObject(m)) {
          bad(line, "a message entry without a message object; kept in the source blob only");
          aliases.set(key, parent);
          continue;
        }
        const ts = base.ts ?? timeOf(m.timestamp);
        const s = messageStep(m, key, { ...base, ts }, unmapped, bad);
        if (s === undefined) aliases.set(key, parent);
        else push(s);
        continue;
      }
      case "model_change": {
        const provider = str(r, "provider");
        const model = str(r, "modelId");
        if (provider === undefined || model === undefined) {
          bad(line, "a model_change entry without provider or modelId; kept in the source blob only");
          aliases.set(key, parent);
        } else push({ kind: "model", key, ...base, provider, model });
        continue;
      }
      case "compaction": {
        const summary = str(r, "summary");
        if (summary === undefined) {
          bad(line, "a compaction entry without a summary; kept in the source blob only");
          aliases.set(key, parent);
          continue;
        }
        // Version 1 names the first kept entry by its index among the file's records.
        const index = num(r, "firstKeptEntryIndex");
        const firstKept =
          str(r, "firstKeptEntryId") ??
          (version === 1 && index !== undefined && index > 0 && records[index] !== undefined
            ? (str((records[index] as (typeof records)[number]).value, "id") ?? lineKey(records[index] as (typeof records)[number]))
            : undefined);
        compactions.push({ index: steps.length, firstKept });
        push({ kind: "compaction", key, ...base, summary });
        continue;
      }
      case "branch_summary": {
        const summary = str(r, "summary");
        if (summary === undefined || summary === "") skip("branch_summary");
        else push({ kind: "user", key, ...base, text: summary, origin: "branch-summary" });
        continue;
      }
      case "custom_message":
        push({ kind: "user", key, ...base, text: contentText(r.content), origin: "custom" });
        continue;
      case "session_info":
        name = str(r, "name") ?? name;
        skip(type);
        continue;
      default:
        // thinking_level_change, custom (extension state), label, and types this reader does not
        // know: kept in the source blob only (FORMATS: ignore unknown).
        skip(type);
    }
  }

  // A compaction keeps the path from `firstKeptEntryId` on: the element it hides through is the one
  // before the first kept entry that made a body element (a model change or a label makes none).
  for (const { index, firstKept } of compactions) {
    const c = steps[index] as Extract<Step, { kind: "compaction" }>;
    const path: string[] = [];
    for (let k = c.parent, n = 0; k !== null && n <= parentOf.size; n++) {
      path.push(k);
      k = parentOf.get(k) ?? null;
    }
    path.reverse();
    const from = firstKept === undefined ? -1 : path.indexOf(firstKept);
    const kept = from === -1 ? undefined : path.slice(from).find((k) => inBody.has(k));
    if (kept !== undefined) steps[index] = { ...c, firstKept: kept };
  }

  const title =
    name ?? steps.find((s): s is Extract<Step, { kind: "user" }> => s.kind === "user" && s.origin === undefined)?.text.slice(0, 200);
  const parentSession = str(h, "parentSession");
  const cwd = str(h, "cwd");
  return {
    from: "pi",
    version: String(version),
    sourceId: str(h, "id") as string,
    ...(title === undefined ? {} : { title }),
    ...(cwd === undefined ? {} : { cwd }),
    steps,
    aliases,
    unmapped,
    problems,
    ...(parentSession === undefined ? {} : { links: { "parent-session": parentSession } }),
  };
}

/** One message entry as a step; undefined when it makes none (it is then an alias). */
function messageStep(
  m: Record<string, unknown>,
  key: string,
  base: Base,
  unmapped: Map<string, number>,
  bad: (line: number, message: string) => void,
): Step | undefined {
  const role = str(m, "role");
  switch (role) {
    case "user":
      if (Array.isArray(m.content)) for (const b of m.content) if (isObject(b) && b.type === "image") countUnmapped(unmapped, "user/image");
      return { kind: "user", key, ...base, text: contentText(m.content) };
    case "assistant":
      return assistantStep(m, key, base, unmapped, bad);
    case "toolResult": {
      const callId = str(m, "toolCallId");
      if (callId === undefined) {
        bad(base.line, "a toolResult message without toolCallId; kept in the source blob only");
        return undefined;
      }
      return { kind: "results", key, ...base, results: [{ callId, output: contentText(m.content), isError: m.isError === true }] };
    }
    case "bashExecution":
      // `!!command`: shown to the user, never sent to the model.
      if (m.excludeFromContext === true) {
        countUnmapped(unmapped, "message/bashExecution");
        return undefined;
      }
      return { kind: "user", key, ...base, text: bashText(m), origin: "bash" };
    case "custom":
    case "hookMessage":
      return { kind: "user", key, ...base, text: contentText(m.content), origin: "custom" };
    case "branchSummary":
      return { kind: "user", key, ...base, text: str(m, "summary") ?? "", origin: "branch-summary" };
    default:
      countUnmapped(unmapped, `message/${role ?? "?"}`);
      return undefined;
  }
}

function assistantStep(
  m: Record<string, unknown>,
  key: string,
  base: Base,
  unmapped: Map<string, number>,
  bad: (line: number, message: string) => void,
): Step {
  if (!Array.isArray(m.content)) bad(base.line, "an assistant message whose content is not a list of blocks; kept in the source blob only");
  const { text, reasoning, calls } = assistantBlocks(
    Array.isArray(m.content) ? m.content : [],
    { type: "toolCall", args: "arguments" },
    base.line,
    unmapped,
    bad,
  );
  const provider = str(m, "provider");
  const model = str(m, "model");
  const u = isObject(m.usage) ? m.usage : undefined;
  const cost = isObject(u?.cost) ? num(u.cost, "total") : undefined;
  const usage =
    u === undefined
      ? undefined
      : {
          input: num(u, "input") ?? 0,
          output: num(u, "output") ?? 0,
          ...(num(u, "cacheRead") === undefined ? {} : { cacheRead: num(u, "cacheRead") as number }),
          ...(num(u, "cacheWrite") === undefined ? {} : { cacheWrite: num(u, "cacheWrite") as number }),
          ...(cost === undefined ? {} : { cost }),
        };
  const stop = str(m, "stopReason");
  // An errored or aborted response is left out of what Pi sends next: a failed turn here.
  const error =
    stop === "error"
      ? str(m, "errorMessage") || "error"
      : stop === "aborted"
        ? `aborted${str(m, "errorMessage") ? `: ${str(m, "errorMessage")}` : ""}`
        : undefined;
  const finish = stop === undefined || stop === "stop" || stop === "toolUse" || error !== undefined ? undefined : stop;
  return {
    kind: "assistant",
    key,
    ...base,
    ...(model === undefined ? {} : { model: provider === undefined ? model : `${provider}:${model}` }),
    text: text.join("\n\n"),
    reasoning: reasoning.join("\n\n"),
    calls,
    ...(usage === undefined ? {} : { usage }),
    ...(finish === undefined ? {} : { finish }),
    ...(error === undefined ? {} : { error }),
  };
}
