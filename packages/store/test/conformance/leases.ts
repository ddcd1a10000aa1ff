/** Conformance, ST-23: one-driver leases — atomic acquisition, fencing tokens, fenced appends. */
import { describe, expect, it } from "vitest";
import { type EventId, type LeaseInfo, LeaseLost, type SessionId } from "../../src/index.ts";
import { code, ev, failure, headOf, type Kit, session } from "./kit.ts";

export function leasesConformance(kit: Kit): void {
  describe("ST-23 leases", () => {
    it("acquire, refuse while held, take over a stale holder, renew, release; tokens only rise, across releases too", async () => {
      let t = 1_000;
      const store = await kit.open({ now: () => t });
      const s = await session(store, 1);
      expect(await store.lease(s.id, "main")).toBeUndefined();
      const a = await store.acquireLease(s.id, "main", "pid 1");
      expect(a).toEqual({ ok: true, lease: { session: s.id, branch: "main", token: 1, owner: "pid 1", acquired: 1000, renewed: 1000 } });
      expect(await store.lease(s.id, "main")).toEqual(a.ok && a.lease);
      const b = await store.acquireLease(s.id, "main", "pid 2");
      expect(b).toEqual({ ok: false, holder: a.ok && a.lease });
      expect((await store.acquireLease(s.id, "main", "pid 2", () => false)).ok).toBe(false);
      t = 2_000;
      expect(await store.renewLease(s.id, "main", 1)).toBe(true);
      expect((await store.lease(s.id, "main"))?.renewed).toBe(2000);
      const seen: LeaseInfo[] = [];
      const c = await store.acquireLease(s.id, "main", "pid 3", (holder) => {
        seen.push(holder);
        return holder.renewed < 2_500;
      });
      expect(seen.map((h) => [h.owner, h.token])).toEqual([["pid 1", 1]]);
      expect(c.ok && c.lease.token).toBe(2);
      expect(await store.renewLease(s.id, "main", 1), "the old holder lost it").toBe(false);
      expect(await store.releaseLease(s.id, "main", 1)).toBe(false);
      expect(await store.releaseLease(s.id, "main", 2)).toBe(true);
      expect(await store.lease(s.id, "main")).toBeUndefined();
      expect(await store.releaseLease(s.id, "main", 2), "released once").toBe(false);
      const d = await store.acquireLease(s.id, "main", "pid 4");
      expect(d.ok && d.lease.token, "a released token is never handed out again").toBe(3);
      // Leases are per (session, branch).
      expect(await store.acquireLease(s.id, "other", "pid 5")).toMatchObject({ ok: true, lease: { token: 1 } });
    });

    it("an error thrown by stale() passes through unchanged and nothing changes", async () => {
      const store = await kit.open();
      const s = await session(store);
      await store.acquireLease(s.id, "main", "first");
      const mine = new Error("cannot tell");
      expect(
        await failure(() =>
          store.acquireLease(s.id, "main", "second", () => {
            throw mine;
          }),
        ),
      ).toBe(mine);
      expect(await store.lease(s.id, "main")).toMatchObject({ owner: "first", token: 1 });
    });

    it("bad arguments are bad-input; a missing session is not-found; nothing is written", async () => {
      const store = await kit.open();
      const s = await session(store);
      expect(await code(() => store.acquireLease("NOPE" as SessionId, "main", "x"))).toBe("not-found");
      expect(await code(() => store.acquireLease(s.id, "main", ""))).toBe("bad-input");
      expect(await code(() => store.acquireLease(s.id, "main", "x".repeat(5000)))).toBe("bad-input");
      expect(await code(() => store.acquireLease(s.id, "a b", "x"))).toBe("bad-input");
      expect(await code(() => store.acquireLease(s.id, "main", "x", "yes" as never))).toBe("bad-input");
      expect(await code(() => store.renewLease(s.id, "main", 0))).toBe("bad-input");
      expect(await code(() => store.releaseLease(s.id, "main", 1.5))).toBe("bad-input");
      expect(await code(() => store.lease(42 as never, "main"))).toBe("bad-input");
      expect(await store.lease(s.id, "main")).toBeUndefined();
    });

    it("an append fenced with a lease token writes only while that token holds the branch: single events and group commits", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const first = await store.acquireLease(s.id, "main", "driver 1");
      if (!first.ok) throw new Error("not acquired");
      let head = await headOf(store, s.id);
      head = (await store.append(s.id, "main", head, [ev("a")], { lease: first.lease.token }))[0]?.id as EventId; // fast path
      head = (await store.append(s.id, "main", head, [ev("b"), ev("c")], { lease: first.lease.token }))[1]?.id as EventId; // group
      const second = await store.acquireLease(s.id, "main", "driver 2", () => true);
      if (!second.ok) throw new Error("not taken over");
      const before = (await store.log(s.id)).length;
      for (const events of [[ev("late")], [ev("late 1"), ev("late 2")]]) {
        const e = await failure(() => store.append(s.id, "main", head, events, { lease: first.lease.token }));
        expect(e).toBeInstanceOf(LeaseLost);
        expect((e as LeaseLost).code).toBe("lease-lost");
        expect((e as LeaseLost).holder).toMatchObject({ owner: "driver 2", token: second.lease.token });
        expect((e as LeaseLost).message).toMatch(/no longer token 1: it is held by driver 2 \(token 2\)\. Nothing was written/);
      }
      expect(await store.log(s.id)).toHaveLength(before);
      await store.releaseLease(s.id, "main", second.lease.token);
      const released = await failure(() => store.append(s.id, "main", head, [ev("x")], { lease: second.lease.token }));
      expect((released as Error).message).toMatch(/it was released/);
      // Without a token, leases are not looked at.
      expect(await store.append(s.id, "main", head, [ev("unfenced")])).toHaveLength(1);
      expect(await code(() => store.append(s.id, "main", head, [ev("x")], { lease: -1 }))).toBe("bad-input");
    });

    kit.withHandles(
      "two handles: the holder is seen by both; the other cannot take it unless stale; a fenced-off holder cannot write",
      async () => {
        const a = await kit.open();
        const s = await session(a, 1);
        const b = await kit.connect(a);
        const held = await a.acquireLease(s.id, "main", "driver a");
        if (!held.ok) throw new Error("not acquired");
        expect(await b.lease(s.id, "main")).toEqual(held.lease);
        expect(await b.acquireLease(s.id, "main", "driver b")).toEqual({ ok: false, holder: held.lease });
        const taken = await b.acquireLease(s.id, "main", "driver b", (h) => h.owner === "driver a");
        expect(taken).toMatchObject({ ok: true, lease: { token: 2, owner: "driver b" } });
        const head = await headOf(a, s.id);
        expect(await failure(() => a.append(s.id, "main", head, [ev("late")], { lease: held.lease.token }))).toBeInstanceOf(LeaseLost);
        expect(await a.renewLease(s.id, "main", held.lease.token)).toBe(false);
        expect(await b.append(s.id, "main", head, [ev("b drives")], { lease: 2 })).toHaveLength(1);
        expect(await a.lease(s.id, "main")).toMatchObject({ owner: "driver b", token: 2 });
      },
    );
  });
}
