/**
 * OpenCode sessions into strata sessions (IM-17 … IM-23, with IM-1 … IM-12), on our own fixtures
 * (`fixtures/foreign/opencode/`): a legacy storage directory with five sessions — A (1.0.120: an
 * image, an ignored draft and an agent mention, reasoning, a tool error, a model switch, the task
 * tool starting child session B, a retry, an API error, a compaction, an aborted reply with a
 * running tool, and an undo whose undone messages end in a pending tool), B (A's child), C (0.15:
 * one message of three model steps with the system prompt recorded, undone from a part on), D (a
 * newer OpenCode) and E (broken files) — plus messages and parts of no session; `export.json` (C as
 * `opencode export` prints it); and an opencode.db built from OpenCode's schema and the storage
 * (opencode-db.ts).
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CALL, renderPrompt, rerun, TAG, ToolRegistry, TURN } from "@strata/agent";
import type { Element } from "@strata/dom";
import { bodyOf, metaOf, Session } from "@strata/engine";
import type { SessionId, Store } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "../src/import.ts";
import { IMPORT, importForeign, REVERTED_BRANCH, recordedTools } from "../src/index.ts";
import { checkImported, cleanup, tempDir, tempStore } from "./helpers.ts";
import { buildOpenCodeDb, OPENCODE, STORAGE } from "./opencode-db.ts";

afterEach(cleanup);

const A = "ses_3fa0000000ffeSeSsIoNaaaaaa";
const B = "ses_3fb0000000ffeSeSsIoNbaaaaa";
const C = "ses_3fc0000000ffeSeSsIoNcaaaaa";
const D = "ses_3fd0000000ffeSeSsIoNdaaaaa";
const E = "ses_3fe0000000ffeSeSsIoNeaaaaa";
const PROJECT = "7c1e2d3f4a5b6c7d8e9f00112233445566778899";
const sessionFile = (id: string) => join(STORAGE, "session", PROJECT, `${id}.json`);

function importPath(path: string, store: Store = tempStore()) {
  const report = importForeign(store, { from: "opencode", path });
  const of = (sourceId: string): SessionId => {
    const s = report.sessions.find((x) => x.sourceId === sourceId);
    if (s === undefined) throw new Error(`${sourceId} not imported: ${JSON.stringify(report)}`);
    return s.session;
  };
  return { store, report, of };
}

const turns = (el: Element): Element[] => el.children.filter((c) => c.tag === TAG.turn);
const kid = (el: Element | undefined, tag: string): Element | undefined => el?.children.find((c) => c.tag === tag);
const calls = (t: Element | undefined): Element[] => t?.children.filter((c) => c.tag === TAG.call) ?? [];
const textOf = (t: Element | undefined): string | undefined => kid(t, TAG.text)?.text;
const record = (tree: Session["tree"]): Element => metaOf(tree).children.find((c) => c.tag === IMPORT.tag) as Element;

/** What JSON.parse says of `text` (the message a problem quotes). */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("it parses");
}

function open(store: Store, id: SessionId, branch = "main"): Session {
  return Session.open(store, id, { branch }).session;
}

/** A tree's history without where it came from: what must be the same whatever shape the session was read from. */
function shape(tree: Session["tree"]): unknown[] {
  const compaction = metaOf(tree).children.find((c) => c.tag === "compaction");
  return [
    kid(compaction, "summary")?.text,
    ...turns(bodyOf(tree)).map((t) => ({
      ...Object.fromEntries(Object.entries(t.attrs).filter(([k]) => !["_id", "line", "file"].includes(k))),
      text: textOf(t),
      reasoning: kid(t, TAG.reasoning)?.text,
      usage: kid(t, TAG.usage)?.attrs,
      diag: kid(t, TAG.diag)?.text,
      calls: calls(t).map((c) => [
        c.attrs.id,
        c.attrs.tool,
        c.attrs.status,
        c.attrs.error,
        kid(c, TAG.args)?.text,
        kid(c, TAG.result)?.text,
      ]),
    })),
  ];
}

