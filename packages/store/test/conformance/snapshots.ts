/** Conformance, ST-13 and ST-14: snapshots on chains, content-addressed blobs. */
import { describe, expect, it } from "vitest";
import { type EventId, MAX_PAGES, StoreError, sha256 } from "../../src/index.ts";
import { ev, fails, failure, fingerprint, type Kit, session } from "./kit.ts";

const hex = (s: string) => sha256(s).toString("hex");

export function snapshotsConformance(kit: Kit): void {
  describe("ST-13 snapshots", () => {
    it("the nearest snapshot is the deepest one on the event's own chain, never another branch's", async () => {
      const store = await kit.open();
      const s = await session(store, 6);
      const e = s.events.map((m) => m.id);
      await store.putSnapshot(e[1] as EventId, "at-e1", [await store.putBlob("p0"), null, await store.putBlob("p2")]);
      await store.putSnapshot(e[4] as EventId, "at-e4", [await store.putBlob("p0")]);
      expect(await store.nearestSnapshot(e[0] as EventId)).toBeUndefined();
      expect((await store.nearestSnapshot(e[1] as EventId))?.header).toBe("at-e1");
      expect((await store.nearestSnapshot(e[3] as EventId))?.header).toBe("at-e1");
      expect(await store.nearestSnapshot(e[5] as EventId)).toEqual({ event: e[4], depth: 6, header: "at-e4", pages: [hex("p0")] });
      expect((await store.nearestSnapshot(e[1] as EventId))?.pages).toEqual([hex("p0"), null, hex("p2")]);
      // A fork from e2 must not see the snapshot at e4 (later on main).
      await store.fork(s.id, e[2] as EventId, "side");
      const [x] = await store.append(s.id, "side", e[2] as EventId, [ev("x")]);
      expect((await store.nearestSnapshot(x?.id as EventId))?.header).toBe("at-e1");
      expect((await store.snapshots(s.id)).map((m) => m.id)).toEqual([e[1], e[4]]);
      expect(await store.snapshots((await session(store)).id), "another session has none").toEqual([]);
    });

    it("page lists read back exactly: long, sparse, all null, empty, and after one page changed", async () => {
      const store = await kit.open();
      const s = await session(store, 6);
      const at = s.events.map((m) => m.id) as EventId[];
      const pages = await Promise.all(Array.from({ length: 640 }, (_, i) => store.putBlob(`page ${i}`)));
      await store.putSnapshot(at[0] as EventId, "dense", pages);
      const changed = [...pages];
      changed[639] = await store.putBlob("page 639, edited");
      await store.putSnapshot(at[1] as EventId, "one changed", changed);
      // 100 lines of history × 16 pages each (the engine's id blocks): one line's pages are set.
      const sparse: (string | null)[] = new Array(1600).fill(null);
      sparse[0] = await store.putBlob("a");
      sparse[5] = await store.putBlob("b");
      sparse[1599] = await store.putBlob("c");
      await store.putSnapshot(at[2] as EventId, "sparse", sparse);
      await store.putSnapshot(at[3] as EventId, "nulls", new Array(4096).fill(null));
      await store.putSnapshot(at[4] as EventId, "empty", []);
      await store.putSnapshot(at[5] as EventId, "shorter", changed.slice(0, 70));
      const read = async (i: number) => (await store.nearestSnapshot(at[i] as EventId))?.pages;
      expect(await read(0)).toEqual(pages);
      expect(await read(1)).toEqual(changed);
      expect(await read(2)).toEqual(sparse);
      expect(await read(3)).toEqual(new Array(4096).fill(null));
      expect(await read(4)).toEqual([]);
      expect(await read(5)).toEqual(changed.slice(0, 70));
      expect((await store.verify()).findings).toEqual([]);
    });

    it("putSnapshot refuses page references that are not hashes, and writes nothing", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const good = await store.putBlob("page");
      const at = s.events[0]?.id as EventId;
      const before = await fingerprint(store);
      for (const bad of ["abc", good.toUpperCase(), `${good}0`, 7, undefined]) {
        const e = await failure(() => store.putSnapshot(at, "h", [good, bad as never, null]));
        expect(e).toBeInstanceOf(StoreError);
        expect((e as StoreError).code).toBe("bad-input");
        expect((e as StoreError).message).toMatch(/page 1 is .* not a blob hash .* nothing was written/);
      }
      // A bad page far down a list whose first chunks are the last snapshot's is found too.
      const long = new Array(200).fill(good);
      await store.putSnapshot(at, "ok", long);
      const after = await fingerprint(store);
      await fails(() => store.putSnapshot(at, "h", [...long.slice(0, 150), "nope"]), "bad-input", /page 150 is "nope"/);
      expect(await fingerprint(store)).toBe(after);
      await fails(() => store.putSnapshot(at, 5 as never, []), "bad-input", /header must be a string/);
      await fails(() => store.putSnapshot(at, "h", "pages" as never), "bad-input", /pages must be an array/);
      await fails(() => store.putSnapshot(at, "h", new Array(MAX_PAGES + 1)), "bad-input", /more than a snapshot holds/);
      await fails(() => store.putSnapshot(999_999 as EventId, "h", []), "not-found", /event 999999 does not exist/);
      expect(before).not.toBe(after);
    });
  });

  describe("ST-14 blobs", () => {
    it("are content-addressed by sha256, stored once, fetched alone or in batches", async () => {
      const store = await kit.open();
      const a = await store.putBlob("hello");
      expect(a).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
      expect(await store.putBlob(new TextEncoder().encode("hello"))).toBe(a);
      expect(await store.putBlob(Buffer.from("hello"))).toBe(a);
      expect((await store.getBlob(a))?.toString()).toBe("hello");
      const b = await store.putBlob(new Uint8Array([0, 1, 2, 255]));
      const got = await store.getBlobs([a, b, hex("missing")]);
      expect([...got.keys()].sort()).toEqual([a, b].sort());
      expect([...(got.get(b) as Buffer)]).toEqual([0, 1, 2, 255]);
      expect(await store.hasBlob(hex("missing"))).toBe(false);
      expect(await store.hasBlob(a)).toBe(true);
      expect(await store.getBlob(hex("missing"))).toBeUndefined();
      expect((await store.verify()).blobs, "stored once").toBe(2);
      expect(await store.putBlob(""), "the empty blob is a blob too").toBe(hex(""));
    });

    it("getBlobs and events answer many at once, past any batch size, in the order asked, skipping what is missing", async () => {
      const store = await kit.open();
      const s = await session(store);
      const hashes: string[] = [];
      for (let i = 0; i < 1_234; i++) hashes.push(await store.putBlob(`blob ${i}`));
      const asked = [...hashes].reverse();
      asked.splice(700, 0, hex("not stored"));
      const got = await store.getBlobs(asked);
      expect(got.size).toBe(1_234);
      expect(got.get(hashes[1_000] as string)?.toString()).toBe("blob 1000");
      const appended = await store.append(
        s.id,
        "main",
        s.genesis,
        Array.from({ length: 1_100 }, (_, i) => ev(`{"i":${i}}`)),
      );
      const wanted = [...appended.map((e) => e.id)].reverse();
      wanted.splice(3, 0, 999_999 as EventId);
      const events = await store.events(wanted);
      expect(events.map((e) => e.id)).toEqual(wanted.filter((id) => id !== 999_999));
      expect(events[0]?.data).toBe('{"i":1099}');
      expect(await store.events([])).toEqual([]);
      expect((await store.getBlobs([])).size).toBe(0);
    });
  });
}
