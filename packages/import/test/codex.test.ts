/**
 * Codex rollouts into strata sessions (IM-15, with IM-1 … IM-12), on our own fixtures
 * (`fixtures/foreign/codex/rollout.jsonl`: base instructions, developer and injected context
 * messages, a typed prompt with an image, reasoning, parallel function calls with an error
 * output, a custom tool call, a local shell call, a hosted web search, usage from token_count, a
 * model switch, a failed request, a compaction and a call the recording never answers; a legacy
 * rollout, an unknown version and a broken one).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ATTR, CALL, renderPrompt, TAG, TURN } from "@strata/agent";
import { type Element, toXml } from "@strata/dom";
import { bodyOf, metaOf, Session } from "@strata/engine";
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "../src/import.ts";
import { IMPORT, ImportError, importForeign, parseCodex } from "../src/index.ts";
import { checkImported, cleanup, FIXTURES, tempDir, tempStore } from "./helpers.ts";

const DIR = join(FIXTURES, "codex");
const FILE = join(DIR, "rollout.jsonl");

afterEach(cleanup);

function importFile(path = FILE) {
  const store = tempStore();
  const report = importForeign(store, { from: "codex", path });
  const s = report.sessions[0];
  if (s === undefined) throw new Error(`nothing imported: ${JSON.stringify(report)}`);
  return { store, report, id: s.session };
}

const turns = (el: Element): Element[] => el.children.filter((c) => c.tag === TAG.turn);
const calls = (t: Element | undefined): Element[] => t?.children.filter((c) => c.tag === TAG.call) ?? [];

describe("Codex", () => {
  it("IM-15 IM-2 the output items between two inputs are one turn: reasoning, calls with arguments and results, usage, model", () => {
    const { store, report, id } = importFile();
    expect(report.problems).toEqual([]);
    const { session } = Session.open(store, id);
    const all = turns(bodyOf(session.tree));
    expect(all.slice(0, 3).map((t) => [t.attrs[ATTR.role], t.attrs.origin])).toEqual([
      ["user", "developer"],
      ["user", "context"],
      ["user", undefined],
    ]);
    const first = all[3] as Element;
    expect(first.attrs).toMatchObject({ role: "assistant", status: TURN.complete, model: "openai:gpt-5.2-codex", ref: "L9" });
    expect(first.children.map((c) => c.tag)).toEqual([TAG.reasoning, TAG.call, TAG.call, TAG.usage]);
    expect(first.children[0]?.text).toBe("**Listing notes**\n\nList the directory, then count lines.");
    const [ls, wc] = calls(first) as [Element, Element];
    expect(ls.attrs).toMatchObject({ id: "call_1", tool: "shell_command", index: "0", replay: "never", status: CALL.executed, line: "10" });
    expect(ls.children.find((c) => c.tag === TAG.args)?.text).toBe('{"command":"ls notes"}');
    expect(ls.children.find((c) => c.tag === TAG.result)?.text).toBe("a.md\nb.md");
    // `success: false` is the tool's error.
    expect(wc.attrs).toMatchObject({ id: "call_2", status: CALL.executed, error: "tool-error" });
    // token_count's last_token_usage is the response's: input as OpenAI counts it, cached input as cache-read.
    expect(first.children.find((c) => c.tag === TAG.usage)?.attrs).toMatchObject({ input: "900", "cache-read": "800", output: "40" });
    const [patch] = calls(all[4]);
    expect(patch?.attrs).toMatchObject({ tool: "apply_patch", status: CALL.executed });
    expect(patch?.children.find((c) => c.tag === TAG.args)?.text).toMatch(/^\*\*\* Begin Patch/);
    const [shell] = calls(all[5]);
    expect(shell?.attrs).toMatchObject({ id: "call_4", tool: "local_shell" });
    expect(shell?.children.find((c) => c.tag === TAG.args)?.text).toBe('{"type":"exec","command":["ls","notes"]}');
    expect(all[6]?.children.map((c) => [c.tag, c.tag === TAG.usage ? c.attrs.input : c.text])).toEqual([
      [TAG.text, "There are 3 notes now (I added c.md)."],
      [TAG.usage, "1500"],
    ]);
    session.close();
  });

  it("IM-15 IM-8 the base instructions are the recorded system prompt; a model switch updates the model", () => {
    const { store, id } = importFile();
    const { session } = Session.open(store, id);
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    expect(rec.attrs.unrecorded).toBe("tools");
    expect(renderPrompt(session).system).toBe("You are Codex, a coding agent. Be concise.");
    expect(toXml(session.tree)).toMatch(/<model _id="\d+" model="gpt-5.5" provider="openai"\/>/);
    expect(turns(bodyOf(session.tree)).at(-1)?.attrs[ATTR.model]).toBe("openai:gpt-5.5");
    session.close();
  });

  it("IM-15 a failed request is a failed turn; compacted hides what it summarizes; an unanswered call ends interrupted", () => {
    const { store, id } = importFile();
    const { session } = Session.open(store, id);
    const all = turns(bodyOf(session.tree));
    const failed = all.find((t) => t.attrs[ATTR.status] === TURN.failed);
    expect(failed?.children.find((c) => c.tag === TAG.diag)?.text).toMatch(/^stream disconnected before completion: 503/);
    expect(calls(all.at(-1))[0]?.attrs[ATTR.status]).toBe(CALL.interrupted);
    expect(renderPrompt(session).messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Summary of the conversation so far:\nThe user asked how many notes there are; there are 3 (a.md, b.md, c.md)."],
      ["user", "Read c.md."],
      ["assistant", ""],
      ["tool", expect.stringMatching(/^The call to shell_command was interrupted/)],
    ]);
    session.close();
  });

  it("IM-3 IM-4 IM-12 the import record names the rollout and its fork; the source is a blob; events carry the record's time", () => {
    const { store, id } = importFile();
    const { session } = Session.open(store, id);
    const rec = metaOf(session.tree).children.find((c) => c.tag === IMPORT.tag) as Element;
    const bytes = readFileSync(FILE);
    expect(rec.attrs).toMatchObject({
      from: "codex",
      version: "0.128.0",
      "source-id": "0199aaaa-1111-7222-8333-444444444444",
      "forked-from": "0199bbbb-1111-7222-8333-444444444444",
      cwd: "/home/me/notes",
      sha256: sha256(bytes),
    });
    expect(rec.attrs.unmapped).toContain("event_msg/user_message:3");
    expect(rec.attrs.unmapped).toContain("response_item/web_search_call:1");
    const src = rec.children.find((c) => c.attrs.kind === IMPORT.sourceDiag) as Element;
    expect(store.getBlob(src.attrs.hash as string)?.equals(bytes)).toBe(true);
    expect(store.getSession(id)?.title).toBe("How many notes are in notes/?\n[image]");
    const log = store.log(id, { branch: "main" });
    expect(log.find((e) => e.label === "turn.user")?.ts).toBe(Date.parse("2026-03-02T14:00:01.000Z"));
    session.close();
  });

  it("IM-5 malformed lines and records are problems with file and line; the rest is imported", () => {
    const file = join(DIR, "malformed.jsonl");
    const { store, report, id } = importFile(file);
    expect(report.problems.map((p) => p.line)).toEqual([3, 4, 6, 7, 8]);
    expect(report.problems.slice(0, 4).every((p) => p.file === file)).toBe(true);
    expect(report.problems[3]?.message).toMatch(/function_call without call_id/);
    const { session } = Session.open(store, id);
    expect(turns(bodyOf(session.tree)).map((t) => t.children.find((c) => c.tag === TAG.text)?.text)).toEqual([
      "How many notes are in notes/?\n[image]",
      "still here",
    ]);
    session.close();
  });

  it("IM-10 an unknown CLI version, and a legacy rollout before session_meta, are errors naming them; nothing is stored", () => {
    const file = join(DIR, "unknown-version.jsonl");
    expect(() => parseCodex(readFileSync(file, "utf8"), file)).toThrow(ImportError);
    expect(() => parseCodex(readFileSync(file, "utf8"), file)).toThrow(/:1: Codex CLI version "1\.0\.0" is not one strata reads/);
    const store = tempStore();
    const r = importForeign(store, { from: "codex", path: DIR });
    expect(r.failed.map((f) => [f.file, f.code])).toEqual([
      [join(DIR, "legacy.jsonl"), "unknown-version"],
      [file, "unknown-version"],
    ]);
    expect(r.failed[0]?.message).toMatch(/before session_meta/);
    expect(r.sessions).toHaveLength(2);
    expect(() => parseCodex('{"type":"event_msg","payload":{"type":"task_started"}}\n', "t.jsonl")).toThrow(/no Codex session_meta/);
    // IM-9: again, nothing new.
    expect(importForeign(store, { from: "codex", path: DIR }).skipped).toHaveLength(2);
  });

  it("IM-2 IM-8 every imported rollout verifies, ends with no open call, and renders a prompt at every event", () => {
    const { store, id } = importFile();
    expect(checkImported(store, id)).toBeGreaterThan(20);
  });
});

describe("Codex: records joined on one line (IM-5)", () => {
  it("IM-5 two records on one line are each read, keyed L<line> and L<line>.2: the history is the file's own", () => {
    const lines = readFileSync(FILE, "utf8").split("\n");
    const file = join(tempDir(), "joined.jsonl");
    // The function call and its output (lines 10 and 11) on one line.
    writeFileSync(file, [...lines.slice(0, 9), `${lines[9]}${lines[10]}`, ...lines.slice(11)].join("\n"));
    const joined = importFile(file);
    expect(joined.report.problems).toEqual([
      { file, line: 10, message: "2 JSON records on one line, with no newline between them; each is read" },
    ]);
    const whole = importFile();
    const { session: a } = Session.open(joined.store, joined.id);
    const { session: b } = Session.open(whole.store, whole.id);
    expect(a.branches().map((x) => x.name)).toEqual(["main"]);
    const shape = (s: Session) =>
      turns(bodyOf(s.tree)).map((t) => [t.attrs[ATTR.role], ...calls(t).map((c) => [c.attrs.id, c.attrs.status])]);
    expect(shape(a)).toEqual(shape(b));
    a.close();
    b.close();
  });
});
