/**
 * Conformance, ST-17: verify of a healthy store, the engine's hooks, progress, and findings rather
 * than exceptions. (Damage made in SQL is the SQLite backend's own test: snapshots.test.ts,
 * digest.test.ts, damage.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { type EventId, type SessionId, StoreError } from "../../src/index.ts";
import { ev, fingerprint, headOf, type Kit, session } from "./kit.ts";

export function verifyConformance(kit: Kit): void {
  describe("ST-17 verify", () => {
    it("a healthy store verifies clean and counts what it checked", async () => {
      const store = await kit.open();
      const s = await session(store, 5);
      await store.fork(s.id, s.events[1]?.id as EventId, "f");
      await store.append(s.id, "f", s.events[1]?.id as EventId, [ev("z".repeat(1_100_000))]);
      await store.putSnapshot(s.events[2]?.id as EventId, "h", [await store.putBlob("p")]);
      const r = await store.verify();
      expect(r).toMatchObject({ ok: true, sessions: 1, events: 7, snapshots: 1, findings: [] });
      expect(r.blobs).toBeGreaterThanOrEqual(2);
      const other = await session(store, 2);
      expect(await store.verify(other.id)).toMatchObject({ ok: true, sessions: 1, events: 3, snapshots: 0, findings: [] });
      expect(await store.verify()).toMatchObject({ ok: true, sessions: 2, events: 10 });
    });

    it("passes payloads and snapshots to the engine's hooks and reports progress", async () => {
      const store = await kit.open();
      const s = await session(store, 3);
      await store.putSnapshot(s.events[0]?.id as EventId, "h", []);
      const seen: number[] = [];
      const r = await store.verify(s.id, {
        checkEvent: (e) => (e.data.includes('"n":1') ? "payload says no" : undefined),
        checkSnapshot: (snap) => (snap.header === "h" ? "snapshot differs" : undefined),
        progress: (done) => seen.push(done),
      });
      expect(r.findings.map((f) => [f.code, f.message])).toEqual([
        ["bad-event", `event ${s.events[1]?.id}: payload says no`],
        ["snapshot-mismatch", `snapshot at event ${s.events[0]?.id}: snapshot differs`],
      ]);
      expect(r.findings.map((f) => [f.session, f.event])).toEqual([
        [s.id, s.events[1]?.id],
        [s.id, s.events[0]?.id],
      ]);
      expect(r.ok).toBe(false);
      expect(seen.at(-1)).toBe(4);
    });

    it("the hooks get every event as stored, digest included, and every snapshot with its session", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      await store.putSnapshot(s.events[1]?.id as EventId, "h", [await store.putBlob("p")]);
      const events: unknown[] = [];
      const snapshots: unknown[] = [];
      await store.verify(s.id, {
        checkEvent: (e) => void events.push(e),
        checkSnapshot: (snap, session) => void snapshots.push([snap, session]),
      });
      expect(events).toEqual(await store.chain(await headOf(store, s.id)));
      expect(snapshots).toEqual([[await store.nearestSnapshot(s.events[1]?.id as EventId), s.id]]);
    });

    it("each finding is reported once and names its event once, also when the hook's message names it already", async () => {
      const store = await kit.open();
      const s = await session(store, 3);
      const target = s.events[1]?.id as EventId;
      const r = await store.verify(s.id, {
        checkEvent: (e) => (e.id === target ? `event ${e.id}: payload is not JSON` : undefined),
      });
      expect(r.findings.map((f) => f.message)).toEqual([`event ${target}: payload is not JSON`]);
    });

    it("a hook that throws is a finding for that event or snapshot; the walk goes on", async () => {
      const store = await kit.open();
      const s = await session(store, 3);
      await store.putSnapshot(s.events[2]?.id as EventId, "h", []);
      const r = await store.verify(s.id, {
        checkEvent: (e) => {
          if (e.data.includes('"n":1')) throw new TypeError("the engine's decoder threw");
          return undefined;
        },
        checkSnapshot: () => {
          throw new Error("replay failed");
        },
      });
      expect(r.findings.map((f) => f.code)).toEqual(["bad-event", "snapshot-mismatch"]);
      expect(r.findings[0]?.message).toMatch(/could not be checked: the engine's decoder threw/);
      expect(r.findings[1]?.message).toMatch(/could not be checked: replay failed/);
      expect(r.events).toBe(4);
    });

    it("verify writes nothing: a hook that tries to write is refused, and that is its finding", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const before = await fingerprint(store);
      const refused: unknown[] = [];
      const pending: Promise<unknown>[] = [];
      const r = await store.verify(s.id, {
        checkEvent: (e) => {
          try {
            // The asynchronous port refuses with a rejected promise (the hook cannot wait for it).
            const write = store.append(s.id, "main", e.id, [ev("from a hook")]) as unknown;
            if (write instanceof Promise) pending.push(write.catch((x: unknown) => refused.push(x)));
          } catch (x) {
            refused.push(x);
            throw x;
          }
          return undefined;
        },
      });
      await Promise.all(pending);
      expect(refused).toHaveLength(3);
      for (const x of refused) {
        expect(x).toBeInstanceOf(StoreError);
        expect((x as StoreError).code).toBe("bad-input");
        expect((x as Error).message).toMatch(/inside store\.readTransaction/);
      }
      // A synchronous store's hook sees the refusal at once: it is the hook's finding.
      expect(r.findings.every((f) => f.code === "bad-event" && /inside store\.readTransaction/.test(f.message))).toBe(true);
      expect(r.findings).toHaveLength(kit.traits.asynchronous === true ? 0 : 3);
      expect(await fingerprint(store)).toBe(before);
    });

    it("verify of a session that does not exist says so", async () => {
      const store = await kit.open();
      await session(store, 1);
      const r = await store.verify("01ZZZZZZZZZZZZZZZZZZZZZZZZ" as SessionId);
      expect(r.ok).toBe(false);
      expect(r.findings.map((f) => [f.code, f.message])).toContainEqual(["schema", "session 01ZZZZZZZZZZZZZZZZZZZZZZZZ does not exist"]);
      expect(r.findings.every((f) => f.session === "01ZZZZZZZZZZZZZZZZZZZZZZZZ")).toBe(true);
    });
  });
}
