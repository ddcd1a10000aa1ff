/**
 * Claude Code sessions into strata sessions (IM-1 … IM-12), on our own fixture
 * (`fixtures/foreign/claude-code/session.jsonl`: split responses, parallel calls, an error result,
 * thinking, a meta line, an edit that forks, an API error, an inline sidechain, a compaction, and
 * bookkeeping records) and two small broken ones.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ATTR, CALL, renderPrompt, TAG, TURN } from "@strata/agent";
import { type Element, toXml } from "@strata/dom";
import { bodyOf, metaOf, Session } from "@strata/engine";
import type { SessionId } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "../src/import.ts";
import { IMPORT, ImportError, importForeign, parseClaudeCode } from "../src/index.ts";
import { checkImported, cleanup, FIXTURES, tempDir, tempStore } from "./helpers.ts";

const DIR = join(FIXTURES, "claude-code");
const FILE = join(DIR, "session.jsonl");

afterEach(cleanup);

function importFixture() {
  const store = tempStore();
  const report = importForeign(store, { from: "claude-code", path: FILE });
  const s = report.sessions[0];
  if (s === undefined) throw new Error(`nothing imported: ${JSON.stringify(report)}`);
  return { store, report, id: s.session };
}

function turns(el: Element): Element[] {
  return el.children.filter((c) => c.tag === TAG.turn);
}

describe("Claude Code", () => {
  it("IM-1 IM-2 a session file becomes one session: turns, calls with arguments and results, usage, model", () => {
    const { store, report, id } = importFixture();
    expect(report.problems).toEqual([]);
    expect(report.sessions).toHaveLength(1);
    const { session } = Session.open(store, id);
    const body = bodyOf(session.tree);
    const [q, meta, ...rest] = turns(body);
    expect(q?.attrs[ATTR.role]).toBe("user");
    expect(q?.children[0]?.text).toBe("How many notes are in notes/?");
    expect(meta?.attrs.origin).toBe("meta");
    expect(rest.length).toBeGreaterThan(0);
    // The edit is the current line (main); the first answer is on the fork.
    const { session: fork } = Session.open(store, id, { branch: "fork-1" });
    const first = turns(bodyOf(fork.tree))[2] as Element;
    expect(first.attrs[ATTR.status]).toBe(TURN.complete);
    expect(first.attrs[ATTR.model]).toBe("anthropic:claude-sonnet-4-5-20250929");
    expect(first.children.map((c) => c.tag)).toEqual([TAG.reasoning, TAG.text, TAG.call, TAG.call, TAG.usage]);
    const [glob, bash] = first.children.filter((c) => c.tag === TAG.call) as [Element, Element];
    expect(glob.attrs).toMatchObject({ id: "toolu_1", tool: "Glob", status: CALL.executed, index: "0" });
    expect(glob.children.find((c) => c.tag === TAG.args)?.text).toBe('{"pattern":"notes/*.md"}');
    expect(glob.children.find((c) => c.tag === TAG.result)?.text).toBe("notes/a.md\nnotes/b.md");
    expect(bash.attrs).toMatchObject({ id: "toolu_2", status: CALL.executed, error: "tool-error", index: "1" });
    // IM-11: usage repeated on every line of a response is the response's, not a sum.
    expect(first.children.find((c) => c.tag === TAG.usage)?.attrs).toMatchObject({
      input: "12",
      output: "55",
      "cache-read": "2000",
      "cache-write": "100",
    });
    expect(renderPrompt(fork).messages.map((m) => m.role)).toEqual(["user", "user", "assistant", "tool", "tool", "assistant"]);
    fork.close();
    session.close();
  });

  it("IM-3 IM-4 the import record names the source, and the source is a blob, byte for byte", () => {
    const { store, id } = importFixture();
    const { session } = Session.open(store, id);
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    const bytes = readFileSync(FILE);
    expect(rec.attrs).toMatchObject({
      from: "claude-code",
      version: "2.0.30",
      "source-id": "11111111-2222-4333-8444-555555555555",
      sha256: sha256(bytes),
      unrecorded: "system tools",
    });
    expect(rec.attrs.unmapped).toContain("summary:1");
    expect(rec.attrs.unmapped).toContain("file-history-snapshot:1");
    expect(rec.attrs.unmapped).toContain("progress:1");
    const src = rec.children.find((c) => c.attrs.kind === IMPORT.sourceDiag) as Element;
    expect(store.getBlob(src.attrs.hash as string)?.equals(bytes)).toBe(true);
    // Every element made from a record names its line: the verbatim record is one lookup away.
    const lines = bytes.toString("utf8").split("\n");
    for (const t of turns(bodyOf(session.tree))) {
      const line = Number(t.attrs.line);
      expect(JSON.parse(lines[line - 1] as string).uuid ?? JSON.parse(lines[line - 1] as string).message?.id).toBeDefined();
    }
    expect(store.getSession(id)?.metadata).toMatchObject({ import: { from: "claude-code", sha256: sha256(bytes) } });
    session.close();
  });

  it("IM-4 IM-9 a source that is not valid UTF-8 is kept byte for byte: its blob is the file, named by the recorded sha256", () => {
    const store = tempStore();
    const file = join(tempDir(), "latin1.jsonl");
    // A summary record whose text holds a byte that is not UTF-8 (0xFF, a Latin-1 "ÿ" written by another tool).
    const bytes = Buffer.concat([
      readFileSync(FILE),
      Buffer.from('{"type":"summary","summary":"caf'),
      Buffer.of(0xff),
      Buffer.from('","leafUuid":"x"}\n'),
    ]);
    writeFileSync(file, bytes);
    const report = importForeign(store, { from: "claude-code", path: file });
    const id = report.sessions[0]?.session as SessionId;
    const { session } = Session.open(store, id);
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    const src = rec.children.find((c) => c.attrs.kind === IMPORT.sourceDiag) as Element;
    expect(rec.attrs.sha256).toBe(sha256(bytes));
    expect(store.getBlob(src.attrs.hash as string)?.equals(bytes), "the blob is the file's bytes").toBe(true);
    expect(src.attrs.hash).toBe(sha256(bytes));
    session.close();
  });

  it("IM-5 malformed lines are problems with file and line; the rest is imported", () => {
    const store = tempStore();
    const file = join(DIR, "malformed.jsonl");
    const r = importForeign(store, { from: "claude-code", path: file });
    expect(r.problems.map((p) => [p.file, p.line])).toEqual([
      [file, 2],
      [file, 3],
    ]);
    expect(r.problems[0]?.message).toMatch(/not JSON/);
    expect(r.problems[1]?.message).toMatch(/array, not a record/);
    const { session } = Session.open(store, r.sessions[0]?.session as never);
    expect(turns(bodyOf(session.tree)).map((t) => t.children[0]?.text)).toEqual(["How many notes are in notes/?", "still here"]);
    session.close();
  });

  it("IM-6 parentUuid links become branches: the current leaf on main, an edit forks, a sidechain is a line of its own", () => {
    const { store, report, id } = importFixture();
    const { session } = Session.open(store, id);
    const names = session
      .branches()
      .map((b) => b.name)
      .sort();
    expect(names).toEqual(["fork-1", "main", "sidechain-1"]);
    expect(report.sessions[0]?.branchCount).toBe(3);
    // main: the edited question, the failed API call, the retry, the Task call and its result, the compaction, the last reply.
    const main = bodyOf(session.tree);
    expect(turns(main).map((t) => t.children.find((c) => c.tag === TAG.text)?.text ?? "")).toContain(
      "How many notes, and how long are they?",
    );
    // The sidechain sees only the sub-agent's conversation.
    const { session: side } = Session.open(store, id, { branch: "sidechain-1" });
    expect(renderPrompt(side).messages.map((m) => m.content)).toEqual([
      "Count lines in notes/",
      "",
      "3 notes/a.md\n4 notes/b.md\n7 total",
      "7 lines in total.",
    ]);
    // The fork point is the meta line both questions follow.
    const fork = session.branches().find((b) => b.name === "fork-1");
    const at = store.eventMeta(fork?.originEvent as never);
    expect(at?.label).toBe("turn.user");
    side.close();
    session.close();
  });

  it("IM-11 a failed API response is a failed turn; a compaction hides what it summarizes; max_tokens is the finish", () => {
    const { store, id } = importFixture();
    const { session } = Session.open(store, id);
    const all = turns(bodyOf(session.tree));
    const failed = all.find((t) => t.attrs[ATTR.status] === TURN.failed) as Element;
    expect(failed.children.find((c) => c.tag === TAG.diag)?.text).toBe("API Error: 429 rate limited");
    const last = all.at(-1) as Element;
    expect(last.attrs[ATTR.finish]).toBe("max_tokens");
    const compaction = metaOf(session.tree).children.find((c) => c.tag === "compaction") as Element;
    expect(compaction.children[0]?.text).toMatch(/^This session is being continued/);
    const p = renderPrompt(session);
    expect(p.messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
    expect(p.messages[0]?.content).toMatch(/Summary of the conversation so far:\nThis session is being continued/);
    // The model switch is in the recorded inputs.
    expect(toXml(session.tree)).toMatch(/<model _id="\d+" model="claude-opus-4-1-20250805" provider="anthropic"\/>/);
    session.close();
  });

  it("IM-12 each event carries the source's timestamp", () => {
    const { store, id } = importFixture();
    const log = store.log(id, { branch: "main" });
    const user = log.find((e) => e.label === "turn.user");
    expect(user?.ts).toBe(Date.parse("2026-01-05T10:00:00.000Z"));
    const last = log.at(-1);
    expect(last?.ts).toBe(Date.parse("2026-01-05T10:02:07.000Z"));
  });

  it("IM-9 importing the same file again creates nothing and says which session has it", () => {
    const { store, id } = importFixture();
    const before = store.listSessions().length;
    const again = importForeign(store, { from: "claude-code", path: DIR });
    expect(again.skipped).toEqual([{ file: FILE, session: id }]);
    expect(again.sessions.map((s) => s.file).sort()).toEqual([join(DIR, "malformed.jsonl")]);
    expect(again.failed.map((f) => f.file)).toEqual([join(DIR, "unknown-version.jsonl")]);
    expect(store.listSessions().length).toBe(before + 1);
    const third = importForeign(store, { from: "claude-code", path: DIR });
    expect(third.sessions).toEqual([]);
    expect(third.skipped).toHaveLength(2);
  });

  it("IM-10 an unknown version is an error naming it, and nothing is stored", () => {
    const file = join(DIR, "unknown-version.jsonl");
    expect(() => parseClaudeCode(readFileSync(file, "utf8"), file)).toThrow(ImportError);
    expect(() => parseClaudeCode(readFileSync(file, "utf8"), file)).toThrow(/version "3\.0\.0" is not one strata reads/);
    const store = tempStore();
    const r = importForeign(store, { from: "claude-code", path: file });
    expect(r.failed).toEqual([{ file, code: "unknown-version", message: expect.stringContaining("3.0.0") }]);
    expect(store.listSessions()).toEqual([]);
    expect(() => parseClaudeCode('{"type":"summary","summary":"x","leafUuid":"y"}\n', "t.jsonl")).toThrow(/not-a-session|no Claude Code/);
  });

  it("IM-7 a failure while writing stores nothing and leaves earlier sessions as they were", () => {
    const { store, id } = importFixture();
    const before = toXml(Session.open(store, id).session.tree);
    const count = store.listSessions().length;
    // The store refuses a write part-way (a full disk): the session's one transaction rolls back.
    const put = store.putBlob.bind(store);
    store.putBlob = () => {
      throw new Error("disk full");
    };
    try {
      expect(() => importForeign(store, { from: "claude-code", path: join(DIR, "malformed.jsonl") })).toThrow(/disk full/);
    } finally {
      store.putBlob = put;
    }
    expect(store.listSessions().length).toBe(count);
    expect(toXml(Session.open(store, id).session.tree)).toBe(before);
  });

  it("IM-2 IM-8 every imported session verifies, ends with no open call, and renders a prompt at every event", () => {
    const { store, id } = importFixture();
    expect(checkImported(store, id)).toBeGreaterThan(20);
    const { session } = Session.open(store, id);
    expect(renderPrompt(session).system).toBe("");
    session.close();
  });
});

/**
 * A 2.x session with the directory of its name beside it (IM-24): a sub-agent's transcript in
 * `subagents/agent-<agentId>.jsonl` (and its `.meta.json`), and a large output saved in
 * `tool-results/` (`fixtures/foreign/claude-code-agents/`).
 */
