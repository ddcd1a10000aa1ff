/**
 * Sessions that move between backends (issue 15, decision 0035): `strata export` from a SQLite
 * file, `strata --db postgres://… import`, `export` again from PostgreSQL and `import` into another
 * SQLite file give the same log — every event's payload and digest — and byte-identical heads
 * (the bundles' XML), through the real command and a real server; `ls`, `log`, `show`, `diff`, `branches`, `prompt` and `verify` read
 * the session on PostgreSQL as they read it on SQLite. `run` and `resume` drive sessions there
 * (decision 0038): a run killed with -9 mid-call is resumed by another process, which takes the
 * lease the dead one held; fork, rewind, checkout, bisect, `replay --verify`, `replay --rerun` and
 * `--override` run there too, and other tools' sessions import into it; `chat` (with `/undo`),
 * `rename`, `archive`, `rm` and `gc` work there as on SQLite.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { cleanup, demoDir, handleIn, json, ROOT, script, strata, strataKilled } from "./cli-kit.ts";

afterAll(cleanup);

const pg = inject("pgUrl");
const schema = `cli_${process.pid}_${Date.now().toString(36)}`;
const remote = `${pg}?schema=${schema}`;

interface BundleDoc {
  session: { id: string };
  branches: { name: string; head: number }[];
  events: { id: number; data: string; digest: string }[];
  heads: Record<string, string>;
}

/** A bundle's log as it would move: branch names, each head's XML, every event's payload and digest in order. */
const content = (b: BundleDoc) => ({
  branches: b.branches.map((x) => x.name).sort(),
  heads: b.heads,
  events: b.events.map((e) => [e.data, e.digest]),
});

