/**
 * CLI-W with the files (CLI-31 … CLI-34): the demo runs in `ws`, a fork at the task is resumed
 * with another script — each branch writes its own `SUMMARY.md` in its own directory — checkout
 * reproduces either branch's head, a rewind of the fork takes its file back without touching
 * main's, and a resume of a branch whose directory was deleted checks the head out there first.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ALT, cleanup, demoDir, handleIn, json, type Result, ROOT, script, strata } from "./cli-kit.ts";
import { filesOf } from "./workspace-kit.ts";

afterAll(cleanup);

function ok(r: Result): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe("CLI-W the walkthrough, files included", () => {
  it("CLI-31 CLI-34 each branch writes its own SUMMARY.md in its own directory; CLI-32 checkout reproduces each head; CLI-33 rewind takes a file back", async () => {
    const dir = demoDir();
    const ws = join(dir, "ws");
    const session = handleIn(ok(await strata(dir, ["run", "--workspace", "ws"])));
    const main = readFileSync(join(ws, "SUMMARY.md"));
    expect(main.toString()).toContain("# Summary of the meeting notes");
    const task = json<{ events: { id: number; label: string }[] }>(
      await strata(dir, ["log", session, "--limit", "0", "--json"]),
    ).events.find((e) => e.label === "turn.user")?.id as number;

    // the fork gets its own directory, with the files as they were at the task (the baseline's)
    const fork = json<{ dir: string; head: number; fileCount: number }>(
      await strata(dir, ["fork", `${session}@${task}`, "--name", "alt", "--json"]),
    );
    expect(fork.dir).toBe(join(dir, ".strata", "workspaces", session, "alt"));
    expect(filesOf(fork.dir)).toEqual(filesOf(join(ROOT, "fixtures", "demo-workspace")));

    // CLI-34 resume works in the branch's directory: alt's summary is alt's, main's stays main's
    const resumed = ok(await strata(dir, ["resume", `${session}@alt`, "--model", ALT]));
    expect(resumed).toMatch(new RegExp(`^workspace \\.strata/workspaces/${session}/alt {2}— the branch's own, as recorded$`, "m"));
    expect(resumed).toMatch(/■ completed-by-tool/);
    const alt = readFileSync(join(fork.dir, "SUMMARY.md"));
    expect(alt.toString()).toContain("# Notes, in short");
    expect(readFileSync(join(ws, "SUMMARY.md"))).toEqual(main);

    // checkout reproduces either head, byte for byte
    ok(await strata(dir, ["checkout", `${session}@main`, "--to", "main-copy"]));
    expect(filesOf(join(dir, "main-copy"))).toEqual(filesOf(ws));
    ok(await strata(dir, ["checkout", `${session}@alt`, "--to", "alt-copy"]));
    expect(filesOf(join(dir, "alt-copy"))).toEqual(filesOf(fork.dir));

    // rewinding the fork to its first event takes its SUMMARY.md away; main's directory is not touched
    const back = ok(await strata(dir, ["rewind", `${session}@alt`, "--to", String(fork.head)]));
    expect(back).toMatch(/^files in \.strata\/workspaces\/.*\/alt:\n {2}remove +SUMMARY\.md$/m);
    expect(filesOf(fork.dir)).toEqual(filesOf(join(dir, "main-copy"), ["SUMMARY.md"]));
    expect(readFileSync(join(ws, "SUMMARY.md"))).toEqual(main);

    // CLI-34 a branch whose directory is gone: resume checks its head out there first, then runs
    rmSync(fork.dir, { recursive: true });
    const again = await strata(dir, ["resume", `${session}@alt`, "--model", ALT]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(
      new RegExp(`note: the workspace ${fork.dir} was missing: checked out the 3 files event \\d+ records there`),
    );
    expect(readFileSync(join(fork.dir, "SUMMARY.md"))).toEqual(alt);
    expect(readFileSync(join(ws, "SUMMARY.md"))).toEqual(main);
    const verify = json<{ ok: boolean }>(await strata(dir, ["verify", "--json"]));
    expect(verify.ok).toBe(true);

    // the bundle carries the files: an imported session checks out, and runs, anywhere
    const bundle = await strata(dir, ["export", session]);
    expect(bundle.code, bundle.stderr).toBe(0);
    writeFileSync(join(dir, "bundle.json"), bundle.stdout);
    const copy = json<{ session: string }>(await strata(dir, ["--db", "elsewhere/strata.db", "import", "bundle.json", "--json"])).session;
    ok(await strata(dir, ["--db", "elsewhere/strata.db", "checkout", `${copy}@main`, "--to", "imported"]));
    // alt answered three times already: the fourth reply ends the new task
    const more = script(dir, "more", [{ text: "1" }, { text: "2" }, { text: "3" }, { text: "Nothing more to do." }]);
    expect(filesOf(join(dir, "imported"))).toEqual(filesOf(join(dir, "main-copy")));
    const there = await strata(dir, [
      "--db",
      "elsewhere/strata.db",
      "run",
      "once more",
      "--session",
      `${copy}@alt`,
      "--model",
      more,
      "--workspace",
      "there",
    ]);
    expect(there.code, there.stderr).toBe(0);
    expect(there.stderr).toMatch(/note: the workspace .*there was missing: checked out the 4 files event \d+ records there/);
    expect(readFileSync(join(dir, "there", "SUMMARY.md"))).toEqual(alt);
  }, 300_000);
});