describe("Claude Code 2.x: sub-agent transcripts and saved outputs", () => {
  const AGENTS = join(FIXTURES, "claude-code-agents");
  const SID = "33333333-4444-4555-8666-777777777777";
  const MAIN = join(AGENTS, `${SID}.jsonl`);
  const AGENT = join(AGENTS, SID, "subagents", "agent-a7c1e09.jsonl");
  const META = join(AGENTS, SID, "subagents", "agent-a7c1e09.meta.json");
  const SAVED = join(AGENTS, SID, "tool-results", "toolu_b2.txt");

  /** A copy of the fixture's files in a temp directory, to change one of them. */
  function copyFixture(): { dir: string; main: string; agent: string } {
    const dir = tempDir();
    cpSync(AGENTS, dir, { recursive: true });
    return { dir, main: join(dir, `${SID}.jsonl`), agent: join(dir, SID, "subagents", "agent-a7c1e09.jsonl") };
  }

  it("IM-24 a directory of sessions: the transcript is a branch of its session, not a session of its own", () => {
    const store = tempStore();
    const report = importForeign(store, { from: "claude-code", path: AGENTS });
    expect(report.problems).toEqual([]);
    expect(report.failed).toEqual([]);
    expect(report.sessions.map((s) => s.file)).toEqual([MAIN]);
    const id = report.sessions[0]?.session as SessionId;
    const { session } = Session.open(store, id);
    expect(
      session
        .branches()
        .map((b) => b.name)
        .sort(),
    ).toEqual(["agent-a7c1e09", "main"]);
    // The Agent call names the branch of the run it started.
    const calls = turns(bodyOf(session.tree)).flatMap((t) => t.children.filter((c) => c.tag === TAG.call));
    const agentCall = calls.find((c) => c.attrs[ATTR.tool] === "Agent") as Element;
    expect(agentCall.attrs).toMatchObject({ id: "toolu_a1", status: CALL.executed, branch: "agent-a7c1e09" });
    expect(calls.find((c) => c.attrs[ATTR.tool] === "Bash")?.attrs.branch).toBeUndefined();
    // The branch holds the sub-agent's own conversation (it sees only its own history), each element naming its file and line.
    const { session: side } = Session.open(store, id, { branch: "agent-a7c1e09" });
    expect(renderPrompt(side).messages.map((m) => m.content)).toEqual([
      "Count lines in notes/",
      "",
      "3 notes/a.md\n4 notes/b.md\n7 total",
      "7 lines in total.",
    ]);
    const sideTurns = turns(bodyOf(side.tree));
    expect(sideTurns.map((t) => [t.attrs.file, t.attrs.line])).toEqual([
      [AGENT, "1"],
      [AGENT, "2"],
      [AGENT, "4"],
    ]);
    expect(sideTurns[1]?.attrs[ATTR.model]).toBe("anthropic:claude-haiku-4-5-20251001");
    // Main's own turns name no other file.
    expect(turns(bodyOf(session.tree)).every((t) => t.attrs.file === undefined)).toBe(true);
    expect(checkImported(store, id)).toBeGreaterThan(8);
    side.close();
    session.close();
  });

  it("IM-24 IM-3 every file of the session's directory is kept byte for byte, and the output the model saw is the preview", () => {
    const store = tempStore();
    const report = importForeign(store, { from: "claude-code", path: MAIN });
    const id = report.sessions[0]?.session as SessionId;
    const { session } = Session.open(store, id);
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    const sources = rec.children.filter((c) => c.attrs.kind === IMPORT.sourceDiag);
    expect(sources.map((s) => s.attrs.path)).toEqual([MAIN, AGENT, META, SAVED]);
    for (const s of sources) expect(store.getBlob(s.attrs.hash as string)?.equals(readFileSync(s.attrs.path as string))).toBe(true);
    const bash = turns(bodyOf(session.tree))
      .flatMap((t) => t.children)
      .find((c) => c.tag === TAG.call && c.attrs[ATTR.tool] === "Bash") as Element;
    const result = bash.children.find((c) => c.tag === TAG.result)?.text as string;
    expect(result).toMatch(/^<persisted-output>\nOutput too large/);
    expect(result).not.toContain("log line 400");
    session.close();
  });

  it("IM-24 IM-9 the source is the file with its directory: the same set is skipped, a changed transcript is a new source", () => {
    const { dir, main, agent } = copyFixture();
    const store = tempStore();
    const first = importForeign(store, { from: "claude-code", path: main });
    expect(first.sessions).toHaveLength(1);
    const sha = store.getSession(first.sessions[0]?.session as SessionId)?.metadata as { import: { sha256: string } };
    expect(sha.import.sha256).not.toBe(sha256(readFileSync(main)));
    // The directory holding it, or the file again: the same source, nothing created.
    expect(importForeign(store, { from: "claude-code", path: dir }).skipped.map((s) => s.file)).toEqual([main]);
    expect(importForeign(store, { from: "claude-code", path: main }).skipped).toHaveLength(1);
    // One more line in the transcript: a new source.
    writeFileSync(agent, `${readFileSync(agent, "utf8")}${readFileSync(agent, "utf8").split("\n")[0]?.replace('"a-1"', '"a-9"')}\n`);
    const again = importForeign(store, { from: "claude-code", path: main });
    expect(again.sessions).toHaveLength(1);
    expect(store.listSessions()).toHaveLength(2);
  });

  it("IM-24 a transcript given by itself is a session of its own, its line main (nothing else is there)", () => {
    const store = tempStore();
    const r = importForeign(store, { from: "claude-code", path: AGENT });
    expect(r.sessions.map((s) => [s.file, s.branchCount])).toEqual([[AGENT, 1]]);
    const { session } = Session.open(store, r.sessions[0]?.session as SessionId);
    expect(session.branches().map((b) => b.name)).toEqual(["main"]);
    expect(renderPrompt(session).messages.map((m) => m.content)).toEqual([
      "Count lines in notes/",
      "",
      "3 notes/a.md\n4 notes/b.md\n7 total",
      "7 lines in total.",
    ]);
    session.close();
  });

  it("IM-24 IM-5 IM-10 a malformed line of a transcript is a problem naming its file; an unknown version there fails the source", () => {
    const { main, agent } = copyFixture();
    const text = readFileSync(agent, "utf8");
    writeFileSync(agent, text.replace(/\n/, "\n{not json\n"));
    const store = tempStore();
    const r = importForeign(store, { from: "claude-code", path: main });
    expect(r.problems).toEqual([{ file: agent, line: 2, message: expect.stringMatching(/not JSON/) }]);
    expect(r.sessions).toHaveLength(1);
    const other = tempStore();
    writeFileSync(agent, text.replace(/"version": "2\.1\.20"/, '"version": "9.0.0"'));
    const bad = importForeign(other, { from: "claude-code", path: main });
    expect(bad.sessions).toEqual([]);
    expect(bad.failed).toEqual([{ file: main, code: "unknown-version", message: expect.stringContaining(`${agent}:1`) }]);
    expect(other.listSessions()).toEqual([]);
  });
});

