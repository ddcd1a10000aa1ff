/**
 * CLI-1, CLI-2, CLI-8: the exit-code and help contract, swept over every command with one table.
 * Each usage error exits 2 with one message (a "did you mean" for a typo), prints nothing on
 * stdout (or only the JSON error document under --json), and creates nothing: the rows run
 * against a database path that does not exist. A missing input file named on the command line is
 * a usage error for every command alike. The table runs through `main()` in this process (usage is
 * decided before any file is opened); every fourth row also runs through the real binary.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../src/main.ts";
import { ALT, cleanup, inProcess, json, limited, strata, tempDir } from "./cli-kit.ts";
import { checkVocabulary } from "./schemas.ts";

afterAll(cleanup);

/** [arguments, exit code, what stderr says]. `S` stands for a session that would exist. */
const USAGE: readonly [readonly string[], number, RegExp][] = [
  // commands, help topics, global options
  [["lss"], 2, /unknown command "lss" \(did you mean "ls"\?\)/],
  [["rsume", "S"], 2, /unknown command "rsume" \(did you mean "resume"\?\)/],
  [["help", "lss"], 2, /no help topic "lss" \(did you mean "ls"\?\)/],
  [["help", "ls", "log"], 2, /strata help takes one topic/],
  [["--json"], 2, /no command given/],
  [["-q"], 2, /no command given/],
  [["--frob"], 2, /unknown option --frob/],
  [["--jsn"], 2, /unknown option --jsn \(did you mean "--json"\?\)/],
  [["ls", "--al"], 2, /Unknown option '--al' \(did you mean "--all"\?\)/],
  [["log", "S", "--lable", "x"], 2, /Unknown option '--lable' \(did you mean "--label"\?\)/],
  [["--branch", "a b", "log", "S"], 2, /--branch "a b" is not a branch name/],
  // arguments
  [["log"], 2, /takes 1 argument, got 0/],
  [["show", "a", "b"], 2, /takes 1 argument, got 2/],
  [["diff", "S"], 2, /takes 2 arguments, got 1/],
  [["ls", "extra"], 2, /takes 0 arguments, got 1/],
  [["log", "a b"], 2, /"a b" is not a session address/],
  [["export", "S", "--json"], 2, /prints no data; --json does not apply/],
  ...["resume", "log", "show", "branches", "prompt", "fork", "bisect", "replay", "verify", "checkout"].map(
    (c) => [[c, "--last", "S"], 2, /give either --last or SESSION, not both/] as [string[], number, RegExp],
  ),
  // malformed values
  [["fork", "S@3", "--name", "a b"], 2, /--name "a b" is not a branch name/],
  [["replay", "S", "--rerun", "--name", "x y"], 2, /--name "x y" is not a branch name/],
  [["log", "S", "--limit", "ten"], 2, /--limit takes a whole number/],
  [["show", "S", "--depth", "x"], 2, /--depth takes a whole number/],
  [["show", "S", "--xml", "--tree"], 2, /--xml and --tree cannot be used together/],
  [["show", "S@5", "--at", "6"], 2, /names an event already/],
  [["show", "S", "--at", "x"], 2, /--at "x" is not an event/],
  [["show", "S", "--select", "call["], 2, /--select: /],
  [["bisect", "S"], 2, /bisect needs --until CSS/],
  [["bisect", "S", "--until", "call[status="], 2, /--until: /],
  [["rewind", "S"], 2, /rewind needs --to EVENT/],
  [["rewind", "S", "--to", "abc"], 2, /--to "abc" is not an event/],
  [["rewind", "S@5", "--to", "3"], 2, /rewind moves a branch/],
  // the workspace (CLI-31 … CLI-36): directories and file conditions are checked before the database is opened
  [["checkout", "S"], 2, /checkout needs --to DIR/],
  [["checkout", "S", "--to", "."], 2, /--to .* is not empty; give a new or empty directory, or --force/],
  [["fork", "S@3", "--workspace", "."], 2, /--workspace .* is not empty; give a new or empty directory/],
  [["bisect", "S", "--until-file", "a.txt~("], 2, /--until-file "a\.txt~\(": Invalid regular expression/],
  [["bisect", "S", "--until-file", "../x"], 2, /--until-file "\.\.\/x": the path has a "\.\." segment/],
  [["show", "S", "--files", "--select", "call"], 2, /--files and --select cannot be used together/],
  [["prompt", "S", "--at", "x"], 2, /--at "x" is not an event/],
  [["prompt", "S", "--diff", "y"], 2, /--diff "y" is not an event/],
  [["replay", "S"], 2, /replay needs --verify, --rerun or --override/],
  [["replay", "S", "--verify", "--rerun"], 2, /give one of them/],
  [["replay", "S", "--verify", "--name", "x"], 2, /--name applies to --rerun and --override/],
  [["replay", "S", "--override", "bad"], 2, /use llm:CALL_ID=FILE or tool:CALL_ID=FILE/],
  [["run", "--max-steps", "0"], 2, /--max-steps must be at least 1/],
  [["run", "x", "--max-steps", "x"], 2, /--max-steps takes a whole number/],
  [["run", "x", "--budget", "0"], 2, /--budget must be at least 1/],
  [["run", "x", "--temperature", "5"], 2, /--temperature takes a number from 0 to 2/],
  [["resume", "S", "--max-steps", "0"], 2, /--max-steps must be at least 1/],
  [["run", "x", "--session", "S", "--last"], 2, /--session and --last cannot be used together/],
  [["run", "x", "--session", "S", "--title", "t"], 2, /--title names a new session/],
  [["run", "fix the bug"], 2, /no model is configured/],
  [["run", "x", "--model", "magic:x"], 2, /unknown model provider|magic/],
  [["run", "", "--model", ALT], 2, /the TASK is empty/],
  [["run", "--last"], 2, /strata run --last needs a TASK/],
  [["serve", "--port", "70000"], 2, /--port 70000 is not a port/],
  [["serve", "--token", "short"], 2, /--token must be at least 8 characters/],
  // input files named on the command line that do not exist: the same for every command
  [["run", "x", "--model", "scripted:missing.json"], 2, /missing\.json/],
  [["run", "x", "--model", ALT, "--template", "missing.j2"], 2, /the template .*missing\.j2 does not exist/],
  [["run", "x", "--model", ALT, "--workspace", "ws", "--context", "missing.md"], 2, /the context file .*missing\.md does not exist/],
  [["run", "x", "--model", ALT, "--workspace", "missing-dir"], 2, /the workspace .*missing-dir is not a directory/],
  [["replay", "S", "--override", "tool:call_0_0=missing.md"], 2, /the file .*missing\.md does not exist/],
  [["import", "missing.json"], 2, /missing\.json/],
];

