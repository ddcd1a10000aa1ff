/**
 * Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`, CLI 1.x and 2.x; IM-11).
 * One record a line, by `type`: `user` (a prompt, or `tool_result` blocks settling calls),
 * `assistant` (one content block of a response a line, the lines of one response sharing
 * `message.id`: they fill one turn), `system` (`compact_boundary` links the summary after it to
 * the last node before it), and bookkeeping (`summary`, `file-history-snapshot`, `progress`,
 * `attachment`, …) that has no place in the tree. Records form a tree through `uuid`/`parentUuid`;
 * inline sidechains (`isSidechain`, a root with `parentUuid: null`) are sub-agent runs: each becomes
 * a branch of its own. The version marker is each line's `version` (the CLI's version).
 */
import {
  assistantBlocks,
  contentText,
  countUnmapped,
  type ForeignResult,
  type ForeignSession,
  ImportError,
  isObject,
  num,
  resolveAlias,
  type Step,
  str,
  timeOf,
} from "./foreign.ts";
import { readJsonLines } from "./lines.ts";

/** The CLI versions this reader knows (IM-10): 1.x and 2.x. */
const KNOWN_VERSION = /^[12]\.\d+\.\d+/;

/**
 * A sub-agent's transcript of a 2.x session (IM-24): `<session>/subagents/agent-<agentId>.jsonl`,
 * read with the session, its lines a branch of their own named `agent-<agentId>`.
 */
export interface AgentTranscript {
  /** The path recorded for it (as the session file's is). */
  readonly path: string;
  readonly text: string;
  /** From the file name: `agent-<agentId>.jsonl`. */
  readonly agentId: string;
}

/**
 * Parses a Claude Code session file's text, with the sub-agent transcripts of its directory (2.x).
 * Throws `ImportError` for a version it does not know (in any of the files) or a file that is no session.
 */
