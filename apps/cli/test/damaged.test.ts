/**
 * CLI-5 damaged files: every command meets a damaged database with one clear message that names
 * what is damaged (and points at `strata verify`) — never a crash or a stack trace. `ls` lists a
 * damaged session as such and goes on with the others.
 */
import { copyFileSync, truncateSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALT, cleanup, demoDir, json, limited, type Result, ROOT, strata } from "./cli-kit.ts";

afterAll(cleanup);
const Database = createRequire(join(ROOT, "packages/store/package.json"))("better-sqlite3");

let dir = "";
let good = "";
let other = "";
let session = "";
beforeAll(async () => {
  dir = demoDir();
  const a = await strata(dir, ["run", "first", "--model", ALT, "--workspace", "ws", "--json"]);
  session = json<{ handle: string }>(a).handle;
  const b = await strata(dir, ["run", "second", "--model", ALT, "--workspace", "ws", "--json"]);
  other = json<{ handle: string }>(b).handle;
  good = join(dir, ".strata", "strata.db");
}, 120_000);

/** A copy of the good database with `sql` run on it (as someone editing the file would). */
function damaged(name: string, sql: (s: string) => string): string {
  const path = join(dir, `${name}.db`);
  copyFileSync(good, path);
  const db = new Database(path);
  const id = db.prepare("SELECT id FROM sessions ORDER BY id").all()[0].id as string;
  db.exec(sql(id));
  db.close();
  return path;
}

const ALL = [
  ["ls"],
  ["log", "S"],
  ["show", "S"],
  ["diff", "S@main", "S@main"],
  ["branches", "S"],
  ["prompt", "S"],
  ["fork", "S", "--name", "f"],
  ["rewind", "S", "--to", "~1"],
  ["bisect", "S", "--until", "call"],
  ["replay", "S", "--verify"],
  ["export", "S"],
  ["verify"],
  ["resume", "S"],
  ["run", "more", "--session", "S", "--model", ALT],
];

function check(r: Result, what: string): void {
  expect(r.stderr, what).not.toMatch(/unexpected error|Cannot read properties|\n\s+at /);
  // verify's findings are its output
  if (what.startsWith("verify ")) {
    expect(r.code, what).toBe(1);
    expect(r.stdout + r.stderr, what).toMatch(/FAILED|damaged/);
  } else if (r.code !== 0) {
    expect(r.code, `${what}\n${r.stderr}`).toBe(1);
    expect(r.stderr, what).toMatch(/damaged|missing|corrupt|malformed|altered|not valid|invalid|does not|not JSON|cannot be read/i);
    expect(r.stderr, what).toMatch(/verify|backup|copy/);
  }
}

async function sweep(db: string, commands: readonly string[][]): Promise<Result[]> {
  const rs = await limited(
    3,
    commands.map((c) => () => strata(dir, ["--db", db, ...c.map((a) => a.replace(/^S(?=$|@)/, session))])),
  );
  for (const [i, r] of rs.entries()) check(r, `${commands[i]?.join(" ")} on ${db}`);
  return rs;
}

describe("CLI-5 damaged databases", () => {
  it("a branch head that points at a missing event: ls lists it as damaged and goes on; every command names the damage", async () => {
    const db = damaged("missing-head", (s) => `UPDATE branches SET head = 999999 WHERE session = '${s}' AND name = 'main'`);
    const [ls, ...rest] = await sweep(db, ALL);
    expect(ls?.code).toBe(1);
    expect(ls?.stdout).toMatch(new RegExp(`^${other} .*completed-by-tool`, "m"));
    expect(ls?.stderr).toMatch(/branch "main" of session \w+ points at event 999999/);
    const lsJson = json<{ sessions: { outcome: string; damage: string | null }[] }>(await strata(dir, ["--db", db, "ls", "--json"]));
    expect(lsJson.sessions.map((s) => s.outcome).sort()).toEqual(["completed", "damaged"]);
    for (const [i, r] of rest.entries()) {
      const c = ALL[i + 1] as string[];
      if (c[0] === "verify") expect(r.stdout).toMatch(/bad-head|999999/);
      else {
        expect(r.code, c.join(" ")).toBe(1);
        expect(r.stderr, c.join(" ")).toMatch(/999999/);
      }
    }
  }, 300_000);

  it("a head event whose payload is not JSON, missing blobs, and a truncated file", async () => {
    const payload = damaged(
      "bad-payload",
      // the session's last event: the head of main (branch rows keep no head until one is moved)
      (s) =>
        `UPDATE events SET data = '{garbage' WHERE id = (SELECT max(id) FROM events WHERE segment IN (SELECT id FROM segments WHERE session = '${s}'))`,
    );
    const [ls] = await sweep(payload, [["ls"], ["log", "S"], ["show", "S"], ["prompt", "S"], ["resume", "S"], ["export", "S"], ["verify"]]);
    expect(ls?.code).toBe(1);
    expect(ls?.stdout).toMatch(/damaged \(strata verify\)/);
    const blobs = damaged("no-blobs", () => "DELETE FROM blobs");
    await sweep(blobs, [
      ["prompt", "S"],
      ["show", "S"],
      ["resume", "S"],
      ["run", "more", "--session", "S", "--model", ALT],
    ]);
    const cut = join(dir, "truncated.db");
    copyFileSync(good, cut);
    truncateSync(cut, 8192);
    const rs = await sweep(cut, [["ls"], ["log", "S"], ["verify"]]);
    for (const r of rs) expect(r.code).toBe(1);
  }, 300_000);
});
