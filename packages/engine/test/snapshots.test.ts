/**
 * Snapshots in the write path: a group commit longer than K snapshots inside it (EN-5), a snapshot
 * that cannot be written never fails a commit that is durable (EN-12), and what a snapshot is — a
 * header and one blob per page, unchanged pages kept by address (EN-8), page bytes behind a marker
 * (EN-9).
 */
import { inflateRawSync } from "node:zlib";
import { type NodeId, nodeId, type Op, select, toSnapshot } from "@strata/dom";
import { type EventId, openStore, type Store, type StoreError } from "@strata/store";
import { describe, expect, it } from "vitest";
import { EngineError, materialize, replayVerify, Session } from "../src/index.ts";
import { flakyStore } from "./flaky-store.ts";

const BODY = nodeId(3);

describe("EN-5 group commits snapshot inside", () => {
  it("group commits longer than K snapshot inside, so any state needs at most K folds (EN-5)", () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { snapshotEvery: 4 });
    const metas = s.commitMany(
      Array.from({ length: 13 }, (_, i) => ({ change: [["ins", BODY, null, { tag: "m", text: `${i}` }]] as Op[] })),
    );
    for (const m of metas) {
      const snap = store.nearestSnapshot(m.id);
      expect(m.depth - (snap?.depth ?? 0)).toBeLessThanOrEqual(4);
    }
    expect(toSnapshot(materialize(store, s.head.id))).toBe(toSnapshot(s.durableTree));
  });
});

describe("EN-12 a durable commit succeeds even if its snapshot cannot be written", () => {
  it("reports the failure, keeps committing, and writes the snapshot once the store recovers", () => {
    const real = openStore(":memory:");
    const { store, broken } = flakyStore(real, ["putBlob", "putSnapshot"]);
    const errors: unknown[] = [];
    const s = Session.create(store, { snapshotEvery: 3, onSnapshotError: (e) => errors.push(e) });
    s.commit([["ins", BODY, null, { tag: "a" }]]);
    broken.on = true;
    const before = real.snapshots(s.id).length;
    for (let i = 0; i < 6; i++) s.commit([["ins", BODY, null, { tag: "c" }]], { label: `important${i}` });
    expect(real.log(s.id).at(-1)?.label).toBe("important5");
    expect(s.head.id).toBe(real.log(s.id).at(-1)?.id);
    expect(errors.length).toBeGreaterThan(0);
    expect((errors[0] as StoreError).code).toBe("disk-full");
    expect(real.snapshots(s.id).length).toBe(before);
    expect(() => s.snapshot()).toThrow(/disk is full/);
    broken.on = false;
    for (let i = 0; i < 4; i++) s.commit([["ins", BODY, null, { tag: "d" }]]);
    expect(real.snapshots(s.id).length).toBeGreaterThan(before);
    expect(s.snapshotError).toBeUndefined();
    expect(toSnapshot(Session.open(real, s.id).session.durableTree)).toBe(toSnapshot(s.durableTree));
    expect(replayVerify(real, s.id).ok).toBe(true);
  });
});

/** `real`, counting the blobs written through it. */
function countingStore(real: Store): { store: Store; written: { blobs: number } } {
  const written = { blobs: 0 };
  const store = new Proxy(
    {},
    {
      get(_, k) {
        const v = (real as unknown as Record<string | symbol, unknown>)[k];
        if (k === "putBlob")
          return (data: Uint8Array | string) => {
            written.blobs++;
            return real.putBlob(data);
          };
        return typeof v === "function" ? v.bind(real) : v;
      },
    },
  ) as Store;
  return { store, written };
}

