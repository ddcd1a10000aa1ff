/**
 * ST-12: a rolled-back transaction leaves no trace — not in the file, and not in the store's
 * caches (branch tips, segment ancestry, directory chunks), even though SQLite hands the ids of
 * rolled-back rows to the next rows (decision 0010).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventId, HeadConflict, openStore, type SqliteStore, type Store, StoreError } from "../src/index.ts";
import { ev, fileStore, session } from "./helpers.ts";

const ids = (list: readonly { id: EventId }[]) => list.map((e) => e.id as number);
const abort = new Error("abort the group");

/** Runs `fn` in a transaction that then throws; returns what `fn` returned. */
function rolledBack<T>(store: Store, fn: () => T): T {
  let out: T | undefined;
  expect(() =>
    store.transaction(() => {
      out = fn();
      throw abort;
    }),
  ).toThrow(abort);
  return out as T;
}

describe("ST-12 rollbacks and the caches", () => {
  it("a branch tip appended in a rolled-back transaction is forgotten: its id is a conflict, not a head", () => {
    const store = openStore(":memory:");
    const s = session(store, 1);
    const head = s.events[0]?.id as EventId;
    const [ghost] = rolledBack(store, () => store.append(s.id, "main", head, [ev("rolled back")]));
    expect(store.eventMeta(ghost?.id as EventId)).toBeUndefined();
    expect(store.branch(s.id, "main")?.head).toBe(head);
    // A writer that still holds the rolled-back event as its head conflicts (before the fix, the
    // fast path took it and wrote an event whose prior was itself, two depths past the head).
    expect(() => store.append(s.id, "main", ghost?.id as EventId, [ev("stale")])).toThrow(HeadConflict);
    const [next] = store.append(s.id, "main", head, [ev("real")]);
    // SQLite reuses the rolled-back id: harmless, because nothing in the store remembers it.
    expect(next?.id).toBe(ghost?.id);
    expect(next).toMatchObject({ prior: head, depth: 3 });
    expect(ids(store.log(s.id))).toEqual([s.genesis, head, next?.id]);
    expect(store.verify().findings).toEqual([]);
  });

  it("a segment read in a rolled-back transaction is forgotten: the next segment with its id has its own ancestry", () => {
    const store = openStore(":memory:");
    const s = session(store, 5);
    const m = [s.genesis, ...ids(s.events)] as EventId[];
    store.fork(s.id, m[4] as EventId, "a");
    store.fork(s.id, m[1] as EventId, "b");
    rolledBack(store, () => {
      store.append(s.id, "a", m[4] as EventId, [ev("a1")]); // opens a segment forked at depth 5
      return store.log(s.id, { branch: "a" }); // and caches it
    });
    const [b1] = store.append(s.id, "b", m[1] as EventId, [ev("b1")]); // the segment row id is reused
    expect(ids(store.log(s.id, { branch: "b" }))).toEqual([m[0], m[1], b1?.id]);
    expect(ids(store.chain(b1?.id as EventId))).toEqual([m[0], m[1], b1?.id]);
    expect(store.isAncestor(m[3] as EventId, b1?.id as EventId)).toBe(false);
    expect(store.verify().findings).toEqual([]);
  });

  it("a nested transaction that fails is undone alone; the outer one commits with consistent caches", () => {
    const store = openStore(":memory:");
    const s = session(store, 1);
    const head = s.events[0]?.id as EventId;
    const kept = store.transaction(() => {
      const [a] = store.append(s.id, "main", head, [ev("outer")]);
      const [ghost] = rolledBack(store, () => store.append(s.id, "main", a?.id as EventId, [ev("inner")]));
      expect(() => store.append(s.id, "main", ghost?.id as EventId, [ev("stale")])).toThrow(HeadConflict);
      return a as { id: EventId };
    });
    expect(store.branch(s.id, "main")?.head).toBe(kept.id);
    const [c] = store.append(s.id, "main", kept.id, [ev("after")]);
    expect(ids(store.log(s.id))).toEqual([s.genesis, head, kept.id, c?.id]);
    expect(store.verify().findings).toEqual([]);
  });

  it("a transaction that SQLite itself rolls back (disk full) leaves caches that agree with the file", () => {
    const { store } = fileStore();
    const s = session(store, 1);
    const db = (store as SqliteStore).database;
    let head = s.events[0]?.id as EventId;
    db.pragma(`max_page_count = ${(db.pragma("page_count", { simple: true }) as number) + 3}`);
    let error: unknown;
    try {
      store.transaction(() => {
        for (let i = 0; i < 500; i++) head = (store.append(s.id, "main", head, [ev("y".repeat(2000))])[0] as { id: EventId }).id;
      });
    } catch (e) {
      error = e;
    }
    expect((error as StoreError).code).toBe("disk-full");
    db.pragma("max_page_count = 1000000");
    const real = store.branch(s.id, "main")?.head as EventId;
    expect(real).toBe(s.events[0]?.id);
    expect(() => store.append(s.id, "main", head, [ev("stale")])).toThrow(HeadConflict);
    store.append(s.id, "main", real, [ev("fine")]);
    expect(store.log(s.id)).toHaveLength(3);
    expect(store.verify().findings).toEqual([]);
  });

  it("a snapshot written in a rolled-back transaction leaves no chunk that the next snapshot would trust", () => {
    const store = openStore(":memory:");
    const s = session(store, 2);
    const [a, b] = s.events.map((e) => e.id) as [EventId, EventId];
    const pages = [store.putBlob("p0"), null, store.putBlob("p2")];
    rolledBack(store, () => {
      store.putSnapshot(a, "rolled back", [...pages, store.putBlob("only in the rolled-back transaction")]);
      store.putSnapshot(a, "rolled back", pages);
    });
    expect(store.nearestSnapshot(b)).toBeUndefined();
    store.putSnapshot(b, "kept", pages);
    expect(store.nearestSnapshot(b)?.pages).toEqual(pages);
    expect(store.verify().findings).toEqual([]);
  });

  it("the caller's own error passes through transaction() unchanged", () => {
    const store = openStore(":memory:");
    session(store);
    expect(() =>
      store.transaction(() => {
        throw abort;
      }),
    ).toThrow(abort);
    expect(() => store.transaction("not a function" as never)).toThrow(StoreError);
  });
});

