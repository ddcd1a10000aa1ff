/**
 * The workspace in the log, through the real binary (CLI-31 … CLI-36): a scripted session writes,
 * edits, chmods, links and deletes files with the built-in tools and shell commands; checkout
 * reproduces every event byte for byte; show --files, log and diff see the files; bisect finds
 * the event a file appeared or matched; fork gives a branch its own directory; rewind restores the
 * files, refuses (exit 3) to overwrite changes made outside the agent, and --force records them
 * first so they stay recoverable (L5). The tests run in order on one session: the later ones fork
 * and rewind it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, handleIn, json, limited, type Result, script, strata, tempDir } from "./cli-kit.ts";
import { checkVocabulary, SCHEMAS } from "./schemas.ts";
import { BASELINE, filesOf, type Seen, START, STEPS, turns } from "./workspace-kit.ts";

afterAll(cleanup);

const ajv = new Ajv2020({ strict: false, allErrors: true });
function valid(name: keyof typeof SCHEMAS, doc: unknown): void {
  const check = ajv.compile(SCHEMAS[name]);
  if (!check(doc)) throw new Error(`--json of ${name}: ${ajv.errorsText(check.errors)}\n${JSON.stringify(doc, null, 2).slice(0, 2000)}`);
  expect(checkVocabulary(doc), name).toEqual([]);
}

function ok(r: Result): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

let dir = "";
let ws = "";
let handle = "";
let events: { id: number; label: string; fileChanges: { added: number; modified: number; deleted: number } | null }[] = [];
/** The outcome event of each step, in order. */
let outcomes: number[] = [];
let baseline = 0;

/** The files the workspace held after `event`, by the script. */
function expectedAt(event: number): Record<string, Seen> | undefined {
  if (event < baseline) return undefined;
  let files = BASELINE;
  for (const [i, step] of STEPS.entries()) if ((outcomes[i] as number) <= event) files = step.after;
  return files;
}

beforeAll(async () => {
  dir = tempDir();
  ws = join(dir, "ws");
  for (const [p, text] of Object.entries(START)) {
    mkdirSync(dirname(join(ws, p)), { recursive: true });
    writeFileSync(join(ws, p), text, "latin1");
  }
  const model = script(dir, "steps", turns());
  handle = handleIn(ok(await strata(dir, ["run", "change the files", "--model", model, "--workspace", "ws"])));
  events = json<{ events: typeof events }>(await strata(dir, ["log", handle, "--limit", "0", "--json"])).events;
  outcomes = events.filter((e) => e.label === "call.outcome").map((e) => e.id);
  baseline = events.find((e) => e.label === "workspace.baseline")?.id as number;
  expect(outcomes).toHaveLength(STEPS.length + 1); // and the submit
  expect(filesOf(ws, ["build"])).toEqual(STEPS.at(-1)?.after);
}, 180_000);

