/**
 * EN-46: a live writer lets go of what its snapshots stored — the pages it wrote, except the last
 * ones, become evictable lazy pages read back from the store when touched (DOM-43) — so its memory
 * is bounded whatever the session's length, and nothing it shows or stores changes (L1): the live
 * tree equals replay, texts read back are the same, and edits of released pages do not copy their
 * texts into blobs.
 */
import { LazyPage, type NodeId, nodeId, type Op, pageCache, select, slotsOf, type Tree, toSnapshot } from "@strata/dom";
import { openStore, type SqliteStore } from "@strata/store";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { materialize, Session } from "../src/index.ts";

const BODY = nodeId(3);
const LIMIT = pageCache.limit;

afterEach(() => {
  pageCache.limit = LIMIT;
});

const text = (i: number, len = 600) =>
  `step ${i}: ${"the quick brown fox jumps over the lazy dog ".repeat(Math.ceil(len / 44))}`.slice(0, len);

/** One step: a turn with two texted children (three ids), after the last turn of `tree`. */
function stepOps(tree: Tree, i: number): Op[] {
  const last = tree.get(BODY)?.lastChild;
  return [
    [
      "ins",
      BODY,
      last === null || last === undefined ? null : last.id,
      {
        tag: "turn",
        attrs: { n: String(i) },
        children: [
          { tag: "assistant", text: text(i) },
          { tag: "output", text: text(i + 1_000_000, 900) },
        ],
      },
    ],
  ];
}

/** Slots of `tree` that are held in memory for good: loaded pages that are not evictable. */
function heldPages(tree: Tree): number {
  return slotsOf(tree).filter((s) => s !== undefined && !(s instanceof LazyPage && s.evictable)).length;
}

function blobBytes(store: SqliteStore): number {
  return store.database.prepare("SELECT coalesce(sum(length(data)), 0) FROM blobs").pluck().get() as number;
}

describe("EN-46 a live writer's memory is bounded", () => {
  it("a tree of at most a quarter of pageCache.limit pages is not released: nothing is read back", () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { snapshotEvery: 8 });
    for (let i = 0; i < 400; i++) s.commit(stepOps(s.tree, i), { label: "step" });
    expect(s.tree.pageCount).toBeLessThanOrEqual(pageCache.limit / 4);
    expect(heldPages(s.tree)).toBe(slotsOf(s.tree).filter((x) => x !== undefined).length);
    pageCache.limit = 8; // now the tree is over a quarter: the next snapshot releases it
    for (let i = 400; i < 408; i++) s.commit(stepOps(s.tree, i), { label: "step" });
    // The last two pages, and what the commits after the snapshot touched.
    expect(heldPages(s.tree)).toBeLessThanOrEqual(4);
    expect(heldPages(s.tree)).toBeLessThan(s.tree.pageCount);
    expect(toSnapshot(s.tree)).toBe(toSnapshot(materialize(store, s.head.id, { fromGenesis: true })));
  });

  it("after each snapshot only the last pages stay held; reads load released pages back, at most pageCache.limit at once, equal to replay", () => {
    pageCache.limit = 4; // trees over 1 page are released
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 16 });
    let most = 0;
    for (let i = 0; i < 2400; i++) {
      s.commit(stepOps(s.tree, i), { label: "step" });
      most = Math.max(most, heldPages(s.tree));
    }
    expect(s.tree.pageCount).toBeGreaterThan(25);
    // The two hot pages, plus what 16 steps (48 ids) since the last snapshot touched.
    expect(most).toBeLessThanOrEqual(4);
    pageCache.limit = 3;
    const texts = select(s.tree, "assistant, output").map((e) => e.text);
    expect(pageCache.loaded).toBeLessThanOrEqual(3);
    expect(texts).toHaveLength(4800);
    expect(texts[0]).toBe(text(0));
    expect(texts[4799]).toBe(text(2399 + 1_000_000, 900));
    expect(toSnapshot(s.tree)).toBe(toSnapshot(materialize(store, s.head.id, { fromGenesis: true })));
  });

  it("edits of released pages (attributes, new neighbours) write their texts' stored references again, not copies", () => {
    pageCache.limit = 16;
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 32 });
    for (let i = 0; i < 600; i++) s.commit(stepOps(s.tree, i), { label: "step" });
    s.snapshot();
    const before = blobBytes(store);
    const outputs = select(s.tree, "output").slice(0, 200);
    expect(outputs[0] && (slotsOf(s.tree)[outputs[0].id >> 8] as LazyPage).evictable).toBe(true);
    const ops: Op[] = [];
    for (const o of outputs.filter((_, k) => k % 4 === 0)) {
      ops.push(["set", o.id, "seen", "yes"]);
      ops.push(["ins", o.parent?.id as NodeId, o.id, { tag: "note", text: "short" }]);
    }
    s.commit(ops, { label: "edit old turns" });
    s.snapshot();
    const grown = blobBytes(store) - before;
    // 50 outputs of 900 characters and their 50 assistant neighbours would be ~75 KB copied;
    // rewritten pages hold references (a few hundred bytes per element, deflated).
    expect(grown).toBeLessThan(30_000);
    expect(toSnapshot(s.tree)).toBe(toSnapshot(materialize(store, s.head.id, { fromGenesis: true })));
    const reopened = Session.open(store, s.id).session;
    expect(select(reopened.tree, "output[seen=yes]").map((e) => e.text)).toEqual(outputs.filter((_, k) => k % 4 === 0).map((e) => e.text));
  });

  it("property: with a tiny page cache, random edits anywhere (set, text, append, rm, ins) keep the live tree equal to replay and to its reopen", () => {
    const action = fc.oneof(
      fc.record({ k: fc.constant("steps" as const), n: fc.integer({ min: 1, max: 120 }) }),
      fc.record({ k: fc.constantFrom("set" as const, "text" as const, "append" as const, "rm" as const, "ins" as const), at: fc.nat() }),
      fc.record({ k: fc.constant("reopen" as const) }),
    );
    fc.assert(
      fc.property(
        fc.array(action, { minLength: 4, maxLength: 24 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        (actions, every, limit) => {
          pageCache.limit = limit;
          const store = openStore(":memory:");
          let s = Session.create(store, { snapshotEvery: every });
          let n = 0;
          for (const a of actions) {
            if (a.k === "steps") for (let i = 0; i < a.n; i++) s.commit(stepOps(s.tree, n++), { label: "step" });
            else if (a.k === "reopen") s = Session.open(store, s.id, { snapshotEvery: every }).session;
            else {
              const texted = select(s.tree, "assistant, output, note");
              const target = texted[a.at % Math.max(1, texted.length)];
              if (target === undefined) continue;
              const op: Op =
                a.k === "set"
                  ? ["set", target.id, "seen", String(a.at)]
                  : a.k === "text"
                    ? ["text", target.id, text(a.at, 300)]
                    : a.k === "append"
                      ? ["append", target.id, ` and more ${a.at}`]
                      : a.k === "rm"
                        ? ["rm", target.id]
                        : ["ins", target.parent?.id as NodeId, target.id, { tag: "note", text: text(a.at, 200) }];
              s.commit([op], { label: a.k });
            }
            expect(pageCache.loaded).toBeLessThanOrEqual(limit);
          }
          const live = toSnapshot(s.tree);
          expect(live).toBe(toSnapshot(materialize(store, s.head.id, { fromGenesis: true })));
          expect(toSnapshot(Session.open(store, s.id).session.tree)).toBe(live);
        },
      ),
      { numRuns: Number(process.env.STRATA_FC_RUNS ?? 40) },
    );
  });
});