describe("CLI-2 the exit-code contract, every command", () => {
  it("every usage error exits 2 with one message, prints nothing on stdout, and creates nothing", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    const run = (args: readonly string[]) => ["--db", "fresh/strata.db", ...args];
    const results = [];
    for (const [args] of USAGE) results.push(await inProcess(dir, run(args)));
    const spawned = await limited(
      2,
      USAGE.filter((_, i) => i % 4 === 0).map(
        ([args]) =>
          () =>
            strata(dir, run(args)),
      ),
    );
    for (const [k, r] of spawned.entries()) {
      const inside = results[k * 4] as Awaited<ReturnType<typeof strata>>;
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }, USAGE[k * 4]?.[0].join(" ")).toEqual({
        code: inside.code,
        stdout: inside.stdout,
        stderr: inside.stderr,
      });
    }
    for (const [i, [args, code, message]] of USAGE.entries()) {
      const r = results[i] as Awaited<ReturnType<typeof strata>>;
      const what = `strata ${args.join(" ")}`;
      expect(r.code, `${what}\n${r.stderr}`).toBe(code);
      expect(r.stderr, what).toMatch(message);
      expect(r.stderr, what).not.toMatch(/unexpected error|\n\s+at /);
      expect(r.stderr.trim().split("\n"), `${what}: one message`).toHaveLength(1);
      if (args.includes("--json")) expect(json<{ error: { code: number } }>(r).error.code, what).toBe(code);
      else expect(r.stdout, what).toBe("");
    }
    expect(readdirSync(dir)).toEqual(["ws"]);
  }, 300_000);

  it("--json errors are one document in the vocabulary; --version prints the version; help topics exit 0", async () => {
    const dir = tempDir();
    const j = await strata(dir, ["lss", "--json"]);
    expect(j.code).toBe(2);
    const doc = json<{ error: { code: number; message: string } }>(j);
    expect(doc.error.code).toBe(2);
    expect(doc.error.message).toMatch(/did you mean "ls"/);
    expect(checkVocabulary(doc)).toEqual([]);
    const v = await strata(dir, ["--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^strata \d+\.\d+\.\d+\n$/);
    for (const args of [["help"], ["help", "ls"], ["--help"], ["-h"]]) {
      const r = await strata(dir, args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/usage: strata/);
    }
    expect(existsSync(join(dir, ".strata"))).toBe(false);
  }, 120_000);
});

