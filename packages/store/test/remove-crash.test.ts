/**
 * ST-35 and ST-36 under SIGKILL (the real process, killed at a random moment): a removal is one
 * transaction, so every session is either whole — every branch, event, snapshot, lease and search
 * row as before, verify clean — or gone without a trace; a collection killed half-way deleted
 * nothing or all it meant to, and every remaining session still reads.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EventId, openStore, type SessionId, type SqliteStore, type Store } from "../src/index.ts";
import { tempDir } from "./helpers.ts";

const SESSIONS = 6;
const EVENTS = 4000;

/** A session of `EVENTS` events on main and a fork, with search text, snapshots, a large payload and a released lease. */
function build(store: Store, n: number): void {
  const { session, genesis } = store.createSession({ title: `s${n}`, genesis: { kind: "genesis@1", data: "{}" } });
  let head: EventId = genesis.id;
  store.transaction(() => {
    for (let i = 0; i < EVENTS; i++) {
      const data =
        i === 7
          ? JSON.stringify({ big: "x".repeat(2_000_000) })
          : JSON.stringify({ ops: [["set", 1, "hash", store.putBlob(`b${n}-${i % 50}`)]] });
      head = (
        store.append(session.id, "main", head, [{ kind: "patch@1", label: "e", data, search: `word${n} shared` }])[0] as { id: EventId }
      ).id;
      if (i % 800 === 799) store.putSnapshot(head, "{}", [store.putBlob(`page ${n} ${i}`), null]);
    }
  });
  store.fork(session.id, genesis.id, "alt");
  store.append(session.id, "alt", genesis.id, [{ kind: "patch@1", data: "{}", search: `word${n} alt` }]);
  const l = store.acquireLease(session.id, "main", "setup");
  if (l.ok) store.releaseLease(session.id, "main", l.lease.token);
}

/** Everything of one session as rows, in a stable order (empty when gone). */
function rowsOf(store: SqliteStore, id: SessionId): string {
  const db = store.database;
  const segs = "SELECT id FROM segments WHERE session = ?";
  return JSON.stringify([
    db.prepare("SELECT * FROM sessions WHERE id = ?").all(id),
    db.prepare("SELECT * FROM branches WHERE session = ? ORDER BY name").all(id),
    db.prepare(`SELECT * FROM segments WHERE session = ? ORDER BY id`).all(id),
    db.prepare(`SELECT id, segment, depth, hex(digest) FROM events WHERE segment IN (${segs}) ORDER BY id`).all(id),
    db.prepare(`SELECT event FROM snapshots WHERE segment IN (${segs}) ORDER BY event`).all(id),
    db.prepare("SELECT * FROM leases WHERE session = ? ORDER BY branch").all(id),
    db.prepare(`SELECT rowid FROM search WHERE rowid IN (SELECT id FROM events WHERE segment IN (${segs})) ORDER BY rowid`).all(id),
    db.prepare("SELECT id FROM search_pending WHERE session = ? ORDER BY id").all(id),
  ]);
}

function run(path: string, killAfterMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "remove-writer.ts"), path], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: string[] = [];
    let buf = "";
    let err = "";
    let timer: NodeJS.Timeout | undefined;
    child.stdout?.on("data", (c: Buffer) => {
      buf += c.toString();
      const parts = buf.split("\n");
      buf = parts.pop() ?? "";
      lines.push(...parts);
      // The clock starts at the first removal, so the kill lands among the removals (or the collection).
      if (timer === undefined && lines.length > 0) timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    });
    child.stderr?.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" || code === 0) resolve(lines);
      else reject(new Error(`the remover failed: ${err}`));
    });
  });
}

describe("ST-35/ST-36 SQLite: removal and collection killed with SIGKILL", () => {
  it("every session is whole or gone, never half; the file verifies; a later run finishes the job", async () => {
    const outcomes = new Set<string>();
    for (let trial = 0; trial < 5; trial++) {
      const path = join(tempDir(), `rm-${trial}.db`);
      const setup = openStore(path) as SqliteStore;
      for (let n = 0; n < SESSIONS; n++) build(setup, n);
      const ids = setup.listSessions().map((s) => s.id);
      const before = new Map(ids.map((id) => [id, rowsOf(setup, id)]));
      setup.close();
      const lines = await run(path, ([0, 4, 10, 20, 40][trial] as number) + Math.floor(Math.random() * 4));
      const after = openStore(path) as SqliteStore;
      let whole = 0;
      let gone = 0;
      for (const id of ids) {
        const rows = rowsOf(after, id);
        if (rows === before.get(id)) whole++;
        else {
          expect(rows, `session ${id} is neither whole nor gone`).toBe(rowsOf(after, "NONE" as SessionId));
          gone++;
        }
        // A removal reported done is gone.
        if (lines.includes(`done ${id}`)) expect(after.getSession(id)).toBeUndefined();
        if (!lines.includes(`start ${id}`)) expect(after.getSession(id), "not started: whole").toBeDefined();
      }
      outcomes.add(`${whole}/${gone}${lines.includes("end") ? " end" : ""}`);
      expect(whole + gone).toBe(SESSIONS);
      const report = after.verify();
      expect(report.findings).toEqual([]);
      for (const s of after.listSessions()) {
        expect(after.search({ text: `word${s.title?.slice(1)} shared`, limit: 1 }).length).toBe(1);
        expect(after.chainData(after.branch(s.id, "main")?.head as EventId).length).toBe(EVENTS + 1);
      }
      after.close();
      // A run that is not killed removes what is left and collects every blob.
      await run(path, 60_000);
      const done = openStore(path) as SqliteStore;
      expect(done.listSessions()).toEqual([]);
      expect(Number(done.database.prepare("SELECT count(*) FROM blobs").pluck().get())).toBe(0);
      expect(done.verify().findings).toEqual([]);
      done.close();
    }
    // The kills landed in different places (not all before the first removal, not all after the last).
    expect(outcomes.size, [...outcomes].join(", ")).toBeGreaterThan(1);
  }, 300_000);
});
