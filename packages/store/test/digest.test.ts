/**
 * ST-21 on SQLite: the digest encoding against a reference implementation, digests that do not
 * depend on the inline limit, edits made in SQL found by verify, and the digests of the stored
 * schema 1 and 2 fixtures. Digests on every append path, the same in two stores, are the
 * conformance suite (conformance/digests.ts).
 */
import { createHash } from "node:crypto";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  type EventId,
  type EventMeta,
  eventDigest,
  openStore,
  SCHEMA_VERSION,
  type SqliteStore,
  type Store,
  StoreError,
  TS_MAX,
} from "../src/index.ts";
import { ev, fileStore, session, tempDir } from "./helpers.ts";

const FIXTURES = join(import.meta.dirname, "../../../fixtures/store");

/** The documented encoding (digest.ts), written out independently of the store's code. */
function reference(prior: string | null, e: { kind: string; label: string | null; by: string | null; ts: number; data: string }) {
  const u64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(n));
    return b;
  };
  const str = (s: string) => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
  const opt = (s: string | null) => (s === null ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), str(s)]));
  const bytes = Buffer.concat([
    Buffer.from([1]),
    prior === null ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), Buffer.from(prior, "hex")]),
    str(e.kind),
    opt(e.label),
    opt(e.by),
    u64(e.ts),
    str(e.data),
  ]);
  return createHash("sha256").update(bytes).digest("hex");
}

/** Every event of every branch of `store`, each checked against eventDigest of its prior's digest (ST-21). */
function chainsAgree(store: Store): number {
  let checked = 0;
  for (const s of store.listSessions())
    for (const b of store.branches(s.id)) {
      let prior: string | null = null;
      for (const e of store.chain(b.head)) {
        expect(e.digest, `event ${e.id}`).toBe(eventDigest(prior, e));
        expect(store.eventMeta(e.id)?.digest).toBe(e.digest);
        prior = e.digest;
        checked++;
      }
      expect(store.chainMeta(b.head).map((m) => m.digest)).toEqual(store.chain(b.head).map((e) => e.digest));
    }
  return checked;
}

/** Copies of the stored fixtures of the schemas before digests. */
function fixtureCopies(): string[] {
  return ["v1.db", "v2.db"].map((name) => {
    const copy = join(tempDir(), name);
    copyFileSync(join(FIXTURES, name), copy);
    return copy;
  });
}

