/**
 * ST-25: damaged content met while reading — a head naming no event, a cycle of segment parents —
 * is a clear `corrupt` StoreError naming what is damaged (never a TypeError, never a hang), and
 * verify reports it. (Timestamps outside what the store accepts, ST-20: conformance/errors.ts.)
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type EventId, openStore, type SessionId, type Store, StoreError } from "../src/index.ts";
import { ev, fileStore, session } from "./helpers.ts";

/** `f` throws a StoreError with `code` whose message matches every pattern. */
function fails(f: () => unknown, code: string, ...patterns: RegExp[]): void {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, String(f)).toBeInstanceOf(StoreError);
  expect((error as StoreError).code, (error as Error).message).toBe(code);
  for (const p of patterns) expect((error as StoreError).message).toMatch(p);
}

/** A store file with a session whose state `damage` changes in SQL; reopened for reading after. */
function damaged(
  n: number,
  damage: (db: Database.Database, s: { id: SessionId; events: { id: EventId }[] }) => void,
): { store: Store; id: SessionId; events: { id: EventId }[] } {
  const { store, path } = fileStore();
  const s = session(store, n);
  store.fork(s.id, s.events[2]?.id as EventId, "side");
  store.append(s.id, "side", s.events[2]?.id as EventId, [ev("side 1"), ev("side 2")]);
  store.putSnapshot(s.events[4]?.id as EventId, "h", [store.putBlob("p")]);
  store.close();
  const db = new Database(path);
  damage(db, s);
  db.close();
  return { store: openStore(path), id: s.id, events: s.events };
}

describe("ST-25 heads that name no event", () => {
  it("a pinned head whose event is gone: every read and write that needs the head says so, naming session, branch and event", () => {
    const { store, id } = damaged(6, (db, s) => {
      db.prepare("UPDATE branches SET head = 9999 WHERE session = ? AND name = 'main'").run(s.id);
    });
    const named = [new RegExp(`branch "main" of session ${id} points at event 9999, which does not exist`), /strata verify/];
    fails(() => store.branches(id), "corrupt", ...named);
    fails(() => store.branch(id, "main"), "corrupt", ...named);
    fails(() => store.log(id), "corrupt", ...named);
    fails(() => store.append(id, "main", 9999 as EventId, [ev("x")]), "corrupt", ...named);
    fails(() => store.moveHead(id, "main", 1 as EventId), "corrupt", ...named);
    expect(store.branch(id, "side")?.headDepth, "other branches still read").toBe(6);
    const r = store.verify();
    expect(r.findings.map((f) => f.code)).toEqual(["bad-head"]);
    expect(r.findings[0]?.message).toMatch(/branch "main" points at event 9999/);
  });

  it("a branch following a segment that has no events", () => {
    const { store, id } = damaged(6, (db, s) => {
      const seg = db.prepare("INSERT INTO segments (session, parent, fork_depth) VALUES (?, NULL, 0)").run(s.id).lastInsertRowid;
      db.prepare("UPDATE branches SET segment = ?, head = NULL WHERE session = ? AND name = 'side'").run(seg, s.id);
    });
    fails(
      () => store.log(id, { branch: "side" }),
      "corrupt",
      new RegExp(`branch "side" of session ${id} follows segment \\d+, which has no events`),
    );
    expect(store.verify().findings.map((f) => f.code)).toContain("bad-head");
  });
});

describe("ST-25 walks over segment parents are bounded", () => {
  it("a cycle of parents: reads fail with corrupt naming the segments, verify reports bad-segment; nothing hangs", () => {
    const { store, id, events } = damaged(6, (db, s) => {
      // The fork's segment and main's segment become each other's parents.
      const side = db.prepare("SELECT segment FROM branches WHERE session = ? AND name = 'side'").pluck().get(s.id) as number;
      const main = db.prepare("SELECT segment FROM branches WHERE session = ? AND name = 'main'").pluck().get(s.id) as number;
      db.prepare("UPDATE segments SET parent = ?, fork_depth = 2 WHERE id = ?").run(side, main);
    });
    const head = store.branch(id, "main")?.head as EventId;
    for (const read of [
      () => store.log(id),
      () => store.chain(head),
      () => store.chainData(head),
      () => store.nearestSnapshot(head),
      () => store.atDepth(head, 1),
      () => store.isAncestor(events[0]?.id as EventId, head),
    ])
      fails(read, "corrupt", /the database is damaged: .*segment \d+/, /strata verify/);
    const r = store.verify();
    expect(r.ok).toBe(false);
    const cycle = r.findings.filter((f) => f.code === "bad-segment").map((f) => f.message);
    expect(cycle.join("\n")).toMatch(/segments \d+ → \d+ → \d+ form a cycle of parents/);
  });

  it("a parent of another session", () => {
    const { store, id } = damaged(6, (db, s) => {
      const other = db
        .prepare("INSERT INTO segments (session, parent, fork_depth) VALUES ('01ZZZZZZZZZZZZZZZZZZZZZZZZ', NULL, 0)")
        .run().lastInsertRowid;
      db.prepare("UPDATE segments SET parent = ? WHERE id = (SELECT segment FROM branches WHERE session = ? AND name = 'side')").run(
        other,
        s.id,
      );
    });
    const head = store.branch(id, "side")?.head as EventId;
    fails(() => store.chain(head), "corrupt", /has parent \d+ of session 01ZZZZZZZZZZZZZZZZZZZZZZZZ/);
    expect(store.verify().findings.map((f) => f.code)).toContain("bad-segment");
  });
});