export function parseClaudeCode(text: string, file: string, agents: readonly AgentTranscript[] = []): ForeignSession {
  const { records, problems, unreadable: unreadableMain } = readJsonLines(text, file);
  let unreadable = unreadableMain;
  const steps: Step[] = [];
  const aliases = new Map<string, string | null>();
  const unmapped = new Map<string, number>();
  const summaries = new Map<string, string>();
  let version: string | undefined;
  let sourceId: string | undefined;
  let cwd: string | undefined;
  let aiTitle: string | undefined;
  let lastModel: string | undefined;
  let sidechains = 0;
  /** Task/Agent call id → the agent its result names (`toolUseResult.agentId`). */
  const agentOfCall = new Map<string, string>();
  const known = new Set<string>();

  const read = (
    records: readonly { line: number; value: Record<string, unknown> }[],
    file: string,
    agent: AgentTranscript | undefined,
  ): void => {
    const bad = (line: number, message: string): void => void problems.push({ file, line, message });
    let agentRoots = 0;
    /** The last record of this file with a uuid. */
    let previous: { uuid: string; line: number } | undefined;
    // The records of a sub-agent's transcript: a record pointing at none of them starts a line.
    const own = new Set<string>();
    if (agent !== undefined) for (const { value } of records) if (typeof value.uuid === "string") own.add(value.uuid);
    for (const { line, value: r } of records) {
      const type = str(r, "type");
      const v = str(r, "version");
      if (v !== undefined) {
        if (!KNOWN_VERSION.test(v))
          throw new ImportError(
            "unknown-version",
            `${file}:${line}: Claude Code version ${JSON.stringify(v)} is not one strata reads (it reads 1.x and 2.x); nothing was imported — a newer strata may read it`,
            file,
          );
        version ??= v;
      }
      sourceId ??= str(r, "sessionId");
      cwd ??= str(r, "cwd");
      const uuid = str(r, "uuid");
      const parentRaw = r.parentUuid;
      let parent = typeof parentRaw === "string" ? parentRaw : null;
      const before = previous;
      // A parent no file of the session holds (a record Claude Code did not write, a file that
      // starts mid-history): the record follows the one before it in its file, as it was written.
      if (parent !== null && !known.has(parent)) {
        if (type === "user" || type === "assistant")
          bad(
            line,
            `its parent ${parent} is not in the source; read as following ${before === undefined ? "nothing (it starts the history)" : `line ${before.line}`}`,
          );
        parent = before !== undefined && before.uuid !== uuid ? before.uuid : null;
      }
      if (uuid !== undefined) previous = { uuid, line };
      const ts = timeOf(r.timestamp);
      // The root of a sub-agent's transcript is the line `agent-<agentId>`; an inline sidechain (1.x) is numbered.
      let lineName: string | undefined;
      // (a record of a transcript may point into the session: a compaction agent starts from its history)
      if (agent !== undefined && (type === "user" || type === "assistant") && (parent === null || !own.has(parent)))
        lineName = ++agentRoots === 1 ? `agent-${agent.agentId}` : `agent-${agent.agentId}-${agentRoots}`;
      else if (agent === undefined && r.isSidechain === true && parent === null) lineName = `sidechain-${++sidechains}`;
      const base = { parent, ts, line, ...(agent === undefined ? {} : { file }), ...(lineName === undefined ? {} : { lineName }) };
      switch (type) {
        case "user":
        case "assistant": {
          const message = r.message;
          if (uuid === undefined || !isObject(message)) {
            bad(line, `a ${type} record without ${uuid === undefined ? "a uuid" : "a message object"}; kept in the source blob only`);
            if (uuid !== undefined) aliases.set(uuid, parent);
            continue;
          }
          if (type === "user") {
            userSteps(r, message, uuid, base, steps, unmapped, bad);
            const res = r.toolUseResult;
            const agentId = isObject(res) ? str(res, "agentId") : undefined;
            if (agentId !== undefined && Array.isArray(message.content))
              for (const b of message.content)
                if (isObject(b) && b.type === "tool_result" && typeof b.tool_use_id === "string") agentOfCall.set(b.tool_use_id, agentId);
          } else {
            const model = str(message, "model");
            const full = model === undefined ? undefined : `anthropic:${model}`;
            let stepParent = parent;
            if (full !== undefined && model !== "<synthetic>" && full !== lastModel) {
              // A model switch is recorded in the inputs, before the reply that used it.
              steps.push({ kind: "model", key: `${uuid}#model`, ...base, provider: "anthropic", model: model as string });
              stepParent = `${uuid}#model`;
              lastModel = full;
            }
            const { lineName: _, ...rest } = base;
            const s = assistantStep(r, message, uuid, stepParent === parent ? base : { ...rest, parent: stepParent }, full, unmapped, bad);
            if (s !== undefined) steps.push(s);
            else aliases.set(uuid, stepParent);
          }
          continue;
        }
        case "system": {
          if (uuid === undefined) {
            countUnmapped(unmapped, "system");
            continue;
          }
          // A compaction boundary has no parent of its own: what follows it continues the line before it.
          // (its logical parent may be in no file either: then it follows the record before it)
          const logical = str(r, "logicalParentUuid");
          const boundary = str(r, "subtype") === "compact_boundary" && logical !== undefined;
          aliases.set(uuid, boundary ? (known.has(logical) ? logical : (before?.uuid ?? null)) : parent);
          countUnmapped(unmapped, `system/${str(r, "subtype") ?? "?"}`);
          continue;
        }
        case "summary": {
          const leaf = str(r, "leafUuid");
          const summary = str(r, "summary");
          if (agent === undefined && leaf !== undefined && summary !== undefined) summaries.set(leaf, summary);
          countUnmapped(unmapped, "summary");
          continue;
        }
        case "ai-title":
          if (agent === undefined) aiTitle = str(r, "aiTitle") ?? aiTitle;
          countUnmapped(unmapped, "ai-title");
          continue;
        default:
          // progress, attachment, file-history-snapshot, queue-operation, last-prompt, permission-mode,
          // and types this reader does not know: kept in the source blob only (FORMATS: ignore unknown).
          if (uuid !== undefined) aliases.set(uuid, parent);
          countUnmapped(unmapped, type ?? "untyped");
      }
    }
  };

  // Every uuid of the session's files: a parent among none of them is not in the source.
  const agentLines = agents.map((agent) => ({ agent, lines: readJsonLines(agent.text, agent.path) }));
  for (const { value } of [...records, ...agentLines.flatMap((a) => a.lines.records)])
    if (typeof value.uuid === "string") known.add(value.uuid);
  read(records, file, undefined);
  const mainSteps = steps.length;
  for (const { agent, lines } of agentLines) {
    problems.push(...lines.problems);
    unreadable += lines.unreadable;
    read(lines.records, agent.path, agent);
  }
  linkAgents(steps, agentOfCall, new Set(agents.map((a) => a.agentId)));
  oneLinePerExchange(steps, aliases);
  if (mainSteps === 0 && version === undefined)
    throw new ImportError(
      "not-a-session",
      `${file}: no Claude Code user or assistant record with a version in ${records.length} record(s)${unreadable > 0 ? ` (${unreadable} line(s) not JSON)` : ""}; is it a Claude Code session file (~/.claude/projects/…/<session>.jsonl)?`,
      file,
      unreadable === 0,
    );
  // A summary names a leaf; when that leaf is in this file it titles the session.
  let title = aiTitle;
  for (let i = mainSteps - 1; i >= 0 && title === undefined; i--) title = summaries.get((steps[i] as Step).key);
  title ??= steps
    .slice(0, mainSteps)
    .find((s): s is Extract<Step, { kind: "user" }> => s.kind === "user" && s.origin === undefined)
    ?.text.slice(0, 200);
  return {
    from: "claude-code",
    version: version ?? "unknown",
    sourceId: sourceId ?? file,
    ...(title === undefined ? {} : { title }),
    ...(cwd === undefined ? {} : { cwd }),
    steps,
    aliases,
    unmapped,
    problems,
  };
}