describe("CLI-23 sessions move between SQLite and PostgreSQL with export and import", () => {
  it("SQLite → PostgreSQL → SQLite: the same events and digests, byte-identical heads", async () => {
    const dir = demoDir();
    const quick = ["--max-steps", "3", "--model", `scripted:${join(ROOT, "fixtures/models/alt.json")}`, "--workspace", "ws"];
    const run = json<{ session: string }>(await strata(dir, ["run", "a task to move", ...quick, "--json"]));
    const log = json<{ events: { id: number }[] }>(await strata(dir, ["log", run.session, "--limit", "0", "--json"]));
    const fork = await strata(dir, ["fork", `${run.session}@${log.events[1]?.id}`, "--name", "side", "--json"]);
    expect(fork.code, fork.stderr).toBe(0);

    const a = await strata(dir, ["export", run.session]);
    expect(a.code, a.stderr).toBe(0);
    writeFileSync(join(dir, "a.json"), a.stdout);
    const toPg = await strata(dir, ["--db", remote, "import", "a.json", "--json"]);
    expect(toPg.code, toPg.stderr).toBe(0);
    const moved = json<{ session: string; digests: boolean; branchCount: number }>(toPg);
    expect(moved).toMatchObject({ digests: true, branchCount: 2 });

    const b = await strata(dir, ["--db", remote, "export", moved.session]);
    expect(b.code, b.stderr).toBe(0);
    writeFileSync(join(dir, "b.json"), b.stdout);
    const back = await strata(dir, ["--db", join(dir, "other.db"), "import", "b.json", "--json"]);
    expect(back.code, back.stderr).toBe(0);
    const again = json<{ session: string }>(back);
    const c = await strata(dir, ["--db", join(dir, "other.db"), "export", again.session]);
    expect(c.code, c.stderr).toBe(0);

    const [da, db, dc] = [a, b, c].map((r) => JSON.parse(r.stdout) as BundleDoc);
    expect(content(db as BundleDoc)).toEqual(content(da as BundleDoc));
    expect(content(dc as BundleDoc)).toEqual(content(da as BundleDoc));
    expect(Object.keys((da as BundleDoc).heads).sort()).toEqual(["main", "side"]);
    // The session shows the same from the copy as from the original.
    const shown = (db: string, s: string) => strata(dir, ["--db", db, "show", s, "--json"]);
    const original = await shown(join(dir, ".strata", "strata.db"), run.session);
    const copy = await shown(join(dir, "other.db"), again.session);
    expect(json<{ xml?: string }>(copy).xml ?? copy.stdout.replace(again.session, "")).toEqual(
      json<{ xml?: string }>(original).xml ?? original.stdout.replace(run.session, ""),
    );

    // Read on PostgreSQL itself: ls, branches and show answer what they answer on the SQLite original.
    const onPg = (args: string[]) => strata(dir, ["--db", remote, ...args]);
    const listed = json<{ sessions: { id: string; eventCount: number; status: string; branches: { name: string }[] }[] }>(
      await onPg(["ls", "--json"]),
    );
    const local = json<{ sessions: { id: string; eventCount: number; status: string; branches: { name: string }[] }[] }>(
      await strata(dir, ["ls", "--json"]),
    );
    const row = listed.sessions.find((x) => x.id === moved.session);
    const want = local.sessions.find((x) => x.id === run.session);
    expect(row).toMatchObject({ eventCount: want?.eventCount, status: want?.status });
    expect(row?.branches.map((x) => x.name).sort()).toEqual(["main", "side"]);
    const br = await onPg(["branches", moved.session, "--json"]);
    expect(br.code, br.stderr).toBe(0);
    expect(
      json<{ branches: { name: string; eventCount: number }[] }>(br)
        .branches.map((x) => [x.name, x.eventCount])
        .sort(),
    ).toEqual(
      json<{ branches: { name: string; eventCount: number }[] }>(await strata(dir, ["branches", run.session, "--json"]))
        .branches.map((x) => [x.name, x.eventCount])
        .sort(),
    );
    // log: the page of events with their file marks (the workspace the run recorded), and a label filter.
    for (const view of [
      ["--limit", "0", "--json"],
      ["--limit", "5"],
      ["--label", "call.*", "--json"],
    ]) {
      const there = await onPg(["log", `${moved.session}@side`, ...view]);
      const here = await strata(dir, ["log", `${run.session}@side`, ...view]);
      expect(there.code, there.stderr).toBe(0);
      expect(there.stdout.replaceAll(moved.session, "S")).toBe(here.stdout.replaceAll(run.session, "S"));
    }
    const marked = json<{ events: { fileChanges: { added: number } | null }[] }>(
      await onPg(["log", moved.session, "--limit", "0", "--json"]),
    );
    expect(marked.events.some((e) => (e.fileChanges?.added ?? 0) > 0)).toBe(true);
    for (const view of [["--xml"], ["--select", "turn", "--json"], ["--at", "head~2", "--xml"]]) {
      const there = await onPg(["show", `${moved.session}@side`, ...view]);
      const here = await strata(dir, ["show", `${run.session}@side`, ...view]);
      expect(there.code, there.stderr).toBe(0);
      expect(there.stdout.replaceAll(moved.session, "S")).toBe(here.stdout.replaceAll(run.session, "S"));
    }

    // prompt on PostgreSQL: the exact request at an event, and the difference between two, as on SQLite.
    for (const view of [["--json"], ["--at", "head~3"], ["--at", "head~5", "--diff", "head", "--json"]]) {
      const there = await onPg(["prompt", moved.session, ...view]);
      const here = await strata(dir, ["prompt", run.session, ...view]);
      expect(there.code, there.stderr).toBe(0);
      expect(there.stdout.replaceAll(moved.session, "S")).toBe(here.stdout.replaceAll(run.session, "S"));
    }

    // diff on PostgreSQL: the trees and the files between two events, and between the branches, as on SQLite.
    for (const pair of [
      [`${moved.session}~6`, moved.session, `${run.session}~6`, run.session],
      [`${moved.session}@side`, moved.session, `${run.session}@side`, run.session],
    ] as const) {
      for (const json_ of [[], ["--json"]]) {
        const there = await onPg(["diff", pair[0], pair[1], ...json_]);
        const here = await strata(dir, ["diff", pair[2], pair[3], ...json_]);
        expect(there.code, there.stderr).toBe(0);
        // (ids and handles differ: the copy is a session of its own)
        const same = (out: string, id: string) => {
          const [first = "", ...rest] = out.replaceAll(id, "S").split("\n");
          return [first.replace(id.slice(-6), "H"), ...rest].join("\n"); // the header names the session by its handle
        };
        expect(same(there.stdout, moved.session)).toBe(same(here.stdout, run.session));
      }
    }
    const filesSeen = await onPg(["diff", `${moved.session}~6`, moved.session]);
    expect(filesSeen.stdout + filesSeen.stderr).toMatch(/files: (\d+ changed|no difference)/);

    // verify on PostgreSQL: the store's checks and the engine's, clean after the move.
    const checked = await onPg(["verify", "--json"]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(json<{ ok: boolean; findings: unknown[]; eventCount: number }>(checked)).toMatchObject({ ok: true, findings: [] });
    expect(json<{ eventCount: number }>(checked).eventCount).toBeGreaterThan(0);
    expect((await onPg(["verify", moved.session])).code).toBe(0);

    // @last and an id prefix find the session in PostgreSQL too.
    const last = await strata(dir, ["--db", remote, "export", "@last"]);
    expect(JSON.parse(last.stdout).session.id).toBe(moved.session);
    const prefix = await strata(dir, ["--db", remote, "export", moved.session.slice(0, 20)]);
    expect(prefix.code, prefix.stderr).toBe(0);
  });

  it("CLI-10 CLI-11 CLI-12 CLI-18 CLI-19 CLI-32 run on PostgreSQL, killed with -9 mid-call; resume from another process takes the lease and finishes; fork, checkout and rewind there", async () => {
    const dir = demoDir();
    const db = `${pg}?schema=${schema}_run`;
    const killed = await strataKilled(dir, ["--db", db, "run", "--workspace", "ws"], /→ run /);
    const session = handleIn(killed.stdout);
    expect(session).toMatch(/^[0-9A-Z]{6}$/);
    const ls = json<{ sessions: { handle: string; status: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"]));
    expect(ls.sessions[0]).toMatchObject({ handle: session, status: "open" });
    const resumed = await strata(dir, ["--db", db, "resume", session]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/run \(#\d+\) was running: not safe to repeat, it will be marked interrupted/);
    expect(resumed.stdout).toMatch(/■ completed-by-tool/);
    expect(readFileSync(join(dir, "ws", "SUMMARY.md"), "utf8")).toContain("## Open questions");
    const log = json<{ events: { label: string }[] }>(await strata(dir, ["--db", db, "log", session, "--limit", "0", "--json"]));
    const labels = log.events.map((e) => e.label);
    expect(labels).toContain("call.interrupted");
    expect(labels).toContain("workspace.baseline");
    expect(labels.at(-1)).toBe("call.outcome");
    const verify = await strata(dir, ["--db", db, "verify", "--json"]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    // Finished: a resume says so; a new task on the session runs on PostgreSQL too.
    const again = await strata(dir, ["--db", db, "resume", session, "--json"]);
    expect(json(again)).toMatchObject({ resumed: false, stop: "completed-by-tool" });
    const done = script(
      dir,
      "done",
      Array.from({ length: 12 }, () => ({ text: "Nothing more to do." })),
    );
    const more = await strata(dir, ["--db", db, "run", "once more", "--session", session, "--model", done, "--json"]);
    expect(more.code, more.stderr).toBe(0);
    expect(json(more)).toMatchObject({ stop: "end-turn", resumed: false, steps: 1 });

    // CLI-18 CLI-31: a fork on PostgreSQL — one branch row — with a working directory of its own,
    // checked out from the fork point; then the alt script runs there.
    const events = json<{ events: { id: number; label: string }[] }>(
      await strata(dir, ["--db", db, "log", session, "--limit", "0", "--json"]),
    ).events;
    const written = events.filter((e) => e.label === "call.outcome").at(-1)?.id as number;
    const userTurn = events.find((e) => e.label === "turn.user")?.id as number;
    const fork = await strata(dir, ["--db", db, "fork", `${session}@${userTurn}`, "--name", "alt", "--workspace", "alt-ws", "--json"]);
    expect(fork.code, fork.stderr).toBe(0);
    expect(json(fork)).toMatchObject({ branch: "alt", forkedAt: userTurn, sourceBranch: "main", dir: join(dir, "alt-ws") });
    expect(readFileSync(join(dir, "alt-ws", "notes", "2026-11-02-planning.md"), "utf8")).toBe(
      readFileSync(join(ROOT, "fixtures", "demo-workspace", "notes", "2026-11-02-planning.md"), "utf8"),
    );
    const alt = await strata(dir, [
      "--db",
      db,
      "resume",
      `${session}@alt`,
      "--model",
      `scripted:${join(ROOT, "fixtures/models/alt.json")}`,
      "--json",
    ]);
    expect(alt.code, alt.stderr).toBe(0);
    expect(json(alt)).toMatchObject({ branch: "alt", stop: "completed-by-tool" });
    expect(readFileSync(join(dir, "alt-ws", "SUMMARY.md"), "utf8")).toContain("Notes, in short");
    expect(readFileSync(join(dir, "ws", "SUMMARY.md"), "utf8")).toContain("## Open questions");
    // CLI-21 CLI-36: bisect on PostgreSQL finds the event that wrote the alt branch's summary.
    const found = await strata(dir, ["--db", db, "bisect", `${session}@alt`, "--until-file", "SUMMARY.md~Notes, in short", "--json"]);
    expect(found.code, found.stderr).toBe(0);
    const hit = json<{ event: number; label: string; files: { path: string }[] }>(found);
    expect(hit.label).toBe("call.outcome");
    expect(hit.files.map((f) => f.path)).toEqual(["SUMMARY.md"]);
    // CLI-22 WS-29: a deterministic re-run on PostgreSQL, in a directory of its own given the recorded
    // files, reproduces the alt branch (replies, calls, observations and file effects); a
    // counterfactual diverges where its override says, and is recorded on its branch.
    const rerunOf = await strata(dir, ["--db", db, "replay", `${session}@alt`, "--rerun", "--json"]);
    expect(rerunOf.code, rerunOf.stdout + rerunOf.stderr).toBe(0);
    expect(json(rerunOf)).toMatchObject({
      sourceBranch: "alt",
      branch: "rerun/alt",
      rerunSafe: 3,
      recordedNever: 1,
      divergence: null,
      filesCompared: true,
    });
    const rerunDir = json<{ dir: string }>(rerunOf).dir;
    expect(readFileSync(join(rerunDir, "SUMMARY.md"), "utf8")).toBe(readFileSync(join(dir, "alt-ws", "SUMMARY.md"), "utf8"));
    writeFileSync(join(dir, "notes.txt"), "nothing was decided");
    const whatIf = await strata(dir, ["--db", db, "replay", `${session}@alt`, "--override", "tool:call_0_0=notes.txt"]);
    expect(whatIf.code, whatIf.stdout + whatIf.stderr).toBe(0);
    expect(whatIf.stdout).toMatch(/diverged: call call_0_0 \(read_file\) observed something different/);
    const overridden = await strata(dir, ["--db", db, "show", `${session}@whatif/alt`, "--select", "meta > rerun > override", "--json"]);
    expect(overridden.stdout).toContain("tool:call_0_0");
    // CLI-22: the replay proof on PostgreSQL — from genesis, every snapshot and the reopened head, every request re-rendered.
    const proof = await strata(dir, ["--db", db, "replay", `${session}@alt`, "--verify", "--json"]);
    expect(proof.code, proof.stdout + proof.stderr).toBe(0);
    const p = json<{ ok: boolean; eventCount: number; requests: { ok: boolean; turnCount: number; verifiedCount: number } }>(proof);
    expect(p.ok).toBe(true);
    expect(p.requests.turnCount).toBeGreaterThan(0);
    expect(p.requests.verifiedCount).toBe(p.requests.turnCount);
    // CLI-32: the files at any event, checked out from PostgreSQL.
    const out = await strata(dir, ["--db", db, "checkout", `${session}@${written}`, "--to", "at-written", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(readFileSync(join(dir, "at-written", "SUMMARY.md"), "utf8")).toBe(readFileSync(join(dir, "ws", "SUMMARY.md"), "utf8"));
    // CLI-19 CLI-33: a rewind of main to before SUMMARY.md was written restores its directory; the old head is kept.
    const rewound = await strata(dir, ["--db", db, "rewind", session, "--to", String(userTurn), "--json"]);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(json(rewound)).toMatchObject({ to: userTurn, head: userTurn, dir: join(dir, "ws") });
    expect(json<{ keptAs: string | null }>(rewound).keptAs).toMatch(/^rewound\//);
    expect(existsSync(join(dir, "ws", "SUMMARY.md"))).toBe(false);
    const branches = json<{ branches: { name: string }[] }>(await strata(dir, ["--db", db, "branches", session, "--json"]));
    expect(branches.branches.map((b) => b.name).sort()).toEqual(
      ["alt", "main", "rerun/alt", "whatif/alt", json<{ keptAs: string }>(rewound).keptAs].sort(),
    );
    const verified = await strata(dir, ["--db", db, "verify", "--json"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 120_000);

  it("CLI-38 SE-4: search on PostgreSQL finds what it finds on SQLite: the same hits, labels and snippets, newest first", async () => {
    // The same events on both (a live run streams on SQLite and commits whole texts on PostgreSQL):
    // the demo run on SQLite, moved into PostgreSQL as a bundle, whose import indexes every event.
    const dir = demoDir();
    const db = `${pg}?schema=${schema}_search`;
    const local = join(dir, "local.db");
    const r = await strata(dir, ["--db", local, "run", "-q"]);
    expect(r.code, r.stderr).toBe(0);
    const bundle = await strata(dir, ["--db", local, "export", "@last"]);
    writeFileSync(join(dir, "demo.json"), bundle.stdout);
    const moved = await strata(dir, ["--db", db, "import", "demo.json"]);
    expect(moved.code, moved.stderr).toBe(0);
    for (const q of ["read_file", "planning notes", '"open questions"', "notes/2026-11-02-planning.md", "SUMMARY.md decisions"]) {
      const hits = async (where: string) => {
        const r = await strata(dir, ["--db", where, "search", q, "--json", "--limit", "1000"]);
        expect(r.code, r.stderr).toBe(0);
        return json<{ hits: { label: string; snippet: string; marks: number[][] }[] }>(r).hits.map((h) => [h.label, h.snippet, h.marks]);
      };
      const onPg = await hits(db);
      expect(onPg.length, q).toBeGreaterThan(0);
      expect(onPg, q).toEqual(await hits(local));
    }
    const paged = json<{ hits: unknown[]; next: number | null }>(
      await strata(dir, ["--db", db, "search", "the", "--limit", "2", "--json"]),
    );
    expect(paged.hits).toHaveLength(2);
    expect(paged.next).not.toBeNull();
  }, 120_000);

  it("a bad bundle is refused before anything is written; other tools' sessions import into PostgreSQL, and re-run there from the recording", async () => {
    const dir = demoDir();
    writeFileSync(join(dir, "bad.json"), '{"format":"strata-bundle@2"}');
    const bad = await strata(dir, ["--db", `${pg}?schema=${schema}_bad`, "import", "bad.json"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/is not a valid strata bundle/);
    // IM-9 IM-13: other tools' sessions import into PostgreSQL too (written as on SQLite, moved as a bundle); a second import skips.
    const pi = join(ROOT, "packages", "import", "test", "fixtures", "foreign", "pi", "session.jsonl");
    const imported = await strata(dir, ["--db", `${pg}?schema=${schema}_pi`, "import", "--from", "pi", pi, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const doc = json<{ sessionCount: number; sessions: { session: string; handle: string; branchCount: number }[] }>(imported);
    expect(doc).toMatchObject({ sessionCount: 1, sessions: [{ branchCount: 2 }] });
    const again = json<{ sessionCount: number; skipped: { session: string }[] }>(
      await strata(dir, ["--db", `${pg}?schema=${schema}_pi`, "import", "--from", "pi", pi, "--json"]),
    );
    expect(again).toMatchObject({ sessionCount: 0, skipped: [{ session: doc.sessions[0]?.session }] });
    const piBranches = await strata(dir, ["--db", `${pg}?schema=${schema}_pi`, "branches", doc.sessions[0]?.handle as string, "-q"]);
    expect(piBranches.stdout.split("\n").filter(Boolean).sort()).toEqual(["fork-1", "main"]);
    const piPrompt = await strata(dir, ["--db", `${pg}?schema=${schema}_pi`, "prompt", doc.sessions[0]?.handle as string]);
    expect(piPrompt.stdout).toContain("Summary of the conversation so far");
    // IM-23: a re-run of an imported session answers every call from the recording, on PostgreSQL as on SQLite.
    const piRerun = await strata(dir, [
      "--db",
      `${pg}?schema=${schema}_pi`,
      "replay",
      doc.sessions[0]?.handle as string,
      "--rerun",
      "--json",
    ]);
    expect(piRerun.code, piRerun.stdout + piRerun.stderr).toBe(0);
    expect(json(piRerun)).toMatchObject({ rerunSafe: 0, divergence: null });
    const missing = await strata(dir, ["--db", remote, "export", "ZZZZZZZZ"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no session of .* has an id starting with "ZZZZZZZZ"/);
  });

  it("CLI-42 CLI-46 … CLI-49 chat, rename, archive, rm and gc on PostgreSQL", async () => {
    const dir = demoDir();
    const db = `${pg}?schema=${schema}_manage`;
    const model = script(dir, "chat", [
      { text: "Hello!" },
      { text: "Writing it.", toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hello\n" } }] },
      { text: "Done." },
      { text: "Again." },
    ]);
    const chat = await strata(dir, ["--db", db, "chat", "--model", model, "--workspace", join(dir, "ws")], {
      input: "hi\nplease write hello.txt\n/files\n/undo\n/branches\n",
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/✓ write_file executed/);
    expect(chat.stdout).toMatch(/hello\.txt/);
    expect(chat.stdout).toMatch(/remove +hello\.txt/); // /undo took the file back
    expect(existsSync(join(dir, "ws", "hello.txt"))).toBe(false);
    const again = await strata(dir, ["--db", db, "chat", "-c"], { input: "once more\n" });
    expect(again.code, again.stderr).toBe(0);
    const ls = json<{ sessions: { id: string; handle: string; title: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"]));
    expect(ls.sessions).toHaveLength(1);
    const [s] = ls.sessions as [{ id: string; handle: string; title: string }];
    expect(s.title).toBe("hi");
    const log = json<{ events: { label: string }[] }>(await strata(dir, ["--db", db, "log", s.handle, "--limit", "0", "--json"]));
    expect(log.events.filter((e) => e.label === "turn.user")).toHaveLength(2); // hi, once more (the undone one is on rewound/main)
    // rename, archive (hidden, then back), a second session removed whole, gc keeps what the first reaches
    expect(json(await strata(dir, ["--db", db, "rename", s.handle, "greeting", "--json"]))).toMatchObject({
      title: "greeting",
      previousTitle: "hi",
    });
    expect((await strata(dir, ["--db", db, "archive", s.handle])).code).toBe(0);
    expect(json<{ sessions: unknown[] }>(await strata(dir, ["--db", db, "ls", "--json"])).sessions).toHaveLength(0);
    expect((await strata(dir, ["--db", db, "archive", s.handle, "--undo"])).code).toBe(0);
    mkdirSync(join(dir, "ws2"));
    const other = await strata(dir, ["--db", db, "chat", "--model", model, "--workspace", join(dir, "ws2")], {
      input: "hi\nplease write hello.txt\n",
    });
    expect(other.code, other.stderr).toBe(0);
    const both = json<{ sessions: { id: string; handle: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"])).sessions;
    expect(both).toHaveLength(2);
    const gone = both.find((x) => x.id !== s.id) as { id: string; handle: string };
    const refused = await strata(dir, ["--db", db, "rm", gone.handle]);
    expect(refused.code).toBe(2);
    const rm = json<{ sessions: { id: string }[] }>(await strata(dir, ["--db", db, "rm", gone.handle, "--yes", "--json"]));
    expect(rm.sessions.map((x) => x.id)).toEqual([gone.id]);
    const gc = json<{ blobCount: number; keptBlobCount: number; fileByteCount: number | null }>(
      await strata(dir, ["--db", db, "gc", "--json"]),
    );
    expect(gc.keptBlobCount).toBeGreaterThan(0);
    expect(gc.fileByteCount).toBeNull();
    expect((await strata(dir, ["--db", db, "verify"])).code).toBe(0);
    const verify = await strata(dir, ["--db", db, "replay", s.handle, "--verify"]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(json<{ sessions: { id: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"])).sessions.map((x) => x.id)).toEqual([s.id]);
  }, 180_000);
});
