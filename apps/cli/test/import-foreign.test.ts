import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, json, ROOT, script, serve, strata, tempDir } from "./cli-kit.ts";

const FIXTURES = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "claude-code");
const PI = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "pi");
const CODEX = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "codex");
const OPENCODE = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "opencode", "storage");
const OC_PROJECT = "7c1e2d3f4a5b6c7d8e9f00112233445566778899";
/** Sessions of the OpenCode fixture: A (the undo, the compaction …), its child B, D (a newer OpenCode). */
const OC = { A: "ses_3fa0000000ffeSeSsIoNaaaaaa", B: "ses_3fb0000000ffeSeSsIoNbaaaaa", D: "ses_3fd0000000ffeSeSsIoNdaaaaa" };
const ocFile = (id: string): string => join(OPENCODE, "session", OC_PROJECT, `${id}.json`);

interface Imported {
  readonly session: string;
  readonly handle: string;
  readonly sourceId: string;
}
/** An element a diff adds. */
interface Added {
  readonly node: { readonly tag: string; readonly attrs: Record<string, string> };
}
interface LogDoc {
  readonly events: { readonly id: number; readonly label: string }[];
}

/** Imports PATHs with --json; the sessions it made. */
async function importJson(dir: string, from: string, paths: readonly string[]): Promise<Imported[]> {
  const r = await strata(dir, ["import", "--from", from, ...paths, "--json"]);
  expect(r.stderr, r.stderr).toBe("");
  expect(r.code).toBe(0);
  return json<{ sessions: Imported[] }>(r).sessions;
}

afterEach(cleanup);

