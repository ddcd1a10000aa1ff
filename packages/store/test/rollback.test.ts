/**
 * ST-12 on SQLite: SQLite hands the ids of rolled-back rows to the next rows (decision 0010), and a
 * transaction SQLite itself rolls back (a full disk) leaves the caches as the file is. The
 * backend-neutral rollback behaviour is the conformance suite (conformance/transactions.ts).
 */
import { describe, expect, it } from "vitest";
import { type EventId, HeadConflict, openStore, type SqliteStore, type Store, type StoreError } from "../src/index.ts";
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
});
