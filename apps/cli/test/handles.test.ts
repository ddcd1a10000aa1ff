/**
 * CLI-4 and decision 0018: sessions are named by short handles from the random tail of their id
 * (ULID prefixes are timestamps: sessions started within minutes share them), by any unique
 * prefix, or by `@last` / `--last`, the most recently active session. `ls` sorts by activity.
 */
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import { handlesOf } from "../src/sessions.ts";
import { cleanup, json, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

/** `n` sessions made within the same few milliseconds; returns their ids, oldest first. */
function sessions(db: string, n: number): string[] {
  const store = openStore(db, { create: true });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = Session.create(store, { title: `task ${i}` });
    s.commit([["ins", nodeId(3), null, { tag: "note", text: `n${i}` }]], { label: "note" });
    ids.push(s.id);
  }
  store.close();
  return ids;
}

describe("CLI-4 session handles", () => {
  it("handles are the shortest unique tails of at least 6 characters, longer where tails collide", () => {
    const ids = ["01M8R9AAAAAAAAAAAAAAXYZ123", "01M8R9BBBBBBBBBBBBBQXYZ123", "01M8R9CCCCCCCCCCCCCC4ABCDE"];
    for (const id of ids) expect(id).toHaveLength(26);
    const h = handlesOf(ids);
    expect(h.get(ids[2] as string)).toBe("4ABCDE");
    // the first two share their last six characters: each gets the shortest tail only it has
    expect(h.get(ids[0] as string)).toBe("AXYZ123");
    expect(h.get(ids[1] as string)).toBe("QXYZ123");
    for (const [id, handle] of h) expect(id.endsWith(handle)).toBe(true);
  });

  it("sessions started together share their 6-character prefix; their handles are unique, and every command takes them", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const ids = sessions(db, 12);
    const prefix = (ids[0] as string).slice(0, 6);
    expect(ids.every((id) => id.startsWith(prefix))).toBe(true);
    const ambiguous = await strata(dir, ["--db", db, "log", prefix]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(new RegExp(`"${prefix}" matches 12 sessions; give a handle or more of the id`));
    const listed = json<{ sessions: { id: string; handle: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"])).sessions;
    const handles = listed.map((s) => s.handle);
    expect(new Set(handles).size).toBe(12);
    for (const s of listed) {
      expect(s.handle.length).toBeGreaterThanOrEqual(6);
      expect(s.id.endsWith(s.handle)).toBe(true);
    }
    const pick = listed[5] as { id: string; handle: string };
    for (const ref of [pick.handle, pick.handle.toLowerCase(), pick.id]) {
      const log = await strata(dir, ["--db", db, "log", ref, "--json"]);
      expect(log.code, log.stderr).toBe(0);
      expect(json<{ session: string }>(log).session).toBe(pick.id);
    }
    const shown = await strata(dir, ["--db", db, "ls"]);
    expect(shown.stdout).toMatch(new RegExp(`^${pick.handle} +task`, "m"));
    const quiet = await strata(dir, ["--db", db, "ls", "-q"]);
    expect(quiet.stdout.trim().split("\n")).toEqual(listed.map((s) => s.id));
  }, 120_000);

  it("@last and --last name the most recently active session, and ls lists by last activity", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const ids = sessions(db, 3);
    // the oldest session becomes the most recently active one
    const store = openStore(db);
    const { session } = Session.open(store, ids[0] as never, { branch: "main" });
    await new Promise((r) => setTimeout(r, 20));
    session.commit([["ins", nodeId(3), null, { tag: "note", text: "later" }]], { label: "note" });
    store.close();
    const order = json<{ sessions: { id: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"])).sessions.map((s) => s.id);
    expect(order).toEqual([ids[0], ids[2], ids[1]]);
    // --limit: the most recently active first, ranked by the store in one query; handles as in the full listing.
    const full = json<{ sessions: { id: string; handle: string }[] }>(await strata(dir, ["--db", db, "ls", "--json"])).sessions;
    const top = json<{ sessions: { id: string; handle: string }[] }>(await strata(dir, ["--db", db, "ls", "--limit", "2", "--json"]));
    expect(top.sessions).toEqual(full.slice(0, 2));
    const bad = await strata(dir, ["--db", db, "ls", "--limit", "two"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit takes a whole number, got "two"/);
    for (const args of [
      ["log", "@last"],
      ["log", "--last"],
      ["show", "@last~1"],
      ["branches", "--last"],
    ]) {
      const r = await strata(dir, ["--db", db, ...args, "--json"]);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(json<{ session: string }>(r).session, args.join(" ")).toBe(ids[0]);
    }
    const both = await strata(dir, ["--db", db, "log", "--last", ids[1] as string]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give either --last or SESSION, not both/);
    const empty = join(tempDir(), "e.db");
    openStore(empty, { create: true }).close();
    const none = await strata(dir, ["--db", empty, "log", "@last"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/there are no sessions in .* yet, so @last names none/);
  }, 120_000);
});
