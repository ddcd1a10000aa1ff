/**
 * Snapshots, blobs and verify on SQLite (ST-13, ST-14, ST-17): what directories cost in blobs and bytes,
 * format-1 rows, and damage made in SQL. The backend-neutral behaviour is the conformance suite
 * (conformance/snapshots.ts, conformance/verify.ts); the directory format itself is directory.test.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { type EventId, openStore, type SqliteStore, sha256 } from "../src/index.ts";
import { ev, fileStore, session } from "./helpers.ts";

const hex = (s: string) => sha256(s).toString("hex");
/** Bytes of a format-2 directory: marker and page count, a bitmap of the chunks, a hash per chunk present. */
const dirBytes = (pages: number, present: number) => 5 + Math.ceil(Math.ceil(pages / 64) / 8) + 32 * present;

describe("ST-13 snapshots", () => {
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
    expect(Math.max(...sizes)).toBe(dirBytes(640, 10));
  });
});

describe("ST-13 sparse page directories (format 2)", () => {
  it("pages that are null cost nothing: no chunk blob, no directory entry, however many there are", () => {
    const store = openStore(":memory:");
    const s = session(store, 2);
    const db = (store as SqliteStore).database;
    const blobs = () => db.prepare("SELECT count(*) FROM blobs").pluck().get() as number;
    const dirSize = (e: EventId) => db.prepare("SELECT length(pages) FROM snapshots WHERE event = ?").pluck().get(e) as number;
    // 100 lines of history × 16 pages each (the engine's id blocks): one line's pages are set.
    const pages: (string | null)[] = new Array(1600).fill(null);
    const p = [store.putBlob("a"), store.putBlob("b"), store.putBlob("c")];
    pages[0] = p[0] as string;
    pages[5] = p[1] as string;
    pages[1599] = p[2] as string;
    const before = blobs();
    const at = s.events[0]?.id as EventId;
    store.putSnapshot(at, "sparse", pages);
    expect(blobs() - before, "one chunk blob per chunk that holds a page").toBe(2);
    expect(dirSize(at)).toBe(dirBytes(1600, 2));
    expect(store.nearestSnapshot(at)?.pages).toEqual(pages);
    // Nothing but nulls: a 13-byte directory (header and a 64-bit chunk bitmap) and no blob at all.
    const empty = s.events[1]?.id as EventId;
    const n = blobs();
    store.putSnapshot(empty, "empty", new Array(4096).fill(null));
    expect(blobs()).toBe(n);
    expect(dirSize(empty)).toBe(dirBytes(4096, 0));
    expect(store.nearestSnapshot(empty)?.pages).toEqual(new Array(4096).fill(null));
    expect(store.verify().findings).toEqual([]);
  });

  it("a mostly-null chunk stores only its pages: a bitmap and one hash per page", () => {
    const store = openStore(":memory:");
    const s = session(store, 1);
    const db = (store as SqliteStore).database;
    const pages: (string | null)[] = new Array(64).fill(null);
    pages[63] = store.putBlob("last");
    store.putSnapshot(s.events[0]?.id as EventId, "h", pages);
    const sizes = db.prepare("SELECT size FROM blobs ORDER BY id").pluck().all() as number[];
    expect(sizes.at(-1)).toBe(8 + 32);
  });

  it("format-1 directories (every chunk, zero hash for an empty one; chunks of 64 hashes) still read", () => {
    const store = openStore(":memory:");
    const s = session(store, 1);
    const db = (store as SqliteStore).database;
    const a = store.putBlob("page a");
    const b = store.putBlob("page b");
    const zero = Buffer.alloc(32);
    // Pages: [a, null, …, null] (64), then 64 nulls, then [null, b] — 130 pages, as schema 1 wrote them.
    const chunk1 = store.putBlob(Buffer.concat([Buffer.from(a, "hex"), ...new Array(63).fill(zero)]));
    const chunk3 = store.putBlob(Buffer.concat([zero, Buffer.from(b, "hex")]));
    const count = Buffer.alloc(4);
    count.writeUInt32BE(130);
    const dir = Buffer.concat([count, Buffer.from(chunk1, "hex"), zero, Buffer.from(chunk3, "hex")]);
    const at = s.events[0]?.id as EventId;
    db.prepare("INSERT INTO snapshots (event, segment, depth, header, pages) VALUES (?, 1, 2, 'v1', ?)").run(at, dir);
    const expected: (string | null)[] = new Array(130).fill(null);
    expected[0] = a;
    expected[129] = b;
    expect(store.nearestSnapshot(at)?.pages).toEqual(expected);
    expect(store.verify().findings).toEqual([]);
  });

  it("a damaged directory is a corrupt error when read, and a finding (not an exception) in verify", () => {
    const store = openStore(":memory:");
    const s = session(store, 1);
    const at = s.events[0]?.id as EventId;
    store.putSnapshot(at, "h", [store.putBlob("p")]);
    // The bitmap names one chunk, whose hash is cut short.
    (store as SqliteStore).database.prepare("UPDATE snapshots SET pages = x'02000000010100' WHERE event = ?").run(at);
    expect(() => store.nearestSnapshot(at)).toThrow(/damaged page directory/);
    const r = store.verify();
    expect(r.findings.map((f) => f.code)).toEqual(["bad-snapshot"]);
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
      "INSERT INTO events (segment, depth, prior, kind, ts, digest, data) SELECT segment, depth, prior, kind, ts, digest, data FROM events WHERE id = ?",
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

  it("a damaged file gives findings, not exceptions, and never tells the user to run verify", () => {
    const { store, path } = fileStore();
    const s = session(store, 300);
    for (const e of s.events.filter((_, i) => i % 10 === 0)) store.putSnapshot(e.id, "h", [store.putBlob(`p${e.id}`)]);
    store.close();
    const bytes = readFileSync(path);
    for (let i = 4096 * 3; i < bytes.length; i += 5) bytes[i] = 0x5a;
    writeFileSync(path, bytes);
    // Opening for writing refuses the damaged file (ST-22); verify opens it read-only and reports.
    expect(() => openStore(path)).toThrow(/is damaged/);
    const damaged = openStore(path, { readonly: true });
    const r = damaged.verify();
    expect(r.ok).toBe(false);
    expect(r.findings.length).toBeGreaterThan(0);
    expect(r.findings.some((f) => f.code === "integrity")).toBe(true);
    for (const f of r.findings) expect(f.message).not.toMatch(/strata verify/);
    damaged.close();
  });

  it("an unreadable payload or a hook that throws is a finding; the walk goes on", () => {
    const store = openStore(":memory:", { inlineLimit: 64 });
    const s = session(store, 3);
    const head = store.branch(s.id, "main")?.head as EventId;
    const [big] = store.append(s.id, "main", head, [ev("z".repeat(300))]);
    store.putSnapshot(big?.id as EventId, "h", []);
    const db = (store as SqliteStore).database;
    db.prepare("DELETE FROM blobs WHERE hash = (SELECT blob FROM events WHERE id = ?)").run(big?.id);
    const r = store.verify(s.id, {
      checkEvent: (e) => {
        if (e.data.includes('"n":1')) throw new TypeError("the engine's decoder threw");
        return undefined;
      },
      checkSnapshot: () => {
        throw new Error("replay failed");
      },
    });
    expect(r.findings.map((f) => f.code)).toEqual(["bad-event", "missing-blob", "snapshot-mismatch"]);
    expect(r.findings[0]?.message).toMatch(/could not be checked: the engine's decoder threw/);
    expect(r.findings[2]?.message).toMatch(/could not be checked: replay failed/);
    expect(r.events).toBe(5);
  });
});
