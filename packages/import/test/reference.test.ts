/**
 * The importer against every real recording in the shared reference set (`$STRATA_FOREIGN_SESSIONS`,
 * else `shared/reference-data/foreign-sessions/` beside the clone: other people's recordings are never
 * copied in; their formats are summarized in docs/import-formats.md). Each
 * must import with no problem reported, and the messages and tool calls in the tree must match
 * what a plain `JSON.parse` scan of the file counts (IM-1, IM-2, IM-5, IM-6; an OpenCode storage
 * directory: each of its sessions, IM-17). Skipped, saying so,
 * when the directory is not there.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ATTR, ROLE, TAG } from "@strata/agent";
import { bodyOf, Session } from "@strata/engine";
import type { SessionId, Store } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { type Format, importForeign } from "../src/index.ts";
import { checkImported, cleanup, REFERENCE, tempStore } from "./helpers.ts";

afterEach(cleanup);

interface Counts {
  user: number;
  assistant: number;
  calls: number;
  results: number;
}

/** What a plain scan of a Claude Code file finds: prompts, responses (by message id), tool_use and tool_result blocks. */
function scanClaudeCode(text: string): Counts {
  const c: Counts = { user: 0, assistant: 0, calls: 0, results: 0 };
  const responses = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const r = JSON.parse(line);
    const content = r.message?.content;
    if (r.type === "user" && r.isCompactSummary !== true) {
      const results = Array.isArray(content) ? content.filter((b: { type: string }) => b.type === "tool_result").length : 0;
      c.results += results;
      if (results === 0 || content.some((b: { type: string }) => b.type === "text")) c.user++;
    } else if (r.type === "assistant") {
      responses.add(r.message.id);
      c.calls += content.filter((b: { type: string }) => b.type === "tool_use").length;
    }
  }
  c.assistant = responses.size;
  return c;
}

/** What a plain scan of a Pi file finds: messages in the model's context by role, toolCall blocks, toolResult messages. */
function scanPi(text: string): Counts {
  const c: Counts = { user: 0, assistant: 0, calls: 0, results: 0 };
  const userRoles = new Set(["user", "custom", "hookMessage", "branchSummary"]);
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const r = JSON.parse(line);
    const m = r.message;
    if (r.type === "custom_message" || (r.type === "branch_summary" && r.summary)) c.user++;
    if (r.type !== "message") continue;
    if (userRoles.has(m.role) || (m.role === "bashExecution" && m.excludeFromContext !== true)) c.user++;
    else if (m.role === "assistant") {
      c.assistant++;
      c.calls += m.content.filter((b: { type: string }) => b.type === "toolCall").length;
    } else if (m.role === "toolResult") c.results++;
  }
  return c;
}

/**
 * What a plain scan of a Codex rollout finds: user/developer messages, responses (the runs of
 * output items between two inputs; a failed request is one), calls and their outputs.
 */
function scanCodex(text: string): Counts {
  const c: Counts = { user: 0, assistant: 0, calls: 0, results: 0 };
  const output = new Set(["reasoning", "function_call", "custom_tool_call", "local_shell_call"]);
  let open = false;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const r = JSON.parse(line);
    const p = r.payload;
    if (r.type === "compacted") open = false;
    if (r.type === "event_msg" && p.type === "error") {
      c.assistant++;
      open = false;
    }
    if (r.type !== "response_item") continue;
    const isOutput = (p.type === "message" && p.role === "assistant") || output.has(p.type);
    if (p.type === "message" && p.role !== "assistant") {
      c.user++;
      open = false;
    } else if (p.type === "function_call_output" || p.type === "custom_tool_call_output") {
      c.results++;
      open = false;
    } else if (isOutput) {
      if (!open) c.assistant++;
      open = true;
      if (p.type !== "reasoning" && p.type !== "message") c.calls++;
    }
  }
  return c;
}

const SCANS: Partial<Record<Format, (text: string) => Counts>> = { "claude-code": scanClaudeCode, pi: scanPi, codex: scanCodex };

/**
 * What a plain scan of one session of an OpenCode storage directory finds: user messages with
 * something for the model (text not ignored, an attachment, a subtask), model steps (a reply, or
 * each step of an 0.x reply that did something), tool parts, and the tool parts that finished in a
 * reply that did not fail.
 */
