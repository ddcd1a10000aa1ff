/** CLI-5: a clear message for every kind of bad reference or file, and nothing stored changes (the usage table is contract.test.ts). */
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, demoDir, json, ROOT, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);
const sha = (p: string): string => createHash("sha256").update(readFileSync(p)).digest("hex");

describe("CLI-5 bad references and files exit 1 and change nothing", () => {
  it("missing database, unknown session, ambiguous prefix, event not on the branch, malformed selector", async () => {
    const dir = demoDir();
    const none = await strata(dir, ["ls"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no strata database at .*strata\.db; run `strata run`/);
    const quick = ["--max-steps", "1", "--model", `scripted:${join(ROOT, "fixtures/models/alt.json")}`, "--workspace", "ws"];
    const r1 = json<{ session: string }>(await strata(dir, ["run", "first task", ...quick, "--json"]));
    const r2 = json<{ session: string }>(await strata(dir, ["run", "second task", ...quick, "--json"]));
    const db = join(dir, ".strata", "strata.db");
    const before = sha(db);
    const unknown = await strata(dir, ["log", "ZZZZZZ"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no session matches "ZZZZZZ"; `strata ls` lists them/);
    let common = 0;
    while (r1.session[common] === r2.session[common]) common++;
    const ambiguous = await strata(dir, ["log", r1.session.slice(0, common)]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain("matches 2 sessions");
    expect(ambiguous.stderr).toContain(r1.session);
    expect(ambiguous.stderr).toContain(r2.session);
    const notOn = await strata(dir, ["log", `${r1.session}@999999`]);
    expect(notOn.code).toBe(1);
    expect(notOn.stderr).toMatch(/event 999999 is not an event of session/);
    const otherSession = json<{ events: { id: number }[] }>(await strata(dir, ["log", r2.session, "--json"])).events.at(-1)?.id;
    const wrong = await strata(dir, ["rewind", r1.session, "--to", String(otherSession)]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/is not on branch "main"/);
    const sel = await strata(dir, ["show", r1.session, "--select", "call[status="]);
    expect(sel.code).toBe(2);
    expect(sel.stderr).toMatch(/selector/i);
    const noBranch = await strata(dir, ["log", `${r1.session}@nope`]);
    expect(noBranch.stderr).toMatch(/has no branch "nope"; branches: main/);
    expect(sha(db)).toBe(before);
  }, 60_000);

  it("a PostgreSQL URL that cannot be reached: every command says so (exit 1), the password hidden, nothing created", async () => {
    const dir = tempDir();
    for (const args of [
      ["--db", "postgres://me:secret@127.0.0.1:1/x", "ls"],
      ["ls"],
      ["--db", "postgres://me:secret@127.0.0.1:1/x", "replay", "@last", "--rerun"],
      ["replay", "@last", "--rerun", "--name", "again"],
    ]) {
      const r = await strata(dir, args, args[0] !== "--db" ? { env: { STRATA_DB: "postgresql://me:secret@127.0.0.1:1/x" } } : {});
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(
        /cannot connect to PostgreSQL at 127\.0\.0\.1:1\/x: .*ECONNREFUSED.*is the server running, and is the URL right\?/,
      );
      expect(r.stderr).not.toContain("secret");
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a foreign file, a newer database and a damaged bundle are refused untouched", async () => {
    const dir = tempDir();
    const foreign = join(dir, "notes.db");
    writeFileSync(foreign, "this is not a database\n".repeat(100));
    const f = await strata(dir, ["--db", foreign, "ls"]);
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/not a (strata|SQLite)/i);
    expect(readFileSync(foreign, "utf8")).toBe("this is not a database\n".repeat(100));
    // a newer schema: copy the stored v1 fixture and raise its version with the driver
    const newer = join(dir, "newer.db");
    copyFileSync(join(ROOT, "fixtures/store/v1.db"), newer);
    const Database = createRequire(join(ROOT, "packages/store/package.json"))("better-sqlite3");
    const raw = new Database(newer);
    raw.pragma("user_version = 99");
    raw.close();
    const hash = sha(newer);
    const n = await strata(dir, ["--db", newer, "ls"]);
    expect(n.code).toBe(1);
    expect(n.stderr).toMatch(/newer/i);
    expect(sha(newer)).toBe(hash);
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ format: "strata-bundle@1", session: { id: "x" }, events: [], branches: [] }));
    const b = await strata(dir, ["import", "bad.json"]);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/is not a valid strata bundle: blobs: missing; nothing was imported/);
    const m = await strata(dir, ["import", "missing.json"]);
    expect(m.code).toBe(2);
  }, 60_000);
});
