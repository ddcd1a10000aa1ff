/** ST-23: one-driver leases in the database — atomic acquisition, fencing tokens, fenced appends. */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EventId, type LeaseInfo, LeaseLost, openStore, type SessionId, StoreError } from "../src/index.ts";
import { ev, fileStore, run, session, tempDir } from "./helpers.ts";

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError);
    return (e as StoreError).code;
  }
  throw new Error("expected a StoreError");
};

describe("ST-23 leases", () => {
  it("acquire, refuse while held, take over a stale holder, renew, release; tokens only rise, across releases too", () => {
    let t = 1_000;
    const store = openStore(":memory:", { now: () => t });
    const s = session(store, 1);
    expect(store.lease(s.id, "main")).toBeUndefined();
    const a = store.acquireLease(s.id, "main", "pid 1");
    expect(a).toEqual({ ok: true, lease: { session: s.id, branch: "main", token: 1, owner: "pid 1", acquired: 1000, renewed: 1000 } });
    expect(store.lease(s.id, "main")).toEqual(a.ok && a.lease);
    const b = store.acquireLease(s.id, "main", "pid 2");
    expect(b).toEqual({ ok: false, holder: a.ok && a.lease });
    expect(store.acquireLease(s.id, "main", "pid 2", () => false).ok).toBe(false);
    t = 2_000;
    expect(store.renewLease(s.id, "main", 1)).toBe(true);
    expect(store.lease(s.id, "main")?.renewed).toBe(2000);
    const seen: LeaseInfo[] = [];
    const c = store.acquireLease(s.id, "main", "pid 3", (holder) => {
      seen.push(holder);
      return holder.renewed < 2_500;
    });
    expect(seen.map((h) => [h.owner, h.token])).toEqual([["pid 1", 1]]);
    expect(c.ok && c.lease.token).toBe(2);
    expect(store.renewLease(s.id, "main", 1), "the old holder lost it").toBe(false);
    expect(store.releaseLease(s.id, "main", 1)).toBe(false);
    expect(store.releaseLease(s.id, "main", 2)).toBe(true);
    expect(store.lease(s.id, "main")).toBeUndefined();
    expect(store.releaseLease(s.id, "main", 2), "released once").toBe(false);
    const d = store.acquireLease(s.id, "main", "pid 4");
    expect(d.ok && d.lease.token, "a released token is never handed out again").toBe(3);
    // Leases are per (session, branch).
    expect(store.acquireLease(s.id, "other", "pid 5")).toMatchObject({ ok: true, lease: { token: 1 } });
  });

  it("an error thrown by stale() passes through unchanged and nothing changes", () => {
    const store = openStore(":memory:");
    const s = session(store);
    store.acquireLease(s.id, "main", "first");
    const mine = new Error("cannot tell");
    expect(() =>
      store.acquireLease(s.id, "main", "second", () => {
        throw mine;
      }),
    ).toThrow(mine);
    expect(store.lease(s.id, "main")).toMatchObject({ owner: "first", token: 1 });
  });

  it("bad arguments are bad-input; a missing session is not-found; nothing is written", () => {
    const store = openStore(":memory:");
    const s = session(store);
    expect(code(() => store.acquireLease("NOPE" as SessionId, "main", "x"))).toBe("not-found");
    expect(code(() => store.acquireLease(s.id, "main", ""))).toBe("bad-input");
    expect(code(() => store.acquireLease(s.id, "main", "x".repeat(5000)))).toBe("bad-input");
    expect(code(() => store.acquireLease(s.id, "a b", "x"))).toBe("bad-input");
    expect(code(() => store.acquireLease(s.id, "main", "x", "yes" as never))).toBe("bad-input");
    expect(code(() => store.renewLease(s.id, "main", 0))).toBe("bad-input");
    expect(code(() => store.releaseLease(s.id, "main", 1.5))).toBe("bad-input");
    expect(code(() => store.lease(42 as never, "main"))).toBe("bad-input");
    expect(store.lease(s.id, "main")).toBeUndefined();
  });

  it("an append fenced with a lease token writes only while that token holds the branch: fast path and group commits", () => {
    const store = openStore(":memory:");
    const s = session(store, 2);
    const first = store.acquireLease(s.id, "main", "driver 1");
    if (!first.ok) throw new Error("not acquired");
    let head = store.branch(s.id, "main")?.head as EventId;
    head = store.append(s.id, "main", head, [ev("a")], { lease: first.lease.token })[0]?.id as EventId; // fast path
    head = store.append(s.id, "main", head, [ev("b"), ev("c")], { lease: first.lease.token })[1]?.id as EventId; // group
    const second = store.acquireLease(s.id, "main", "driver 2", () => true);
    if (!second.ok) throw new Error("not taken over");
    const before = store.log(s.id).length;
    for (const events of [[ev("late")], [ev("late 1"), ev("late 2")]]) {
      try {
        store.append(s.id, "main", head, events, { lease: first.lease.token });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(LeaseLost);
        expect((e as LeaseLost).code).toBe("lease-lost");
        expect((e as LeaseLost).holder).toMatchObject({ owner: "driver 2", token: second.lease.token });
        expect((e as LeaseLost).message).toMatch(/no longer token 1: it is held by driver 2 \(token 2\)\. Nothing was written/);
      }
    }
    expect(store.log(s.id)).toHaveLength(before);
    store.releaseLease(s.id, "main", second.lease.token);
    expect(() => store.append(s.id, "main", head, [ev("x")], { lease: second.lease.token })).toThrow(/it was released/);
    // Without a token, leases are not looked at.
    expect(store.append(s.id, "main", head, [ev("unfenced")])).toHaveLength(1);
    expect(code(() => store.append(s.id, "main", head, [ev("x")], { lease: -1 }))).toBe("bad-input");
  });

  it("read-only opens: the holder is visible; a file without the lease table (schema 2, unmigrated) has none; acquiring is read-only", () => {
    const { store, path } = fileStore();
    const s = session(store, 1);
    store.acquireLease(s.id, "main", "driver");
    store.close();
    const ro = openStore(path, { readonly: true });
    expect(ro.lease(s.id, "main")?.owner).toBe("driver");
    expect(code(() => ro.acquireLease(s.id, "main", "reader", () => true))).toBe("read-only");
    ro.close();
    const v2 = join(tempDir(), "v2.db");
    copyFileSync(join(import.meta.dirname, "../../../fixtures/store/v2.db"), v2);
    const old = openStore(v2, { readonly: true });
    const id = old.listSessions()[0]?.id as SessionId;
    expect(old.lease(id, "main")).toBeUndefined();
    expect(code(() => old.acquireLease(id, "main", "reader"))).toBe("read-only");
    expect(code(() => old.releaseLease(id, "main", 1))).toBe("read-only");
  });

  it("six processes racing in lockstep for many rounds: never two holders, tokens never repeat", async () => {
    const { store, path } = fileStore();
    const s = session(store);
    store.close();
    const rounds = 24;
    const racers = 6;
    const start = Date.now() + 5000;
    const child = join(import.meta.dirname, "lease-racer.ts");
    const results = await Promise.all(
      Array.from({ length: racers }, (_, i) =>
        run(process.execPath, ["--import", "tsx", child, path, s.id, String(i), String(rounds), String(start), "80"]),
      ),
    );
    const lines = results.flatMap((r) => {
      expect(r.code, r.err).toBe(0);
      return r.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { round: number; ok: boolean; token: number; appended: boolean });
    });
    expect(lines).toHaveLength(rounds * racers);
    const wins = lines.filter((l) => l.ok);
    for (let round = 0; round < rounds; round++)
      expect(wins.filter((w) => w.round === round).length, `round ${round}`).toBeLessThanOrEqual(1);
    expect(wins.length).toBeGreaterThan(rounds / 2);
    expect(new Set(wins.map((w) => w.token)).size, "every acquisition got its own token").toBe(wins.length);
    const byRound = [...wins].sort((a, b) => a.round - b.round).map((w) => w.token);
    expect(byRound, "tokens rise round after round").toEqual([...byRound].sort((a, b) => a - b));
    const after = openStore(path);
    const appended = after.log(s.id).filter((e) => e.label?.startsWith("round"));
    expect(appended.length, "a fenced append per acquisition, unless fenced off").toBe(wins.filter((w) => w.appended).length);
    expect(new Set(appended.map((e) => e.label?.split(" ")[1])).size, "never two appends of one round").toBe(appended.length);
    expect(after.lease(s.id, "main")?.token).toBe(Math.max(...byRound));
    after.close();
  });
});
