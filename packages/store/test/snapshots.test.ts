/** ST-13 … ST-17: snapshots on chains, content-addressed blobs, and verify. */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type EventId, openStore, type SqliteStore, sha256 } from "../src/index.ts";
import { ev, fileStore, session } from "./helpers.ts";

const hex = (s: string) => sha256(s).toString("hex");

describe("ST-13 snapshots", () => {
  it("the nearest snapshot is the deepest one on the event's own chain, never another branch's", () => {
    const store = openStore(":memory:");
    const s = session(store, 6);
    const e = s.events.map((m) => m.id);
    store.putSnapshot(e[1] as EventId, "at-e1", [store.putBlob("p0"), null, store.putBlob("p2")]);
    store.putSnapshot(e[4] as EventId, "at-e4", [store.putBlob("p0")]);
    expect(store.nearestSnapshot(e[0] as EventId)).toBeUndefined();
    expect(store.nearestSnapshot(e[1] as EventId)?.header).toBe("at-e1");
    expect(store.nearestSnapshot(e[3] as EventId)?.header).toBe("at-e1");
    expect(store.nearestSnapshot(e[5] as EventId)?.header).toBe("at-e4");
    expect(store.nearestSnapshot(e[1] as EventId)?.pages).toEqual([hex("p0"), null, hex("p2")]);
    // A fork from e2 must not see the snapshot at e4 (later on main).
    store.fork(s.id, e[2] as EventId, "side");
    const [x] = store.append(s.id, "side", e[2] as EventId, [ev("x")]);
    expect(store.nearestSnapshot(x?.id as EventId)?.header).toBe("at-e1");
    expect(store.snapshots(s.id).map((m) => m.id)).toEqual([e[1], e[4]]);
  });

  it("page lists are stored as shared chunks: a snapshot that changes one page writes one chunk and a short list", () => {
    const { store } = fileStore();
    const s = session(store, 3);
    const pages = Array.from({ length: 640 }, (_, i) => store.putBlob(`page ${i}`));
    const db = (store as SqliteStore).database;
    const blobs = () => db.prepare("SELECT count(*) FROM blobs").pluck().get() as number;
    store.putSnapshot(s.events[0]?.id as EventId, "one", pages);
    const afterFirst = blobs();
    expect(afterFirst).toBe(640 + 10);
    const changed = [...pages];
    changed[639] = store.putBlob("page 639, edited");
    store.putSnapshot(s.events[2]?.id as EventId, "two", changed);
    expect(blobs()).toBe(afterFirst + 2); // the new page and the one chunk that holds it
    expect(store.nearestSnapshot(s.events[2]?.id as EventId)?.pages).toEqual(changed);
    const sizes = db.prepare("SELECT length(pages) FROM snapshots").pluck().all() as number[];
    expect(Math.max(...sizes)).toBe(4 + 10 * 32);
  });
});

describe("ST-14 blobs", () => {
  it("are content-addressed by sha256, stored once, fetched alone or in batches", () => {
    const store = openStore(":memory:");
    const a = store.putBlob("hello");
    expect(a).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    expect(store.putBlob(new TextEncoder().encode("hello"))).toBe(a);
    expect(store.getBlob(a)?.toString()).toBe("hello");
    const b = store.putBlob(new Uint8Array([0, 1, 2, 255]));
    const got = store.getBlobs([a, b, hex("missing")]);
    expect([...got.keys()].sort()).toEqual([a, b].sort());
    expect([...(got.get(b) as Buffer)]).toEqual([0, 1, 2, 255]);
    expect(store.hasBlob(hex("missing"))).toBe(false);
    expect((store as SqliteStore).database.prepare("SELECT count(*) FROM blobs").pluck().get()).toBe(2);
  });
});

describe("ST-17 verify", () => {
  it("a healthy store verifies clean and counts what it checked", () => {
    const store = openStore(":memory:", { inlineLimit: 64 });
    const s = session(store, 5);
    store.fork(s.id, s.events[1]?.id as EventId, "f");
    store.append(s.id, "f", s.events[1]?.id as EventId, [ev("z".repeat(200))]);
    store.putSnapshot(s.events[2]?.id as EventId, "h", [store.putBlob("p")]);
    const r = store.verify();
    expect(r).toMatchObject({ ok: true, sessions: 1, events: 7, snapshots: 1, findings: [] });
    expect(r.blobs).toBeGreaterThanOrEqual(3);
  });

  it("finds tampering: dangling priors, gaps, repeated depths, bad heads, missing and altered blobs", () => {
    const { store, path } = fileStore({ inlineLimit: 64 });
    const s = session(store, 5);
    const [big] = store.append(s.id, "main", store.branch(s.id, "main")?.head as EventId, [ev("b".repeat(300))]);
    store.putSnapshot(s.events[1]?.id as EventId, "h", [store.putBlob("page")]);
    store.close();
    const db = new Database(path);
    const e = s.events.map((m) => m.id);
    db.prepare("UPDATE events SET prior = 999 WHERE id = ?").run(e[2]);
    db.prepare("UPDATE events SET depth = depth + 5 WHERE id = ?").run(e[4]);
    db.prepare(
      "INSERT INTO events (segment, depth, prior, kind, ts, data) SELECT segment, depth, prior, kind, ts, data FROM events WHERE id = ?",
    ).run(e[0]);
    db.prepare("INSERT INTO branches (session, name, segment, head, created, origin) VALUES (?, 'ghost', 1, 12345, 0, 'fork')").run(s.id);
    db.prepare("UPDATE blobs SET data = x'00' WHERE hash = ?").run(sha256("page"));
    db.prepare("DELETE FROM blobs WHERE hash = (SELECT blob FROM events WHERE id = ?)").run(big?.id);
    db.close();
    const r = openStore(path).verify();
    expect(r.ok).toBe(false);
    const codes = r.findings.map((f) => f.code);
    for (const c of ["dangling-prior", "chain-gap", "duplicate-depth", "bad-head", "bad-blob", "missing-blob"])
      expect(codes, c).toContain(c);
    expect(r.findings.find((f) => f.code === "bad-head")?.message).toMatch(/branch "ghost" points at event 12345/);
  });

  it("passes payloads and snapshots to the engine's hooks and reports progress", () => {
    const store = openStore(":memory:");
    const s = session(store, 3);
    store.putSnapshot(s.events[0]?.id as EventId, "h", []);
    const seen: number[] = [];
    const r = store.verify(s.id, {
      checkEvent: (e) => (e.data.includes('"n":1') ? "payload says no" : undefined),
      checkSnapshot: (snap) => (snap.header === "h" ? "snapshot differs" : undefined),
      progress: (done) => seen.push(done),
    });
    expect(r.findings.map((f) => [f.code, f.message])).toEqual([
      ["bad-event", `event ${s.events[1]?.id}: payload says no`],
      ["snapshot-mismatch", `snapshot at event ${s.events[0]?.id}: snapshot differs`],
    ]);
    expect(seen.at(-1)).toBe(4);
  });
});
