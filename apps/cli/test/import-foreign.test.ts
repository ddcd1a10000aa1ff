/**
 * `strata import --from` end to end (IM-13): the real binary imports our Claude Code fixture, the
 * derived commands read the result, a second import skips it, and usage errors and unknown
 * versions exit as docs/cli.md says.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, ROOT, strata, tempDir } from "./cli-kit.ts";

const FIXTURES = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "claude-code");
const PI = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "pi");
const CODEX = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "codex");

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
