/**
 * What each read and history command prints, with the real binary on a small recorded session:
 * where the database is (CLI-9), the tree and diff views (CLI-6/7), ls, log, show, diff, branches,
 * fork, rewind and bisect (CLI-13 … CLI-19, CLI-21), verify (CLI-24).
 */
import { copyFileSync, cpSync, existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, handleIn, json, type Result, ROOT, script, strata, tempDir } from "./cli-kit.ts";

const Database = createRequire(join(ROOT, "packages/store/package.json"))("better-sqlite3");

afterAll(cleanup);

/** A workspace, a script that plans with a todo, writes a file and submits, and one run of it. */
let dir = "";
let handle = "";
/** Event ids by label, in order. */
let events: { id: number; label: string }[] = [];
const first = (label: string): number => events.find((e) => e.label === label)?.id as number;

function ok(r: Result): string {
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  dir = tempDir();
  mkdirSync(join(dir, "ws"));
  const model = script(dir, "views", [
    { text: "Planning.", toolCalls: [{ name: "todo", arguments: { items: [{ text: "Write", status: "in_progress" }] } }] },
    { text: "Writing.", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "x" } }] },
    { text: "Done.", toolCalls: [{ name: "submit", arguments: { summary: "ok" } }] },
  ]);
  const run = await strata(dir, ["run", "make a file", "--model", model, "--workspace", "ws"]);
  handle = handleIn(ok(run));
  events = json<{ events: { id: number; label: string }[] }>(await strata(dir, ["log", handle, "--limit", "0", "--json"])).events;
}, 120_000);