/**
 * Before 2.1.2 Claude Code wrote a sub-agent's transcript beside the session file, in the same
 * directory: `<dir>/agent-<agentId>.jsonl`, its records naming the parent's `sessionId`
 * (`fixtures/foreign/claude-code-agents-legacy/`: a session with one, and the transcript of a
 * session that is not there).
 */
describe("Claude Code before 2.1.2: transcripts beside the session file", () => {
  const LEGACY = join(FIXTURES, "claude-code-agents-legacy");
  const SID = "44444444-5555-4666-8777-888888888888";
  const MAIN = join(LEGACY, `${SID}.jsonl`);
  const AGENT = join(LEGACY, "agent-b81f2a0.jsonl");
  const ORPHAN = join(LEGACY, "agent-c0ffee1.jsonl");

  it("IM-24 a transcript that names a session beside it is that session's branch; one whose session is not there is a session", () => {
    const store = tempStore();
    const report = importForeign(store, { from: "claude-code", path: LEGACY });
    expect(report.problems).toEqual([]);
    expect(report.sessions.map((s) => s.file).sort()).toEqual([MAIN, ORPHAN].sort());
    const id = report.sessions.find((s) => s.file === MAIN)?.session as SessionId;
    const { session } = Session.open(store, id);
    expect(
      session
        .branches()
        .map((b) => b.name)
        .sort(),
    ).toEqual(["agent-b81f2a0", "main"]);
    const call = turns(bodyOf(session.tree))
      .flatMap((t) => t.children)
      .find((c) => c.tag === TAG.call && c.attrs[ATTR.tool] === "Agent") as Element;
    expect(call.attrs.branch).toBe("agent-b81f2a0");
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    expect(rec.children.filter((c) => c.attrs.kind === IMPORT.sourceDiag).map((c) => c.attrs.path)).toEqual([MAIN, AGENT]);
    const { session: side } = Session.open(store, id, { branch: "agent-b81f2a0" });
    expect(renderPrompt(side).messages.map((m) => m.content)[0]).toBe("Count lines in notes/");
    expect(checkImported(store, id)).toBeGreaterThan(5);
    side.close();
    session.close();
    // The session file alone finds its transcript beside it: the same source, skipped.
    expect(importForeign(store, { from: "claude-code", path: MAIN }).skipped.map((s) => s.session)).toEqual([id]);
  });
});

