/**
 * Managing sessions (CLI-46 … CLI-49) through the real binary in fresh processes: `rename`, `rm`
 * (confirmation on a terminal, --yes, refusal without one, refusal while driven, dry runs),
 * `archive` (hidden from ls, --limit and @last; --undo) and `gc` (what rm left is reclaimed,
 * what remains still reads, verifies and replays), every --json document in the vocabulary.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { hostname } from "node:os";
import { join } from "node:path";
import { Session } from "@strata/engine";
import { openStore, type SessionId } from "@strata/store";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { BIN, cleanEnv, cleanup, demoDir, json, type Result, strata } from "./cli-kit.ts";
import { checkVocabulary } from "./schemas.ts";

afterAll(cleanup);

/** A session with a blob of its own (a file's bytes named by an attribute) and a snapshot. */
function made(db: string, title: string): string {
  const store = openStore(db, { create: true });
  const s = Session.create(store, { title });
  const hash = store.putBlob(`the contents of ${title}, ${"x".repeat(4000)}`);
  s.commit((d) => {
    const meta = d.selectOne(":root > meta")?.id;
    if (meta === undefined) throw new Error("no meta");
    d.appendChild(meta, { tag: "file", attrs: { path: `${title}.txt`, hash } });
  });
  s.snapshot();
  store.close();
  return s.id;
}

const doc = (r: Result): Record<string, unknown> => {
  const d = json(r);
  expect(checkVocabulary(d)).toEqual([]);
  return d;
};

