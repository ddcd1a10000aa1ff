/**
 * OpenAI Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`;
 * IM-15). Each line is `{timestamp, type, payload}`: `session_meta` (the thread id, cwd,
 * `cli_version` — the version marker — and the base instructions), `turn_context` (per turn: the
 * model), `response_item` (the model-visible history as Responses API items: `message`,
 * `reasoning`, `function_call`/`function_call_output`, `custom_tool_call`/`…_output`,
 * `local_shell_call`), `event_msg` (UI and telemetry: `user_message` tells a typed prompt from
 * injected context, `token_count` carries the usage, `error` a failed request) and `compacted`.
 * A rollout is linear: each record follows the one before. The output items between two inputs
 * are one model response: they fill one turn.
 */
import {
  countUnmapped,
  type ForeignCall,
  type ForeignSession,
  type ForeignUsage,
  ImportError,
  isObject,
  jsonText,
  num,
  type Step,
  str,
  timeOf,
} from "./foreign.ts";
import { lineKey, readJsonLines } from "./lines.ts";

/** The CLI versions this reader knows (IM-10): 0.x (0.77 … 0.142 seen). */
const KNOWN_VERSION = /^0\.\d+\.\d+/;

/** The text of a message's content items (`input_text`, `output_text`; an image is `[image]`). */
function itemsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const b of content) {
    if (!isObject(b)) continue;
    if (typeof b.text === "string") parts.push(b.text);
    else if (b.type === "input_image" || b.type === "image") parts.push("[image]");
  }
  return parts.join("\n");
}

/** A call's output: a string, `{content, success}`, or a list of content items. */
function outputOf(v: unknown): { output: string; isError: boolean } {
  if (typeof v === "string") return { output: v, isError: false };
  if (Array.isArray(v)) return { output: itemsText(v), isError: false };
  if (isObject(v)) return { output: itemsText(v.content ?? v.content_items), isError: v.success === false };
  return { output: "", isError: false };
}