describe("ST-21 event digests", () => {
  it("the encoding is the documented one: a reference implementation of it gives the same digests", () => {
    const cases = [
      { prior: null, e: { kind: "genesis@1", label: null, by: null, ts: 0, data: "{}" } },
      { prior: "ab".repeat(32), e: { kind: "patch@1", label: "turn.start", by: "user", ts: TS_MAX, data: '{"ops":[]}' } },
      { prior: "00".repeat(32), e: { kind: "k", label: "", by: "", ts: 1_796_000_000_000, data: "é ✓ 𝄞" } },
      // Payloads past the one-shot buffer (64 KiB) are hashed in a stream: the same encoding.
      { prior: "cd".repeat(32), e: { kind: "patch@1", label: "ü".repeat(300), by: null, ts: 12, data: "𝄞é".repeat(30_000) } },
      { prior: null, e: { kind: "patch@1", label: null, by: "x", ts: 13, data: "y".repeat(64 * 1024) } },
    ];
    for (const { prior, e } of cases) expect(eventDigest(prior, e)).toBe(reference(prior, e));
  });

  it("is unambiguous: moving bytes between fields, null against empty, or any change gives another digest", () => {
    const base = { kind: "ab", label: "c" as string | null, by: null as string | null, ts: 5, data: "d" };
    const variants = [
      base,
      { ...base, kind: "a", label: "bc" },
      { ...base, label: null },
      { ...base, label: "" },
      { ...base, label: null, by: "c" },
      { ...base, by: "" },
      { ...base, ts: 6 },
      { ...base, data: "d " },
      { ...base, kind: "abc", label: null, data: "d" },
      { ...base, label: "cd", data: "" },
    ];
    const digests = new Set(variants.map((v) => eventDigest(null, v)));
    expect(digests.size).toBe(variants.length);
    expect(eventDigest("00".repeat(32), base)).not.toBe(eventDigest(null, base));
    expect(eventDigest(null, base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("covers no ids: the same events in another database, among other sessions, have the same digests", () => {
    const write = (store: Store, noise: number): string[] => {
      for (let i = 0; i < noise; i++) session(store, 3);
      const { session: info, genesis } = store.createSession({ genesis: { kind: "genesis@1", ts: 1000, data: "{}" } });
      let head = genesis.id;
      const out = [genesis.digest];
      for (let i = 0; i < 20; i++) {
        const [m] = store.append(info.id, "main", head, [{ kind: "patch@1", label: `e${i}`, ts: 1000 + i, data: `{"i":${i}}` }]);
        head = (m as EventMeta).id;
        out.push((m as EventMeta).digest);
      }
      return out;
    };
    const a = write(openStore(":memory:"), 0);
    const b = write(openStore(":memory:", { inlineLimit: 8 }), 7);
    expect(b).toEqual(a);
  });

  it("verify names the event whose content was edited in SQL: data, label, by, kind, ts", () => {
    for (const edit of [
      "UPDATE events SET data = '{\"n\":99}' WHERE id = ?",
      "UPDATE events SET label = 'forged' WHERE id = ?",
      "UPDATE events SET by = 'someone' WHERE id = ?",
      "UPDATE events SET kind = 'patch@2' WHERE id = ?",
      "UPDATE events SET ts = ts + 1 WHERE id = ?",
    ]) {
      const { store, path } = fileStore();
      const s = session(store, 6);
      store.close();
      const target = s.events[2]?.id as EventId;
      const db = new Database(path);
      db.prepare(edit).run(target);
      db.close();
      const r = openStore(path, { readonly: true }).verify();
      expect(r.ok, edit).toBe(false);
      expect(
        r.findings.map((f) => [f.code, f.event]),
        edit,
      ).toEqual([["bad-digest", target]]);
      expect(r.findings[0]?.message).toMatch(new RegExp(`event ${target}'s digest does not match its content`));
    }
  });

  it("an edit that also recomputes the edited event's digest is caught at the next event", () => {
    const { store, path } = fileStore();
    const s = session(store, 6);
    store.close();
    const [target, next] = [s.events[2] as EventMeta, s.events[3] as EventMeta];
    const db = new Database(path);
    const forged = eventDigest((s.events[1] as EventMeta).digest, { ...target, data: '{"n":"forged"}' });
    db.prepare("UPDATE events SET data = ?, digest = ? WHERE id = ?").run('{"n":"forged"}', Buffer.from(forged, "hex"), target.id);
    db.close();
    const r = openStore(path, { readonly: true }).verify();
    expect(r.findings.map((f) => [f.code, f.event])).toEqual([["bad-digest", next.id]]);
  });

  it("a missing or truncated digest is a finding, not an exception; appends after it are refused as damage", () => {
    const { store, path } = fileStore();
    const s = session(store, 3);
    store.close();
    const db = new Database(path);
    db.prepare("UPDATE events SET digest = x'00' WHERE id = ?").run(s.events[2]?.id);
    db.close();
    const r = openStore(path, { readonly: true }).verify();
    expect(r.findings.map((f) => f.code)).toEqual(["bad-digest"]);
    expect(r.findings[0]?.message).toMatch(/has no valid digest/);
    const w = openStore(path);
    try {
      w.append(s.id, "main", s.events[2]?.id as EventId, [ev("more")]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(StoreError);
      expect((e as StoreError).code).toBe("corrupt");
      expect((e as StoreError).message).toMatch(/strata verify/);
    }
  });

  it("eventDigest refuses what no event can hold, with bad-input", () => {
    const ok = { kind: "k", label: null, by: null, ts: 1, data: "" };
    for (const [prior, e] of [
      ["not hex", ok],
      ["AB".repeat(32), ok],
      [null, { ...ok, kind: "" }],
      [null, { ...ok, label: 3 }],
      [null, { ...ok, ts: 1.5 }],
      [null, { ...ok, ts: -1 }],
      [null, { ...ok, ts: TS_MAX + 1 }],
      [null, { ...ok, data: Buffer.from("x") }],
      [null, null],
    ] as const)
      try {
        eventDigest(prior as string | null, e as never);
        expect.unreachable();
      } catch (x) {
        expect((x as StoreError).code).toBe("bad-input");
      }
  });
});

describe("ST-4/21 digests of the stored fixtures of schemas 1 and 2", () => {
  it("migrating v1.db and v2.db computes every event's digest along its chain; verify is clean", () => {
    for (const copy of fixtureCopies()) {
      const store = openStore(copy) as SqliteStore;
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(chainsAgree(store), copy).toBeGreaterThan(5);
      expect(store.verify().findings).toEqual([]);
      // The events table was rebuilt: the digest is stored, not null, in every row.
      expect(store.database.prepare("SELECT count(*) FROM events WHERE length(digest) <> 32").pluck().get()).toBe(0);
      store.close();
    }
  });

  it("a read-only open of v1.db and v2.db computes the same digests from the chains, without migrating", () => {
    for (const copy of fixtureCopies()) {
      const ro = openStore(copy, { readonly: true }) as SqliteStore;
      expect(ro.schemaVersion).toBeLessThan(3);
      const read = (s: Store) =>
        s
          .listSessions()
          .flatMap((x) => s.branches(x.id).flatMap((b) => [...s.chainMeta(b.head), ...s.chain(b.head, 2)].map((e) => [e.id, e.digest])));
      const legacy = read(ro);
      expect(chainsAgree(ro)).toBeGreaterThan(5);
      ro.close();
      const migrated = openStore(copy);
      expect(read(migrated)).toEqual(legacy);
      migrated.close();
    }
  });

  it("a v2 row with a timestamp no append accepts migrates, and verify reports it", () => {
    const [, v2] = fixtureCopies() as [string, string];
    const db = new Database(v2);
    const id = db.prepare("SELECT max(id) FROM events").pluck().get() as number;
    db.prepare("UPDATE events SET ts = 1e300 WHERE id = ?").run(id);
    db.close();
    const store = openStore(v2);
    const r = store.verify();
    expect(r.findings.map((f) => [f.code, f.event])).toEqual([["bad-event", id]]);
    expect(r.findings[0]?.message).toMatch(/timestamp 1e\+300, outside 1970 … 9999/);
    store.close();
  });
});