/** `strata ARGS` on a terminal (util-linux `script` gives it a pty), answering `answer` to its question. */
function onTerminal(cwd: string, args: readonly string[], answer: string): Promise<Result> {
  return new Promise((resolve) => {
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const p = spawn("script", ["-qec", cmd, "/dev/null"], { cwd, env: { ...cleanEnv(), NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    p.stdout.on("data", (c) => {
      stdout += c;
      // Answer once the question is on the screen.
      if (/\[y\/N\]/.test(stdout) && !p.stdin.writableEnded) p.stdin.end(answer);
    });
    p.on("close", (code, signal) => resolve({ code, signal, stdout, stderr: "" }));
  });
}

/** A live process holding the lease of `session@main`, as `strata run` would (its owner text). */
function drive(db: string, session: string): { stop: () => void } {
  const sleeper: ChildProcess = spawn("sleep", ["60"], { stdio: "ignore" });
  const store = openStore(db);
  const owner = JSON.stringify({ pid: sleeper.pid, host: hostname(), boot: null, start: null, command: "run", since: Date.now() });
  const got = store.acquireLease(session as SessionId, "main", owner);
  store.close();
  if (!got.ok) throw new Error("the lease is held");
  return {
    stop: () => {
      sleeper.kill("SIGKILL");
    },
  };
}

describe("CLI-46 … CLI-49 managing sessions", () => {
  let dir = "";
  let db = "";
  let a = "";
  let b = "";
  let c = "";
  beforeEach(() => {
    dir = demoDir();
    db = join(dir, "s.db");
    a = made(db, "alpha");
    b = made(db, "beta");
    c = made(db, "gamma");
  });
  const run = (args: string[], input?: string) => strata(dir, ["--db", db, ...args], { input });
  const listed = async (...args: string[]) => (doc(await run(["ls", "--json", ...args])).sessions as { id: string }[]).map((s) => s.id);

  it("CLI-46 rename: a new title (an empty one clears it); --json; whole sessions only", async () => {
    const r = await run(["rename", a.slice(-6), "first task", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(doc(r)).toEqual({ session: a, handle: expect.any(String), title: "first task", previousTitle: "alpha" });
    expect((await run(["ls"])).stdout).toMatch(/first task/);
    expect((await run(["rename", a, ""])).code).toBe(0);
    expect((doc(await run(["ls", "--json"])).sessions as { id: string; title: unknown }[]).find((s) => s.id === a)?.title).toBeNull();
    const bad = await run(["rename", `${a}@main`, "x"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/whole sessions/)]);
    expect((await run(["rename", "ZZZZZZZZ", "x"])).code).toBe(1);
    expect((await run(["rename", "--help"])).code).toBe(0);
  });

  it("CLI-48 archive: hidden from ls, ls --limit and @last; ls --archived / --all list it; --undo brings it back; nothing of it changes", async () => {
    const before = (await run(["log", a, "--json"])).stdout;
    const r = await run(["archive", c, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(doc(r).sessions).toEqual([{ id: c, handle: expect.any(String), title: "gamma", archived: expect.any(Number), changed: true }]);
    expect(await listed()).not.toContain(c);
    expect(await listed("--limit", "1")).toEqual([b]);
    expect(await listed("--archived")).toEqual([c]);
    expect((await listed("--all")).sort()).toEqual([a, b, c].sort());
    expect(doc(await run(["log", "@last", "--json"])).session, "@last skips the archived session").toBe(b);
    expect((await run(["log", c])).code, "it is still taken by id").toBe(0);
    expect((await run(["archive", c])).stdout).toMatch(/already archived/);
    await run(["archive", a, b]);
    const none = await run(["log", "@last"]);
    expect([none.code, none.stderr]).toEqual([1, expect.stringMatching(/every session .* is archived/)]);
    expect((await run(["archive", "--undo", a, "--json"])).code).toBe(0);
    expect(await listed()).toEqual([a]);
    expect((await run(["log", a, "--json"])).stdout).toBe(before);
    expect((await run(["ls", "--all", "--archived"])).code).toBe(2);
  });

  it("CLI-47 rm: refused without a terminal or --yes (exit 2, nothing removed); --dry-run; --yes removes whole sessions; the rest verifies", async () => {
    const refused = await run(["rm", a]);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringMatching(/not a terminal; give --yes/)]);
    expect(await listed()).toContain(a);
    const dry = doc(await run(["rm", a, b, "--dry-run", "--json"]));
    expect(dry).toEqual({
      dryRun: true,
      sessions: [a, b].map((id, k) => ({
        id,
        handle: expect.any(String),
        title: ["alpha", "beta"][k],
        branchCount: 1,
        eventCount: 2,
        snapshotCount: 1,
      })),
    });
    expect((await listed()).length).toBe(3);
    const r = await run(["rm", a, b, "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(doc(r)).toEqual({ ...dry, dryRun: false });
    expect(await listed()).toEqual([c]);
    expect((await run(["verify"])).code).toBe(0);
    expect((await run(["rm", a, "--yes"])).code, "gone").toBe(1);
    // An unknown reference among several: nothing is removed.
    expect((await run(["rm", c, "NOSUCH", "--yes"])).code).toBe(1);
    expect(await listed()).toEqual([c]);
    expect((await run(["rm", `${c}@main`, "--yes"])).code).toBe(2);
  });

  it("CLI-47 rm on a terminal shows what goes and asks: n keeps it (exit 1), y removes it", async () => {
    const no = await onTerminal(dir, ["--db", db, "rm", a], "n\n");
    expect(no.stdout).toMatch(/alpha.*1 branch \(main\), 2 events/);
    expect(no.stdout).toMatch(/Remove this session for good/);
    expect(no.code).toBe(1);
    expect(await listed()).toContain(a);
    const yes = await onTerminal(dir, ["--db", db, "rm", a], "y\n");
    expect(yes.code, yes.stdout).toBe(0);
    expect(yes.stdout).toMatch(/removed .*alpha/);
    expect(await listed()).not.toContain(a);
  });

  it("CLI-47 CLI-49 rm and gc are refused while another process drives a branch (exit 3), changing nothing", async () => {
    const driver = drive(db, a);
    try {
      const r = await run(["rm", b, a, "--yes"]);
      expect([r.code, r.stdout]).toEqual([3, ""]);
      expect(r.stderr).toMatch(/is being driven by `strata run` \(pid \d+/);
      expect((await listed()).length, "not even the session before it").toBe(3);
      const g = await run(["gc"]);
      expect([g.code, g.stderr]).toEqual([3, expect.stringMatching(/strata gc: .* is being driven/)]);
      expect((await run(["gc", "--dry-run"])).code, "a dry run only reads").toBe(0);
    } finally {
      driver.stop();
    }
    // Once the driver is gone its lease is stale: the removal goes ahead.
    await new Promise((r) => setTimeout(r, 200));
    expect((await run(["rm", a, "--yes"])).code).toBe(0);
  });

  it("CLI-49 gc reclaims what rm left (counts and bytes, --dry-run first), and what remains reads, verifies and replays", async () => {
    const demo = await strata(dir, ["--db", db, "run", "-q"]);
    expect(demo.code, demo.stderr).toBe(0);
    const none = doc(await run(["gc", "--json"]));
    expect(none).toMatchObject({ dryRun: false, blobCount: 0, byteCount: 0 });
    await run(["rm", a, b, "--yes"]);
    const dry = doc(await run(["gc", "--dry-run", "--json"]));
    expect(dry).toMatchObject({ dryRun: true, vacuumed: false, fileByteCount: null });
    expect(dry.blobCount).toBe(6); // per session: its file, its snapshot page and directory chunk
    expect(dry.byteCount).toBeGreaterThan(8000);
    const r = await run(["gc"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^reclaimed 6 blobs \(\d+\.\d KiB\); kept \d+/);
    const after = doc(await run(["gc", "--json"]));
    expect(after).toMatchObject({ blobCount: 0, keptBlobCount: dry.keptBlobCount });
    expect(typeof after.fileByteCount).toBe("number");
    expect((await run(["verify"])).code).toBe(0);
    const replay = await run(["replay", "@last", "--verify"]);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect((await run(["show", c, "--json"])).code).toBe(0);
  });
});