type Base = { parent: string | null; ts: number | undefined; line: number; file?: string; lineName?: string };

/**
 * Claude Code 2.x writes each block of a response as a line of its own (the lines of one response
 * share `message.id`), and the result of each of its parallel calls points at the line of its own
 * call (`parentUuid`, and `sourceToolAssistantUUID`), not at the last line before it: as links,
 * the calls' lines and their results are siblings, yet they are one exchange — the response, its
 * results, what follows — and Claude Code reads them as one history. So a line of the response, a
 * result of one of its calls, a model switch or a reply that points anywhere into an exchange is
 * made to follow the exchange's last step; a prompt that points into one keeps its parent (an
 * edited prompt is a branch).
 */
function oneLinePerExchange(steps: Step[], aliases: ReadonlyMap<string, string | null>): void {
  interface Exchange {
    readonly group: string | undefined;
    last: string;
    readonly calls: Set<string>;
  }
  const exchangeOf = new Map<string, Exchange>();
  steps.forEach((s, i) => {
    const p = resolveAlias(aliases, s.parent);
    const e = p === null || s.lineName !== undefined ? undefined : exchangeOf.get(p);
    const follow = (x: Exchange): void => {
      if (p !== x.last) steps[i] = { ...s, parent: x.last };
    };
    switch (s.kind) {
      case "assistant": {
        if (e !== undefined && s.group !== undefined && e.group === s.group) {
          follow(e);
          e.last = s.key;
          for (const c of s.calls) e.calls.add(c.id);
          exchangeOf.set(s.key, e);
          return;
        }
        if (e !== undefined) follow(e);
        exchangeOf.set(s.key, { group: s.group, last: s.key, calls: new Set(s.calls.map((c) => c.id)) });
        return;
      }
      case "results":
        if (e !== undefined && s.results.every((r) => e.calls.has(r.callId))) {
          follow(e);
          e.last = s.key;
          exchangeOf.set(s.key, e);
        }
        return;
      case "model":
        if (e !== undefined) follow(e);
        return;
      default:
        return;
    }
  });
}

/**
 * Names on each Task/Agent call the branch of the sub-agent it ran (`branch="agent-<agentId>"`),
 * when its result names the agent and the agent's transcript was read.
 */
function linkAgents(steps: Step[], agentOfCall: ReadonlyMap<string, string>, read: ReadonlySet<string>): void {
  if (agentOfCall.size === 0) return;
  steps.forEach((s, i) => {
    if (s.kind !== "assistant" || !s.calls.some((c) => read.has(agentOfCall.get(c.id) ?? ""))) return;
    const calls = s.calls.map((c) => {
      const agent = agentOfCall.get(c.id);
      return agent !== undefined && read.has(agent) ? { ...c, links: { ...c.links, branch: `agent-${agent}` } } : c;
    });
    steps[i] = { ...s, calls };
  });
}

