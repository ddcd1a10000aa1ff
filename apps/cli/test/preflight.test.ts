/**
 * CLI-28 no junk sessions: what can be known before a session exists is checked first — the
 * model spec (a missing OPENAI_API_KEY for a server that needs one), the limits, and the template
 * rendered on the first request with the run's own inputs. A run that still fails before its first
 * model reply (the server is down) keeps its session, marked: `ls` shows it failed, and `resume`
 * retries it.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, json, script, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

describe("CLI-28 checks before a session is created", () => {
  it("no OPENAI_API_KEY for a server that needs one: one clear line, exit 2, nothing created", async () => {
    const dir = tempDir();
    const r = await strata(dir, ["run", "fix it", "--model", "openai:gpt-4o-mini"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/OPENAI_API_KEY/);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it("a template that fails on the first request, and --max-steps 0, are refused before anything is created", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    writeFileSync(join(dir, "bad.j2"), "You are an agent.\n{{ nothing_here.field }}\n");
    const model = script(dir, "m", [{ text: "hi" }]);
    const r = await strata(dir, ["run", "t", "--model", model, "--workspace", "ws", "--template", "bad.j2"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/the template .*bad\.j2 fails on the first request: .*:2:\d+: .*undefined.*; nothing was created/);
    const zero = await strata(dir, ["run", "t", "--model", model, "--workspace", "ws", "--max-steps", "0"]);
    expect(zero.code).toBe(2);
    expect(existsSync(join(dir, ".strata"))).toBe(false);
  }, 60_000);

  it("a server that refuses the connection: the session is kept and marked failed; resume retries it", async () => {
    const dir = tempDir();
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "none" };
    const r = await strata(dir, ["run", "fix it", "--model", "openai:m"], { env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/■ model-error/);
    expect(r.stderr).toMatch(/resume with: strata resume \w+/);
    const ls = json<{ sessions: { status: string; outcome: string; handle: string }[] }>(await strata(dir, ["ls", "--json"]));
    expect(ls.sessions).toHaveLength(1);
    expect(ls.sessions[0]).toMatchObject({ status: "model-error", outcome: "failed" });
    const human = await strata(dir, ["ls"]);
    expect(human.stdout).toMatch(/failed: model-error \(resume retries\)/);
    const again = await strata(dir, ["resume", ls.sessions[0]?.handle as string], { env });
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/■ model-error/);
  }, 120_000);
});