describe("CLI-32 checkout", () => {
  it("CLI-32 writes the workspace exactly as after any event: bytes, modes, symlinks, deletions", async () => {
    // every state the workspace had (the baseline, each outcome), and the events in between (each call's start)
    const recorded = events.filter((e) => e.id >= baseline && ["workspace.baseline", "call.outcome", "call.start"].includes(e.label));
    const out = tempDir();
    const results = await limited(
      2,
      recorded.map((e) => () => strata(dir, ["checkout", `${handle}@${e.id}`, "--to", join(out, String(e.id)), "--json"])),
    );
    for (const [i, e] of recorded.entries()) {
      const r = results[i] as Result;
      const doc = json<{ event: number; fileCount: number }>(r);
      expect(r.code, r.stderr).toBe(0);
      valid("checkout", doc);
      expect(filesOf(join(out, String(e.id))), `event ${e.id} (${e.label})`).toEqual(expectedAt(e.id));
      expect(doc.fileCount).toBe(Object.keys(expectedAt(e.id) ?? {}).length);
    }
    // the ignored build output was never recorded, so no checkout has it
    expect(existsSync(join(out, String(outcomes.at(-1)), "build"))).toBe(false);
  }, 300_000);

  it("CLI-32 an event before the baseline, a non-empty DIR, a DIR holding the database are refused; --force makes DIR exact", async () => {
    const early = events.find((e) => e.label === "turn.user")?.id as number;
    const before = await strata(dir, ["checkout", `${handle}@${early}`, "--to", join(tempDir(), "x"), "--json"]);
    expect(before.code).toBe(1);
    expect(json<{ error: { message: string } }>(before).error.message).toMatch(
      new RegExp(`event ${early} of ${handle}@main records no workspace: its files were first recorded at event ${baseline}`),
    );
    const full = tempDir();
    writeFileSync(join(full, "mine.txt"), "my own file");
    mkdirSync(join(full, "build"));
    writeFileSync(join(full, ".gitignore"), "build/\n");
    writeFileSync(join(full, "build", "keep.o"), "ignored, kept");
    const refused = await strata(dir, ["checkout", handle, "--to", full]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is not empty; give a new or empty directory, or --force/);
    expect(readFileSync(join(full, "mine.txt"), "utf8")).toBe("my own file");
    const forced = ok(await strata(dir, ["checkout", `${handle}@${outcomes[2]}`, "--to", full, "--force"]));
    expect(forced).toMatch(
      new RegExp(`^checked out ${handle}@${outcomes[2]} \\(main\\) into .*: 5 files \\(\\d+ written, \\d+ unchanged, 1 removed\\)\\n$`),
    );
    expect(filesOf(full, ["build"])).toEqual(STEPS[2]?.after);
    expect(readFileSync(join(full, "build", "keep.o"), "utf8")).toBe("ignored, kept");
    const intoDb = await strata(dir, ["checkout", handle, "--to", join(dir, ".strata"), "--force"]);
    expect(intoDb.code).toBe(2);
    expect(intoDb.stderr).toMatch(/holds the database/);
    const noTo = await strata(dir, ["checkout", handle]);
    expect(noTo.code).toBe(2);
    expect(noTo.stderr).toMatch(/checkout needs --to DIR/);
    expect(ok(await strata(dir, ["checkout", "--help"]))).toMatch(/strata checkout SESSION/);
  }, 180_000);
});