describe("CLI-1 help states what each command really does", () => {
  it("every command has --help with usage and examples; resume's defaults are the recorded ones", async () => {
    const dir = tempDir();
    const top = await strata(dir, ["--help"]);
    expect(top.code).toBe(0);
    for (const c of COMMANDS) expect(top.stdout).toContain(c.name);
    const helps = await limited(
      3,
      COMMANDS.map((c) => () => strata(dir, [c.name, "--help"])),
    );
    for (const [i, c] of COMMANDS.entries()) {
      const r = helps[i] as Awaited<ReturnType<typeof strata>>;
      expect(r.code, c.name).toBe(0);
      expect(r.stdout).toContain(`usage: strata ${c.name}`);
      expect(r.stdout).toContain("examples:");
      // every example names sessions the way users do: a handle or @last, never an id prefix
      for (const line of r.stdout.split("examples:")[1]?.split("\n") ?? []) expect(line, c.name).not.toMatch(/\b01JD4\b/);
      if (c.takesSession) expect(r.stdout, c.name).toMatch(/--last +the most recently active session/);
    }
    const resume = helps[COMMANDS.findIndex((c) => c.name === "resume")] as Awaited<ReturnType<typeof strata>>;
    const options = resume.stdout.split("options:")[1]?.split("global options:")[0] ?? "";
    for (const name of ["--model", "--workspace", "--template", "--context", "--max-steps", "--budget"])
      expect(options, name).toMatch(new RegExp(`${name} .*default: the one the session recorded`));
    expect(options).not.toMatch(/STRATA_MODEL|default 30|current directory|offline demo/);
  }, 120_000);
});

describe("CLI-12 a busy branch is refused before anything about it is printed", () => {
  it("a second resume exits 3 naming the driver, with nothing on stdout", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    const { spawn } = await import("node:child_process");
    const { BIN, cleanEnv, script } = await import("./cli-kit.ts");
    const slow = script(dir, "slow", [
      { text: "Waiting.", toolCalls: [{ name: "run", arguments: { command: "sleep 30" } }] },
      { text: "Done." },
    ]);
    const first = spawn(process.execPath, [BIN, "run", "wait", "--model", slow, "--workspace", "ws"], {
      cwd: dir,
      env: { ...cleanEnv(), NO_COLOR: "1" },
    });
    let out = "";
    await new Promise<void>((resolve) => {
      first.stdout.on("data", (c) => {
        out += c;
        if (/→ run /.test(out)) resolve();
      });
    });
    try {
      const handle = /^session (\S+)/m.exec(out)?.[1] as string;
      const second = await strata(dir, ["resume", handle]);
      expect(second.code).toBe(3);
      expect(second.stderr).toMatch(/is being driven by `strata run` \(pid \d+/);
      expect(second.stdout).toBe("");
      const third = await strata(dir, ["run", "more", "--session", handle, "--model", slow]);
      expect(third.code).toBe(3);
      expect(third.stdout).toBe("");
    } finally {
      first.kill("SIGKILL");
      await new Promise((r) => first.on("close", r));
    }
  }, 120_000);
});