function userSteps(
  r: Record<string, unknown>,
  message: Record<string, unknown>,
  uuid: string,
  base: Base,
  steps: Step[],
  unmapped: Map<string, number>,
  bad: (line: number, message: string) => void,
): void {
  const content = message.content;
  if (typeof content !== "string" && !Array.isArray(content)) {
    bad(base.line, "a user message whose content is neither text nor a list of blocks; kept in the source blob only");
    steps.push({ kind: "user", key: uuid, ...base, text: "" });
    return;
  }
  const results: ForeignResult[] = [];
  if (Array.isArray(content))
    for (const b of content) {
      if (!isObject(b)) continue;
      if (b.type === "tool_result") {
        const callId = str(b, "tool_use_id");
        if (callId === undefined) {
          bad(base.line, "a tool_result block without tool_use_id; kept in the source blob only");
          continue;
        }
        results.push({ callId, output: contentText(b.content), isError: b.is_error === true });
      } else if (b.type === "image") countUnmapped(unmapped, "user/image");
      else if (b.type !== "text") countUnmapped(unmapped, `user/${String(b.type)}`);
    }
  const text = contentText(content);
  const origin = r.isCompactSummary === true ? "compaction" : r.isMeta === true ? "meta" : undefined;
  if (origin === "compaction") {
    steps.push({ kind: "compaction", key: uuid, ...base, summary: text });
    return;
  }
  if (results.length > 0) {
    const hasText = Array.isArray(content) && content.some((b) => isObject(b) && b.type === "text");
    if (!hasText) {
      steps.push({ kind: "results", key: uuid, ...base, results });
      return;
    }
    steps.push({ kind: "results", key: `${uuid}#results`, ...base, results });
    // The line (if this record starts one) starts at the results; the text follows them on it.
    const { lineName: _, ...rest } = base;
    steps.push({ kind: "user", key: uuid, ...rest, parent: `${uuid}#results`, text, ...(origin === undefined ? {} : { origin }) });
    return;
  }
  steps.push({ kind: "user", key: uuid, ...base, text, ...(origin === undefined ? {} : { origin }) });
}

function assistantStep(
  r: Record<string, unknown>,
  message: Record<string, unknown>,
  uuid: string,
  base: Base,
  model: string | undefined,
  unmapped: Map<string, number>,
  bad: (line: number, message: string) => void,
): Step | undefined {
  const content = message.content;
  if (!Array.isArray(content)) {
    bad(base.line, "an assistant message whose content is not a list of blocks; kept in the source blob only");
    return undefined;
  }
  const { text, reasoning, calls } = assistantBlocks(content, { type: "tool_use", args: "input" }, base.line, unmapped, bad);
  const u = isObject(message.usage) ? message.usage : undefined;
  const usage =
    u === undefined
      ? undefined
      : {
          input: num(u, "input_tokens") ?? 0,
          output: num(u, "output_tokens") ?? 0,
          ...(num(u, "cache_read_input_tokens") !== undefined ? { cacheRead: num(u, "cache_read_input_tokens") as number } : {}),
          ...(num(u, "cache_creation_input_tokens") !== undefined ? { cacheWrite: num(u, "cache_creation_input_tokens") as number } : {}),
        };
  const stop = str(message, "stop_reason");
  const finish = stop === undefined || stop === "end_turn" || stop === "tool_use" || stop === "stop_sequence" ? undefined : stop;
  const error = r.isApiErrorMessage === true ? text.join("\n") || str(r, "error") || "API error" : undefined;
  return {
    kind: "assistant",
    key: uuid,
    ...base,
    ...(str(message, "id") === undefined ? {} : { group: str(message, "id") as string }),
    ...(model === undefined ? {} : { model }),
    text: error === undefined ? text.join("\n\n") : "",
    reasoning: reasoning.join("\n\n"),
    calls,
    ...(usage === undefined ? {} : { usage }),
    ...(finish === undefined ? {} : { finish }),
    ...(error === undefined ? {} : { error }),
  };
}