describe("OpenCode", () => {
  it("IM-17 IM-1 a storage directory gives a strata session per session file; so do its parent and one session file; messages of no session are problems", () => {
    const { report } = importPath(STORAGE);
    expect(report.sessions.map((s) => [s.sourceId, s.version, s.branchCount])).toEqual([
      [A, "1.0.120", 2],
      [B, "1.0.120", 1],
      [C, "0.15.8", 2],
      [E, "1.0.120", 1],
    ]);
    expect(report.sessions[0]?.file).toBe(sessionFile(A));
    expect(report.failed.map((f) => [f.file, f.code])).toEqual([[sessionFile(D), "unknown-version"]]);
    expect(report.problems.slice(0, 2)).toEqual([
      {
        file: join(STORAGE, "message", "ses_0rphan000000ffeNoSessionFile"),
        line: 0,
        message: `1 message(s) of session ses_0rphan000000ffeNoSessionFile, which has no session file under ${join(STORAGE, "session")}; not imported`,
      },
      {
        file: join(STORAGE, "part", "msg_n0where000001Aaaaaaaaaaaaaa"),
        line: 0,
        message: "parts of message msg_n0where000001Aaaaaaaaaaaaaa, which no message file names; not imported",
      },
    ]);
    // The directory that holds storage/ (~/.local/share/opencode before the database) reads the same.
    expect(importPath(OPENCODE).report.sessions.map((s) => s.sourceId)).toEqual([A, B, C, E]);
    // One session file: that session, its child still linked.
    const one = importPath(sessionFile(A));
    expect(one.report.sessions.map((s) => s.sourceId)).toEqual([A]);
    expect(one.report.problems).toEqual([]);
    expect(record(open(one.store, one.of(A)).tree).attrs["child-sessions"]).toBe(B);
    // What is not a session says what to give instead.
    const message = join(STORAGE, "message", A, "msg_0c0ffee00100Fx13262840135937.json");
    expect(() => importForeign(tempStore(), { from: "opencode", path: message })).toThrow(
      `${message} is a message file of the OpenCode storage directory ${STORAGE}, not a session; give that directory, or a session file`,
    );
    expect(() => importForeign(tempStore(), { from: "opencode", path: tempDir() })).toThrow(
      /is not an OpenCode storage directory \(session\/, message\/, part\/\), holds neither one \(storage\/\) nor an opencode\.db/,
    );
  });

  it("IM-1 IM-17 a directory holding data directories and exports at any depth imports each; nothing else in a data directory is read", () => {
    const root = tempDir();
    // A backup of one machine's ~/.local/share/opencode (storage/ beside files that are no session) and a folder of exports.
    cpSync(OPENCODE, join(root, "machine-a", "opencode"), { recursive: true });
    writeFileSync(join(root, "machine-a", "opencode", "auth.json"), '{"provider": {"type": "api"}}');
    mkdirSync(join(root, "exports", "2026"), { recursive: true });
    cpSync(join(OPENCODE, "export.json"), join(root, "exports", "2026", "c.json"));
    // A JSON file among the exports that is no export: ignored, named; a broken one fails.
    writeFileSync(join(root, "exports", "settings.json"), '{"theme": "dark"}');
    writeFileSync(join(root, "exports", "2026", "cut.json"), '{"info": {"id": "ses_');
    const { report } = importPath(root);
    expect(report.ignored).toEqual([
      {
        file: join(root, "exports", "settings.json"),
        message: expect.stringMatching(/settings\.json: no session info and messages in it/),
      },
    ]);
    // In path order.
    expect(report.sessions.map((s) => [s.sourceId, s.file])).toEqual([
      [C, join(root, "exports", "2026", "c.json")],
      [A, join(root, "machine-a", "opencode", "storage", "session", PROJECT, `${A}.json`)],
      [B, join(root, "machine-a", "opencode", "storage", "session", PROJECT, `${B}.json`)],
      [C, join(root, "machine-a", "opencode", "storage", "session", PROJECT, `${C}.json`)],
      [E, join(root, "machine-a", "opencode", "storage", "session", PROJECT, `${E}.json`)],
    ]);
    // auth.json and the data directory's own export.json are not taken for exports.
    expect(report.failed.map((f) => [f.file, f.code])).toEqual([
      [join(root, "exports", "2026", "cut.json"), "not-a-session"],
      [join(root, "machine-a", "opencode", "storage", "session", PROJECT, `${D}.json`), "unknown-version"],
    ]);
  });

  it("IM-1 IM-17 in a searched tree: a data directory with no session yet is nothing found; one that cannot be read fails alone; a link to an ancestor ends no walk", () => {
    const root = tempDir();
    // A fresh install: its opencode.db has OpenCode's tables and no session.
    mkdirSync(join(root, "fresh"));
    buildOpenCodeDb(join(root, "fresh", "opencode.db"), {
      extra: (d) => d.exec("DELETE FROM part; DELETE FROM message; DELETE FROM session"),
    });
    expect(importPath(join(root, "fresh")).report).toMatchObject({ sessions: [], failed: [] });
    // Beside it a machine's data, and a database that is no SQLite file: the one fails, the rest imports.
    cpSync(OPENCODE, join(root, "machine-a", "opencode"), { recursive: true });
    mkdirSync(join(root, "broken"));
    writeFileSync(join(root, "broken", "opencode.db"), "not a database at all, but long enough to be read as one's header ...".repeat(4));
    symlinkSync(root, join(root, "machine-a", "loop"));
    const { report } = importPath(root);
    expect(report.sessions.map((s) => s.sourceId)).toEqual([A, B, C, E]);
    expect(report.failed.map((f) => [f.file, f.code])).toEqual([
      [join(root, "broken", "opencode.db"), expect.stringMatching(/unreadable|not-a-session/)],
      [join(root, "machine-a", "opencode", "storage", "session", PROJECT, `${D}.json`), "unknown-version"],
    ]);
  });

  it("IM-18 IM-2 messages become turns: prompts with their attachments, replies with reasoning, calls settled by their results, usage, model, failures", () => {
    const { store, of } = importPath(STORAGE);
    const s = open(store, of(A));
    const [ask, look, two, sub, task, failed, says, summary, write] = turns(bodyOf(s.tree)) as Element[];
    expect(ask?.attrs).toMatchObject({ role: "user", ref: "msg_0c0ffee00100Fx13262840135937" });
    // An image reaches the model as a file (here its name); an ignored draft does not.
    expect(textOf(ask)).toBe("How many notes are in notes/?\n\n[Attached image/png: shot.png]");
    expect(look?.attrs).toMatchObject({ role: "assistant", status: TURN.complete, model: "anthropic:claude-sonnet-4-5" });
    expect(look?.children.map((c) => c.tag)).toEqual([TAG.reasoning, TAG.text, TAG.call, TAG.call, TAG.usage]);
    expect(kid(look, TAG.reasoning)?.text).toBe("List the directory first.");
    const [read, bash] = calls(look) as [Element, Element];
    // A tool part is the call and its result: both name the part.
    expect(read.attrs).toMatchObject({
      id: "toolu_01",
      tool: "read",
      replay: "never",
      status: CALL.executed,
      ref: "prt_0c0ffee00109Fx13262840135946",
      file: "part/msg_0c0ffee00105Fx13262840135942/prt_0c0ffee00109Fx13262840135946.json",
    });
    expect(kid(read, TAG.args)?.text).toBe('{"filePath":"/home/me/notes"}');
    expect(kid(read, TAG.result)?.text).toBe("a.md\nb.md");
    expect(kid(read, TAG.result)?.attrs.ref).toBe("prt_0c0ffee00109Fx13262840135946");
    expect(bash.attrs).toMatchObject({ status: CALL.executed, error: "tool-error" });
    expect(kid(bash, TAG.result)?.text).toBe("bash: wc: command not found");
    expect(kid(look, TAG.usage)?.attrs).toMatchObject({
      input: "100",
      output: "20",
      reasoning: "5",
      "cache-read": "50",
      "cache-write": "10",
      cost: "0.0012",
    });
    expect(textOf(two)).toBe("There are 2 notes.");
    expect(textOf(sub)).toBe("Ask a sub-agent to summarize them.");
    // A model switch: the reply's own model, and the session's inputs.
    expect(task?.attrs.model).toBe("openai:gpt-5");
    expect(calls(task)[0]?.attrs).toMatchObject({ tool: "task", status: CALL.executed });
    // An API error is a failed turn, out of the projection.
    expect(failed?.attrs.status).toBe(TURN.failed);
    expect(kid(failed, TAG.diag)?.attrs.kind).toBe("model-error");
    expect(kid(failed, TAG.diag)?.text).toBe("APIError 429: Rate limit exceeded");
    expect(textOf(says)).toBe("The sub-agent says both notes are about SQLite.");
    expect(textOf(summary)).toBe("Write SUMMARY.md with that.");
    // An aborted reply with content stays in OpenCode's next request: a complete turn, finish "aborted";
    // its running tool never reported, so the import ends it interrupted.
    expect(write?.attrs).toMatchObject({ status: TURN.complete, finish: "aborted" });
    expect(calls(write)[0]?.attrs).toMatchObject({
      tool: "write",
      status: CALL.interrupted,
      reason: "the recording ends before this call's result",
    });
    const rec = record(s.tree);
    expect(rec.attrs.unmapped?.split(" ")).toEqual(
      expect.arrayContaining([
        "part/file:1",
        "part/text/ignored:1",
        "part/agent:1",
        "part/retry:1",
        "part/snapshot:1",
        "part/patch:1",
        "session_diff:1",
        "todo:1",
      ]),
    );
    expect(renderPrompt(s).messages.map((m) => m.role)).toEqual(["user", "user", "assistant", "tool"]);
    s.close();
  });

  it("IM-18 an 0.x message of several model steps is a turn per step with the step's usage; the recorded system prompt is the session's", () => {
    const { store, of } = importPath(STORAGE);
    const s = open(store, of(C), REVERTED_BRANCH);
    const steps = turns(bodyOf(s.tree)).filter((t) => t.attrs.role === "assistant");
    expect(steps.map((t) => [t.attrs.ref, textOf(t), calls(t).length, kid(t, TAG.usage)?.attrs.input])).toEqual([
      ["msg_0c0ffee0013fFx13262840136000", "Reading a.md.", 1, "50"],
      ["prt_0c0ffee00144Fx13262840136005", "Now b.md.", 1, "60"],
      ["prt_0c0ffee00148Fx13262840136009", "Both read: alpha and beta.", 0, "70"],
      ["msg_0c0ffee0014dFx13262840136014", "Alphabeta.", 0, "80"],
    ]);
    // A later step names its step-start part, where it is.
    expect(steps[1]?.attrs.file).toBe("part/msg_0c0ffee0013fFx13262840136000/prt_0c0ffee00144Fx13262840136005.json");
    expect(record(s.tree).attrs.unrecorded).toBe("tools");
    expect(renderPrompt(s).system).toBe("You are opencode, an interactive CLI agent.\n\nWorking directory: /home/me/notes");
    s.close();
  });

  it("IM-20 an undo: main ends where OpenCode's history now ends; the undone messages are on a branch forked there, the partly undone message whole", () => {
    const { store, of } = importPath(STORAGE);
    const main = open(store, of(A));
    const undone = open(store, of(A), REVERTED_BRANCH);
    expect(turns(bodyOf(main.tree)).map(textOf).at(-1)).toBe("Writing SUMMARY.md now.");
    const tail = turns(bodyOf(undone.tree)).slice(-2);
    expect(tail.map(textOf)).toEqual(["Make it one line.\n\nThe following tool was executed by the user", "One line it is."]);
    // The pending tool the undone reply asked for never ran.
    expect(calls(tail[1])[0]?.attrs).toMatchObject({ tool: "edit", status: CALL.interrupted });
    // Forked at the aborted reply, the last event of main's history before the import's end.
    const history = main.log();
    expect(history.at(-2)?.label).toBe("turn.end");
    expect(store.branch(of(A), REVERTED_BRANCH)?.originEvent).toBe(history.at(-2)?.id);
    // Undone from a part on: main keeps the message's parts before it, the branch has all of it.
    const c = open(store, of(C));
    const cUndone = open(store, of(C), REVERTED_BRANCH);
    expect(turns(bodyOf(c.tree)).map(textOf)).toEqual(["Read a.md, then b.md.", "Reading a.md.", "Now b.md."]);
    expect(turns(bodyOf(cUndone.tree)).map(textOf)).toEqual([
      "Read a.md, then b.md.",
      "Reading a.md.",
      "Now b.md.",
      "Both read: alpha and beta.",
      "Now say it in one word.",
      "Alphabeta.",
    ]);
    // The message on both lines names the same record on each.
    expect(turns(bodyOf(cUndone.tree))[1]?.attrs.ref).toBe(turns(bodyOf(c.tree))[1]?.attrs.ref);
    expect(store.branch(of(C), REVERTED_BRANCH)?.originEvent).toBe(c.log().find((e) => e.label === "turn.user")?.id);
    for (const x of [main, undone, c, cUndone]) x.close();
  });

  it("IM-21 a compaction's summary hides what it summarizes; the request for it makes no turn", () => {
    const { store, of } = importPath(STORAGE);
    const s = open(store, of(A));
    const compaction = metaOf(s.tree).children.find((c) => c.tag === "compaction");
    expect(kid(compaction, "summary")?.text).toBe("The user asked how many notes there are: two (a.md, b.md), both about SQLite.");
    expect(compaction?.attrs.ref).toBe("msg_0c0ffee00120Fx13262840135969");
    const body = turns(bodyOf(s.tree));
    expect(Number(compaction?.attrs.through)).toBe(body[6]?.id);
    expect(body).toHaveLength(9);
    expect(renderPrompt(s).messages[0]?.content).toBe(
      "Summary of the conversation so far:\nThe user asked how many notes there are: two (a.md, b.md), both about SQLite.",
    );
    s.close();
  });

  it("IM-22 a child session is a session of its own; parent and child name each other, the task call names the child", () => {
    const { store, of } = importPath(STORAGE);
    const parent = open(store, of(A));
    const child = open(store, of(B));
    expect(record(parent.tree).attrs["child-sessions"]).toBe(B);
    expect(record(child.tree).attrs["parent-session"]).toBe(A);
    expect(parent.selectOne("call[tool=task]")?.attrs["child-session"]).toBe(B);
    expect(store.getSession(of(B))?.metadata).toMatchObject({ import: { from: "opencode", sourceId: B, links: { "parent-session": A } } });
    expect(store.getSession(of(B))?.title).toBe("Summarize notes (@general subagent)");
    // The child's prompt is its own conversation only.
    expect(renderPrompt(child).messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    parent.close();
    child.close();
  });

  it("IM-19 IM-3 IM-4 IM-9 IM-12 the source is the session's files in path order, one blob; each element names its file and its line there; re-importing changes nothing", () => {
    const { store, of } = importPath(STORAGE);
    const s = open(store, of(A));
    const rec = record(s.tree);
    const src = rec.children.find((c) => c.attrs.kind === IMPORT.sourceDiag) as Element;
    expect(src.attrs.path).toBe(STORAGE);
    const blob = store.getBlob(src.attrs.hash as string)?.toString("utf8") as string;
    expect(rec.attrs.sha256).toBe(sha256(blob));
    expect(rec.attrs).toMatchObject({ from: "opencode", version: "1.0.120", "source-id": A, file: sessionFile(A), cwd: "/home/me/notes" });
    const lines = blob.split("\n");
    const first = lines[0] as string;
    expect(first).toMatch(/^==> message\/ses_3fa0000000ffeSeSsIoNaaaaaa\/msg_0c0ffee00100Fx13262840135937\.json \(\d+ bytes\) <==$/);
    // Every element made from a record: its line is where that file starts in the blob, and the file holds the record.
    for (const el of s.select("turn, call, result")) {
      const at = Number(el.attrs.line);
      expect(lines[at - 2]).toBe(`==> ${el.attrs.file} (${readFileSync(join(STORAGE, el.attrs.file as string)).length} bytes) <==`);
      expect(readFileSync(join(STORAGE, el.attrs.file as string), "utf8")).toContain(`"id": "${el.attrs.ref}"`);
    }
    // The session's files, all of them, in path order; nothing else.
    const files = lines.filter((l) => l.startsWith("==> ")).map((l) => l.replace(/^==> (.*) \(\d+ bytes\) <==$/, "$1"));
    expect(files).toEqual([...files].sort());
    expect(files.filter((f) => f.startsWith("session"))).toEqual([`session/${PROJECT}/${A}.json`, `session_diff/${A}.json`]);
    expect(files).toHaveLength(1 + 1 + 1 + 13 + 37);
    // Each event carries its record's time.
    expect(store.log(of(A), { branch: "main" }).find((e) => e.label === "turn.user")?.ts).toBe(Date.UTC(2026, 0, 5, 9, 0, 1));
    s.close();
    // IM-9: again, nothing new; a changed file is a new source.
    const again = importForeign(store, { from: "opencode", path: STORAGE });
    expect(again.sessions).toEqual([]);
    expect(again.skipped.map((x) => x.session)).toContain(of(A));
  });

  it("IM-10 IM-17 a newer OpenCode is unknown-version naming it, and nothing of it is stored; the versions read are 0.x and 1.x", () => {
    const store = tempStore();
    const r = importForeign(store, { from: "opencode", path: sessionFile(D) });
    expect(r.sessions).toEqual([]);
    expect(r.failed).toEqual([
      {
        file: sessionFile(D),
        code: "unknown-version",
        message: `${sessionFile(D)}: session ${D} was written by OpenCode "2.1.0", not a version strata reads (it reads 0.x and 1.x); nothing of it was imported — a newer strata may read it`,
      },
    ]);
    expect(store.listSessions()).toEqual([]);
  });

  it("IM-5 malformed files are problems with their file and line, never skipped in silence; the rest of the session is imported", () => {
    const { store, report, of } = importPath(sessionFile(E));
    const dir = (rel: string) => join(STORAGE, ...rel.split("/"));
    expect(report.problems).toEqual([
      {
        file: dir(`message/${E}/msg_0c0ffee00155Fx13262840136022.json`),
        line: 4,
        message: "message msg_0c0ffee00155Fx13262840136022: not JSON (Unexpected end of JSON input); kept in the source blob only",
      },
      {
        file: dir("part/msg_0c0ffee00156Fx13262840136023/prt_0c0ffee00159Fx13262840136026.json"),
        line: 0,
        message: "part prt_0c0ffee00159Fx13262840136026: a JSON array, not a record; kept in the source blob only",
      },
      {
        file: dir("part/msg_0c0ffee00156Fx13262840136023/prt_0c0ffee0015aFx13262840136027.json"),
        line: 0,
        message: "part prt_0c0ffee0015aFx13262840136027: a tool part without callID; kept in the source blob only",
      },
      {
        file: dir(`message/${E}/msg_0c0ffee0015bFx13262840136028.json`),
        line: 0,
        message: "message msg_0c0ffee0015bFx13262840136028: a message without a role; kept in the source blob only",
      },
    ]);
    const s = open(store, of(E));
    expect(turns(bodyOf(s.tree)).map(textOf)).toEqual(["still here", "ok"]);
    // The broken files are in the blob all the same.
    const blob = store.getBlob(record(s.tree).children[0]?.attrs.hash as string)?.toString("utf8");
    expect(blob).toContain("prt_0c0ffee00159Fx13262840136026.json (6 bytes) <==\n[1, 2]\n");
    s.close();
    // A session file that is not JSON: nothing of that session, said with its file and line.
    const root = join(tempDir(), "storage");
    mkdirSync(join(root, "session", "global"), { recursive: true });
    mkdirSync(join(root, "message"));
    writeFileSync(join(root, "session", "global", "ses_broken.json"), '{\n  "id": "ses_broken",\n  "version": 1.0\n');
    const r = importForeign(tempStore(), { from: "opencode", path: root });
    expect(r.failed).toEqual([
      {
        file: join(root, "session", "global", "ses_broken.json"),
        code: "not-a-session",
        message: `${join(root, "session", "global", "ses_broken.json")}:4: session ses_broken: not JSON (${jsonError('{\n  "id": "ses_broken",\n  "version": 1.0\n')}); nothing of session ses_broken was imported`,
      },
    ]);
  });

  it("IM-19 IM-17 an opencode.db holds the sessions its storage held: the same trees, the session's rows as the blob", () => {
    const { report: fromFiles, store: filesStore } = importPath(STORAGE);
    const dir = tempDir();
    const db = join(dir, "opencode.db");
    buildOpenCodeDb(db, {
      // OpenCode 1.16 writes its version with a v.
      version: (id, v) => (id === B ? "v1.16.0" : v),
      extra: (d) => {
        d.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)").run("msg_0c0ffee00157Fx00000000000000", E, 1, 1, "{not json");
        d.prepare(
          "INSERT INTO session_message (id, session_id, type, time_created, time_updated, data, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ).run("sm_1", C, "text", 1, 1, "{}", 1);
      },
    });
    // The data directory holding opencode.db reads the database.
    const { store, report, of } = importPath(dir);
    expect(report.sessions.map((s) => [s.sourceId, s.file, s.version])).toEqual([
      [A, `${db}#${A}`, "1.0.120"],
      [B, `${db}#${B}`, "v1.16.0"],
      [C, `${db}#${C}`, "0.15.8"],
      [E, `${db}#${E}`, "1.0.120"],
    ]);
    expect(report.failed.map((f) => [f.file, f.code])).toEqual([[`${db}#${D}`, "unknown-version"]]);
    expect(report.problems).toEqual([
      {
        file: db,
        line: 0,
        message: `session ${C} has 1 row(s) in session_message, a message table strata does not read yet; kept in the source blob only`,
      },
      {
        file: db,
        line: 0,
        message: `message msg_0c0ffee00157Fx00000000000000 of session ${E}: not JSON (${jsonError("{not json")}); kept in the source blob only`,
      },
      {
        file: db,
        line: 0,
        message: `part prt_0c0ffee0015aFx13262840136027 of message msg_0c0ffee00156Fx13262840136023: a tool part without callID; kept in the source blob only`,
      },
      {
        file: db,
        line: 0,
        message:
          "message msg_0c0ffee0015bFx13262840136028 of session ses_3fe0000000ffeSeSsIoNeaaaaa: a message without a role; kept in the source blob only",
      },
    ]);
    for (const id of [A, B, C, E])
      for (const branch of ["main", REVERTED_BRANCH]) {
        const want = fromFiles.sessions.find((s) => s.sourceId === id)?.session as SessionId;
        if (filesStore.branch(want, branch) === undefined) continue;
        expect(shape(open(store, of(id), branch).tree), `${id}@${branch}`).toEqual(shape(open(filesStore, want, branch).tree));
      }
    // The blob: the session's rows as JSON lines; an element's line is its row's.
    const s = open(store, of(A));
    const blob = store.getBlob(record(s.tree).children[0]?.attrs.hash as string)?.toString("utf8") as string;
    const rows = blob
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows[0]).toMatchObject({ table: "session", row: { id: A, version: "1.0.120" } });
    for (const el of s.select("turn, call"))
      expect(rows[Number(el.attrs.line) - 1]?.row.id, el.tag).toBe(el.attrs.ref?.replace(/@reverted$/, ""));
    expect(s.selectOne("turn")?.attrs.file).toBeUndefined();
    expect(record(s.tree).attrs.sha256).toBe(sha256(blob));
    s.close();
    // Not OpenCode's: said so.
    const other = join(dir, "other.db");
    buildOpenCodeDb(other, { extra: (d) => d.exec("DROP TABLE part") });
    expect(() => importForeign(tempStore(), { from: "opencode", path: other })).toThrow(
      /is a SQLite database but not OpenCode's: it has no table part/,
    );
  });

  it('IM-17 a development build\'s version ("local") is read as the newest format and said so; a session with no version is refused, saying so', () => {
    const dir = tempDir();
    const db = join(dir, "opencode.db");
    buildOpenCodeDb(db, { version: (id, v) => (id === B ? "local" : v) });
    const { store, report, of } = importPath(dir);
    expect(report.sessions.find((s) => s.sourceId === B)?.version).toBe("local");
    expect(report.problems.filter((p) => p.message.includes("development build"))).toEqual([
      {
        file: db,
        line: 0,
        message: expect.stringMatching(/written by a development build of OpenCode \(version "local", not a release\): read as 1\.x/),
      },
    ]);
    // The same tree as the release it was built from.
    const released = importPath(STORAGE);
    expect(shape(open(store, of(B)).tree)).toEqual(shape(open(released.store, released.of(B)).tree));
    const doc = JSON.parse(readFileSync(join(OPENCODE, "export.json"), "utf8")) as { info: Record<string, unknown> };
    delete doc.info.version;
    const file = join(tempDir(), "no-version.json");
    writeFileSync(file, JSON.stringify(doc, null, 2));
    expect(importForeign(tempStore(), { from: "opencode", path: file }).failed).toEqual([
      {
        file,
        code: "unknown-version",
        message: expect.stringMatching(/records no version \(info\.version\), which every OpenCode session has/),
      },
    ]);
  });

  it("IM-19 an `opencode export` file: the session as the storage holds it, its lines those of the file; a broken one is not-a-session with its line", () => {
    const file = join(OPENCODE, "export.json");
    const { store, report, of } = importPath(file);
    expect(report.problems).toEqual([]);
    expect(report.sessions.map((s) => [s.file, s.sourceId, s.branchCount])).toEqual([[file, C, 2]]);
    const files = importPath(sessionFile(C));
    for (const branch of ["main", REVERTED_BRANCH])
      expect(shape(open(store, of(C), branch).tree)).toEqual(shape(open(files.store, files.of(C), branch).tree));
    const s = open(store, of(C), REVERTED_BRANCH);
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n");
    for (const el of s.select("turn, call, result")) expect(lines[Number(el.attrs.line) - 1]).toContain(`"id": "${el.attrs.ref}"`);
    const rec = record(s.tree);
    expect(rec.attrs.sha256).toBe(sha256(readFileSync(file)));
    expect(rec.attrs.unmapped).toContain("todo:1");
    s.close();
    const broken = join(tempDir(), "broken.json");
    writeFileSync(broken, text.slice(0, 200));
    const r = importForeign(tempStore(), { from: "opencode", path: broken });
    expect(r.failed).toMatchObject([
      { code: "not-a-session", message: expect.stringMatching(/^.*broken\.json:\d+: not JSON .*an OpenCode export is the JSON document/) },
    ]);
    writeFileSync(broken, '{"hello": "world"}');
    expect(importForeign(tempStore(), { from: "opencode", path: broken }).failed[0]?.message).toMatch(/no session info and messages in it/);
  });

  it("IM-23 recordedTools: a never stand-in per tool an imported session calls; a re-run answers every call from the recording", async () => {
    const { store, of } = importPath(STORAGE);
    const child = open(store, of(B));
    expect(recordedTools(child.durableTree).map((t) => [t.name, t.replayPolicy])).toEqual([["read", "never"]]);
    const report = await rerun(child, { registry: new ToolRegistry(recordedTools(child.durableTree)) });
    expect(report).toMatchObject({ branch: "rerun/main", turns: 2, calls: 2, rerunSafe: 0, recordedNever: 2, divergence: undefined });
    // The recording of A ends while its last call ran (it never reported): the re-run stops there
    // too, the call interrupted on both branches, and runs nothing (RR-4).
    const parent = open(store, of(A));
    const tools = recordedTools(parent.durableTree);
    expect(tools.map((t) => t.name)).toEqual(["read", "bash", "task", "write"]);
    const r = await rerun(parent, { registry: new ToolRegistry(tools) });
    expect(r).toMatchObject({ recordedNever: 4, divergence: undefined, endedAt: "call_w1", stop: "cancelled" });
    const again = Session.open(store, parent.id, { branch: r.branch }).session;
    expect(again.select("call").at(-1)?.attrs).toMatchObject({ id: "call_w1", status: CALL.interrupted });
    again.close();
    // A session of strata's own has no recorded tools.
    const own = Session.create(store);
    expect(recordedTools(own.tree)).toEqual([]);
    for (const x of [child, parent, own]) x.close();
  });

  it("IM-2 IM-8 every imported OpenCode session verifies, ends with no open call, and renders a prompt at every event", () => {
    const { store, report } = importPath(STORAGE);
    for (const s of report.sessions) expect(checkImported(store, s.session)).toBeGreaterThan(3);
  });
});
