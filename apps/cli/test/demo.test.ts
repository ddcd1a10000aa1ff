/**
 * CLI-28 the offline demo plays only in a workspace of its own; with a model, the current
 * directory is the workspace and the banner says so.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, json, script, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

describe("CLI-28 the offline demo never touches your files", () => {
  it("strata run in a directory with a SUMMARY.md: the demo plays in .strata/demo, the user's file is untouched", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "SUMMARY.md"), "my own summary\n");
    const r = await strata(dir, ["run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[1]).toMatch(/^workspace \.strata\/demo {2}— the offline demo's own copy of fixtures\/demo-workspace/);
    expect(readFileSync(join(dir, "SUMMARY.md"), "utf8")).toBe("my own summary\n");
    expect(readdirSync(dir).sort()).toEqual([".strata", "SUMMARY.md"]);
    expect(readFileSync(join(dir, ".strata", "demo", "SUMMARY.md"), "utf8")).toContain("## Open questions");
    // its shell command ran there: it counted the demo's notes
    const out = await strata(dir, ["show", "@last", "--select", "call[tool=run] result"]);
    expect(out.stdout).toContain("notes/2026-11-02-planning.md");
    // the next demo starts from a fresh copy: what was left in .strata/demo is gone
    writeFileSync(join(dir, ".strata", "demo", "stray.txt"), "x");
    expect((await strata(dir, ["run", "-q"])).code).toBe(0);
    expect(existsSync(join(dir, ".strata", "demo", "stray.txt"))).toBe(false);
  }, 120_000);

  it("--workspace with files of its own is refused before anything is created; an empty one gets a demo copy", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "project"));
    writeFileSync(join(dir, "project", "main.c"), "int main(){}\n");
    const refused = await strata(dir, ["run", "--workspace", "project"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/offline demo, which writes SUMMARY\.md and runs shell commands .* has files of its own/);
    expect(readdirSync(dir)).toEqual(["project"]);
    expect(readdirSync(join(dir, "project"))).toEqual(["main.c"]);
    mkdirSync(join(dir, "empty"));
    const ok = await strata(dir, ["run", "--workspace", "empty", "-q"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readdirSync(join(dir, "empty")).sort()).toEqual(["AGENTS.md", "SUMMARY.md", "notes"]);
    // a task without a model would play the demo's fixed script: refused, nothing created
    const task = await strata(tempDir(), ["run", "fix the bug"]);
    expect(task.code).toBe(2);
    expect(task.stderr).toMatch(/no model is configured: give one with --model/);
  }, 120_000);

  it("with a model, the current directory is the workspace, and the banner says so", async () => {
    const dir = tempDir();
    const model = script(tempDir(), "writer", [
      { text: "Writing.", toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hi\n" } }] },
      { text: "Done." },
    ]);
    const r = await strata(dir, ["run", "say hi in hello.txt", "--model", model]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")[1]).toMatch(
      /^workspace \. {2}— the current directory: the agent's tools read, write and run commands here/,
    );
    expect(readFileSync(join(dir, "hello.txt"), "utf8")).toBe("hi\n");
    const ls = json<{ sessions: { outcome: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions[0]?.outcome).toBe("completed");
  }, 120_000);
});
