/** Conformance, ST-5: sessions, listings, metadata merges, reserved numbers. */
import { describe, expect, it } from "vitest";
import type { SessionId } from "../../src/index.ts";
import { code, fails, type Kit, session } from "./kit.ts";

export function sessionsConformance(kit: Kit): void {
  describe("ST-5 sessions", () => {
    it("creates, finds by prefix, lists newest first, updates title and metadata", async () => {
      let t = 1_000;
      const store = await kit.open({ now: () => (t += 1000) });
      const a = (await store.createSession({ title: "a", metadata: { k: 1 }, genesis: { kind: "genesis@1", data: "{}" } })).session;
      const b = (await store.createSession({ title: "b", genesis: { kind: "genesis@1", data: "{}" } })).session;
      expect(a.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect((await store.listSessions()).map((s) => s.title)).toEqual(["b", "a"]);
      expect((await store.findSessions(a.id.slice(0, 12).toLowerCase())).map((s) => s.id)).toEqual([a.id]);
      expect(await store.findSessions("")).toHaveLength(2);
      expect(await store.findSessions("not base32!")).toEqual([]);
      const u = await store.updateSession(a.id, { title: "renamed", metadata: { j: 2 } });
      expect(u.metadata).toEqual({ k: 1, j: 2 });
      expect((await store.getSession(a.id))?.title).toBe("renamed");
      expect((await store.getSession(b.id))?.metadata).toEqual({});
    });

    it("ST-30: lists in pages, newest first: limit, and before the previous page's last id", async () => {
      let t = 1_000;
      const store = await kit.open({ now: () => (t += 1000) });
      const made: SessionId[] = [];
      for (let i = 0; i < 7; i++)
        made.push((await store.createSession({ title: `s${i}`, genesis: { kind: "genesis@1", data: "{}" } })).session.id);
      const newest = [...made].reverse();
      expect((await store.listSessions({ limit: 3 })).map((s) => s.id)).toEqual(newest.slice(0, 3));
      const pages: SessionId[][] = [];
      let before: SessionId | undefined;
      for (;;) {
        const page = (await store.listSessions(before === undefined ? { limit: 3 } : { limit: 3, before })).map((s) => s.id);
        if (page.length === 0) break;
        pages.push(page);
        before = page.at(-1);
      }
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(newest);
      expect((await store.listSessions({ before: made[3] as SessionId })).map((s) => s.id)).toEqual(newest.slice(4));
      expect(await store.listSessions({ limit: 0 })).toEqual([]);
      // A cursor that names no session still pages by id.
      expect(await store.listSessions({ before: "0000000000000000000000000Z" as SessionId })).toEqual([]);
    });

    it("ST-30: recentSessions ranks by the newest branch head (any branch, pinned or not), ties to the newer session; limit; one row per session", async () => {
      let t = 1_000;
      const store = await kit.open({ now: () => (t += 1000) });
      const make = async (title: string) => (await store.createSession({ title, genesis: { kind: "genesis@1", data: "{}" } })).session;
      const a = await make("a");
      const b = await make("b");
      const c = await make("c");
      const d = await make("d");
      // Nothing appended yet: by their genesis events (created in order), newest first.
      expect((await store.recentSessions()).map((r) => r.session.title)).toEqual(["d", "c", "b", "a"]);
      const head = async (id: SessionId, branch = "main") => (await store.branch(id, branch))?.head as never;
      // a: an event later than every genesis; c: on a fork (a pinned head, then its own segment) later still.
      const [late] = await store.append(a.id, "main", await head(a.id), [{ kind: "patch@1", data: "{}", ts: 50_000 }]);
      const cg = await head(c.id);
      await store.fork(c.id, cg, "x");
      const [later] = await store.append(c.id, "x", cg, [{ kind: "patch@1", data: "{}", ts: 60_000 }]);
      // b: the same time as a's last event (a tie: the newer session, b, first); d: an older ts than its genesis.
      const [tie] = await store.append(b.id, "main", await head(b.id), [{ kind: "patch@1", data: "{}", ts: 50_000 }]);
      await store.append(d.id, "main", await head(d.id), [{ kind: "patch@1", data: "{}", ts: 10 }]);
      const all = await store.recentSessions();
      expect(all.map((r) => r.session.title)).toEqual(["c", "b", "a", "d"]);
      expect(all.map((r) => [r.lastEvent, r.lastActivity])).toEqual([
        [later?.id, 60_000],
        [tie?.id, 50_000],
        [late?.id, 50_000],
        [(await store.branch(d.id, "main"))?.head, 10],
      ]);
      expect(all[0]?.session).toEqual(await store.getSession(c.id));
      expect((await store.recentSessions(2)).map((r) => r.session.title)).toEqual(["c", "b"]);
      expect(await store.recentSessions(0)).toEqual([]);
      // The same ranking as reading every branch head of every session.
      const brute = [];
      for (const s of await store.listSessions()) {
        let best: { id: number; ts: number } | undefined;
        for (const br of await store.branches(s.id)) {
          const m = await store.eventMeta(br.head);
          if (m !== undefined && (best === undefined || m.ts > best.ts || (m.ts === best.ts && m.id > best.id))) best = m;
        }
        brute.push({ id: s.id, ts: best?.ts ?? s.created });
      }
      brute.sort((x, y) => y.ts - x.ts || (y.id < x.id ? -1 : 1));
      expect(all.map((r) => r.session.id)).toEqual(brute.map((x) => x.id));
    });

    it("a session's creation time is the store's clock, and its genesis event is depth 1 on main with no prior", async () => {
      const store = await kit.open({ now: () => 5_000 });
      const { session: s, genesis } = await store.createSession({ genesis: { kind: "genesis@1", label: "g", data: '{"x":1}' } });
      expect(s).toEqual({ id: s.id, title: null, created: 5000, metadata: {} });
      expect(genesis).toMatchObject({
        session: s.id,
        prior: null,
        depth: 1,
        kind: "genesis@1",
        label: "g",
        by: null,
        ts: 5000,
        data: '{"x":1}',
      });
      expect(await store.event(genesis.id)).toEqual(genesis);
      expect(await store.branches(s.id)).toEqual([
        { session: s.id, name: "main", head: genesis.id, headDepth: 1, created: 5000, origin: "genesis", pinned: false, originEvent: null },
      ]);
    });

    it("updates keep what they do not name: a title alone keeps the metadata, metadata alone keeps the title; null clears the title", async () => {
      const store = await kit.open();
      const { session: s } = await store.createSession({ title: "t", metadata: { a: 1 }, genesis: { kind: "genesis@1", data: "{}" } });
      expect(await store.updateSession(s.id, { title: "u" })).toMatchObject({ title: "u", metadata: { a: 1 } });
      expect(await store.updateSession(s.id, { metadata: { a: 2, b: { deep: true } } })).toMatchObject({
        title: "u",
        metadata: { a: 2, b: { deep: true } },
      });
      expect(await store.updateSession(s.id, { title: null })).toMatchObject({ title: null, metadata: { a: 2, b: { deep: true } } });
      expect(await store.getSession(s.id)).toMatchObject({ title: null, metadata: { a: 2, b: { deep: true } } });
    });

    it("unknown sessions: getSession is undefined, prefixes find nothing, updates are not-found", async () => {
      const store = await kit.open();
      await session(store);
      const unknown = "01ZZZZZZZZZZZZZZZZZZZZZZZZ" as SessionId;
      expect(await store.getSession(unknown)).toBeUndefined();
      expect(await store.findSessions("01ZZZZ")).toEqual([]);
      await fails(() => store.updateSession(unknown, { title: "x" }), "not-found", /session 01Z+ does not exist/);
      expect(await store.branches(unknown)).toEqual([]);
      expect(await store.branch(unknown, "main")).toBeUndefined();
    });
  });

  describe("ST-5 reserved numbers", () => {
    it("reserve hands out consecutive numbers from 1 per session, never the same twice", async () => {
      const store = await kit.open();
      const a = await session(store);
      const b = await session(store);
      expect(await store.reserve(a.id)).toBe(1);
      expect(await store.reserve(a.id, 10)).toBe(2);
      expect(await store.reserve(a.id)).toBe(12);
      expect(await store.reserve(b.id, 3), "each session counts on its own").toBe(1);
      expect(await store.reserve(b.id)).toBe(4);
      expect(await code(() => store.reserve(a.id, 0))).toBe("bad-input");
      expect(await code(() => store.reserve("01ZZZZZZZZZZZZZZZZZZZZZZZZ" as SessionId))).toBe("not-found");
      expect(await store.reserve(a.id), "a refused reservation takes nothing").toBe(13);
    });

    kit.withHandles("two handles on one database never get the same number", async () => {
      const store = await kit.open();
      const s = await session(store);
      const other = await kit.connect(store);
      const got: number[] = [];
      for (let i = 0; i < 20; i++) got.push(await (i % 2 ? store : other).reserve(s.id, 2));
      expect(new Set(got).size).toBe(20);
      expect([...got].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => 1 + 2 * i));
    });
  });
}