/** Parses a Codex rollout file's text. Throws `ImportError` for a version it does not know or a file that is no rollout. */
export function parseCodex(text: string, file: string): ForeignSession {
  const { records, problems, unreadable } = readJsonLines(text, file);
  const first = records[0];
  if (first !== undefined && first.value.type === undefined && typeof first.value.id === "string" && "instructions" in first.value)
    throw new ImportError(
      "unknown-version",
      `${file}:${first.line}: a Codex rollout from before session_meta (mid-2025: a bare {id, timestamp, instructions} first line) is not one strata reads (it reads rollouts with a session_meta line, CLI 0.x); nothing was imported`,
      file,
    );
  const meta = records.find((r) => r.value.type === "session_meta" && isObject(r.value.payload));
  if (meta === undefined)
    throw new ImportError(
      "not-a-session",
      `${file}: no Codex session_meta record in ${records.length} record(s)${unreadable > 0 ? ` (${unreadable} line(s) not JSON)` : ""}; is it a Codex rollout (~/.codex/sessions/…/rollout-….jsonl)?`,
      file,
      unreadable === 0,
    );
  const m = meta.value.payload as Record<string, unknown>;
  const version = str(m, "cli_version");
  if (version === undefined || !KNOWN_VERSION.test(version))
    throw new ImportError(
      "unknown-version",
      `${file}:${meta.line}: Codex CLI version ${JSON.stringify(version ?? null)} is not one strata reads (it reads 0.x); nothing was imported — a newer strata may read it`,
      file,
    );
  const provider = str(m, "model_provider") ?? "openai";
  const instructions = isObject(m.base_instructions) ? str(m.base_instructions, "text") : str(m, "instructions");
  // A typed prompt is also an event_msg user_message; any other user message is injected context.
  const typed = new Set<string>();
  for (const { value: r } of records)
    if (r.type === "event_msg" && isObject(r.payload) && r.payload.type === "user_message" && typeof r.payload.message === "string")
      typed.add(r.payload.message.trim());

  const steps: Step[] = [];
  const aliases = new Map<string, string | null>();
  const unmapped = new Map<string, number>();
  let prev: string | null = null;
  let model: string | undefined;
  let lastModel: string | undefined;
  /** The group of the response being written; undefined after an input. */
  let group: string | undefined;
  /** The group the last assistant turn was made from, while it is the last body element (usage may still come). */
  let lastGroup: string | undefined;
  let title: string | undefined;
  const bad = (line: number, message: string): void => void problems.push({ file, line, message });

  for (const rec of records) {
    const { line, value: r } = rec;
    const key = lineKey(rec);
    const parent = prev;
    prev = key;
    const base = { parent, ts: timeOf(r.timestamp), line };
    const p = isObject(r.payload) ? r.payload : undefined;
    const type = str(r, "type") ?? "untyped";
    const skip = (what: string): void => {
      aliases.set(key, parent);
      countUnmapped(unmapped, what);
    };
    const assistant = (s: { text?: string; reasoning?: string; calls?: ForeignCall[]; usage?: ForeignUsage; error?: string }): void => {
      group ??= key;
      lastGroup = group;
      steps.push({
        kind: "assistant",
        key,
        ...base,
        group,
        ...(model === undefined ? {} : { model: `${provider}:${model}` }),
        text: s.text ?? "",
        reasoning: s.reasoning ?? "",
        calls: s.calls ?? [],
        ...(s.usage === undefined ? {} : { usage: s.usage }),
        ...(s.error === undefined ? {} : { error: s.error }),
      });
    };
    if (p === undefined) {
      bad(line, `a ${type} record without a payload object; kept in the source blob only`);
      aliases.set(key, parent);
      continue;
    }
    const pt = str(p, "type") ?? "?";
    switch (type) {
      case "session_meta":
        skip(line === meta.line ? "session_meta" : "session_meta/again");
        continue;
      case "turn_context": {
        const mm = str(p, "model");
        if (mm !== undefined && mm !== lastModel) {
          steps.push({ kind: "model", key, ...base, provider, model: mm });
          lastModel = mm;
        } else skip("turn_context");
        model = mm ?? model;
        continue;
      }
      case "compacted": {
        const summary = str(p, "message");
        if (summary === undefined) {
          bad(line, "a compacted record without a message; kept in the source blob only");
          aliases.set(key, parent);
          continue;
        }
        steps.push({ kind: "compaction", key, ...base, summary });
        group = lastGroup = undefined;
        continue;
      }
      case "event_msg": {
        if (pt === "token_count" && isObject(p.info) && isObject(p.info.last_token_usage) && lastGroup !== undefined) {
          const u = p.info.last_token_usage;
          group = lastGroup;
          assistant({
            usage: {
              input: num(u, "input_tokens") ?? 0,
              output: num(u, "output_tokens") ?? 0,
              ...(num(u, "cached_input_tokens") === undefined ? {} : { cacheRead: num(u, "cached_input_tokens") as number }),
            },
          });
          continue;
        }
        if (pt === "error") {
          // A request that failed: a failed turn of its own.
          group = undefined;
          assistant({ error: str(p, "message") ?? "error" });
          group = undefined;
          continue;
        }
        // user_message and agent_message repeat response items; the rest is telemetry.
        skip(`event_msg/${pt}`);
        continue;
      }
      case "response_item":
        break;
      default:
        // world_state, inter_agent_communication, token_usage_record, and types this reader does
        // not know: kept in the source blob only (FORMATS: ignore unknown).
        skip(type);
        continue;
    }
    switch (pt) {
      case "message": {
        const role = str(p, "role");
        const t = itemsText(p.content);
        if (role === "assistant") {
          assistant({ text: t });
          continue;
        }
        if (role !== "user" && role !== "developer" && role !== "system") {
          skip(`response_item/message/${role ?? "?"}`);
          continue;
        }
        // The typed prompt's event holds its text items only (images are beside it).
        const words = Array.isArray(p.content)
          ? p.content.filter((b) => isObject(b) && typeof b.text === "string").map((b) => (b as { text: string }).text)
          : [t];
        const origin =
          role === "user" ? (typed.has(words.join("\n").trim()) || typed.has(words.join("").trim()) ? undefined : "context") : role;
        if (origin === undefined) title ??= t.slice(0, 200);
        steps.push({ kind: "user", key, ...base, text: t, ...(origin === undefined ? {} : { origin }) });
        group = lastGroup = undefined;
        continue;
      }
      case "reasoning": {
        const summary = Array.isArray(p.summary) ? itemsText(p.summary) : "";
        assistant({ reasoning: summary !== "" ? summary : itemsText(p.content) });
        continue;
      }
      case "function_call":
      case "custom_tool_call":
      case "local_shell_call": {
        const id = str(p, "call_id") ?? str(p, "id");
        const name = pt === "local_shell_call" ? "local_shell" : str(p, "name");
        if (id === undefined || name === undefined) {
          bad(line, `a ${pt} without call_id or name; kept in the source blob only`);
          aliases.set(key, parent);
          continue;
        }
        const args = pt === "function_call" ? jsonText(p.arguments) : pt === "custom_tool_call" ? jsonText(p.input) : jsonText(p.action);
        assistant({ calls: [{ id, name, args }] });
        continue;
      }
      case "function_call_output":
      case "custom_tool_call_output": {
        const callId = str(p, "call_id");
        if (callId === undefined) {
          bad(line, `a ${pt} without call_id; kept in the source blob only`);
          aliases.set(key, parent);
          continue;
        }
        steps.push({ kind: "results", key, ...base, results: [{ callId, ...outputOf(p.output) }] });
        group = undefined;
        continue;
      }
      default:
        // web_search_call, tool_search_call/_output, image_generation_call …: hosted tools whose
        // results the rollout does not record as outputs; kept in the source blob only.
        skip(`response_item/${pt}`);
    }
  }
  const parentThread =
    isObject(m.source) && isObject(m.source.subagent) && isObject(m.source.subagent.thread_spawn)
      ? str(m.source.subagent.thread_spawn, "parent_thread_id")
      : str(m, "parent_thread_id");
  const links: Record<string, string> = {};
  if (str(m, "forked_from_id") !== undefined) links["forked-from"] = str(m, "forked_from_id") as string;
  if (parentThread !== undefined) links["parent-thread"] = parentThread;
  const cwd = str(m, "cwd");
  return {
    from: "codex",
    version,
    sourceId: str(m, "id") ?? file,
    ...(title === undefined ? {} : { title }),
    ...(cwd === undefined ? {} : { cwd }),
    ...(instructions === undefined ? {} : { system: instructions }),
    steps,
    aliases,
    unmapped,
    problems,
    ...(Object.keys(links).length === 0 ? {} : { links }),
  };
}
