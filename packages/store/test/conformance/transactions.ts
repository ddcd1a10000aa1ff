/**
 * Conformance, ST-12 and ST-17: transactions are all or nothing and leave no trace when they roll
 * back — not in the data, not in the store's caches (branch tips, segment ancestry, directory
 * chunks) — and `readTransaction` reads one state and refuses writes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventId, HeadConflict, type SessionId, type Store, StoreError } from "../../src/index.ts";
import { body, code, ev, failure, fingerprint, ids, type Kit, session, value } from "./kit.ts";

const abort = new Error("abort the group");

/** Runs `make`'s body in a transaction that then throws; returns what the body returned. */
async function rolledBack<T>(store: Store, make: () => Generator<unknown, T, unknown>): Promise<T> {
  let out: T | undefined;
  const e = await failure(() =>
    store.transaction(
      body(function* () {
        out = yield* make();
        throw abort;
      }),
    ),
  );
  expect(e).toBe(abort);
  return out as T;
}

export function transactionsConformance(kit: Kit): void {
  describe("ST-12 transactions and the caches", () => {
    it("a transaction commits everything its body wrote, or nothing; it returns the body's value", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = s.events[0]?.id as EventId;
      const done = await store.transaction(
        body(function* () {
          const [a] = yield* value(store.append(s.id, "main", head, [ev("a")]));
          yield* value(store.fork(s.id, head, "side"));
          yield* value(store.updateSession(s.id, { title: "in tx" }));
          return a?.id;
        }),
      );
      expect(ids(await store.log(s.id)).at(-1)).toBe(done);
      expect((await store.getSession(s.id))?.title).toBe("in tx");
      const before = await fingerprint(store);
      await rolledBack(store, function* () {
        yield* value(store.append(s.id, "main", done as EventId, [ev("b")]));
        yield* value(store.fork(s.id, head, "gone"));
        yield* value(store.updateSession(s.id, { title: "rolled back", metadata: { x: 1 } }));
        yield* value(store.putSnapshot(head, "h", [yield* value(store.putBlob("page"))]));
        yield* value(store.acquireLease(s.id, "main", "driver"));
      });
      expect(await fingerprint(store)).toBe(before);
    });

    it("a branch tip appended in a rolled-back transaction is forgotten: its id is a conflict, not a head", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = s.events[0]?.id as EventId;
      const [ghost] = await rolledBack(store, function* () {
        return yield* value(store.append(s.id, "main", head, [ev("rolled back")]));
      });
      expect(await store.eventMeta(ghost?.id as EventId)).toBeUndefined();
      expect((await store.branch(s.id, "main"))?.head).toBe(head);
      expect(await failure(() => store.append(s.id, "main", ghost?.id as EventId, [ev("stale")]))).toBeInstanceOf(HeadConflict);
      const [next] = await store.append(s.id, "main", head, [ev("real")]);
      expect(next).toMatchObject({ prior: head, depth: 3 });
      expect(ids(await store.log(s.id))).toEqual([s.genesis, head, next?.id]);
      expect((await store.verify()).findings).toEqual([]);
    });

    it("a segment read in a rolled-back transaction is forgotten: the next segment has its own ancestry", async () => {
      const store = await kit.open();
      const s = await session(store, 5);
      const m = [s.genesis, ...ids(s.events)] as EventId[];
      await store.fork(s.id, m[4] as EventId, "a");
      await store.fork(s.id, m[1] as EventId, "b");
      await rolledBack(store, function* () {
        yield* value(store.append(s.id, "a", m[4] as EventId, [ev("a1")])); // opens a segment forked at depth 5
        return yield* value(store.log(s.id, { branch: "a" })); // and caches it
      });
      const [b1] = await store.append(s.id, "b", m[1] as EventId, [ev("b1")]); // a backend may reuse the row id
      expect(ids(await store.log(s.id, { branch: "b" }))).toEqual([m[0], m[1], b1?.id]);
      expect(ids(await store.chain(b1?.id as EventId))).toEqual([m[0], m[1], b1?.id]);
      expect(await store.isAncestor(m[3] as EventId, b1?.id as EventId)).toBe(false);
      expect((await store.verify()).findings).toEqual([]);
    });

    it("a nested transaction that fails is undone alone; the outer one commits with consistent caches", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = s.events[0]?.id as EventId;
      const kept = await store.transaction(
        body(function* () {
          const [a] = yield* value(store.append(s.id, "main", head, [ev("outer")]));
          let ghost: EventId | undefined;
          const e = yield* value(
            failureOf(() =>
              store.transaction(
                body(function* () {
                  ghost = (yield* value(store.append(s.id, "main", a?.id as EventId, [ev("inner")])))[0]?.id;
                  throw abort;
                }),
              ),
            ),
          );
          expect(e).toBe(abort);
          const stale = yield* value(failureOf(() => store.append(s.id, "main", ghost as EventId, [ev("stale")])));
          expect(stale).toBeInstanceOf(HeadConflict);
          return a as { id: EventId };
        }),
      );
      expect((await store.branch(s.id, "main"))?.head).toBe(kept.id);
      const [c] = await store.append(s.id, "main", kept.id, [ev("after")]);
      expect(ids(await store.log(s.id))).toEqual([s.genesis, head, kept.id, c?.id]);
      expect((await store.verify()).findings).toEqual([]);
    });

    it("a snapshot written in a rolled-back transaction leaves no chunk that the next snapshot would trust", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const [a, b] = s.events.map((e) => e.id) as [EventId, EventId];
      const pages = [await store.putBlob("p0"), null, await store.putBlob("p2")];
      await rolledBack(store, function* () {
        const extra = yield* value(store.putBlob("only in the rolled-back transaction"));
        yield* value(store.putSnapshot(a, "rolled back", [...pages, extra]));
        yield* value(store.putSnapshot(a, "rolled back", pages));
      });
      expect(await store.nearestSnapshot(b)).toBeUndefined();
      await store.putSnapshot(b, "kept", pages);
      expect((await store.nearestSnapshot(b))?.pages).toEqual(pages);
      expect((await store.verify()).findings).toEqual([]);
    });

    it("the caller's own error passes through transaction() unchanged; a body that is not a function is bad-input", async () => {
      const store = await kit.open();
      await session(store);
      const mine = new TypeError("the caller's own bug");
      expect(
        await failure(() =>
          store.transaction(() => {
            throw abort;
          }),
        ),
      ).toBe(abort);
      expect(
        await failure(() =>
          store.transaction(() => {
            throw mine;
          }),
        ),
        "even a TypeError of the caller's is the caller's",
      ).toBe(mine);
      expect(await code(() => store.transaction("not a function" as never))).toBe("bad-input");
    });
  });

  describe("ST-17 read transactions", () => {
    it("readTransaction returns what its body returns, passes the body's errors unchanged, and nests", async () => {
      const store = await kit.open();
      const s = await session(store, 3);
      const n = await store.readTransaction(
        body(function* () {
          const log = yield* value(store.log(s.id));
          const inner = yield* value(
            store.readTransaction(
              body(function* () {
                return (yield* value(store.listSessions())).length;
              }),
            ),
          );
          return log.length + inner;
        }),
      );
      expect(n).toBe(5);
      const mine = new RangeError("the caller's own");
      expect(
        await failure(() =>
          store.readTransaction(() => {
            throw mine;
          }),
        ),
      ).toBe(mine);
      expect(await code(() => store.readTransaction(42 as never))).toBe("bad-input");
      // Inside a write transaction, a read transaction reads what the write transaction sees.
      const seen = await store.transaction(
        body(function* () {
          const [a] = yield* value(store.append(s.id, "main", s.events[2]?.id as EventId, [ev("x")]));
          return yield* value(
            store.readTransaction(
              body(function* () {
                return (yield* value(store.eventMeta(a?.id as EventId)))?.id === a?.id;
              }),
            ),
          );
        }),
      );
      expect(seen).toBe(true);
    });

    it("every write inside readTransaction is refused with bad-input, and nothing is written", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const head = s.events[1]?.id as EventId;
      const hash = await store.putBlob("page");
      const token = await store.acquireLease(s.id, "other", "driver");
      if (!token.ok) throw new Error("not acquired");
      const writes: [string, () => unknown][] = [
        ["transaction", () => store.transaction(() => 1)],
        ["createSession", () => store.createSession({ genesis: { kind: "genesis@1", data: "{}" } })],
        ["updateSession", () => store.updateSession(s.id, { title: "x" })],
        ["reserve", () => store.reserve(s.id)],
        ["append", () => store.append(s.id, "main", head, [ev("x")])],
        ["fork", () => store.fork(s.id, head, "f")],
        ["moveHead", () => store.moveHead(s.id, "main", s.genesis)],
        ["putSnapshot", () => store.putSnapshot(head, "h", [hash])],
        ["putBlob", () => store.putBlob("new")],
        ["acquireLease", () => store.acquireLease(s.id, "main", "x")],
        ["renewLease", () => store.renewLease(s.id, "other", token.lease.token)],
        ["releaseLease", () => store.releaseLease(s.id, "other", token.lease.token)],
      ];
      const before = await fingerprint(store);
      for (const [name, write] of writes) {
        const e = await failure(() =>
          store.readTransaction(
            body(function* () {
              return yield* value(write());
            }),
          ),
        );
        expect(e, name).toBeInstanceOf(StoreError);
        expect((e as StoreError).code, name).toBe("bad-input");
        expect((e as Error).message, name).toMatch(/inside store\.readTransaction, which only reads/);
      }
      expect(await fingerprint(store)).toBe(before);
      // Outside it, the same writes work.
      expect((await store.append(s.id, "main", head, [ev("x")])).length).toBe(1);
    });
  });

  describe("ST-12 rollbacks, as a property", () => {
    const property = () =>
      fc.asyncProperty(fc.array(stepArb, { maxLength: 40 }), async (steps) => {
        const store = await kit.open();
        try {
          await rollbackModel(store, steps);
        } finally {
          await store.close();
        }
      });
    it("any mix of committed and rolled-back steps leaves every branch equal to a model of the committed ones", async () => {
      await fc.assert(property(), { numRuns: kit.runs(200) });
    });
    it("pinned seed 766706487: a kept head's default name taken by a branch that moved on since", async () => {
      await fc.assert(property(), { seed: 766706487, numRuns: 30 });
    });
  });
}