describe("strata import --from", () => {
  it("IM-13 IM-16 imports a directory of Claude Code sessions; log, prompt, branches and diff read them; ls and prompt say it is a recording; a second import skips", async () => {
    const dir = tempDir();
    const src = join(dir, "sessions");
    mkdirSync(src);
    copyFileSync(join(FIXTURES, "session.jsonl"), join(src, "a.jsonl"));
    copyFileSync(join(FIXTURES, "malformed.jsonl"), join(src, "b.jsonl"));
    const r = await strata(dir, ["import", "--from", "claude-code", "sessions", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.format).toBe("claude-code");
    expect(doc.sessionCount).toBe(2);
    expect(doc.problems.map((p: { file: string; line: number }) => [p.file.endsWith("b.jsonl"), p.line])).toEqual([
      [true, 2],
      [true, 3],
    ]);
    const a = doc.sessions.find((s: { file: string }) => s.file.endsWith("a.jsonl"));
    expect(a).toMatchObject({ branchCount: 3, version: "2.0.30" });
    const log = await strata(dir, ["log", a.handle]);
    expect(log.code).toBe(0);
    expect(log.stdout).toContain("turn.user");
    expect(log.stdout).toContain("2026-01-05");
    const prompt = await strata(dir, ["prompt", `${a.handle}`, "--json"]);
    expect(prompt.code).toBe(0);
    expect(prompt.stdout).toContain("Summary of the conversation so far");
    // IM-16: the prompt says what the source did not record; ls lists a recording, not a run to resume
    expect(JSON.parse(prompt.stdout).unrecorded).toEqual(["system", "tools"]);
    const human = await strata(dir, ["prompt", `${a.handle}`]);
    expect(human.stderr).toContain("note: imported from claude-code, which did not record the system prompt or the tool roster");
    const ls = JSON.parse((await strata(dir, ["ls", "--json"])).stdout);
    expect(ls.sessions.find((s: { id: string }) => s.id === a.session)).toMatchObject({
      status: "imported from claude-code",
      outcome: "idle",
    });
    const branches = await strata(dir, ["branches", a.handle, "-q"]);
    expect(branches.stdout.split("\n").filter(Boolean).sort()).toEqual(["fork-1", "main", "sidechain-1"]);
    const diff = await strata(dir, ["diff", `${a.handle}@main`, `${a.handle}@fork-1`]);
    expect(diff.code).toBe(0);
    const bisect = await strata(dir, ["bisect", a.handle, "--until", "call[tool=Task]", "--json"]);
    expect(bisect.code).toBe(0);
    expect(JSON.parse(bisect.stdout)).toMatchObject({ branch: "main", event: expect.any(Number), label: "turn.end" });
    const second = await strata(dir, ["import", "--from", "claude-code", "sessions"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/skipped .*a\.jsonl: already imported as/);
    const again = await strata(dir, ["import", "--from", "claude-code", join(src, "a.jsonl"), "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ sessionCount: 0, skipped: [{ session: a.session }] });
  });

  it("IM-1: in a directory (~/.claude, ~/.codex) a file of no session is ignored with a note; named on its own, or a broken one, it fails", async () => {
    const dir = tempDir();
    const home = join(dir, ".claude");
    mkdirSync(join(home, "projects", "-home-u-p"), { recursive: true });
    copyFileSync(join(FIXTURES, "session.jsonl"), join(home, "projects", "-home-u-p", "a.jsonl"));
    // Claude Code's prompt history, and a session file of summaries only: JSON records, no session.
    writeFileSync(
      join(home, "history.jsonl"),
      '{"display":"fix the bug","pastedContents":{},"timestamp":1759000000000,"project":"/home/u/p"}\n',
    );
    writeFileSync(join(home, "projects", "-home-u-p", "s.jsonl"), '{"type":"summary","summary":"Bug fix","leafUuid":"x"}\n');
    const r = await strata(dir, ["import", "--from", "claude-code", home]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^imported \S+ .*a\.jsonl/);
    expect(r.stderr).toMatch(
      /not a session, ignored: .*history\.jsonl: no Claude Code user or assistant record with a version in 1 record/,
    );
    expect(r.stderr).toMatch(/not a session, ignored: .*s\.jsonl/);
    const again = json<{ ignored: { file: string }[]; failed: unknown[]; sessionCount: number }>(
      await strata(dir, ["import", "--from", "claude-code", home, "--json"]),
    );
    expect(again).toMatchObject({ sessionCount: 0, failed: [] });
    expect(again.ignored.map((f) => f.file.slice(home.length)).sort()).toEqual(["/history.jsonl", "/projects/-home-u-p/s.jsonl"]);
    // Named on its own it is what was asked for, and fails.
    const one = await strata(dir, ["import", "--from", "claude-code", join(home, "history.jsonl")]);
    expect(one.code).toBe(1);
    expect(one.stderr).toMatch(/strata: .*history\.jsonl: no Claude Code user or assistant record/);
    // A file with lines that are not JSON and no session is not taken for another file: it fails.
    writeFileSync(join(home, "projects", "-home-u-p", "c.jsonl"), '{"type":"summary"}\n{"type": "user", "mess\n');
    const broken = await strata(dir, ["import", "--from", "claude-code", home]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(
      /strata: .*c\.jsonl: no Claude Code user or assistant record with a version in 1 record\(s\) \(1 line\(s\) not JSON\)/,
    );
    // Codex's history.jsonl beside its sessions.
    const codex = join(dir, ".codex");
    mkdirSync(join(codex, "sessions", "2026", "01", "02"), { recursive: true });
    copyFileSync(join(CODEX, "rollout.jsonl"), join(codex, "sessions", "2026", "01", "02", "rollout-a.jsonl"));
    writeFileSync(join(codex, "history.jsonl"), '{"session_id":"0199","ts":1759000000,"text":"fix the bug"}\n');
    const cx = await strata(dir, ["import", "--from", "codex", codex, "--json"]);
    expect(cx.code, cx.stderr).toBe(0);
    expect(json<{ sessionCount: number; ignored: { file: string }[] }>(cx)).toMatchObject({
      sessionCount: 1,
      ignored: [{ file: join(codex, "history.jsonl") }],
    });
  });

  it("IM-13 IM-14 imports a Pi session tree: its branches, the prompt after its compaction; an unknown Pi version exits 1", async () => {
    const dir = tempDir();
    const r = await strata(dir, ["import", "--from", "pi", join(PI, "session.jsonl"), "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ format: "pi", sessionCount: 1, problems: [] });
    const s = doc.sessions[0];
    expect(s).toMatchObject({ branchCount: 2, version: "3", sourceId: "aaaaaaaa-1111-4222-8333-444444444444" });
    const branches = await strata(dir, ["branches", s.handle, "-q"]);
    expect(branches.stdout.split("\n").filter(Boolean).sort()).toEqual(["fork-1", "main"]);
    const prompt = await strata(dir, ["prompt", s.handle, "--json"]);
    expect(prompt.code).toBe(0);
    expect(prompt.stdout).toContain("Summary of the conversation so far");
    const diff = await strata(dir, ["diff", `${s.handle}@main`, `${s.handle}@fork-1`]);
    expect(diff.code).toBe(0);
    const v = await strata(dir, ["import", "--from", "pi", join(PI, "unknown-version.jsonl"), "--json"]);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout).failed[0].message).toMatch(/Pi session format version 4 is not one strata reads/);
  });

  it("IM-13 IM-15 imports a Codex rollout: its recorded system prompt, log and prompt; a legacy rollout exits 1 naming why", async () => {
    const dir = tempDir();
    const r = await strata(dir, ["import", "--from", "codex", join(CODEX, "rollout.jsonl"), "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ format: "codex", sessionCount: 1, problems: [] });
    const s = doc.sessions[0];
    expect(s).toMatchObject({ branchCount: 1, version: "0.128.0" });
    const log = await strata(dir, ["log", s.handle]);
    expect(log.code).toBe(0);
    expect(log.stdout).toContain("turn.failed");
    const prompt = await strata(dir, ["prompt", s.handle, "--json"]);
    expect(prompt.code).toBe(0);
    expect(prompt.stdout).toContain("You are Codex, a coding agent. Be concise.");
    const v = await strata(dir, ["import", "--from", "codex", join(CODEX, "legacy.jsonl"), "--json"]);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout).failed[0].message).toMatch(/before session_meta/);
  });

  it("IM-13 IM-16 IM-17 IM-20 imports OpenCode sessions: a storage directory (a newer OpenCode exits 1 naming it), log, show and prompt at an event, the undo's branch and its diff", async () => {
    const whole = tempDir();
    const all = await strata(whole, ["import", "--from", "opencode", OPENCODE]);
    expect(all.code).toBe(1);
    expect(all.stdout).toMatch(/^imported \S+ .*ses_3fa0000000ffeSeSsIoNaaaaaa\.json \(opencode 1\.0\.120\): 2 branches, \d+ events$/m);
    expect(all.stderr).toContain(`strata: ${ocFile(OC.D)}: session ${OC.D} was written by OpenCode "2.1.0", not a version strata reads`);
    // problems as file:line, the rest imported
    expect(all.stderr).toMatch(
      /ses_3fe0000000ffeSeSsIoNeaaaaa\/msg_0c0ffee00155Fx13262840136022\.json:4: message msg_0c0ffee00155Fx13262840136022: not JSON/,
    );
    expect(all.stderr).toContain(`${join(OPENCODE, "message", "ses_0rphan000000ffeNoSessionFile")}: 1 message(s) of session`);
    expect(all.stderr).not.toMatch(/at .*\.ts:\d+/);

    const dir = tempDir();
    const [a, b] = (await importJson(dir, "opencode", [ocFile(OC.A), ocFile(OC.B)])) as [Imported, Imported];
    expect([a.sourceId, b.sourceId]).toEqual([OC.A, OC.B]);
    const ls = json<{ sessions: { id: string; status: string; outcome: string; title: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions.find((s) => s.id === a.session)).toMatchObject({
      status: "imported from opencode",
      outcome: "idle",
      title: "Counting notes",
    });
    const log = await strata(dir, ["log", a.handle]);
    expect(log.code).toBe(0);
    for (const label of ["turn.user", "turn.end", "call.outcome", "turn.failed", "import.compaction", "import.end"])
      expect(log.stdout).toContain(label);
    expect(log.stdout).toContain("⑂ fork → reverted");
    expect(log.stdout).toContain("2026-01-05 09:00:01");
    const events = json<LogDoc>(await strata(dir, ["log", a.handle, "--json"])).events;
    const firstEnd = events.find((e) => e.label === "turn.end")?.id as number;
    // show --at: the reply as it stood when it ended, its calls not yet answered
    const at = await strata(dir, ["show", a.handle, "--at", String(firstEnd), "--select", "turn[role=assistant] > call", "--json"]);
    expect(at.code).toBe(0);
    expect(json<{ elements: { attrs: Record<string, string> }[] }>(at).elements.map((e) => [e.attrs.tool, e.attrs.status])).toEqual([
      ["read", "pending"],
      ["bash", "pending"],
    ]);
    const later = json<{ elements: { attrs: Record<string, string> }[] }>(
      await strata(dir, ["show", a.handle, "--at", String(firstEnd + 2), "--select", "call", "--json"]),
    );
    expect(later.elements.map((e) => [e.attrs.status, e.attrs.error])).toEqual([
      ["executed", undefined],
      ["executed", "tool-error"],
    ]);
    // prompt --at: what the model was sent for the second reply
    const p = json<{ request: { messages: { role: string; content: string }[] }; unrecorded: string[] }>(
      await strata(dir, ["prompt", a.handle, "--at", String(firstEnd + 2), "--json"]),
    );
    expect(p.request.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "How many notes are in notes/?\n\n[Attached image/png: shot.png]"],
      ["assistant", "Let me look."],
      ["tool", "a.md\nb.md"],
      ["tool", "bash: wc: command not found"],
    ]);
    expect(p.unrecorded).toEqual(["system", "tools"]);
    const head = json<{ request: { messages: { content: string }[] } }>(await strata(dir, ["prompt", a.handle, "--json"]));
    expect(head.request.messages[0]?.content).toMatch(/^Summary of the conversation so far:\nThe user asked how many notes there are/);
    // The undo: main ends before it, the undone turns are the difference
    const branches = await strata(dir, ["branches", a.handle, "-q"]);
    expect(branches.stdout.split("\n").filter(Boolean).sort()).toEqual(["main", "reverted"]);
    const diff = await strata(dir, ["diff", `${a.handle}@main`, `${a.handle}@reverted`, "--json"]);
    expect(diff.code).toBe(0);
    const added = json<{ diff: { added: Added[] } }>(diff).diff.added;
    expect(added.map((e) => [e.node.tag, e.node.attrs.role])).toEqual([
      ["turn", "user"],
      ["turn", "assistant"],
    ]);
    const again = await strata(dir, ["import", "--from", "opencode", ocFile(OC.A)]);
    expect(again.stdout).toMatch(/skipped .*ses_3fa0000000ffeSeSsIoNaaaaaa\.json: already imported as/);
  });

  // IM-23, for every format: a re-run answers the recording's calls from it; an override is a
  // counterfactual branch; a fork at an event continues with the scripted model.
  const formats: [string, string, { readonly divergence: null | RegExp; readonly call: string }][] = [
    ["claude-code", join(FIXTURES, "session.jsonl"), { divergence: null, call: "toolu_3" }],
    ["pi", join(PI, "session.jsonl"), { divergence: null, call: "call_3" }],
    // A freeform tool (apply_patch) takes text, not a JSON object (TL-2 input "text"); the rollout
    // ends while its last call ran, and the re-run stops there too (RR-4).
    ["codex", join(CODEX, "rollout.jsonl"), { divergence: null, call: "call_1" }],
    ["opencode", ocFile(OC.B), { divergence: null, call: "call_r1" }],
  ];
  for (const [from, file, want] of formats)
    it(`IM-23 a ${from} session: replay --rerun answers its calls from the recording, --override is a counterfactual, a fork continues with a scripted model`, async () => {
      const dir = tempDir();
      const [s] = (await importJson(dir, from, [file])) as [Imported];
      const r = await strata(dir, ["replay", s.handle, "--rerun", "--json"]);
      const doc = json<{ branch: string; recordedNever: number; rerunSafe: number; divergence: { message: string } | null }>(r);
      expect(doc.branch).toBe("rerun/main");
      expect(doc.rerunSafe).toBe(0); // nothing of the source's tools runs here
      expect(doc.recordedNever).toBeGreaterThan(0);
      if (want.divergence === null) {
        expect(r.code, r.stderr).toBe(0);
        expect(doc.divergence).toBeNull();
      } else {
        expect(r.code).toBe(1);
        expect(doc.divergence?.message).toMatch(want.divergence);
      }
      // A counterfactual: the reply that made the call says something else.
      writeFileSync(join(dir, "reply.json"), JSON.stringify({ text: "I know the answer without looking." }));
      const cf = await strata(dir, ["replay", s.handle, "--override", `llm:${want.call}=reply.json`, "--json"]);
      expect(cf.code, cf.stderr).toBe(0);
      expect(json<{ branch: string; divergence: { what: string } }>(cf)).toMatchObject({
        branch: "whatif/main",
        divergence: { what: "reply" },
      });
      const whatif = json<{ elements: { children: { tag: string; text?: string }[] }[] }>(
        await strata(dir, ["show", `${s.handle}@whatif/main`, "--select", "turn[role=assistant]", "--json"]),
      );
      expect(whatif.elements.flatMap((t) => t.children.filter((c) => c.tag === "text").map((c) => c.text))).toContain(
        "I know the answer without looking.",
      );
      // From an event of the recording: fork after the first prompt, continue with the scripted model.
      const events = json<LogDoc>(await strata(dir, ["log", s.handle, "--json"])).events;
      const prompt = events.find((e) => e.label === "turn.user")?.id as number;
      expect((await strata(dir, ["fork", `${s.handle}@${prompt}`, "--name", "what-if"])).code).toBe(0);
      const model = script(dir, "cf", [{ text: "Counterfactual: a scripted answer." }]);
      const resumed = await strata(dir, ["resume", `${s.handle}@what-if`, "--model", model]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain("Counterfactual: a scripted answer.");
      const d = json<{ diff: { added: Added[] } }>(await strata(dir, ["diff", `${s.handle}@${prompt}`, `${s.handle}@what-if`, "--json"]));
      expect(d.diff.added.some((e) => e.node.tag === "turn" && e.node.attrs.model === "scripted:cf")).toBe(true);
    });

  it("IM-23 RR-4 recordings that end while a call ran (OpenCode, Codex): the re-run stops there too, the call interrupted on both; the undone branch re-runs up to there", async () => {
    const dir = tempDir();
    const [a] = (await importJson(dir, "opencode", [ocFile(OC.A)])) as [Imported];
    const r = await strata(dir, ["replay", a.handle, "--rerun", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(json<{ recordedNever: number; divergence: unknown; endedAt: string; stop: string }>(r)).toMatchObject({
      recordedNever: 4,
      divergence: null,
      endedAt: "call_w1",
      stop: "cancelled",
    });
    const calls = json<{ elements: { attrs: Record<string, string> }[] }>(
      await strata(dir, ["show", `${a.handle}@rerun/main`, "--select", "call", "--json"]),
    ).elements;
    expect(calls.at(-1)?.attrs).toMatchObject({ id: "call_w1", status: "interrupted" });
    const human = await strata(dir, ["replay", a.handle, "--rerun"]);
    expect(human.stdout).toMatch(/the recording ends while call call_w1 ran .*: the re-run stopped there too/);
    expect(human.stdout).toMatch(/^reproduced: /m);
    const [c] = (await importJson(dir, "codex", [join(CODEX, "rollout.jsonl")])) as [Imported];
    expect(json(await strata(dir, ["replay", c.handle, "--rerun", "--json"]))).toMatchObject({ divergence: null, endedAt: "call_5" });
    const undone = await strata(dir, ["replay", `${a.handle}@reverted`, "--rerun", "--json"]);
    expect(json<{ branch: string }>(undone).branch).toBe("rerun/reverted");
  });

  it("IM-23 the inspector serves an imported OpenCode session: its timeline, the tree at an event, the undo's diff, the prompt", async () => {
    const dir = tempDir();
    const [a] = (await importJson(dir, "opencode", [ocFile(OC.A), ocFile(OC.B)])) as [Imported];
    const { proc, doc } = await serve(dir, ["--port", "0"]);
    const url = doc.url;
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(new URL(path, url));
      expect(res.status, path).toBe(200);
      return (res.headers.get("content-type")?.includes("json") ? res.json() : res.text()) as Promise<T>;
    };
    try {
      const { sessions } = await get<{ sessions: { id: string; title: string }[] }>("api/sessions");
      expect(sessions.map((s) => s.title).sort()).toEqual(["Counting notes", "Summarize notes (@general subagent)"]);
      const info = await get<{ branches: { name: string; origin: string; originEvent: number | null }[] }>(`api/sessions/${a.session}`);
      const reverted = info.branches.find((b) => b.name === "reverted");
      expect(reverted?.origin).toBe("fork");
      // the timeline of the undone branch
      const page = await get<{ total: number; events: { id: number; label: string; ts: number }[] }>(
        `api/sessions/${a.session}/events?branch=reverted`,
      );
      expect(page.events).toHaveLength(page.total);
      const labels = page.events.map((e) => e.label);
      expect(labels.slice(0, 3)).toEqual(["session.start", "import.source", "turn.user"]);
      expect(labels).toEqual(expect.arrayContaining(["turn.end", "call.outcome", "turn.failed", "import.compaction", "import.end"]));
      expect(page.events[2]?.ts).toBe(Date.UTC(2026, 0, 5, 9, 0, 1));
      // the tree at the first reply's end: reasoning, text, calls still pending; a moment later, answered
      const end = page.events.find((e) => e.label === "turn.end")?.id as number;
      const xml = await get<string>(`api/sessions/${a.session}/tree?at=${end}&format=xml`);
      expect(xml).toContain(">List the directory first.</reasoning>");
      expect(xml).toMatch(/<call [^>]*status="pending" tool="read"/);
      const answered = await get<{ matches: number[] }>(
        `api/sessions/${a.session}/tree?at=${end + 2}&select=${encodeURIComponent('call[status="executed"]')}`,
      );
      expect(answered.matches).toHaveLength(2);
      // the undo's diff: from where the branch forked to its head
      const d = await get<{ diff: { added: Added[] } }>(`api/sessions/${a.session}/diff?from=${reverted?.originEvent}&branch=reverted`);
      expect(d.diff.added.filter((e) => e.node.tag === "turn").map((e) => e.node.attrs.role)).toEqual(["user", "assistant"]);
      const p = await get<{ request: { messages: { role: string; content: string }[] } }>(
        `api/sessions/${a.session}/prompt?branch=reverted`,
      );
      expect(p.request.messages.map((m) => m.content).slice(-3)).toEqual([
        "Make it one line.\n\nThe following tool was executed by the user",
        "One line it is.",
        expect.stringMatching(/^The call to edit was interrupted/),
      ]);
    } finally {
      proc.kill("SIGTERM");
    }
    // it stops on SIGTERM (CLI-25)
    expect(await new Promise((resolve) => (proc.exitCode !== null ? resolve(proc.exitCode) : proc.once("exit", resolve)))).toBe(0);
  }, 120_000);

  it("IM-13 usage errors exit 2 before the database exists; an unknown version exits 1 naming it", async () => {
    const dir = tempDir();
    const bad = await strata(dir, ["import", "--from", "cursor", "x.jsonl"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--from "cursor" is not a format strata imports/);
    const none = await strata(dir, ["import", "--from", "claude-code"]);
    expect(none.code).toBe(2);
    const missing = await strata(dir, ["import", "--from", "claude-code", "nope.jsonl"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.jsonl: ENOENT/);
    const two = await strata(dir, ["import", "a.json", "b.json"]);
    expect(two.code).toBe(2);
    const v = await strata(dir, ["import", "--from", "claude-code", join(FIXTURES, "unknown-version.jsonl"), "--json"]);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.stdout).failed[0].message).toMatch(/version "3\.0\.0" is not one strata reads/);
    expect(v.stderr).not.toMatch(/at .*\.ts:\d+/);
    const ls = await strata(dir, ["ls", "-q"]);
    expect(ls.stdout.trim()).toBe("");
  });
});
