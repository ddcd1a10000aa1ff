/**
 * Conformance, ST-35 and ST-36: removing whole sessions (everything of theirs, or nothing; refused
 * while driven) and collecting the blobs nothing left reaches (never one that is reachable).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventId, InUse, type SessionId, type Store, textRefs } from "../../src/index.ts";
import { body, code, ev, fails, failure, fingerprint, headOf, type Kit, session, value } from "./kit.ts";

/** A session with a fork, a kept rewound head, a snapshot, search text and a released lease. */
async function fullSession(store: Store, word: string): Promise<{ id: SessionId; page: string }> {
  const s = await session(store, 3);
  const head = await headOf(store, s.id);
  await store.fork(s.id, s.genesis, "alt");
  await store.append(s.id, "alt", s.genesis, [{ ...ev(`{"alt":1}`), search: `${word} on alt` }]);
  await store.append(s.id, "main", head, [{ ...ev(`{"m":1}`), search: `${word} on main` }]);
  await store.moveHead(s.id, "main", head);
  const page = await store.putBlob(`page of ${word}`);
  await store.putSnapshot(head, "{}", [page, null]);
  const lease = await store.acquireLease(s.id, "main", "me");
  if (lease.ok) await store.releaseLease(s.id, "main", lease.lease.token);
  return { id: s.id, page };
}

