/**
 * Pi sessions into strata sessions (IM-14, with IM-1 … IM-12), on our own fixtures
 * (`fixtures/foreign/pi/session.jsonl`: a v3 session tree with a branch left by `/tree` and its
 * `branch_summary`, parallel calls with an error result, thinking, an API error, a model switch,
 * a `!command`, extension entries, a compaction keeping part of the path, a `length` finish and an
 * aborted reply; `v1.jsonl` and `v2.jsonl`, the older versions; two small broken ones).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ATTR, CALL, renderPrompt, TAG, TURN } from "@strata/agent";
import { type Element, toXml } from "@strata/dom";
import { bodyOf, metaOf, Session } from "@strata/engine";
import type { SessionId } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "../src/import.ts";
import { IMPORT, ImportError, importForeign, parsePi } from "../src/index.ts";
import { checkImported, cleanup, FIXTURES, tempDir, tempStore } from "./helpers.ts";

const DIR = join(FIXTURES, "pi");
const FILE = join(DIR, "session.jsonl");

afterEach(cleanup);

function importFile(path = FILE) {
  const store = tempStore();
  const report = importForeign(store, { from: "pi", path });
  const s = report.sessions[0];
  if (s === undefined) throw new Error(`nothing imported: ${JSON.stringify(report)}`);
  return { store, report, id: s.session };
}

function turns(el: Element): Element[] {
  return el.children.filter((c) => c.tag === TAG.turn);
}

const textOf = (t: Element | undefined): string | undefined => t?.children.find((c) => c.tag === TAG.text)?.text;

describe("Pi", () => {
  it("IM-14 IM-2 messages become turns: calls with arguments and results, tool errors, reasoning, usage with cost, model", () => {
    const { store, report, id } = importFile();
    expect(report.problems).toEqual([]);
    // The first answer is on the branch the user left with /tree.
    const { session } = Session.open(store, id, { branch: "fork-1" });
    const [q, a, last] = turns(bodyOf(session.tree)) as [Element, Element, Element];
    expect(q.attrs).toMatchObject({ role: "user", ref: "e0000004", line: "5" });
    expect(textOf(q)).toBe("How many notes are in notes/?");
    expect(a.attrs).toMatchObject({ status: TURN.complete, model: "anthropic:claude-sonnet-4-5", ref: "e0000005" });
    expect(a.children.map((c) => c.tag)).toEqual([TAG.reasoning, TAG.text, TAG.call, TAG.call, TAG.usage]);
    expect(a.children[0]?.text).toBe("List the directory first.");
    const [ls, bash] = a.children.filter((c) => c.tag === TAG.call) as [Element, Element];
    expect(ls.attrs).toMatchObject({ id: "call_1", tool: "ls", index: "0", replay: "never", status: CALL.executed });
    expect(ls.children.find((c) => c.tag === TAG.args)?.text).toBe('{"path":"notes"}');
    expect(ls.children.find((c) => c.tag === TAG.result)?.attrs).toMatchObject({ ref: "e0000006", line: "7" });
    expect(bash.attrs).toMatchObject({ id: "call_2", status: CALL.executed, error: "tool-error" });
    expect(a.children.find((c) => c.tag === TAG.usage)?.attrs).toMatchObject({
      input: "100",
      output: "20",
      "cache-read": "50",
      "cache-write": "10",
      cost: "0.0012",
    });
    expect(textOf(last)).toBe("There are 2 notes.");
    expect(renderPrompt(session).messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    session.close();
  });

  it("IM-14 an API error and an abort are failed turns; a length stop is the finish; a switch updates the model; context entries are user turns", () => {
    const { store, id } = importFile();
    const { session } = Session.open(store, id);
    const all = turns(bodyOf(session.tree));
    const failed = all.filter((t) => t.attrs[ATTR.status] === TURN.failed);
    expect(failed.map((t) => t.children.find((c) => c.tag === TAG.diag)?.text)).toEqual([
      "429 rate limited",
      "aborted: Request was aborted",
    ]);
    // The aborted reply's call never ran.
    expect(failed[1]?.children.find((c) => c.tag === TAG.call)?.attrs[ATTR.status]).toBe(CALL.interrupted);
    expect(all.find((t) => t.attrs[ATTR.finish] !== undefined)?.attrs[ATTR.finish]).toBe("length");
    expect(all.map((t) => t.attrs.origin).filter(Boolean)).toEqual(["branch-summary", "bash", "custom"]);
    expect(textOf(all.find((t) => t.attrs.origin === "bash"))).toBe("Ran `wc -l notes/b.md`\n```\n4 notes/b.md\n```");
    expect(toXml(session.tree)).toMatch(/<model _id="\d+" model="gpt-5" provider="openai"\/>/);
    const { session: fork } = Session.open(store, id, { branch: "fork-1" });
    expect(toXml(fork.tree)).toMatch(/<model _id="\d+" model="claude-sonnet-4-5" provider="anthropic"\/>/);
    fork.close();
    session.close();
  });

  it("IM-14 IM-6 the session tree: the last entry's path is main, the branch left by /tree forks at the entry both follow", () => {
    const { store, report, id } = importFile();
    expect(report.sessions[0]?.branchCount).toBe(2);
    const { session } = Session.open(store, id);
    expect(
      session
        .branches()
        .map((b) => b.name)
        .sort(),
    ).toEqual(["fork-1", "main"]);
    expect(textOf(turns(bodyOf(session.tree))[1])).toBe("How many notes, and how long are they?\n[image]");
    // Both lines follow the thinking-level change, which maps to nothing: the fork is at the model change before it.
    const fork = session.branches().find((b) => b.name === "fork-1");
    expect(store.eventMeta(fork?.originEvent as never)?.label).toBe(IMPORT.label.model);
    session.close();
  });

  it("IM-14 a compaction keeps the path from firstKeptEntryId: the prompt is the summary, the kept entries, and what follows", () => {
    const { store, id } = importFile();
    const { session } = Session.open(store, id);
    const c = metaOf(session.tree).children.find((k) => k.tag === "compaction") as Element;
    expect(c.attrs).toMatchObject({ ref: "e0000015", line: "22" });
    expect(c.children[0]?.text).toMatch(/^The user asked how many notes/);
    expect(renderPrompt(session).messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Summary of the conversation so far:\nThe user asked how many notes there are and how long: a.md has 3 lines, b.md 4."],
      ["assistant", "a.md has 3 lines."],
      ["user", "Ran `wc -l notes/b.md`\n```\n4 notes/b.md\n```"],
      ["user", "Notes are Markdown files."],
      ["user", "Summarize both."],
      ["assistant", "a.md: 3 lines; b.md: 4 lines, and"],
      ["user", "And c.md?"],
    ]);
    session.close();
  });

  it("IM-3 IM-4 the import record names the source (version, id, cwd, parent session, unmapped entries); the source is a blob", () => {
    const { store, id } = importFile();
    const { session } = Session.open(store, id);
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    const bytes = readFileSync(FILE);
    expect(rec.attrs).toMatchObject({
      from: "pi",
      version: "3",
      "source-id": "aaaaaaaa-1111-4222-8333-444444444444",
      cwd: "/home/me/notes",
      "parent-session": "/home/me/.pi/agent/sessions/--home-me-notes--/2026-01-31T08-00-00-000Z_old.jsonl",
      sha256: sha256(bytes),
      unrecorded: "system tools",
      unmapped: "session_info:1 thinking_level_change:1 label:1 user/image:1 custom:1",
    });
    const src = rec.children.find((c) => c.attrs.kind === IMPORT.sourceDiag) as Element;
    expect(store.getBlob(src.attrs.hash as string)?.equals(bytes)).toBe(true);
    // The session_info name is the title; every turn names the line of its entry.
    expect(store.getSession(id)?.title).toBe("Counting notes");
    const lines = bytes.toString("utf8").split("\n");
    for (const t of turns(bodyOf(session.tree))) expect(JSON.parse(lines[Number(t.attrs.line) - 1] as string).id).toBe(t.attrs.ref);
    session.close();
  });

  it("IM-12 each event carries its entry's timestamp", () => {
    const { store, id } = importFile();
    const log = store.log(id, { branch: "main" });
    expect(log.find((e) => e.label === "turn.user")?.ts).toBe(Date.parse("2026-02-01T09:00:30.000Z"));
    expect(log.at(-1)?.ts).toBe(Date.parse("2026-02-01T09:01:22.000Z"));
  });

  it("IM-14 version 1 (no ids: each entry follows the one before, the compaction names its first kept entry by index) and version 2", () => {
    const v1 = importFile(join(DIR, "v1.jsonl"));
    expect(v1.report.problems).toEqual([]);
    expect(v1.report.sessions[0]?.version).toBe("1");
    const { session } = Session.open(v1.store, v1.id);
    expect(turns(bodyOf(session.tree)).map((t) => t.attrs.ref)).toEqual(["L2", "L3", "L5", "L7", "L8"]);
    expect(renderPrompt(session).messages.map((m) => m.content)).toEqual([
      "Summary of the conversation so far:\na.md says hello.",
      "It says hello.",
      "Thanks.",
      "You're welcome.",
    ]);
    session.close();
    const v2 = importFile(join(DIR, "v2.jsonl"));
    const { session: s2 } = Session.open(v2.store, v2.id);
    // Version 2's hookMessage is version 3's custom message: in the model's context as a user turn.
    expect(turns(bodyOf(s2.tree)).map((t) => t.attrs.origin ?? t.attrs[ATTR.role])).toEqual(["user", "custom", "assistant"]);
    s2.close();
  });

  it("IM-5 malformed lines and entries are problems with file and line; the rest is imported", () => {
    const file = join(DIR, "malformed.jsonl");
    const { store, report, id } = importFile(file);
    expect(report.problems.map((p) => p.line)).toEqual([4, 5, 6, 7]);
    expect(report.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^not JSON/),
      expect.stringMatching(/array, not a record/),
      expect.stringMatching(/without an id/),
      expect.stringMatching(/a result for call call_9/),
    ]);
    expect(report.problems.slice(0, 3).every((p) => p.file === file)).toBe(true);
    const { session } = Session.open(store, id);
    expect(turns(bodyOf(session.tree)).map(textOf)).toEqual(["How many notes are in notes/?", "still here"]);
    session.close();
  });

  it("IM-10 an unknown version is an error naming it, and nothing is stored; a file with no header is not a session", () => {
    const file = join(DIR, "unknown-version.jsonl");
    expect(() => parsePi(readFileSync(file, "utf8"), file)).toThrow(ImportError);
    expect(() => parsePi(readFileSync(file, "utf8"), file)).toThrow(/:1: Pi session format version 4 is not one strata reads/);
    const store = tempStore();
    const r = importForeign(store, { from: "pi", path: file });
    expect(r.failed).toEqual([{ file, code: "unknown-version", message: expect.stringContaining("version 4") }]);
    expect(store.listSessions()).toEqual([]);
    expect(() => parsePi('{"type":"message","id":"a","parentId":null}\n', "t.jsonl")).toThrow(/not a Pi session header/);
    // A Claude Code file given as Pi is refused, not misread.
    const cc = join(FIXTURES, "claude-code", "session.jsonl");
    expect(importForeign(store, { from: "pi", path: cc }).failed[0]?.code).toBe("not-a-session");
  });

  it("IM-9 importing the directory again creates nothing", () => {
    const store = tempStore();
    const first = importForeign(store, { from: "pi", path: DIR });
    expect(first.sessions).toHaveLength(4);
    expect(first.failed.map((f) => f.file)).toEqual([join(DIR, "unknown-version.jsonl")]);
    const again = importForeign(store, { from: "pi", path: DIR });
    expect(again.sessions).toEqual([]);
    expect(again.skipped).toHaveLength(4);
  });

  it("IM-2 IM-8 every imported Pi session verifies, ends with no open call, and renders a prompt at every event of every branch", () => {
    const store = tempStore();
    const r = importForeign(store, { from: "pi", path: DIR });
    let checked = 0;
    for (const s of r.sessions) checked += checkImported(store, s.session as SessionId);
    expect(checked).toBeGreaterThan(30);
  });
});

describe("JSONL lines (IM-5)", () => {
  it("IM-5 records appended with no newline between them (real Pi files have them) are each read, and the line is reported", () => {
    const lines = readFileSync(FILE, "utf8").split("\n");
    // Two whole records on one line, as an interrupted append leaves them; the tree is the file's own.
    const joined = [...lines.slice(0, 5), `${lines[5]}${lines[6]}`, ...lines.slice(7)].join("\n");
    const file = join(tempDir(), "joined.jsonl");
    writeFileSync(file, joined);
    const { store, report, id } = importFile(file);
    expect(report.problems).toEqual([{ file, line: 6, message: "2 JSON records on one line, with no newline between them; each is read" }]);
    const whole = importFile();
    const { session } = Session.open(store, id);
    const { session: same } = Session.open(whole.store, whole.id);
    expect(turns(bodyOf(session.tree)).map(textOf)).toEqual(turns(bodyOf(same.tree)).map(textOf));
    // A line that is records and something else is not JSON, as before.
    const broken = join(tempDir(), "broken.jsonl");
    writeFileSync(broken, [...lines.slice(0, 5), `${lines[5]}{"type": "message", "id": "x"`, ...lines.slice(7)].join("\n"));
    const said = importFile(broken).report.problems;
    expect(said[0]).toEqual({
      file: broken,
      line: 6,
      message: expect.stringMatching(/^not JSON \(.*\); the line is kept in the source blob only$/),
    });
    expect(said.filter((p) => p.message.includes("on one line"))).toEqual([]);
    session.close();
    same.close();
    // Version 1 entries have no ids (each is keyed by its line): the second of a line is its own.
    const v1 = readFileSync(join(DIR, "v1.jsonl"), "utf8").split("\n");
    const v1File = join(tempDir(), "v1-joined.jsonl");
    writeFileSync(v1File, [...v1.slice(0, 2), `${v1[2]}${v1[3]}`, ...v1.slice(4)].join("\n"));
    const a = importFile(v1File);
    expect(a.report.problems).toEqual([
      { file: v1File, line: 3, message: "2 JSON records on one line, with no newline between them; each is read" },
    ]);
    const b = importFile(join(DIR, "v1.jsonl"));
    const { session: joinedV1 } = Session.open(a.store, a.id);
    const { session: wholeV1 } = Session.open(b.store, b.id);
    expect(turns(bodyOf(joinedV1.tree)).map(textOf)).toEqual(turns(bodyOf(wholeV1.tree)).map(textOf));
    expect(a.report.sessions[0]?.eventCount).toBe(b.report.sessions[0]?.eventCount);
    joinedV1.close();
    wholeV1.close();
  });
});