/** What `f` returns, or the error it throws, as a value a body can yield (a synchronous store: at once). */
function failureOrValue<T>(f: () => T | Promise<T>): T | Error | Promise<T | Error> {
  try {
    const r = f();
    if (typeof (r as { then?: unknown } | null)?.then === "function")
      return (r as Promise<T>).then(
        (v) => v,
        (e: unknown) => e as Error,
      );
    return r as T;
  } catch (e) {
    return e as Error;
  }
}

/** What `f` throws, as a value a body can yield (a synchronous store: at once). */
function failureOf(f: () => unknown): unknown {
  try {
    const r = f();
    if (typeof (r as { then?: unknown } | null)?.then === "function")
      return (r as Promise<unknown>).then(
        () => {
          throw new Error("expected a failure");
        },
        (e: unknown) => e,
      );
  } catch (e) {
    return e;
  }
  throw new Error("expected a failure");
}

type Op = { kind: "append" | "group" | "fork" | "move" | "read"; branch: number; at: number; n: number };
type Step = Op | { kind: "abort" | "nested"; ops: Op[] };
const opArb: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom("append", "append", "group", "fork", "move", "read"),
  branch: fc.nat(),
  at: fc.nat(),
  n: fc.integer({ min: 1, max: 3 }),
});
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: opArb },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("abort", "nested"), ops: fc.array(opArb, { minLength: 1, maxLength: 5 }) }) },
);