export function removalConformance(kit: Kit): void {
  describe("ST-35 removing sessions", () => {
    it("removes every branch, event, snapshot, lease and search row of the session, and nothing of the others", async () => {
      const store = await kit.open();
      const kept = await fullSession(store, "kept");
      expect(await store.getSession(kept.id)).toBeDefined();
      const before = await fingerprint(store);
      const gone = await fullSession(store, "doomed");
      const branches = await store.branches(gone.id);
      expect(branches.map((b) => b.name)).toEqual(expect.arrayContaining(["alt", "main", expect.stringMatching(/^rewound\/main\//)]));
      expect(branches.length).toBe(3);
      const events = (await store.log(gone.id, { branch: "alt" })).concat(await store.log(gone.id));
      const dry = await store.removeSession(gone.id, { dryRun: true });
      expect(dry).toMatchObject({ session: { id: gone.id, title: "test" }, branches: 3, events: 6, snapshots: 1 });
      expect(await store.getSession(gone.id), "a dry run removes nothing").toBeDefined();
      expect(await store.removeSession(gone.id)).toEqual(dry);
      expect(await store.getSession(gone.id)).toBeUndefined();
      expect(await store.branches(gone.id)).toEqual([]);
      for (const e of events) expect(await store.eventMeta(e.id)).toBeUndefined();
      expect(await store.search({ text: "doomed" })).toEqual([]);
      expect((await store.search({ text: "kept" })).length).toBe(2);
      expect(await store.lease(gone.id, "main")).toBeUndefined();
      expect(await store.hasBlob(gone.page), "blobs stay until a collection").toBe(true);
      // The other session reads as it did; only the blob count (the removed session's stay) differs.
      const counts = /\[\d+,\d+,\d+,\d+\]\]$/;
      expect((await fingerprint(store)).replace(counts, "")).toBe(before.replace(counts, ""));
      expect((await store.verify()).ok).toBe(true);
      expect(await code(() => store.removeSession(gone.id)), "removed once").toBe("not-found");
    });

    it("after removing the newest session, new sessions and branches read and verify (ids are never taken twice)", async () => {
      const store = await kit.open();
      const a = await session(store, 2);
      const b = await session(store, 2);
      const bEvents = await store.log(b.id);
      await store.fork(b.id, b.genesis, "f");
      await store.append(b.id, "f", b.genesis, [ev("{}")]);
      await store.removeSession(b.id);
      const c = await session(store, 2);
      await store.fork(c.id, c.genesis, "g");
      await store.append(c.id, "g", c.genesis, [ev(`{"g":1}`)]);
      expect((await store.log(c.id, { branch: "g" })).map((e) => e.depth)).toEqual([1, 2]);
      expect((await store.log(a.id)).length).toBe(3);
      expect((await store.verify()).ok).toBe(true);
      expect(bEvents.length).toBe(3);
    });

    it("refuses a session with a held lease (InUse, in-use) and changes nothing; `live` judges holders", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      await store.acquireLease(s.id, "main", "driver 1");
      const before = await fingerprint(store);
      const e = await fails(() => store.removeSession(s.id), "in-use", /driver 1/, /nothing was changed/);
      expect(e).toBeInstanceOf(InUse);
      expect((e as InUse).holder).toMatchObject({ session: s.id, branch: "main", owner: "driver 1" });
      const seen: string[] = [];
      await fails(
        () =>
          store.removeSession(s.id, {
            live: (h) => {
              seen.push(h.owner);
              return true;
            },
          }),
        "in-use",
      );
      expect(seen).toEqual(["driver 1"]);
      expect(await fingerprint(store)).toBe(before);
      expect((await store.removeSession(s.id, { live: () => false })).events).toBe(2);
      expect(await store.getSession(s.id)).toBeUndefined();
    });

    it("inside a transaction that rolls back, the session stays whole", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const before = await fingerprint(store);
      const boom = new Error("undo");
      const thrown = await failure(() =>
        store.transaction(
          body(function* () {
            yield* value(store.removeSession(s.id));
            throw boom;
          }),
        ),
      );
      expect(thrown).toBe(boom);
      expect(await fingerprint(store)).toBe(before);
    });
  });

  describe("ST-36 collecting garbage", () => {
    it("reclaims what nothing reaches and keeps what anything reaches, through payloads, pages, chunks and blobs", async () => {
      const store = await kit.open();
      const leaf = await store.putBlob("leaf text");
      const inner = await store.putBlob(`["c",[["b","${leaf}"]]]`);
      const named = await store.putBlob("a template");
      const page = await store.putBlob(`{"text":["r","${inner}",1]}`);
      const orphan = await store.putBlob("nobody names me");
      const s = await session(store);
      const [e] = await store.append(s.id, "main", s.genesis, [ev(JSON.stringify({ ops: [["set", 1, "hash", named]] }))]);
      await store.putSnapshot((e as { id: EventId }).id, "{}", [page]);
      const dry = await store.collectGarbage({ dryRun: true, refs: textRefs });
      expect(dry).toMatchObject({ dryRun: true, blobs: 1, bytes: "nobody names me".length });
      expect(await store.hasBlob(orphan), "a dry run deletes nothing").toBe(true);
      const report = await store.collectGarbage({ refs: textRefs });
      expect(report).toEqual({ ...dry, dryRun: false });
      for (const h of [leaf, inner, named, page]) expect(await store.hasBlob(h), h).toBe(true);
      expect(await store.hasBlob(orphan)).toBe(false);
      expect((await store.nearestSnapshot((e as { id: EventId }).id))?.pages).toEqual([page]);
      expect((await store.collectGarbage({ refs: textRefs })).blobs, "nothing more to reclaim").toBe(0);
      // Removing the session leaves every blob unreachable: pages and directory chunks too.
      await store.removeSession(s.id);
      const all = await store.collectGarbage({ refs: textRefs });
      expect(all.blobs).toBe(5); // leaf, inner, named, page and the directory's chunk
      expect(all.keptBlobs).toBe(0);
      expect((await store.verify()).ok).toBe(true);
    });

    it("`refs` says what a blob's bytes name (a format the store cannot read); its errors pass through", async () => {
      const store = await kit.open();
      const hidden = await store.putBlob("reached only through the hook");
      const coded = await store.putBlob(`rev:${[...hidden].reverse().join("")}`);
      const s = await session(store);
      await store.append(s.id, "main", s.genesis, [ev(JSON.stringify({ hash: coded }))]);
      const decode = (bytes: Buffer) => {
        const t = bytes.toString("latin1");
        return t.startsWith("rev:") ? [[...t.slice(4)].reverse().join("")] : [];
      };
      expect((await store.collectGarbage({ dryRun: true, refs: textRefs })).blobs, "without the hook the hidden blob is unreachable").toBe(
        1,
      );
      expect((await store.collectGarbage({ refs: decode })).blobs).toBe(0);
      expect(await store.hasBlob(hidden)).toBe(true);
    });

    it("is refused while any branch is driven by a live holder (in-use), deleting nothing", async () => {
      const store = await kit.open();
      const orphan = await store.putBlob("orphan");
      const s = await session(store);
      const l = await store.acquireLease(s.id, "main", "agent");
      await fails(() => store.collectGarbage({ refs: textRefs }), "in-use", /agent/);
      expect(await store.hasBlob(orphan)).toBe(true);
      expect((await store.collectGarbage({ dryRun: true, refs: textRefs })).blobs, "a dry run only reads: not refused").toBe(1);
      expect((await store.collectGarbage({ live: () => false, refs: textRefs })).blobs).toBe(1);
      if (l.ok) await store.releaseLease(s.id, "main", l.lease.token);
    });

    it("releases the leases it judged gone: a holder that was only stalled cannot append after it (lease-lost)", async () => {
      const store = await kit.open();
      const s = await session(store);
      const l = await store.acquireLease(s.id, "main", "stalled driver");
      if (!l.ok) throw new Error("not acquired");
      const head = await headOf(store, s.id);
      const named = await store.putBlob("put by the driver, to be named by its next append");
      // the collection judges the holder gone and deletes the blob nothing names yet
      expect((await store.collectGarbage({ live: () => false, refs: textRefs })).blobs).toBe(1);
      expect(await store.lease(s.id, "main")).toBeUndefined();
      // the driver wakes and appends the event naming the blob: refused, whichever path it takes
      for (const events of [[ev(JSON.stringify({ hash: named }))], [ev("{}"), ev(JSON.stringify({ hash: named }))]]) {
        expect(await code(() => store.append(s.id, "main", head, events, { lease: l.lease.token }))).toBe("lease-lost");
      }
      expect(await headOf(store, s.id)).toBe(head);
      // a new driver takes the branch with a new token
      const next = await store.acquireLease(s.id, "main", "next driver");
      expect(next.ok && next.lease.token > l.lease.token).toBe(true);
    });

    it("needs refs: what a blob names is its format's to say (the engine's storedBlobRefs), never guessed", async () => {
      const store = await kit.open();
      const orphan = await store.putBlob("orphan");
      for (const options of [undefined, {}, { dryRun: true }, { refs: "text" }])
        await fails(() => (store.collectGarbage as unknown as (o: unknown) => unknown).call(store, options), "bad-input", /refs/);
      expect(await store.hasBlob(orphan)).toBe(true);
    });

    kit.withHandles("a writer that reuses directory chunks from memory writes them again after another handle's collection", async () => {
      const writer = await kit.open();
      const other = await kit.connect(writer);
      const pages = Array.from({ length: 3 }, (_, i) => `shared page ${i}`);
      const hashes: string[] = [];
      for (const p of pages) hashes.push(await writer.putBlob(p));
      const a = await session(writer, 1);
      await writer.putSnapshot(await headOf(writer, a.id), "{}", hashes);
      await other.removeSession(a.id);
      expect((await other.collectGarbage({ refs: textRefs })).blobs).toBe(4); // three pages and their chunk
      const b = await session(writer, 1);
      for (const p of pages) await writer.putBlob(p);
      await writer.putSnapshot(await headOf(writer, b.id), "{}", hashes);
      expect((await other.nearestSnapshot(await headOf(other, b.id)))?.pages).toEqual(hashes);
      expect((await other.verify()).ok).toBe(true);
    });

    it("property: remove random sessions of random shared blobs, collect; every remaining reference is present, every reclaimed blob was unreferenced", async () => {
      const model = fc.record({
        blobs: fc.integer({ min: 1, max: 8 }),
        // Each blob may name earlier ones (a group naming its parts).
        edges: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 10 }),
        sessions: fc.array(
          fc.record({
            refs: fc.array(fc.nat(), { maxLength: 3 }),
            pages: fc.array(fc.option(fc.nat(), { nil: null }), { maxLength: 4 }),
            fork: fc.boolean(),
            removed: fc.boolean(),
          }),
          { minLength: 1, maxLength: 4 },
        ),
      });
      await fc.assert(
        fc.asyncProperty(model, async (m) => {
          const store = await kit.open();
          // Blob i's text names the blobs j < i it has an edge to.
          const names: string[] = [];
          const edges = new Map<number, Set<number>>();
          for (const [x, y] of m.edges) {
            const [a, b] = [x % m.blobs, y % m.blobs];
            const [from, to] = [Math.max(a, b), Math.min(a, b)];
            if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
          }
          for (let i = 0; i < m.blobs; i++)
            names.push(await store.putBlob(`blob ${i} names ${[...(edges.get(i) ?? [])].map((j) => names[j]).join(",")}`));
          const roots: Set<number>[] = [];
          for (const s of m.sessions) {
            const made = await session(store, 1);
            const refs = s.refs.map((r) => r % m.blobs);
            const pages = s.pages.map((p) => (p === null ? null : (names[p % m.blobs] as string)));
            const line = s.fork ? "f" : "main";
            if (s.fork) await store.fork(made.id, made.genesis, "f");
            const [e] = await store.append(made.id, line, await headOf(store, made.id, line), [
              ev(JSON.stringify({ ops: refs.map((r) => ["set", 1, "hash", names[r]]) })),
            ]);
            if (pages.length > 0) await store.putSnapshot((e as { id: EventId }).id, "{}", pages);
            if (s.removed) await store.removeSession(made.id);
            else roots.push(new Set([...refs, ...s.pages.flatMap((p) => (p === null ? [] : [p % m.blobs]))]));
          }
          const reachable = new Set<number>();
          const stack = roots.flatMap((r) => [...r]);
          for (let i = stack.pop(); i !== undefined; i = stack.pop()) {
            if (reachable.has(i)) continue;
            reachable.add(i);
            stack.push(...(edges.get(i) ?? []));
          }
          const report = await store.collectGarbage({ refs: textRefs });
          for (let i = 0; i < m.blobs; i++)
            expect(await store.hasBlob(names[i] as string), `blob ${i}: reachable ${reachable.has(i)}`).toBe(reachable.has(i));
          const v = await store.verify();
          expect(v.findings).toEqual([]);
          for (const s of await store.listSessions())
            for (const b of await store.branches(s.id)) expect((await store.chain(b.head)).length).toBe(b.headDepth);
          expect(report.keptBlobs).toBe(v.blobs);
          expect((await store.collectGarbage({ refs: textRefs })).blobs).toBe(0);
          await store.close();
        }),
        { numRuns: kit.runs(40) },
      );
    }, 120_000);
  });
}