describe("CLI-9 the database", () => {
  it("--db, else STRATA_DB, else ./.strata/strata.db, each relative to the current directory; only run creates one", async () => {
    // the default: the run above wrote ./.strata/strata.db
    expect(existsSync(join(dir, ".strata", "strata.db"))).toBe(true);
    const other = tempDir();
    cpSync(join(dir, ".strata", "strata.db"), join(other, "copy.db"));
    const viaEnv = await strata(other, ["ls", "-q"], { env: { STRATA_DB: "copy.db" } });
    expect(ok(viaEnv)).toMatch(new RegExp(`${handle}\\n$`));
    // --db wins over STRATA_DB
    const missing = await strata(other, ["--db", "nope.db", "ls"], { env: { STRATA_DB: "copy.db" } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no strata database at ${join(other, "nope.db")}`);
    // a read command never creates the file, nor ./.strata
    const none = await strata(other, ["ls"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no strata database at ${join(other, ".strata", "strata.db")}`);
    expect(existsSync(join(other, ".strata"))).toBe(false);
    expect(existsSync(join(other, "nope.db"))).toBe(false);
  });
});

describe("CLI-6/7 views", () => {
  it("CLI-6 --tree indents with ids, attributes (hashes shortened) and quoted text", async () => {
    const tree = ok(await strata(dir, ["show", handle, "--tree"])).split("\n");
    expect(tree[0]).toBe("session #1");
    expect(tree).toContain("├─ meta #2");
    expect(tree.some((l) => /^└─ body #3$/.test(l))).toBe(true);
    // a sha256 attribute is shown by its first 12 characters
    const template = tree.find((l) => l.includes("template #")) as string;
    expect(template).toMatch(/hash="[0-9a-f]{12}…" name="system"/);
    expect(template).not.toMatch(/[0-9a-f]{13}/);
    expect(tree.some((l) => /item #\d+ status="in_progress" {2}"Write"$/.test(l))).toBe(true);
    expect(tree.some((l) => /^ {3}├─ turn #\d+ role="user"$/.test(l))).toBe(true);
  });

  it("CLI-7 a diff lists added, removed, moved and changed elements with before and after", async () => {
    const start = first("call.start");
    const outcome = first("call.outcome");
    const out = ok(await strata(dir, ["diff", `${handle}@${start}`, `${handle}@${outcome}`])).split("\n");
    expect(out[0]).toBe(`${handle}: event ${start} (main) → event ${outcome} (main)`);
    expect(out.some((l) => /^\+ <result> #\d+ in <call> #\d+ {2}"todo list updated: 1 items/.test(l))).toBe(true);
    expect(out.some((l) => /^\+ <todo> #\d+ in <meta> #2$/.test(l))).toBe(true);
    expect(out.some((l) => /^~ <call> #\d+ status: "running" → "executed"$/.test(l))).toBe(true);
    expect(out.some((l) => /^ {2}ids minted up to \d+ \(was \d+\)$/.test(l))).toBe(true);
    // the other way round, the same changes are removals and the reverse change
    const back = ok(await strata(dir, ["diff", `${handle}@${outcome}`, `${handle}@${start}`])).split("\n");
    expect(back.some((l) => /^- <todo> #\d+ from <meta> #2$/.test(l))).toBe(true);
    expect(back.some((l) => /^~ <call> #\d+ status: "executed" → "running"$/.test(l))).toBe(true);
  });
});

describe("CLI-13 … CLI-17 reading", () => {
  it("CLI-13 ls lists sessions by last activity, most recent first, with handle, title, branches, events and status", async () => {
    const model = script(dir, "hello", [{ text: "Hello." }]);
    const second = handleIn(ok(await strata(dir, ["run", "say hello", "--model", model, "--workspace", "ws"])));
    const lines = ok(await strata(dir, ["ls"]))
      .trimEnd()
      .split("\n");
    expect(lines[0]).toMatch(/^SESSION +TITLE +BRANCHES +EVENTS +ACTIVE +STATUS$/);
    expect(lines[1]).toMatch(new RegExp(`^${second} +say hello +1 +\\d+ +.+ +end-turn$`));
    expect(lines[2]).toMatch(new RegExp(`^${handle} +make a file +1 +${events.length} +.+ +completed-by-tool$`));
  });

  it("CLI-14 log lists id, time, label, cause and a summary of the ops; --label GLOB and --limit N", async () => {
    const all = ok(await strata(dir, ["log", handle, "--limit", "0"]))
      .trimEnd()
      .split("\n");
    expect(all).toHaveLength(events.length);
    expect(all[0]).toMatch(/^ +\d+ \d{4}-\d\d-\d\d \d\d:\d\d:\d\d session\.start +session skeleton$/);
    expect(all.find((l) => l.includes("call.start"))).toMatch(/call\.start +by e\d+ #\d+ status="running", #\d+ attempt="1"$/);
    const outcomes = ok(await strata(dir, ["log", handle, "--label", "call.out*", "--limit", "2"]))
      .trimEnd()
      .split("\n");
    expect(outcomes[0]).toMatch(/^… 1 earlier events? \(--limit 0 shows all\)$/);
    expect(outcomes.slice(1).every((l) => /call\.outcome/.test(l))).toBe(true);
    expect(outcomes).toHaveLength(3);
  });

  it("CLI-37 log --limit N reads only the last N events: the same rows and count as the whole listing's tail", async () => {
    type Log = { eventCount: number; events: { id: number; label: string; summary: string; fileChanges: unknown }[] };
    const whole = json<Log>(await strata(dir, ["log", handle, "--limit", "0", "--json"]));
    for (const n of [1, 3, whole.events.length - 1, whole.events.length, whole.events.length + 5]) {
      const page = json<Log>(await strata(dir, ["log", handle, "--limit", String(n), "--json"]));
      expect(page.eventCount).toBe(whole.events.length);
      expect(page.events).toEqual(whole.events.slice(-n));
    }
    const text = ok(await strata(dir, ["log", handle, "--limit", "2"]))
      .trimEnd()
      .split("\n");
    expect(text[0]).toBe(`… ${whole.events.length - 2} earlier events (--limit 0 shows all)`);
    expect(text).toHaveLength(3);
  });

  it("CLI-15 show: --xml canonical, --json, --select CSS", async () => {
    const xml = ok(await strata(dir, ["show", handle, "--xml"]));
    expect(xml).toMatch(/^<\?strata hwm="\d+" fixed="1 2 3"\?><session _id="1"><meta _id="2">/);
    const doc = json<{ event: number; elements: { tag: string }[] }>(
      await strata(dir, ["show", `${handle}@${first("turn.user")}`, "--json"]),
    );
    expect(doc.event).toBe(first("turn.user"));
    expect(doc.elements[0]?.tag).toBe("session");
    expect(ok(await strata(dir, ["show", handle, "--select", "todo item"]))).toMatch(/^item #\d+ status="in_progress" {2}"Write"\n$/);
  });

  it("CLI-16 diff compares two branch heads; CLI-18 fork makes a branch and prints the lifecycle work; CLI-17 branches lists them", async () => {
    const start = first("call.start");
    const fork = ok(await strata(dir, ["fork", `${handle}@${start}`, "--name", "mid"]));
    expect(fork).toMatch(new RegExp(`^forked ${handle}@mid at event ${start} \\(from main\\)\\n`));
    expect(fork).toMatch(/lifecycle work.*\n {2}spawn +<call> #\d+ call:node=\d+/);
    const branches = ok(await strata(dir, ["branches", handle]))
      .trimEnd()
      .split("\n");
    expect(branches[0]).toMatch(/^BRANCH +HEAD +EVENTS +ORIGIN +CREATED$/);
    expect(branches[1]).toMatch(new RegExp(`^main +${events.at(-1)?.id} +${events.length} +- `));
    // the fork's head is its first event, which records its own working directory (CLI-31)
    expect(branches[2]).toMatch(new RegExp(`^└─ mid +\\d+ +\\d+ +fork at ${start} `));
    // a fork of the fork is drawn under it; -q gives the bare names
    const midHead = Number(/^└─ mid +(\d+)/.exec(branches[2] ?? "")?.[1]);
    ok(await strata(dir, ["fork", `${handle}@${midHead}`, "--name", "mid2"]));
    const tree = ok(await strata(dir, ["branches", handle]))
      .trimEnd()
      .split("\n");
    expect(tree.slice(1).map((l) => l.replace(/ {2,}\d.*$/, ""))).toEqual(["main", "└─ mid", "   └─ mid2"]);
    expect(
      ok(await strata(dir, ["branches", handle, "-q"]))
        .trimEnd()
        .split("\n"),
    ).toEqual(["main", "mid", "mid2"]);
    const diff = ok(await strata(dir, ["diff", `${handle}@mid`, `${handle}@main`]));
    expect(diff).toMatch(/^\+ <stop> #\d+ in <body> #3$/m);
    expect(diff).toMatch(/^~ <call> #\d+ status: "running" → "executed"$/m);
    // the fork point is marked in the log of the branch forked from
    expect(ok(await strata(dir, ["log", handle, "--limit", "0"]))).toMatch(new RegExp(` ${start} .*call\\.start.*\\n +⑂ fork → mid\\n`));
  });
});

describe("CLI-19 rewind", () => {
  it("moves the head back, keeps the old head as a branch, prints the lifecycle work, and log marks it", async () => {
    const copy = tempDir();
    cpSync(join(dir, ".strata"), join(copy, ".strata"), { recursive: true });
    const to = events.filter((e) => e.label === "call.start")[1]?.id as number;
    const old = events.at(-1)?.id as number;
    const out = ok(await strata(copy, ["rewind", handle, "--to", String(to)]));
    expect(out).toMatch(new RegExp(`^rewound ${handle}@main to event ${to} \\(old head ${old} kept as rewound/main/${old}\\)\\n`));
    expect(out).toMatch(/lifecycle work:\n {2}spawn +<call> #\d+/);
    const branches = ok(await strata(copy, ["branches", handle]));
    expect(branches).toMatch(new RegExp(`^main +${to} `, "m"));
    expect(branches).toMatch(new RegExp(`^└─ rewound/main/${old} +${old} +\\d+ +rewind at ${to} `, "m"));
    expect(ok(await strata(copy, ["log", handle, "--limit", "1"]))).toMatch(
      new RegExp(`↶ rewound here; old head kept as rewound/main/${old}`),
    );
    // nothing is lost: the old head still shows the finished run
    expect(ok(await strata(copy, ["show", `${handle}@rewound/main/${old}`, "--select", "stop"]))).toMatch(/completed-by-tool/);
  });
});

describe("CLI-21 bisect", () => {
  it("finds the first event after which a selector matches, in O(log n) materializations, and prints its diff", async () => {
    const r = json<{ event: number; label: string; probes: number; matches: number[] }>(
      await strata(dir, ["bisect", `${handle}@main`, "--until", "todo item", "--json"]),
    );
    expect(r).toMatchObject({ event: first("call.outcome"), label: "call.outcome" });
    expect(r.matches).toHaveLength(1);
    expect(r.probes).toBeLessThanOrEqual(Math.ceil(Math.log2(events.length)) + 2);
    const human = ok(await strata(dir, ["bisect", `${handle}@main`, "--until", "todo item"]));
    expect(human).toMatch(
      new RegExp(`^first event after which todo item matches: ${first("call.outcome")} \\(call\\.outcome; \\d+ states materialized\\)\\n`),
    );
    expect(human).toMatch(/^\+ <todo> #\d+ in <meta> #2$/m);
    const never = await strata(dir, ["bisect", `${handle}@main`, "--until", "nothing-like-this"]);
    expect(never.code).toBe(1);
  });
});

describe("CLI-24 verify", () => {
  it("exits 0 on a clean database and 1 on any finding, naming it", async () => {
    expect(ok(await strata(dir, ["verify"]))).toMatch(/^ok: \d+ sessions, \d+ events, \d+ snapshots, \d+ blobs checked\n$/);
    const copy = join(tempDir(), "damaged.db");
    copyFileSync(join(dir, ".strata", "strata.db"), copy);
    const db = new Database(copy);
    const hash = db.prepare("SELECT hash FROM blobs LIMIT 1").pluck().get() as Buffer;
    db.prepare("DELETE FROM blobs WHERE hash = ?").run(hash);
    db.close();
    const r = await strata(dir, ["--db", copy, "verify"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAILED: /);
    expect(r.stdout).toContain(`refers to blob ${hash.toString("hex")}`);
    const doc = json<{ ok: boolean; findings: { code: string }[] }>(await strata(dir, ["--db", copy, "verify", "--json"]));
    expect(doc.ok).toBe(false);
    expect(doc.findings.map((f) => f.code)).toContain("missing-blob");
  });
});