describe("EN-8, EN-9 paged snapshots", () => {
  /** A session whose body holds 600 elements (pages 1 to 3 of the tree), snapshotted on demand only. */
  function session(store: Store): { s: Session; target: NodeId } {
    const s = Session.create(store, { snapshotEvery: 10_000 });
    const children = Array.from({ length: 600 }, (_, i) => ({ tag: "c", attrs: { n: String(i) } }));
    s.commit([["ins", BODY, null, { tag: "many", children }]]);
    s.snapshot();
    return { s, target: s.selectOne('c[n="300"]')?.id as NodeId };
  }

  it("EN-8 a snapshot is a header and one blob per page; a page that did not change keeps its address and is not written again", () => {
    const real = openStore(":memory:");
    const { store, written } = countingStore(real);
    const { s, target } = session(store);
    const first = real.nearestSnapshot(s.head.id);
    expect(first?.event).toBe(s.head.id);
    expect(JSON.parse(first?.header ?? "{}")).toMatchObject({
      format: "strata-snapshot@1",
      tree: { hwm: s.durableTree.hwm, root: 1, fixed: [1, 2, 3], size: s.durableTree.size },
    });
    expect(first?.pages).toHaveLength(s.durableTree.pageCount);
    for (const address of first?.pages ?? []) if (address !== null) expect(real.hasBlob(address)).toBe(true);

    s.commit([["set", target, "seen", "yes"]]);
    written.blobs = 0;
    s.snapshot();
    const second = real.nearestSnapshot(s.head.id);
    const changed = Math.floor(target / 256);
    expect(second?.pages).toHaveLength(first?.pages.length as number);
    second?.pages.forEach((address, page) => {
      if (page === changed) expect(address, `page ${page}`).not.toBe(first?.pages[page]);
      else expect(address, `page ${page}`).toBe(first?.pages[page]);
    });
    expect(written.blobs).toBe(1);
    expect(toSnapshot(materialize(real, s.head.id))).toBe(toSnapshot(s.durableTree));
  });

  it("EN-9 a page is JSON of its records, plain or raw-deflated behind a one-byte marker; another marker is bad-snapshot", () => {
    const store = openStore(":memory:");
    const { s, target } = session(store);
    const record = store.nearestSnapshot(s.head.id);
    const bytes = (page: number): Buffer => store.getBlob(record?.pages[page] as string) as Buffer;
    // Page 0 holds the skeleton alone: small, stored plain behind "j".
    expect(bytes(0)[0]).toBe(0x6a);
    expect(JSON.parse(bytes(0).subarray(1).toString("utf8"))).toHaveLength(3);
    // A full page of records is larger than 1 KiB: raw-deflated behind "z".
    const full = bytes(Math.floor(target / 256));
    expect(full[0]).toBe(0x7a);
    expect(JSON.parse(inflateRawSync(full.subarray(1)).toString("utf8"))).toHaveLength(256);

    // The same snapshot with that page's marker changed: reading the page says what is wrong.
    const head = s.commit([["set", nodeId(2), "k", "v"]]).id as EventId;
    const forged = [...(record?.pages ?? [])];
    const page = Math.floor(target / 256);
    forged[page] = store.putBlob(Buffer.concat([Buffer.of(0x01), full.subarray(1)]));
    store.putSnapshot(head, record?.header as string, forged);
    const tree = materialize(store, head);
    let error: unknown;
    try {
      tree.get(target);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe("bad-snapshot");
    expect((error as EngineError).message).toMatch(/has an unknown format marker 1/);
  });
});

describe("EN-45 texts are fetched when read, a page's in one batch", () => {
  /** `real`, counting the event payloads read through `eventData` and `events` (the text reads). */
  function payloadCounting(real: Store): { store: Store; reads: { calls: number; payloads: number } } {
    const reads = { calls: 0, payloads: 0 };
    const store = new Proxy(
      {},
      {
        get(_, k) {
          const v = (real as unknown as Record<string | symbol, unknown>)[k];
          if (k === "eventData" || k === "events")
            return (ids: EventId[]) => {
              reads.calls++;
              reads.payloads += ids.length;
              return k === "eventData" ? real.eventData(ids) : real.events(ids);
            };
          return typeof v === "function" ? v.bind(real) : v;
        },
      },
    ) as Store;
    return { store, reads };
  }
  const long = (i: number) => `${"tool output line ".repeat(12)}#${i}`;

  it("EN-45: open, at(event), fork + commit read no payload for pages they touch for structure; the first text read on a page reads its payloads in one call", () => {
    const real = openStore(":memory:");
    const s = Session.create(real, { snapshotEvery: 16 });
    for (let i = 0; i < 200; i++)
      s.commit([["ins", BODY, s.tree.get(BODY)?.lastChild?.id ?? null, { tag: "turn", children: [{ tag: "out", text: long(i) }] }]]);
    const mid = real.log(s.id)[100]?.id as EventId;
    const { store, reads } = payloadCounting(real);
    const { session } = Session.open(store, s.id);
    const at = session.at(mid);
    const fork = session.fork(mid);
    fork.commit([["ins", BODY, fork.tree.get(BODY)?.lastChild?.id ?? null, { tag: "turn", children: [{ tag: "out", text: long(1000) }] }]]);
    expect(at.get(BODY)?.children.length).toBe(100);
    expect(reads.calls).toBe(0);
    // The texts are there when read: one call for the first text of a page, none for the others on it.
    const outs = select(at, "out");
    expect(outs[0]?.text).toBe(long(0));
    expect(reads.calls).toBe(1);
    expect(outs[1]?.text).toBe(long(1));
    expect(reads.calls).toBe(1);
    expect(outs.map((e) => e.text)).toEqual(Array.from({ length: 100 }, (_, i) => long(i)));
    expect(toSnapshot(fork.tree)).toBe(toSnapshot(materialize(real, fork.head.id, { fromGenesis: true })));
    expect(toSnapshot(at)).toBe(toSnapshot(materialize(real, mid, { fromGenesis: true })));
  });
});
