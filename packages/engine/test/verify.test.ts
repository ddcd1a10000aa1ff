/**
 * EN-16, EN-31: `verifyStore` and `replayVerify` report what they find — a deleted payload blob, an
 * event that does not apply, a snapshot header whose lifecycle set disagrees with its tree — and
 * never throw.
 */
import { nodeId } from "@strata/dom";
import { type EventId, openStore, type SqliteStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { replayVerify, Session, verifyStore } from "../src/index.ts";
import { scanLifecycle } from "../src/internal.ts";

const BODY = nodeId(3);

describe("EN-16 / EN-31 verification reports, never throws", () => {
  it("a deleted payload blob is a finding, not an exception", () => {
    const store = openStore(":memory:", { inlineLimit: 100 }) as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 3 });
    for (let i = 0; i < 8; i++) s.commit([["ins", BODY, null, { tag: "m", text: `${"t".repeat(200)}${i}` }]]);
    const db = store.database;
    const ev = db.prepare("SELECT id, blob FROM events WHERE blob IS NOT NULL LIMIT 1").get() as { id: number; blob: Buffer };
    db.prepare("DELETE FROM blobs WHERE hash = ?").run(ev.blob);
    const r = verifyStore(store);
    expect(r.ok).toBe(false);
    expect(r.findings.map((f) => f.code)).toContain("missing-blob");
    const replay = replayVerify(store, s.id);
    expect(replay.ok).toBe(false);
    expect(replay.mismatch?.event).toBe(ev.id);
  });

  it("replayVerify reports an event that does not apply as the first mismatch", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 4 });
    for (let i = 0; i < 10; i++) s.commit([["ins", BODY, null, { tag: "m", text: `t${i}` }]]);
    const target = s.log()[6]?.id as EventId;
    store.database.prepare(`UPDATE events SET data = '{"ops":[["rm",99999]]}' WHERE id = ?`).run(target);
    const r = replayVerify(store, s.id);
    expect(r.ok).toBe(false);
    expect(r.mismatch?.event).toBe(target);
    expect(r.mismatch?.reason).toMatch(/does not apply/);
  });

  it("a snapshot header whose lifecycle set disagrees with its tree is reported", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 2 });
    s.commit([["ins", BODY, null, { tag: "call", attrs: { status: "running" } }]]);
    s.commit([["ins", BODY, null, { tag: "m" }]]);
    const db = store.database;
    const row = db.prepare("SELECT event, header FROM snapshots ORDER BY event DESC LIMIT 1").get() as { event: number; header: string };
    const header = JSON.parse(row.header) as { live: number[] };
    expect(header.live).toHaveLength(1);
    header.live = [];
    db.prepare("UPDATE snapshots SET header = ? WHERE event = ?").run(JSON.stringify(header), row.event);
    const v = verifyStore(store);
    expect(v.ok).toBe(false);
    expect(v.findings.map((f) => f.message).join()).toMatch(/lifecycle set/);
    const r = replayVerify(store, s.id);
    expect(r.ok).toBe(false);
    expect(r.mismatch?.reason).toMatch(/lifecycle set/);
    expect(scanLifecycle(Session.open(store, s.id).session.durableTree).size).toBe(1);
  });
});