describe("CLI-35 everything derived sees files", () => {
  it("CLI-35 show --files lists the workspace at an event: path, mode, size, hash", async () => {
    const doc = json<{ recorded: boolean; fileCount: number; files: { path: string; mode: string; size: number; hash: string }[] }>(
      await strata(dir, ["show", `${handle}@${outcomes[3]}`, "--files", "--json"]),
    );
    valid("showFiles", doc);
    expect(doc.files.map((f) => [f.path, f.mode, f.size])).toEqual([
      [".gitignore", "644", 7],
      ["a.txt", "644", 4],
      ["bin/hi.sh", "755", 18],
      ["data.bin", "644", 4],
      ["link", "link", 5],
    ]);
    const human = ok(await strata(dir, ["show", `${handle}@${outcomes[3]}`, "--files"]));
    expect(human).toMatch(/^755 +18 +[0-9a-f]{12} +bin\/hi\.sh$/m);
    expect(human).toMatch(/^link +5 +[0-9a-f]{12} +link$/m);
    const none = await strata(dir, ["show", `${handle}@${baseline - 1}`, "--files", "--json"]);
    expect(json(none)).toMatchObject({ recorded: false, dir: null, fileCount: 0, files: [] });
    const both = await strata(dir, ["show", handle, "--files", "--xml"]);
    expect(both.code).toBe(2);
  }, 180_000);

  it("CLI-35 log marks every event that changed files with its counts", async () => {
    const byId = new Map(events.map((e) => [e.id, e.fileChanges]));
    expect(byId.get(baseline)).toEqual({ added: 2, modified: 0, deleted: 0 });
    expect(outcomes.slice(0, 5).map((o) => byId.get(o))).toEqual([
      { added: 1, modified: 0, deleted: 0 },
      { added: 2, modified: 0, deleted: 0 },
      { added: 0, modified: 1, deleted: 0 },
      { added: 1, modified: 0, deleted: 1 },
      { added: 0, modified: 1, deleted: 0 },
    ]);
    // nothing else is marked
    expect(events.filter((e) => e.fileChanges !== null).map((e) => e.id)).toEqual([baseline, ...outcomes.slice(0, 5)]);
    const log = json(await strata(dir, ["log", handle, "--json"]));
    valid("log", log);
    const human = ok(await strata(dir, ["log", handle, "--limit", "0"])).split("\n");
    expect(human.find((l) => l.startsWith(String(outcomes[3]).padStart(6)))).toMatch(/call\.outcome +by e\d+ files:\+1 ~0 -1 /);
    expect(human.filter((l) => / files:\+/.test(l))).toHaveLength(6);
  }, 180_000);

  it("CLI-35 diff shows file changes next to the tree diff: unified diff for text, sizes and hashes for binary", async () => {
    const doc = json<{ filesRecorded: boolean; files: { path: string; change: string; binary: boolean; diff: string | null }[] }>(
      await strata(dir, ["diff", `${handle}@${outcomes[0]}`, `${handle}@${outcomes[4]}`, "--json"]),
    );
    valid("diff", doc);
    expect(doc.filesRecorded).toBe(true);
    expect(doc.files.map((f) => [f.path, f.change, f.binary])).toEqual([
      ["a.txt", "modified", false],
      ["bin/hi.sh", "added", false],
      ["data.bin", "added", true],
      ["link", "added", true],
      ["notes.md", "deleted", false],
    ]);
    expect(doc.files[0]?.diff).toBe("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+three\n");
    expect(doc.files[4]?.diff).toBe("--- a/notes.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-keep\n");
    const human = ok(await strata(dir, ["diff", `${handle}@${outcomes[0]}`, `${handle}@${outcomes[4]}`]));
    expect(human).toMatch(/^~ <file> #\d+ hash: /m); // the tree diff, then the files
    expect(human).toMatch(
      /^files: 5 changed\n~ a\.txt {2}\(modified, 4 → 6 bytes, mode 644\)\n--- a\/a\.txt\n\+\+\+ b\/a\.txt\n@@ -1 \+1 @@\n-one\n\+three\n/m,
    );
    expect(human).toMatch(/^\+ data\.bin {2}\(added, 4 bytes, mode 644\) {2}∅ → [0-9a-f]{12} \(binary or large: not shown as text\)$/m);
  }, 180_000);
  it("CLI-35 diff from an event before the baseline compares the files from the baseline (no tool had written before it)", async () => {
    const doc = json<{ filesRecorded: boolean; filesAt: { from: number; to: number } | null; files: { path: string; change: string }[] }>(
      await strata(dir, ["diff", `${handle}@${baseline - 1}`, `${handle}@${outcomes[0]}`, "--json"]),
    );
    valid("diff", doc);
    expect(doc.filesRecorded).toBe(true);
    expect(doc.filesAt).toEqual({ from: baseline, to: outcomes[0] });
    // what the first call did, and only that: the baseline's own files are on both sides
    expect(doc.files.map((f) => f.change)).toEqual(["added"]);
    const r = await strata(dir, ["diff", `${handle}@${baseline - 1}`, `${handle}@${outcomes[0]}`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`files: event ${baseline - 1} records none yet; its files are the baseline's, event ${baseline}`);
    expect(r.stdout).toMatch(/^files: 1 changed$/m);
    // the other way round, the same change undone
    const back = json<{ filesAt: { from: number; to: number }; files: { change: string }[] }>(
      await strata(dir, ["diff", `${handle}@${outcomes[0]}`, `${handle}@${baseline - 1}`, "--json"]),
    );
    expect(back.filesAt).toEqual({ from: outcomes[0], to: baseline });
    expect(back.files.map((f) => f.change)).toEqual(["deleted"]);
    // two events before the baseline: the same files, no difference
    const early = json<{ filesRecorded: boolean; files: unknown[] }>(
      await strata(dir, ["diff", `${handle}@${baseline - 2}`, `${handle}@${baseline - 1}`, "--json"]),
    );
    expect(early).toMatchObject({ filesRecorded: true, files: [] });
  }, 180_000);
});

describe("CLI-36 bisect on files", () => {
  it("CLI-36 --until-file PATH finds the event the file appeared; PATH~REGEX the event its content matched", async () => {
    const find = async (...conditions: string[]) =>
      json<{ event: number; until: string[]; files: { path: string }[] }>(
        await strata(dir, ["bisect", handle, ...conditions.flatMap((c) => ["--until-file", c]), "--json"]),
      );
    const appeared = await find("data.bin");
    valid("bisect", appeared);
    expect(appeared.event).toBe(outcomes[3]);
    expect(appeared.until).toEqual(["data.bin exists"]);
    expect(appeared.files.map((f) => f.path)).toEqual(["data.bin", "notes.md"]);
    expect((await find("a.txt~^t")).event).toBe(outcomes[2]);
    expect((await find("a.txt~/THREE/i")).event).toBe(outcomes[4]);
    expect((await find("./bin/hi.sh", "a.txt~t")).event).toBe(outcomes[2]);
    const human = ok(await strata(dir, ["bisect", handle, "--until-file", "link"]));
    expect(human).toMatch(
      new RegExp(`^first event after which link exists: ${outcomes[1]} \\(call\\.outcome; \\d+ states materialized\\)\\n`),
    );
    for (const [bad, why] of [
      ["a.txt~(", /Invalid regular expression/],
      ["../x", /"\.\." segment/],
      ["/etc/passwd", /absolute/],
      ["a.txt~", /nothing after "~"/],
    ] as const) {
      const r = await strata(dir, ["bisect", handle, "--until-file", bad]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr, bad).toMatch(why);
    }
    const never = await strata(dir, ["bisect", handle, "--until-file", "a.txt~never"]);
    expect(never.code).toBe(1);
    expect(never.stderr).toMatch(/a\.txt matches \/never\/ does not hold at the head of main/);
  }, 180_000);
});

describe("CLI-31 a fork gets a working directory of its own", () => {
  it("CLI-31 fork checks out the fork point into <db dir>/workspaces/<handle>/<branch> or --workspace DIR, recorded on the branch", async () => {
    const doc = json<{ branch: string; head: number; dir: string; fileCount: number; filesFrom: number }>(
      await strata(dir, ["fork", `${handle}@${outcomes[2]}`, "--name", "side", "--json"]),
    );
    valid("fork", doc);
    expect(doc.dir).toBe(join(dir, ".strata", "workspaces", handle, "side"));
    expect(doc).toMatchObject({ fileCount: 5, filesFrom: outcomes[2] });
    expect(filesOf(doc.dir)).toEqual(STEPS[2]?.after);
    const log = json<{ events: { id: number; label: string; by: string }[] }>(
      await strata(dir, ["log", `${handle}@side`, "--limit", "1", "--json"]),
    );
    expect(log.events[0]).toMatchObject({ id: doc.head, label: "workspace.dir", by: "strata fork" });
    expect(json<{ dir: string }>(await strata(dir, ["show", `${handle}@side`, "--files", "--json"])).dir).toBe(doc.dir);
    // a fork point before the baseline gets the line's baseline, recorded as the branch's own
    const early = events.find((e) => e.label === "turn.user")?.id as number;
    const own = join(tempDir(), "mine");
    const first = ok(await strata(dir, ["fork", `${handle}@${early}`, "--name", "early", "--workspace", own]));
    expect(first).toMatch(
      new RegExp(
        `^forked ${handle}@early at event ${early} \\(from main\\)\\nworkspace ${own} {2}— its own: 2 files, the files of the baseline, event ${baseline} \\(no tool wrote before it\\)\\n`,
      ),
    );
    expect(filesOf(own)).toEqual(BASELINE);
    const head = json<{ events: { label: string }[] }>(await strata(dir, ["log", `${handle}@early`, "--limit", "1", "--json"]));
    expect(head.events[0]?.label).toBe("workspace.baseline");
    // two forks never share a directory; a --workspace with files is refused before anything is made
    const again = json<{ dir: string }>(await strata(dir, ["fork", `${handle}@${outcomes[2]}`, "--json"]));
    expect(again.dir).not.toBe(doc.dir);
    const taken = await strata(dir, ["fork", `${handle}@${outcomes[2]}`, "--name", "nope", "--workspace", doc.dir]);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/is not empty; give a new or empty directory/);
    expect(
      json<{ branches: { name: string }[] }>(await strata(dir, ["branches", handle, "--json"])).branches.map((b) => b.name),
    ).not.toContain("nope");
    const inside = await strata(dir, ["fork", `${handle}@${outcomes[2]}`, "--name", "nested", "--workspace", join(ws, "sub")]);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/is inside the source branch's directory/);
    // nor does a run continue one branch in another's directory
    const noop = script(dir, "noop", [{ text: "Nothing." }]);
    const shared = await strata(dir, ["run", "x", "--session", `${handle}@side`, "--model", noop, "--workspace", "ws"]);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain(`--workspace ${ws} is the working directory of branch main`);
  }, 180_000);
});

describe("CLI-33 rewind restores the files and never destroys work", () => {
  it("CLI-33 files changed outside the agent: refused with exit 3 and the paths; --force records them first, then restores", async () => {
    writeFileSync(join(ws, "a.txt"), "three\nmy edit\n");
    writeFileSync(join(ws, "new.txt"), "mine\n");
    const head = events.at(-1)?.id as number;
    const refused = await strata(dir, ["rewind", handle, "--to", String(outcomes[2])]);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(
      /cannot rewind main: 2 paths in .* changed outside the agent since event \d+, and restoring the files would overwrite them:\n {2}a\.txt\n {2}new\.txt\n/,
    );
    expect(refused.stderr).toMatch(/--force/);
    const asJson = json<{ error: { code: number; paths: string[] } }>(
      await strata(dir, ["rewind", handle, "--to", String(outcomes[2]), "--json"]),
    );
    valid("error", asJson);
    expect(asJson.error).toMatchObject({ code: 3, paths: ["a.txt", "new.txt"] });
    // nothing moved, nothing was written
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("three\nmy edit\n");
    expect(
      json<{ branches: { name: string; head: number }[] }>(await strata(dir, ["branches", handle, "--json"])).branches.find(
        (b) => b.name === "main",
      )?.head,
    ).toBe(head);

    const forced = json<{ head: number; to: number; outside: number; keptAs: string; files: { path: string; change: string }[] }>(
      await strata(dir, ["rewind", handle, "--to", String(outcomes[2]), "--force", "--json"]),
    );
    valid("rewind", forced);
    expect(forced.outside).toBeGreaterThan(head);
    expect(forced).toMatchObject({ head: outcomes[2], to: outcomes[2], keptAs: `rewound/main/${forced.outside}` });
    // the directory is the target's, byte for byte; the ignored build output is untouched
    expect(filesOf(ws, ["build"])).toEqual(STEPS[2]?.after);
    expect(readFileSync(join(ws, "build", "out.o"), "latin1")).toBe("\u0000ignored");
    // the outside change is its own event, and checkout of it brings it back (L5)
    const log = json<{ events: { id: number; label: string; fileChanges: unknown }[] }>(
      await strata(dir, ["log", `${handle}@rewound/main/${forced.outside}`, "--limit", "1", "--json"]),
    );
    expect(log.events[0]).toMatchObject({
      id: forced.outside,
      label: "workspace.outside",
      fileChanges: { added: 1, modified: 1, deleted: 0 },
    });
    const back = join(tempDir(), "back");
    ok(await strata(dir, ["checkout", `${handle}@${forced.outside}`, "--to", back]));
    expect(readFileSync(join(back, "a.txt"), "utf8")).toBe("three\nmy edit\n");
    expect(readFileSync(join(back, "new.txt"), "utf8")).toBe("mine\n");

    // the kept head records main's directory, which main owns: continued, it gets its own (CLI-31, CLI-34)
    const kept = `rewound/main/${forced.outside}`;
    const more = script(dir, "more", [
      ...turns().map(() => ({ text: "-" })),
      { text: "One more.", toolCalls: [{ name: "write_file", arguments: { path: "later.txt", content: "later\n" } }] },
      { text: "Done." },
    ]);
    const cont = await strata(dir, ["run", "one more file", "--session", `${handle}@${kept}`, "--model", more]);
    expect(cont.code, cont.stderr).toBe(0);
    const own = join(dir, ".strata", "workspaces", handle, ...kept.split("/"));
    expect(cont.stdout).toMatch(new RegExp(`^workspace \\.strata/workspaces/${handle}/${kept} {2}— the branch's own, new`, "m"));
    expect(cont.stderr).toContain(`${ws} is the working directory of branch main: ${kept} gets its own, ${own}`);
    expect(readFileSync(join(own, "later.txt"), "utf8")).toBe("later\n");
    expect(readFileSync(join(own, "a.txt"), "utf8")).toBe("three\nmy edit\n");
    expect(existsSync(join(ws, "later.txt"))).toBe(false);
    expect(json<{ dir: string }>(await strata(dir, ["show", `${handle}@${kept}`, "--files", "--json"])).dir).toBe(own);

    // with nothing changed outside, a rewind restores without asking: forward again to the kept head's files
    const human = ok(await strata(dir, ["rewind", handle, "--to", String(outcomes[0])]));
    expect(human).toMatch(/^files in ws:\n {2}revert +a\.txt\n {2}remove +bin\/hi\.sh\n {2}remove +link\n/m);
    expect(filesOf(ws, ["build"])).toEqual(STEPS[0]?.after);
  }, 180_000);

  it("CLI-33 a fork rewound to its fork point keeps its own directory: the branch records it again", async () => {
    const fork = json<{ dir: string }>(await strata(dir, ["fork", `${handle}@${outcomes[1]}`, "--name", "back", "--json"]));
    writeFileSync(join(fork.dir, "x.txt"), "x");
    const r = json<{ head: number; to: number; dir: string }>(
      await strata(dir, ["rewind", `${handle}@back`, "--to", String(outcomes[1]), "--json", "--force"]),
    );
    expect(r.to).toBe(outcomes[1]);
    expect(r.head).toBeGreaterThan(r.to);
    expect(r.dir).toBe(fork.dir);
    expect(json<{ dir: string }>(await strata(dir, ["show", `${handle}@back`, "--files", "--json"])).dir).toBe(fork.dir);
    expect(filesOf(fork.dir)).toEqual(STEPS[1]?.after);
    expect(filesOf(ws, ["build"])).toEqual(STEPS[0]?.after); // main's directory was not touched
    // a directory that is gone holds nothing to protect: a rewind checks it out whole
    rmSync(ws, { recursive: true });
    ok(await strata(dir, ["rewind", handle, "--to", "head"]));
    expect(filesOf(ws)).toEqual(STEPS[0]?.after);
  }, 180_000);
});
