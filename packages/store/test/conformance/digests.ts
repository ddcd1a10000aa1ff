/** Conformance, ST-21: the event digest chain — computed on every append path, the same in every store. */
import { describe, expect, it } from "vitest";
import { type EventId, type EventMeta, eventDigest, type Store } from "../../src/index.ts";
import { ev, headOf, type Kit, session } from "./kit.ts";

/** Every event of every branch of `store`, each checked against eventDigest of its prior's digest (ST-21). */
async function chainsAgree(store: Store): Promise<number> {
  let checked = 0;
  for (const s of await store.listSessions())
    for (const b of await store.branches(s.id)) {
      let prior: string | null = null;
      const chain = await store.chain(b.head);
      for (const e of chain) {
        expect(e.digest, `event ${e.id}`).toBe(eventDigest(prior, e));
        expect((await store.eventMeta(e.id))?.digest).toBe(e.digest);
        prior = e.digest;
        checked++;
      }
      expect((await store.chainMeta(b.head)).map((m) => m.digest)).toEqual(chain.map((e) => e.digest));
      expect((await store.events(chain.map((e) => e.id))).map((e) => e.digest)).toEqual(chain.map((e) => e.digest));
    }
  return checked;
}

export function digestsConformance(kit: Kit): void {
  describe("ST-21 event digests", () => {
    it("every append path stores the digest of its content chained to the head's: fast path, group commit, forks, rewinds, large payloads", async () => {
      const store = await kit.open();
      const s = await session(store, 5); // the fast path, where a backend has one
      const head = await headOf(store, s.id);
      const large = { kind: "patch@1", label: null, by: "tool", ts: 7, data: "x".repeat(1_100_000) };
      const group = await store.append(s.id, "main", head, [ev("g1"), large]);
      await store.fork(s.id, s.events[1]?.id as EventId, "side");
      const [side] = await store.append(s.id, "side", s.events[1]?.id as EventId, [ev("on side")]);
      const sideEvent = { kind: "patch@1", label: null, by: null, ts: (side as EventMeta).ts, data: "on side" };
      expect((side as EventMeta).digest, "a fork's first event chains from the fork point").toBe(
        eventDigest((s.events[1] as EventMeta).digest, sideEvent),
      );
      await store.moveHead(s.id, "main", s.events[2]?.id as EventId);
      await store.append(s.id, "main", s.events[2]?.id as EventId, [ev("after rewind")]);
      expect(group[1]?.digest).toBe(eventDigest(group[0]?.digest as string, large));
      const { genesis } = await store.createSession({ genesis: { kind: "genesis@1", label: "g", ts: 3, data: "{}" } });
      expect(genesis.digest, "a genesis event has no prior").toBe(
        eventDigest(null, { kind: "genesis@1", label: "g", by: null, ts: 3, data: "{}" }),
      );
      expect(await chainsAgree(store)).toBeGreaterThan(10);
      expect((await store.verify()).findings).toEqual([]);
    });

    it("covers no ids: the same events in another store, among other sessions, have the same digests", async () => {
      const write = async (store: Store, noise: number): Promise<string[]> => {
        for (let i = 0; i < noise; i++) await session(store, 3);
        const { session: info, genesis } = await store.createSession({ genesis: { kind: "genesis@1", ts: 1000, data: "{}" } });
        let head = genesis.id;
        const out = [genesis.digest];
        for (let i = 0; i < 20; i++) {
          const data = i === 10 ? "y".repeat(1_100_000) : `{"i":${i}}`;
          const [m] = await store.append(info.id, "main", head, [{ kind: "patch@1", label: `e${i}`, ts: 1000 + i, data }]);
          head = (m as EventMeta).id;
          out.push((m as EventMeta).digest);
        }
        return out;
      };
      const a = await write(await kit.open(), 0);
      const b = await write(await kit.open(), 7);
      expect(b).toEqual(a);
      expect(new Set(a).size).toBe(21);
    });
  });
}