type Op = { kind: "append" | "group" | "fork" | "move" | "read"; branch: number; at: number; n: number };
type Step = Op | { kind: "abort" | "nested"; ops: Op[] };
const op: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom("append", "append", "group", "fork", "move", "read"),
  branch: fc.nat(),
  at: fc.nat(),
  n: fc.integer({ min: 1, max: 3 }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: op },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("abort", "nested"), ops: fc.array(op, { minLength: 1, maxLength: 5 }) }) },
);

describe("ST-12 rollbacks, as a property", () => {
  it("any mix of committed and rolled-back steps leaves every branch equal to a model of the committed ones", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const store = openStore(":memory:");
        const { session: sess, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
        let model = new Map<string, EventId[]>([["main", [genesis.id]]]);
        let all: EventId[] = [genesis.id];
        let forks = 0;
        const run = (s: Op) => {
          const names = [...model.keys()];
          const name = names[s.branch % names.length] as string;
          const chain = model.get(name) as EventId[];
          const head = chain[chain.length - 1] as EventId;
          if (s.kind === "append" || s.kind === "group") {
            const count = s.kind === "group" ? s.n : 1;
            const added = store.append(
              sess.id,
              name,
              head,
              Array.from({ length: count }, (_, i) => ({ kind: "patch@1", data: `${name}:${i}` })),
            );
            model.set(name, [...chain, ...added.map((m) => m.id)]);
            all = [...all, ...added.map((m) => m.id)];
          } else if (s.kind === "fork") {
            const at = chain[s.at % chain.length] as EventId;
            const fname = `f${forks++}`;
            store.fork(sess.id, at, fname);
            model.set(fname, chain.slice(0, chain.indexOf(at) + 1));
          } else if (s.kind === "move") {
            const target = all[s.at % all.length] as EventId;
            const targetChain = [...model.values()].find((c) => c.includes(target)) as EventId[];
            const { kept } = store.moveHead(sess.id, name, target);
            if (kept !== null && !model.has(kept.name)) model.set(kept.name, [...chain]);
            model.set(name, targetChain.slice(0, targetChain.indexOf(target) + 1));
          } else {
            // Reads fill the caches (segments, tips are verified by SQL).
            store.chain(head);
            store.log(sess.id, { branch: name });
          }
        };
        const attempt = (ops: Op[]) => {
          const saved = { model: new Map(model), all };
          let ghosts: [string, EventId][] = [];
          try {
            store.transaction(() => {
              for (const o of ops) run(o);
              ghosts = [...model]
                .filter(([name, chain]) => saved.model.get(name) !== chain)
                .map(([n, c]) => [n, c[c.length - 1] as EventId]);
              throw abort;
            });
          } catch (e) {
            if (e !== abort) throw e;
          }
          model = saved.model;
          all = saved.all;
          // A writer still holding a head from the rolled-back steps conflicts (or finds no such branch).
          for (const [name, ghost] of ghosts)
            if (!all.includes(ghost)) expect(() => store.append(sess.id, name, ghost, [ev("stale")])).toThrow(StoreError);
        };
        for (const s of steps) {
          if (s.kind === "abort") attempt(s.ops);
          else if (s.kind === "nested")
            store.transaction(() => {
              run(s.ops[0] as Op);
              attempt(s.ops.slice(1));
            });
          else run(s as Op);
        }
        for (const [name, chain] of model) {
          expect(ids(store.log(sess.id, { branch: name })), name).toEqual(chain);
          const head = chain[chain.length - 1] as EventId;
          expect(store.branch(sess.id, name)?.head).toBe(head);
          expect(ids(store.chain(head))).toEqual(chain);
          // The fast path must see the real tip: appending at it works, at anything else conflicts.
          const [x] = store.append(sess.id, name, head, [ev("probe")]);
          model.set(name, [...chain, x?.id as EventId]);
        }
        expect(
          store
            .branches(sess.id)
            .map((b) => b.name)
            .sort(),
        ).toEqual([...model.keys()].sort());
        expect(store.verify().findings).toEqual([]);
      }),
      { numRuns: Number(process.env.STRATA_FC_RUNS ?? 200) },
    );
  });
});
