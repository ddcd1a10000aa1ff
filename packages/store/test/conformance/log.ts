/** Conformance, ST-6 … ST-11, ST-14: the append-only log, compare-and-swap heads, forks, rewinds, chains. */
import { describe, expect, it } from "vitest";
import { type EventId, type EventMeta, HeadConflict, type SessionId, StoreError } from "../../src/index.ts";
import { body, code, ev, fails, failure, headOf, ids, type Kit, session, value } from "./kit.ts";

/** A payload over the SQLite backend's inline limit (1 MiB), so it is stored aside where a backend does that. */
const big = (tag: string) => JSON.stringify({ tag, pad: "x".repeat(1_100_000) });

export function logConformance(kit: Kit): void {
  describe("ST-6/7 the log and its chains", () => {
    it("appends events with ids, depths, priors, labels, causes and timestamps", async () => {
      const store = await kit.open({ now: () => 42 });
      const s = await session(store, 3);
      const log = await store.log(s.id);
      expect(log.map((e) => [e.depth, e.prior, e.label, e.kind, e.ts])).toEqual([
        [1, null, null, "genesis@1", 42],
        [2, s.genesis, "e0", "patch@1", 42],
        [3, log[1]?.id, "e1", "patch@1", 42],
        [4, log[2]?.id, "e2", "patch@1", 42],
      ]);
      const [m] = await store.append(s.id, "main", (log[3] as EventMeta).id, [
        { kind: "patch@1", label: "x", by: "e12", ts: 7, data: "payload" },
      ]);
      expect(await store.event((m as EventMeta).id)).toMatchObject({ by: "e12", ts: 7, data: "payload", depth: 5 });
      // Ids increase; what append returned is what every read returns.
      expect(ids(log)).toEqual([...ids(log)].sort((a, b) => a - b));
      expect(await store.eventMeta((m as EventMeta).id)).toEqual(m);
    });

    it("group commits write several events in one transaction, chained", async () => {
      const store = await kit.open();
      const s = await session(store);
      const group = await store.append(s.id, "main", s.genesis, [ev("1"), ev("2"), ev("3")]);
      expect(group.map((e) => e.depth)).toEqual([2, 3, 4]);
      expect(group.map((e) => e.prior)).toEqual([s.genesis, group[0]?.id, group[1]?.id]);
      expect((await store.branch(s.id, "main"))?.head).toBe(group[2]?.id);
      expect(await store.append(s.id, "main", group[2]?.id as EventId, []), "an empty group writes nothing").toEqual([]);
      expect(await store.log(s.id)).toHaveLength(4);
    });

    it("a group that fails half-way writes nothing", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = await headOf(store, s.id);
      expect(await failure(() => store.append(s.id, "main", head, [ev("ok"), { kind: "", data: "bad" }]))).toBeInstanceOf(StoreError);
      expect(await store.log(s.id)).toHaveLength(2);
      expect((await store.branch(s.id, "main"))?.head).toBe(head);
    });

    it("ST-8: a second writer with a stale head gets HeadConflict naming both heads, and nothing is written", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const head = await headOf(store, s.id);
      for (const events of [[ev("late")], [ev("late 1"), ev("late 2")]]) {
        const e = await failure(() => store.append(s.id, "main", s.genesis, events));
        expect(e).toBeInstanceOf(HeadConflict);
        expect((e as HeadConflict).code).toBe("conflict");
        expect((e as HeadConflict).expected).toBe(s.genesis);
        expect((e as HeadConflict).actual).toBe(head);
        expect((e as Error).message).toContain(`is at event ${head}, not ${s.genesis}`);
      }
      expect(await store.log(s.id)).toHaveLength(3);
    });

    kit.withHandles("ST-8: two handles on one database: the one that appends second conflicts", async () => {
      const a = await kit.open();
      const s = await session(a, 1);
      const b = await kit.connect(a);
      const head = await headOf(a, s.id);
      await a.append(s.id, "main", head, [ev("from a")]);
      expect(await failure(() => b.append(s.id, "main", head, [ev("from b")]))).toBeInstanceOf(HeadConflict);
      // b re-reads the head and continues; a, whose fast path remembers its own tip, then conflicts.
      const now = await headOf(b, s.id);
      await b.append(s.id, "main", now, [ev("from b, fresh")]);
      expect(await failure(() => a.append(s.id, "main", now, [ev("from a, stale")]))).toBeInstanceOf(HeadConflict);
      expect(await a.log(s.id)).toHaveLength(4);
    });

    it("ST-10: a fork is a branch at any event; it copies no event, and both lines grow independently", async () => {
      const store = await kit.open();
      const s = await session(store, 4);
      const at = s.events[1]?.id as EventId;
      const b = await store.fork(s.id, at, "try-2");
      expect(b).toMatchObject({ name: "try-2", head: at, origin: "fork", originEvent: at, headDepth: 3, pinned: true });
      expect(b, "fork returns the branch as it reads back").toEqual(await store.branch(s.id, "try-2"));
      expect(ids(await store.log(s.id, { branch: "try-2" })), "the fork's history is main's own events").toEqual(
        ids(await store.log(s.id)).slice(0, 3),
      );
      const [x] = await store.append(s.id, "try-2", at, [ev("x")]);
      expect((await store.log(s.id, { branch: "try-2" })).map((e) => e.depth)).toEqual([1, 2, 3, 4]);
      expect(ids(await store.log(s.id, { branch: "try-2" }))).toEqual([s.genesis, s.events[0]?.id, at, x?.id]);
      expect(await store.log(s.id)).toHaveLength(5);
      expect((await store.branch(s.id, "try-2"))?.pinned, "its first append made it follow its own line").toBe(false);
      await fails(() => store.fork(s.id, at, "try-2"), "exists", /already has a branch named "try-2"/);
      await fails(() => store.fork(s.id, at, "bad@name"), "bad-input", /not allowed/);
      expect((await store.verify()).events, "no event was copied").toBe(6);
    });

    it("ST-11: rewind moves the head back and keeps the abandoned head as a branch; nothing is deleted", async () => {
      const store = await kit.open();
      const s = await session(store, 4);
      const old = s.events[3]?.id as EventId;
      const to = s.events[1]?.id as EventId;
      const { branch, kept } = await store.moveHead(s.id, "main", to);
      expect(branch.head).toBe(to);
      expect(kept).toMatchObject({ name: `rewound/main/${old}`, head: old, origin: "rewind", originEvent: to });
      const [n] = await store.append(s.id, "main", to, [ev("new line")]);
      expect(n?.prior).toBe(to);
      expect(ids(await store.log(s.id))).toEqual([s.genesis, s.events[0]?.id, to, n?.id]);
      expect(ids(await store.log(s.id, { branch: kept?.name }))).toEqual([s.genesis, ...ids(s.events)]);
      // The kept branch still grows on its own line.
      await store.append(s.id, kept?.name as string, old, [ev("continued")]);
      expect(await store.log(s.id, { branch: kept?.name })).toHaveLength(6);
      expect(await store.log(s.id)).toHaveLength(4);
      // Moving forward onto a descendant abandons nothing.
      const [m] = await store.append(s.id, "main", n?.id as EventId, [ev("more")]);
      expect((await store.moveHead(s.id, "main", n?.id as EventId)).kept?.name).toBe(`rewound/main/${m?.id}`);
      expect((await store.moveHead(s.id, "main", m?.id as EventId)).kept).toBeNull();
      expect((await store.moveHead(s.id, "main", m?.id as EventId, { expected: m?.id as EventId })).kept).toBeNull();
      expect(await failure(() => store.moveHead(s.id, "main", s.genesis, { expected: to }))).toBeInstanceOf(HeadConflict);
    });

    it("ST-11: keepAs names the kept head; a taken name that points elsewhere is exists; pin starts a new line at the head", async () => {
      const store = await kit.open();
      const s = await session(store, 3);
      const [e0, e1, e2] = ids(s.events) as [EventId, EventId, EventId];
      const { kept } = await store.moveHead(s.id, "main", e0, { keepAs: "saved" });
      expect(kept).toMatchObject({ name: "saved", head: e2, origin: "rewind", originEvent: e0 });
      await store.fork(s.id, e1, "taken");
      await store.append(s.id, "main", e0, [ev("a")]);
      await fails(() => store.moveHead(s.id, "main", e1, { keepAs: "taken" }), "exists", /cannot keep the old head as "taken"/);
      // Keeping under a name that already holds that head is fine: nothing new is made.
      const head = await headOf(store, s.id);
      await store.fork(s.id, head, "same");
      expect((await store.moveHead(s.id, "main", e1, { keepAs: "same" })).kept?.name).toBe("same");
      // pin: the head stays, the branch is pinned, and its next append opens a new line there.
      const pinned = await store.moveHead(s.id, "main", e1, { pin: true });
      expect(pinned).toMatchObject({ branch: { head: e1, pinned: true }, kept: null });
      const [x] = await store.append(s.id, "main", e1, [ev("after pin")]);
      expect(x).toMatchObject({ prior: e1, depth: 4 });
      await fails(() => store.moveHead(s.id, "main", 999_999 as EventId), "not-found", /not an event of session/);
    });

    it("ST-7: chains across forks of forks resolve; ancestry and depth lookups agree", async () => {
      const store = await kit.open();
      const s = await session(store, 3);
      let head = s.events[2]?.id as EventId;
      const expected: number[] = [s.genesis, ...ids(s.events)];
      for (let f = 0; f < 30; f++) {
        // 30 nested rewinds: each goes one event back and adds two.
        const back = (await store.log(s.id)).at(-2)?.id as EventId;
        await store.moveHead(s.id, "main", back);
        expected.pop();
        const added = await store.append(s.id, "main", back, [ev(`r${f}a`), ev(`r${f}b`)]);
        expected.push(...ids(added));
        head = added[1]?.id as EventId;
      }
      expect(ids(await store.log(s.id))).toEqual(expected);
      expect(ids(await store.chain(head))).toEqual(expected);
      expect(ids(await store.chain(head, 20, 5))).toEqual(expected.slice(20, 25));
      expect(ids(await store.chainMeta(head, 0, 4, true))).toEqual(expected.slice(-4).reverse());
      expect(ids(await store.chainMeta(head, 50))).toEqual(expected.slice(50));
      expect((await store.log(s.id, { after: expected[10] as EventId, limit: 3 })).map((e) => e.id)).toEqual(expected.slice(11, 14));
      expect(ids(await store.log(s.id, { reverse: true, limit: 2 }))).toEqual(expected.slice(-2).reverse());
      for (let d = 1; d <= expected.length; d++) expect((await store.atDepth(head, d))?.id).toBe(expected[d - 1]);
      expect(await store.atDepth(head, 0)).toBeUndefined();
      expect(await store.atDepth(head, expected.length + 1)).toBeUndefined();
      expect(await store.isAncestor(expected[5] as EventId, head)).toBe(true);
      expect(await store.isAncestor(head, expected[5] as EventId)).toBe(false);
      expect(await store.isAncestor(head, head), "an event is its own ancestor").toBe(true);
      const abandoned = (await store.branches(s.id)).filter((b) => b.origin === "rewind");
      expect(abandoned).toHaveLength(30);
      for (const b of abandoned) expect(await store.isAncestor(b.head, head)).toBe(false);
      expect((await store.log(s.id)).map((e) => e.prior)).toEqual([null, ...expected.slice(0, -1)]);
      expect((await store.chainMeta(head, 0, 3, true)).map((e) => e.prior)).toEqual(expected.slice(-4, -1).reverse());
    });

    it("ST-7: firstLabeled finds the first event of a label after a depth, across the chain's segments, and nothing off the chain", async () => {
      const store = await kit.open();
      const s = await session(store, 3); // e0 e1 e2 at depths 2–4
      const e1 = s.events[1] as EventMeta;
      // a fork at e1 (a new segment) with labels of its own, and main going on with others
      const fork = await store.fork(s.id, e1.id, "alt");
      const onAlt = await store.append(s.id, "alt", fork.head, [ev("a", "x"), ev("b", "y"), ev("c", "x")]);
      const onMain = await store.append(s.id, "main", s.events[2]?.id as EventId, [ev("m", "main-only"), ev("n", "x")]);
      const altHead = onAlt[2]?.id as EventId;
      expect(await store.firstLabeled(altHead, "e0")).toEqual(s.events[0]);
      expect((await store.firstLabeled(altHead, "x"))?.id, "the first x of the fork's own segment").toBe(onAlt[0]?.id);
      expect((await store.firstLabeled(altHead, "x", onAlt[0]?.depth))?.id, "after a depth: the next one").toBe(onAlt[2]?.id);
      expect(await store.firstLabeled(altHead, "x", onAlt[2]?.depth), "none after the last").toBeUndefined();
      expect(await store.firstLabeled(altHead, "e2"), "main's e2 is not on the fork's chain").toBeUndefined();
      expect(await store.firstLabeled(altHead, "main-only")).toBeUndefined();
      expect((await store.firstLabeled(onMain[1]?.id as EventId, "x"))?.id, "main's own x").toBe(onMain[1]?.id);
      expect(await store.firstLabeled(onMain[1]?.id as EventId, "y"), "the fork's y is not on main").toBeUndefined();
      expect(await store.firstLabeled(e1.id, "e2"), "nothing past the head").toBeUndefined();
      await fails(() => store.firstLabeled(999_999 as EventId, "x"), "not-found", /999999/);
    });

    it("ST-7: interleaved sessions read back exactly their own chains, whole and in tails", async () => {
      const store = await kit.open();
      const heads: { id: SessionId; head: EventId; chain: EventId[] }[] = [];
      for (let i = 0; i < 40; i++) {
        const { session: x, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
        heads.push({ id: x.id, head: genesis.id, chain: [genesis.id] });
      }
      await store.transaction(
        body(function* () {
          for (let k = 0; k < 30; k++)
            for (const h of heads) {
              const [m] = yield* value(store.append(h.id, "main", h.head, [ev(`{"k":${k},"pad":"${"x".repeat(200)}"}`)]));
              h.head = (m as EventMeta).id;
              h.chain.push(h.head);
            }
        }),
      );
      for (const h of heads.slice(0, 5)) {
        expect(ids(await store.chain(h.head))).toEqual(h.chain);
        expect(ids(await store.chain(h.head, 20))).toEqual(h.chain.slice(20));
        expect(ids(await store.chain(h.head, 5, 7))).toEqual(h.chain.slice(5, 12));
        expect(await store.chainData(h.head, 29)).toEqual((await store.chain(h.head, 29)).map((e) => e.data));
        expect(ids(await store.log(h.id, { after: h.chain[25] as EventId }))).toEqual(h.chain.slice(26));
      }
    });

    kit.withHandles("ST-6: the log survives reopening exactly", async () => {
      const store = await kit.open();
      const s = await session(store, 5);
      const head = await headOf(store, s.id);
      const before = JSON.stringify([await store.chain(head), await store.branches(s.id), await store.listSessions()]);
      await store.close();
      const again = await kit.connect(store);
      expect(JSON.stringify([await again.chain(head), await again.branches(s.id), await again.listSessions()])).toBe(before);
    });

    it("ST-6: events are immutable: the store has no method that changes or removes one (only a whole session goes, ST-35)", async () => {
      const store = await kit.open();
      const names = new Set<string>();
      for (let p = Object.getPrototypeOf(store); p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p))
        for (const n of Object.getOwnPropertyNames(p)) names.add(n);
      expect(names.has("append")).toBe(true);
      expect([...names].filter((n) => /update(?!Session)|delete|remove(?!Session)|edit|rewrite|truncate/i.test(n))).toEqual([]);
    });

    it("ST-14: payloads over the inline limit are stored once and read back transparently, by every read", async () => {
      const store = await kit.open();
      const s = await session(store);
      const payload = big("a");
      const [a] = await store.append(s.id, "main", s.genesis, [ev(payload)]);
      const [b] = await store.append(s.id, "main", a?.id as EventId, [ev(payload)]);
      const [c] = await store.append(s.id, "main", b?.id as EventId, [ev("small")]);
      const head = c?.id as EventId;
      expect((await store.event(b?.id as EventId))?.data).toBe(payload);
      expect((await store.events([a?.id as EventId, head])).map((e) => e.data)).toEqual([payload, "small"]);
      expect((await store.chain(head)).map((e) => e.data.length)).toEqual([2, payload.length, payload.length, 5]);
      expect(await store.chainData(head)).toEqual(["{}", payload, payload, "small"]);
      expect((await store.verify()).findings).toEqual([]);
    });

    it("ST-7/14: chainData gives the chain's payloads in order, large ones included, across forks", async () => {
      const store = await kit.open();
      const { session: s, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      const small = (i: number) => ({ kind: "patch@1", data: JSON.stringify({ n: i }) });
      const large = (i: number) => ({ kind: "patch@1", data: big(`n${i}`) });
      const a = await store.append(s.id, "main", genesis.id, [small(1), large(2), small(3), large(4)]);
      await store.fork(s.id, (a[1] as EventMeta).id, "f");
      const f = await store.append(s.id, "f", (a[1] as EventMeta).id, [large(5), small(6)]);
      for (const head of [(a[3] as EventMeta).id, (f[1] as EventMeta).id]) {
        expect(await store.chainData(head)).toEqual((await store.chain(head)).map((e) => e.data));
        expect(await store.chainData(head, 2, 2)).toEqual((await store.chain(head, 2, 2)).map((e) => e.data));
      }
    });

    it("ST-28: eventData gives payloads by id — any order, duplicates, gaps, other sessions and lines, blob-backed ones — and leaves missing ids out", async () => {
      const store = await kit.open();
      const s = await session(store);
      const other = await session(store);
      const want = new Map<EventId, string>();
      let head = s.genesis;
      let otherHead = other.genesis;
      // Interleaved with another session's events, so runs of this session's ids have gaps.
      for (let i = 0; i < 40; i++) {
        const data = i % 7 === 3 ? big(`p${i}`) : JSON.stringify({ i });
        const [e] = await store.append(s.id, "main", head, [ev(data)]);
        head = e?.id as EventId;
        want.set(head, data);
        if (i % 3 === 0) [{ id: otherHead }] = (await store.append(other.id, "main", otherHead, [ev(`o${i}`)])) as [EventMeta];
      }
      const mine = [...want.keys()];
      await store.fork(s.id, mine[9] as EventId, "f");
      const [f] = await store.append(s.id, "f", mine[9] as EventId, [ev("on the fork")]);
      want.set(f?.id as EventId, "on the fork");
      want.set(s.genesis, "{}");
      const asked = [...want.keys()].reverse();
      const got = await store.eventData([...asked, 999_999 as EventId, asked[0] as EventId, otherHead]);
      expect(got.get(otherHead)).toBe("o39");
      got.delete(otherHead);
      expect(new Map([...got].sort((x, y) => x[0] - y[0]))).toEqual(new Map([...want].sort((x, y) => x[0] - y[0])));
      // Sparse picks and every other id: the same payloads as `events`.
      for (const pick of [mine.filter((_, i) => i % 2 === 0), mine.filter((_, i) => i % 11 === 0), [mine[5] as EventId]]) {
        const m = await store.eventData(pick);
        expect([...m.keys()].sort((x, y) => x - y)).toEqual([...pick].sort((x, y) => x - y));
        for (const e of await store.events(pick)) expect(m.get(e.id)).toBe(e.data);
      }
      expect((await store.eventData([])).size).toBe(0);
    });

    it("ST-20: missing sessions, branches and events are clear errors; a closed store says so", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      await fails(() => store.append(s.id, "nope", s.genesis, [ev("x")]), "not-found", /branch "nope" of session .* does not exist/);
      await fails(() => store.fork(s.id, 999 as EventId, "f"), "not-found", /event 999 is not an event of session/);
      await fails(() => store.moveHead(s.id, "main", 999 as EventId), "not-found", /not an event of session/);
      await fails(() => store.log(s.id, { after: 999 as EventId }), "not-found", /is not on branch "main"/);
      await fails(() => store.log(s.id, { branch: "nope" }), "not-found", /branch "nope" of session .* does not exist/);
      await fails(() => store.chain(999 as EventId), "not-found", /event 999 does not exist/);
      await fails(() => store.nearestSnapshot(999 as EventId), "not-found", /event 999 does not exist/);
      expect(await store.event(999 as EventId)).toBeUndefined();
      expect(await store.eventMeta(999 as EventId)).toBeUndefined();
      expect(await store.events([999 as EventId, s.genesis])).toHaveLength(1);
      // An event of another session is not an event of this one.
      const other = await session(store, 1);
      await fails(() => store.fork(s.id, other.genesis, "x"), "not-found", /is not an event of session/);
      expect(await store.isAncestor(other.genesis, s.genesis)).toBe(false);
      await store.close();
      expect(store.closed).toBe(true);
      await fails(() => store.listSessions(), "closed", /was closed/);
      expect(await code(() => store.close()), "closing twice is harmless").toBe("no error");
    });
  });
}