function scanOpenCode(storage: string, session: string): Counts {
  const c: Counts = { user: 0, assistant: 0, calls: 0, results: 0 };
  const json = (...p: string[]) => JSON.parse(readFileSync(join(storage, ...p), "utf8"));
  const ls = (...p: string[]) => (existsSync(join(storage, ...p)) ? readdirSync(join(storage, ...p)).sort() : []);
  for (const f of ls("message", session)) {
    const m = json("message", session, f);
    const parts = ls("part", m.id).map((p) => json("part", m.id, p));
    if (m.role === "user") {
      if (parts.some((p) => (p.type === "text" && !p.ignored) || p.type === "subtask" || (p.type === "file" && p.mime !== "text/plain")))
        c.user++;
      continue;
    }
    if (m.summary === true && m.error === undefined) continue;
    const tools = parts.filter((p) => p.type === "tool");
    c.calls += tools.length;
    const aborted = m.error?.name === "MessageAbortedError" && parts.some((p) => p.type !== "step-start" && p.type !== "reasoning");
    if (m.error !== undefined && !aborted) {
      c.assistant++;
      continue;
    }
    c.results += tools.filter((p) => p.state.status === "completed" || p.state.status === "error").length;
    let steps = 0;
    let content = false;
    for (const p of parts) {
      if (p.type === "step-start" && content) {
        steps++;
        content = false;
      }
      if (["text", "reasoning", "tool"].includes(p.type)) content = true;
    }
    c.assistant += steps + (content ? 1 : 0);
  }
  return c;
}

/** The same counts from the imported session: every branch's elements, each once (branches share their common past). */
function countTree(store: Store, id: SessionId): Counts {
  const c: Counts = { user: 0, assistant: 0, calls: 0, results: 0 };
  const seen = new Set<number>();
  const { session } = Session.open(store, id);
  for (const b of session.branches()) {
    for (const t of bodyOf(session.at(b.head)).children) {
      if (t.tag !== TAG.turn || seen.has(t.id)) continue;
      seen.add(t.id);
      if (t.attrs[ATTR.role] === ROLE.user) {
        if (t.attrs.origin !== "compaction") c.user++;
        continue;
      }
      c.assistant++;
      for (const call of t.children.filter((k) => k.tag === TAG.call)) {
        c.calls++;
        if (call.children.some((k) => k.tag === TAG.result)) c.results++;
      }
    }
  }
  session.close();
  return c;
}

const present = existsSync(REFERENCE);
if (!present) console.warn(`reference recordings not found at ${REFERENCE}: the reference import tests are skipped`);

describe.skipIf(!present)("reference recordings", () => {
  for (const [from, scan] of Object.entries(SCANS) as [Format, (t: string) => Counts][]) {
    const dir = join(REFERENCE, from);
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".jsonl")) : [];
    for (const name of files)
      it(`IM-1 IM-5 ${from}/${name} imports with no problem, every message and call in the tree`, () => {
        const file = join(dir, name);
        const store = tempStore();
        const r = importForeign(store, { from, path: file });
        expect(r.problems).toEqual([]);
        expect(r.failed).toEqual([]);
        expect(r.sessions).toHaveLength(1);
        const id = r.sessions[0]?.session as SessionId;
        expect(countTree(store, id)).toEqual(scan(readFileSync(file, "utf8")));
        checkImported(store, id);
      });
  }
  // OpenCode keeps a storage directory of many files, not one file a session.
  const opencode = join(REFERENCE, "opencode");
  for (const name of existsSync(opencode) ? readdirSync(opencode).sort() : []) {
    const storage = join(opencode, name, "storage");
    if (!existsSync(storage)) continue;
    it(`IM-1 IM-5 IM-17 opencode/${name} imports with no problem, a session per session file, every message and call in the tree`, () => {
      const store = tempStore();
      const r = importForeign(store, { from: "opencode", path: storage });
      expect(r.problems).toEqual([]);
      expect(r.failed).toEqual([]);
      const files = readdirSync(join(storage, "session")).flatMap((p) =>
        readdirSync(join(storage, "session", p)).filter((f) => f.endsWith(".json")),
      );
      expect(r.sessions.map((s) => `${s.sourceId}.json`).sort()).toEqual(files.sort());
      for (const s of r.sessions) {
        expect(countTree(store, s.session), s.sourceId).toEqual(scanOpenCode(storage, s.sourceId));
        checkImported(store, s.session);
      }
    });
  }
});
