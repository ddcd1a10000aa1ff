/**
 * EN-47: a fork from a state the process already holds — the head, or an event read with `at` —
 * starts from that state instead of reading the store, and is then the same as any fork (L1): equal
 * to replay, independent of the line it came from, its texts stored as references.
 */
import { nodeId, type Op, type Tree, toSnapshot } from "@strata/dom";
import { type EventId, openStore, type SqliteStore, type Store } from "@strata/store";
import { describe, expect, it } from "vitest";
import { materialize, Session } from "../src/index.ts";

const BODY = nodeId(3);

function step(tree: Tree, i: number): Op[] {
  const last = tree.get(BODY)?.lastChild ?? null;
  return [
    [
      "ins",
      BODY,
      last === null ? null : last.id,
      { tag: "turn", attrs: { n: String(i) }, children: [{ tag: "output", text: `output ${i} `.repeat(40) }] },
    ],
  ];
}

/** `store` with its reads counted (chain, nearestSnapshot, getBlob, eventData). */
function counted(store: Store): { store: Store; reads: () => number } {
  let reads = 0;
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof v !== "function") return v;
      if (key === "chain" || key === "nearestSnapshot" || key === "getBlob" || key === "eventData" || key === "chainData")
        return (...args: unknown[]) => {
          reads++;
          return v.apply(target, args);
        };
      return v.bind(target);
    },
  });
  return { store: wrapped, reads: () => reads };
}

const blobBytes = (store: SqliteStore): number =>
  store.database.prepare("SELECT coalesce(sum(length(data)), 0) FROM blobs").pluck().get() as number;

describe("EN-47 a fork from a state the process holds", () => {
  it("a fork from the head or from an event read with at() reads no snapshot, page or event; it equals replay", () => {
    const real = openStore(":memory:") as SqliteStore;
    const { store, reads } = counted(real);
    const s = Session.create(store, { snapshotEvery: 16 });
    for (let i = 0; i < 300; i++) s.commit(step(s.tree, i), { label: "step" });
    const mid = s.log()[150]?.id as EventId;
    const atMid = toSnapshot(s.at(mid));

    let before = reads();
    const fromHead = s.fork(s.head.id);
    expect(reads() - before, "fork from the head").toBe(0);
    expect(toSnapshot(fromHead.tree)).toBe(toSnapshot(s.tree));

    before = reads();
    const fromMid = s.fork(mid);
    expect(reads() - before, "fork from an event read with at()").toBe(0);
    expect(toSnapshot(fromMid.tree)).toBe(atMid);

    // A fork from an event not read before reads the store, as always.
    before = reads();
    const cold = s.fork(s.log()[100]?.id as EventId);
    expect(reads() - before).toBeGreaterThan(0);
    expect(toSnapshot(cold.tree)).toBe(toSnapshot(materialize(real, s.log()[100]?.id as EventId)));

    // The lines go on independently, each equal to its replay; the forks' snapshots refer to the
    // log for the texts they inherited instead of copying them.
    const blobs = blobBytes(real);
    for (let i = 0; i < 40; i++) {
      s.commit(step(s.tree, 1000 + i), { label: "parent" });
      fromHead.commit(step(fromHead.tree, 2000 + i), { label: "head fork" });
      fromMid.commit(step(fromMid.tree, 3000 + i), { label: "mid fork" });
    }
    fromHead.snapshot();
    fromMid.snapshot();
    expect(blobBytes(real) - blobs, "inherited texts are references, not blobs").toBeLessThan(60_000);
    for (const x of [s, fromHead, fromMid]) {
      expect(toSnapshot(x.tree)).toBe(toSnapshot(materialize(real, x.head.id, { fromGenesis: true })));
      expect(toSnapshot(Session.open(real, x.id, { branch: x.branch }).session.tree)).toBe(toSnapshot(x.tree));
    }
    expect(fromHead.tree.get(BODY)?.children.length).toBe(340);
    expect(s.tree.get(BODY)?.children.length).toBe(340);
    expect(fromMid.tree.get(BODY)?.children.length).toBe(190);
  });
});