async function rollbackModel(store: Store, steps: readonly Step[]): Promise<void> {
  const { session: sess, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
  const id: SessionId = sess.id;
  let model = new Map<string, EventId[]>([["main", [genesis.id]]]);
  let all: EventId[] = [genesis.id];
  let forks = 0;
  function* run(s: Op): Generator<unknown, void, unknown> {
    const names = [...model.keys()];
    const name = names[s.branch % names.length] as string;
    const chain = model.get(name) as EventId[];
    const head = chain[chain.length - 1] as EventId;
    if (s.kind === "append" || s.kind === "group") {
      const count = s.kind === "group" ? s.n : 1;
      const added = yield* value(
        store.append(
          id,
          name,
          head,
          Array.from({ length: count }, (_, i) => ({ kind: "patch@1", data: `${name}:${i}` })),
        ),
      );
      model.set(name, [...chain, ...added.map((m) => m.id)]);
      all = [...all, ...added.map((m) => m.id)];
    } else if (s.kind === "fork") {
      const at = chain[s.at % chain.length] as EventId;
      const fname = `f${forks++}`;
      yield* value(store.fork(id, at, fname));
      model.set(fname, chain.slice(0, chain.indexOf(at) + 1));
    } else if (s.kind === "move") {
      const target = all[s.at % all.length] as EventId;
      const targetChain = [...model.values()].find((c) => c.includes(target)) as EventId[];
      // The default name of the kept head (rewound/<branch>/<head>) can be taken by a branch that
      // has moved on since (ST-11: "exists", as in chains.ts); keep it under another name then.
      const tried = yield* value(failureOrValue(() => store.moveHead(id, name, target)));
      if (tried instanceof Error && !(tried instanceof StoreError && tried.code === "exists")) throw tried;
      const { kept } = tried instanceof Error ? yield* value(store.moveHead(id, name, target, { keepAs: `kept${forks++}` })) : tried;
      if (kept !== null && !model.has(kept.name)) model.set(kept.name, [...chain]);
      model.set(name, targetChain.slice(0, targetChain.indexOf(target) + 1));
    } else {
      // Reads fill the caches (segments; tips are verified by the compare-and-swap).
      yield* value(store.chain(head));
      yield* value(store.log(id, { branch: name }));
    }
  }
  /** Runs `ops` in a transaction that is then rolled back; the model forgets them too. */
  function* attempt(ops: Op[]): Generator<unknown, void, unknown> {
    const saved = { model: new Map(model), all };
    let ghosts: [string, EventId][] = [];
    const e = yield* value(
      failureOf(() =>
        store.transaction(
          body(function* () {
            for (const o of ops) yield* run(o);
            ghosts = [...model].filter(([name, chain]) => saved.model.get(name) !== chain).map(([n, c]) => [n, c[c.length - 1] as EventId]);
            throw abort;
          }),
        ),
      ),
    );
    if (e !== abort) throw e;
    model = saved.model;
    all = saved.all;
    // A writer still holding a head from the rolled-back steps conflicts (or finds no such branch).
    for (const [name, ghost] of ghosts)
      if (!all.includes(ghost)) {
        const stale = yield* value(failureOf(() => store.append(id, name, ghost, [ev("stale")])));
        expect(stale).toBeInstanceOf(StoreError);
      }
  }
  for (const s of steps) {
    // Top-level steps run outside any transaction (appends take the autocommit fast path).
    if (s.kind === "abort") await body(() => attempt(s.ops))();
    else if (s.kind === "nested")
      await store.transaction(
        body(function* () {
          yield* run(s.ops[0] as Op);
          yield* attempt(s.ops.slice(1));
        }),
      );
    else await body(() => run(s as Op))();
  }
  for (const [name, chain] of model) {
    expect(ids(await store.log(id, { branch: name })), name).toEqual(chain);
    const head = chain[chain.length - 1] as EventId;
    expect((await store.branch(id, name))?.head).toBe(head);
    expect(ids(await store.chain(head))).toEqual(chain);
    // The fast path must see the real tip: appending at it works, at anything else conflicts.
    const [x] = await store.append(id, name, head, [ev("probe")]);
    model.set(name, [...chain, x?.id as EventId]);
  }
  expect((await store.branches(id)).map((b) => b.name).sort()).toEqual([...model.keys()].sort());
  expect((await store.verify()).findings).toEqual([]);
}