/**
 * Claude Code 2.1's shape of parallel calls (seen in real recordings): each block of a response a
 * line, a hook's progress record between them, and each result pointing at the line of its own
 * call (`sourceToolAssistantUUID`), not at the line before it; and a compaction agent's transcript
 * whose records point into the session. Written here, line by line, in that shape.
 */
describe("Claude Code 2.1: results that point at their own call's line, compaction transcripts", () => {
  const SID = "44444444-5555-4666-8777-888888888888";
  let t = Date.parse("2026-02-11T20:00:00.000Z");
  const base = (uuid: string, parentUuid: string | null, extra: Record<string, unknown> = {}) => ({
    parentUuid,
    isSidechain: false,
    sessionId: SID,
    version: "2.1.39",
    cwd: "/home/u/p",
    uuid,
    timestamp: new Date((t += 1000)).toISOString(),
    ...extra,
  });
  const user = (uuid: string, parent: string | null, content: unknown, extra: Record<string, unknown> = {}) => ({
    type: "user",
    ...base(uuid, parent, extra),
    message: { role: "user", content },
  });
  const assistant = (uuid: string, parent: string, id: string, block: Record<string, unknown>) => ({
    type: "assistant",
    ...base(uuid, parent),
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-opus-4-6",
      content: [block],
      usage: { input_tokens: 10, output_tokens: 5 },
    },
  });
  const result = (uuid: string, parent: string, call: string, text: string) =>
    user(uuid, parent, [{ type: "tool_result", tool_use_id: call, content: text }], { sourceToolAssistantUUID: parent });
  const lines = [
    user("u1", null, "Read both files"),
    assistant("a1", "u1", "msg_1", { type: "text", text: "Reading them." }),
    assistant("a2", "a1", "msg_1", { type: "tool_use", id: "toolu_a", name: "Read", input: { file_path: "a.txt" } }),
    { type: "progress", ...base("p1", "a2"), data: { type: "hook_progress", hookEvent: "PreToolUse" } },
    assistant("a3", "p1", "msg_1", { type: "tool_use", id: "toolu_b", name: "Read", input: { file_path: "b.txt" } }),
    result("r1", "a2", "toolu_a", "A"),
    result("r2", "a3", "toolu_b", "B"),
    assistant("a4", "r2", "msg_2", { type: "text", text: "Both read." }),
    user("u2", "a4", "Now summarize"),
    assistant("a5", "u2", "msg_3", { type: "text", text: "Summary." }),
    // The prompt edited: a branch from the reply before it.
    user("u3", "a4", "Summarize briefly"),
    assistant("a6", "u3", "msg_4", { type: "text", text: "Brief." }),
  ];
  const compaction = [
    user("c1", "a4", "Summarize the conversation", { isSidechain: true, agentId: "acompact-1f" }),
    { ...assistant("c2", "c1", "msg_c1", { type: "text", text: "The user read two files." }), isSidechain: true, agentId: "acompact-1f" },
    user("c3", "a6", "Summarize the conversation", { isSidechain: true, agentId: "acompact-1f" }),
  ];

  /** `path` imported into a new store, and its session open on main. */
  function imported(path: string) {
    const store = tempStore();
    const report = importForeign(store, { from: "claude-code", path });
    const id = report.sessions[0]?.session as SessionId;
    return { store, report, id, session: Session.open(store, id).session };
  }
  const branchNames = (session: Session): string[] =>
    session
      .branches()
      .map((b) => b.name)
      .sort();

  function write(withAgent: boolean): string {
    const dir = tempDir();
    writeFileSync(join(dir, `${SID}.jsonl`), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    if (withAgent) {
      mkdirSync(join(dir, SID, "subagents"), { recursive: true });
      writeFileSync(join(dir, SID, "subagents", "agent-acompact-1f.jsonl"), `${compaction.map((l) => JSON.stringify(l)).join("\n")}\n`);
    }
    return dir;
  }

  it("IM-6 IM-11 parallel calls settled by results pointing at their own call's line are one line: no branch, every call with its result", () => {
    const { store, report, id, session } = imported(write(false));
    expect(report.problems).toEqual([]);
    // Only the edited prompt is a branch.
    expect(branchNames(session)).toEqual(["fork-1", "main"]);
    const [ask, reply, both, brief] = turns(bodyOf(session.tree)) as Element[];
    expect(ask?.children[0]?.text).toBe("Read both files");
    // The three lines of msg_1 are one turn; both calls are settled by their results on main.
    expect(reply?.children.map((c) => c.tag)).toEqual([TAG.text, TAG.call, TAG.call, TAG.usage]);
    const calls = reply?.children.filter((c) => c.tag === TAG.call) as Element[];
    expect(calls.map((c) => [c.attrs.id, c.attrs.status, c.children.find((k) => k.tag === TAG.result)?.text])).toEqual([
      ["toolu_a", CALL.executed, "A"],
      ["toolu_b", CALL.executed, "B"],
    ]);
    expect(both?.children[0]?.text).toBe("Both read.");
    expect(
      turns(bodyOf(session.tree))
        .slice(4)
        .map((x) => x.children[0]?.text),
    ).toEqual(["Brief."]);
    expect(brief?.children[0]?.text).toBe("Summarize briefly");
    const { session: fork } = Session.open(store, id, { branch: "fork-1" });
    expect(
      turns(bodyOf(fork.tree))
        .map((x) => x.children[0]?.text)
        .slice(-2),
    ).toEqual(["Now summarize", "Summary."]);
    expect(session.select(`call[status="${CALL.interrupted}"]`)).toEqual([]);
    fork.close();
    session.close();
  });

  it("IM-6 a parent no file holds (a compaction's logical parent, a hook's progress, a file starting mid-history) follows the record before it: no branch", () => {
    const dir = tempDir();
    const file = join(dir, `${SID}.jsonl`);
    const orphan = [
      // The file starts mid-history: its first prompt's parent is in no file.
      user("m1", "gone-1", "Continue the refactor"),
      assistant("m2", "m1", "msg_m2", { type: "text", text: "Continuing." }),
      // A Stop hook's progress whose parent Claude Code did not write; the next prompt hangs off it.
      { type: "progress", ...base("h1", "gone-2"), data: { type: "hook_progress", hookEvent: "Stop" } },
      user("m3", "h1", "Now the tests"),
      assistant("m4", "m3", "msg_m4", { type: "text", text: "Tests next." }),
      // An automatic compaction whose logical parent is in no file (real 2.1 files have these).
      {
        type: "system",
        subtype: "compact_boundary",
        ...base("cb", null),
        logicalParentUuid: "gone-3",
        compactMetadata: { trigger: "auto" },
      },
      user("m5", "cb", "This session is being continued from a previous conversation.", { isCompactSummary: true }),
      user("m6", "m5", "Go on"),
      assistant("m7", "m6", "msg_m7", { type: "text", text: "Going on." }),
    ];
    writeFileSync(file, `${orphan.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const { report, session } = imported(file);
    expect(report.problems).toEqual([
      { file, line: 1, message: "its parent gone-1 is not in the source; read as following nothing (it starts the history)" },
    ]);
    expect(branchNames(session)).toEqual(["main"]);
    expect(turns(bodyOf(session.tree)).map((x) => x.children[0]?.text)).toEqual([
      "Continue the refactor",
      "Continuing.",
      "Now the tests",
      "Tests next.",
      "Go on",
      "Going on.",
    ]);
    // The compaction hides what came before it.
    expect(metaOf(session.tree).children.find((c) => c.tag === "compaction")?.attrs.line).toBe("7");
    session.close();
  });

  it("IM-1 a file of no session in a searched directory is ignored, also when records of it share a line", () => {
    const dir = write(false);
    const h = '{"display":"fix it","pastedContents":{},"timestamp":1759000000000,"project":"/p"}';
    writeFileSync(join(dir, "history.jsonl"), `${h}${h}\n${h}\n`);
    const { report } = imported(dir);
    expect(report.failed).toEqual([]);
    expect(report.ignored).toEqual([
      {
        file: join(dir, "history.jsonl"),
        message: expect.stringMatching(/no Claude Code user or assistant record with a version in 3 record\(s\);/),
      },
    ]);
  });

  it("IM-24 a compaction agent's transcript, whose records point into the session, is a branch at each point; main keeps its end", () => {
    const { store, report, id, session } = imported(write(true));
    expect(report.problems).toEqual([]);
    expect(branchNames(session)).toEqual(["agent-acompact-1f", "agent-acompact-1f-2", "fork-1", "main"]);
    // main is the session's own line to its last record, as without the transcript.
    expect(
      turns(bodyOf(session.tree))
        .map((x) => x.children[0]?.text)
        .slice(-2),
    ).toEqual(["Summarize briefly", "Brief."]);
    // Each request forks where it points: the compaction agent reads the history up to there.
    const { session: first } = Session.open(store, id, { branch: "agent-acompact-1f" });
    expect(
      turns(bodyOf(first.tree))
        .map((x) => x.children[0]?.text)
        .slice(-3),
    ).toEqual(["Both read.", "Summarize the conversation", "The user read two files."]);
    const { session: second } = Session.open(store, id, { branch: "agent-acompact-1f-2" });
    expect(
      turns(bodyOf(second.tree))
        .map((x) => x.children[0]?.text)
        .slice(-2),
    ).toEqual(["Brief.", "Summarize the conversation"]);
    first.close();
    second.close();
    session.close();
  });
});
