/**
 * CLI-W: the README walkthrough, end to end, with the real binary as a process:
 * run → kill -9 mid-call → resume → fork at an earlier event → a different script on the fork →
 * diff the branches → prompt --at → bisect → export → import into a fresh database → verify.
 * Every --json document is validated against its schema.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, demoDir, handleIn, json, ROOT, strata, strataKilled } from "./cli-kit.ts";
import { checkVocabulary, SCHEMAS } from "./schemas.ts";

afterAll(cleanup);
const ajv = new Ajv2020({ strict: false, allErrors: true });
function valid(name: keyof typeof SCHEMAS, doc: unknown): void {
  const check = ajv.compile(SCHEMAS[name]);
  if (!check(doc))
    throw new Error(
      `--json of ${name} does not match its schema: ${ajv.errorsText(check.errors)}\n${JSON.stringify(doc, null, 2).slice(0, 2000)}`,
    );
  expect(checkVocabulary(doc), name).toEqual([]);
}

describe("CLI-W the walkthrough", () => {
  it("run → kill -9 → resume → fork → alt script → diff → prompt → bisect → export → import → verify", async () => {
    const dir = demoDir();
    // 1. run the demo; kill it while the `run` tool (never safe to repeat) is running
    const killed = await strataKilled(dir, ["run", "--workspace", "ws"], /→ run /);
    const session = handleIn(killed.stdout);
    expect(session).toMatch(/^[0-9A-Z]{6}$/);
    expect(killed.stdout.split("\n")[0]).toMatch(new RegExp(`^session ${session} \\(01[0-9A-Z]{24}\\)`));

    // 2. ls shows it open (CLI-13); resume (CLI-11) says what was interrupted and finishes the run
    const ls = await strata(dir, ["ls", "--json"]);
    valid("ls", json(ls));
    expect(json<{ sessions: { handle: string; status: string }[] }>(ls).sessions[0]).toMatchObject({ handle: session, status: "open" });
    const resumed = await strata(dir, ["resume", session]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/run \(#\d+\) was running: not safe to repeat, it will be marked interrupted/);
    expect(resumed.stdout).toMatch(/■ completed-by-tool/);
    expect(readFileSync(join(dir, "ws", "SUMMARY.md"), "utf8")).toContain("## Open questions");

    // 3. the log shows the interruption; find the user turn to fork at
    const log = await strata(dir, ["log", session, "--limit", "0", "--json"]);
    valid("log", json(log));
    const events = json<{ events: { id: number; label: string }[] }>(log).events;
    expect(events.map((e) => e.label)).toContain("call.interrupted");
    const userTurn = events.find((e) => e.label === "turn.user")?.id as number;

    // 4. fork right after the task and run a different script there
    const fork = await strata(dir, ["fork", `${session}@${userTurn}`, "--name", "alt", "--json"]);
    valid("fork", json(fork));
    const alt = await strata(dir, ["resume", `${session}@alt`, "--model", `scripted:${join(ROOT, "fixtures/models/alt.json")}`, "--json"]);
    expect(alt.code, alt.stderr).toBe(0);
    valid("run", json(alt));
    expect(json(alt)).toMatchObject({ branch: "alt", stop: "completed-by-tool" });

    // 5. diff the branches: the alt branch has fewer turns and no todo list
    const diff = await strata(dir, ["diff", `${session}@main`, `${session}@alt`, "--json"]);
    valid("diff", json(diff));
    const human = await strata(dir, ["diff", `${session}@main`, `${session}@alt`]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/todo/);
    const branches = await strata(dir, ["branches", session, "--json"]);
    valid("branches", json(branches));
    expect(
      json<{ branches: { name: string }[] }>(branches)
        .branches.map((b) => b.name)
        .sort(),
    ).toEqual(["alt", "main"]);

    // 6. the prompt at the fork point and how it changed by the end (CLI-20)
    const prompt = await strata(dir, ["prompt", `${session}@${userTurn}`, "--json"]);
    valid("prompt", json(prompt));
    const req = json<{ request: { system: string; messages: unknown[]; tools: { name: string }[] } }>(prompt).request;
    expect(req.system).toContain("- 0 open items");
    expect(req.messages).toHaveLength(1);
    expect(req.tools.map((t) => t.name)).toContain("submit");
    const pdiff = await strata(dir, ["prompt", session, "--at", String(userTurn), "--diff", String(events.at(-1)?.id)]);
    expect(pdiff.stdout).toMatch(/^\+ .*Write SUMMARY\.md/m);
    valid("promptDiff", json(await strata(dir, ["prompt", session, "--at", String(userTurn), "--diff", "head", "--json"])));

    // 6b. a deterministic re-run of the alt branch reproduces it; a counterfactual diverges
    const again = await strata(dir, ["replay", `${session}@alt`, "--rerun", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    valid("rerun", json(again));
    expect(json(again)).toMatchObject({ sourceBranch: "alt", branch: "rerun/alt", rerunSafe: 3, recordedNever: 1, divergence: null });
    writeFileSync(join(dir, "notes.txt"), "nothing was decided");
    const whatIf = await strata(dir, ["replay", `${session}@alt`, "--override", "tool:call_0_0=notes.txt"]);
    expect(whatIf.code, whatIf.stderr).toBe(0);
    expect(whatIf.stdout).toMatch(/diverged: call call_0_0 \(read_file\) observed something different/);

    // 7. bisect: the first event after which a call was interrupted
    const bisect = await strata(dir, ["bisect", session, "--until", "call[status=interrupted]", "--json"]);
    valid("bisect", json(bisect));
    expect(json<{ label: string }>(bisect).label).toBe("call.interrupted");

    // 8. export, import into a fresh database (CLI-23), verify (CLI-24)
    const exported = await strata(dir, ["export", session]);
    expect(exported.code, exported.stderr).toBe(0);
    writeFileSync(join(dir, "bundle.json"), exported.stdout);
    const imported = await strata(dir, ["--db", "fresh.db", "import", "bundle.json", "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    valid("import", json(imported));
    const copy = json<{ session: string }>(imported).session;
    valid("show", json(await strata(dir, ["--db", "fresh.db", "show", copy, "--select", "todo", "--json"])));
    const verify = await strata(dir, ["--db", "fresh.db", "verify", "--json"]);
    valid("verify", json(verify));
    expect(json(verify)).toMatchObject({ ok: true });
    const a = await strata(dir, ["show", session, "--xml"]);
    const b = await strata(dir, ["--db", "fresh.db", "show", copy, "--xml"]);
    expect(b.stdout).toBe(a.stdout);
    const replay = await strata(dir, ["--db", "fresh.db", "replay", `${copy}@alt`, "--verify", "--json"]);
    valid("replay", json(replay));
    expect(existsSync(join(dir, ".strata", "strata.db"))).toBe(true);
  }, 120_000);
});
