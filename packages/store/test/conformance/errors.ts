/**
 * Conformance, ST-20: every method of `Store` refuses bad input with `bad-input` before anything
 * is written, never lets a raw TypeError or RangeError out (nor an `internal` error) whatever it is
 * given, and refuses every call on a closed store with `closed`. The table below has an entry per
 * method of the interface (`Record<StoreMethod, …>`: a new method does not compile without one).
 */
import { describe, expect, it } from "vitest";
import {
  type EventId,
  type EventMeta,
  type SessionId,
  STORE_METHODS,
  type Store,
  StoreError,
  type StoreMethod,
  TS_MAX,
} from "../../src/index.ts";
import { code, ev, fails, fingerprint, headOf, type Kit, session } from "./kit.ts";

/** What the calls of the table are made against: a session with events, a blob, a held lease. */
interface Ctx {
  readonly s: SessionId;
  readonly genesis: EventId;
  readonly head: EventId;
  readonly hash: string;
  /** The token of the lease held on branch "leased". */
  readonly token: number;
}

/** One argument of a method: a call with `v` in its place, and values the contract refuses there. */
interface Slot {
  readonly name: string;
  readonly at: (c: Ctx, v: unknown) => unknown[];
  readonly bad: readonly unknown[];
}

interface Entry {
  /** Arguments of a call that succeeds (or fails only for what the data holds). */
  readonly valid: (c: Ctx) => unknown[];
  readonly slots: readonly Slot[];
}

const NOT_ID = ["7", 1.5, -Number.MAX_VALUE, Number.NaN, 2 ** 53, null, {}, 1n];
const NOT_COUNT = [-1, 1.5, Number.NaN, "3", null, -Number.POSITIVE_INFINITY];
const NOT_SESSION = [42, null, {}, ["01"], Symbol("s")];
const NOT_NAME = ["", "a b", "bad@name", "~x", "x".repeat(101), 5, null];
const NOT_HASH = ["abc", "A".repeat(64), `${"0".repeat(64)}0`, 123, null];
const NOT_EVENT = [null, "event", 42, {}, { kind: "", data: "x" }, { kind: "k" }, { kind: "k", data: 1 }];
const NOT_OBJECT = [5, "options", () => ({})];
const BAD_TS = [1e300, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, TS_MAX + 1, 2 ** 53, "5"];

/** Every field of an event, one at a time. */
const eventSlots = (name: string, wrap: (c: Ctx, e: unknown) => unknown[]): Slot[] => [
  { name, at: wrap, bad: NOT_EVENT },
  { name: `${name}.kind`, at: (c, v) => wrap(c, { kind: v, data: "x" }), bad: ["", 5, null, "k\ud800"] },
  { name: `${name}.data`, at: (c, v) => wrap(c, { kind: "k", data: v }), bad: [5, null, Buffer.from("x"), "\udc00"] },
  { name: `${name}.label`, at: (c, v) => wrap(c, { kind: "k", data: "x", label: v }), bad: [5, {}, "\ud800"] },
  { name: `${name}.by`, at: (c, v) => wrap(c, { kind: "k", data: "x", by: v }), bad: [5, [], "\ud800x"] },
  { name: `${name}.ts`, at: (c, v) => wrap(c, { kind: "k", data: "x", ts: v }), bad: BAD_TS },
  { name: `${name}.search`, at: (c, v) => wrap(c, { kind: "k", data: "x", search: v }), bad: [5, null, {}, "\ud800"] },
];

const CALLS: Record<StoreMethod, Entry> = {
  close: { valid: () => [], slots: [] },
  transaction: { valid: () => [() => 1], slots: [{ name: "fn", at: (_, v) => [v], bad: [null, "f", {}, async () => 1] }] },
  readTransaction: { valid: () => [() => 1], slots: [{ name: "fn", at: (_, v) => [v], bad: [null, "f", {}] }] },
  createSession: {
    valid: () => [{ genesis: ev("{}") }],
    slots: [
      { name: "input", at: (_, v) => [v], bad: [null, 5, "x", {}] },
      { name: "title", at: (_, v) => [{ title: v, genesis: ev("{}") }], bad: [5, {}, "t\ud800"] },
      { name: "metadata", at: (_, v) => [{ metadata: v, genesis: ev("{}") }], bad: [null, 5, [], "m", { n: 1n }] },
      ...eventSlots("genesis", (_, e) => [{ genesis: e }]),
    ],
  },
  getSession: { valid: (c) => [c.s], slots: [{ name: "id", at: (_, v) => [v], bad: NOT_SESSION }] },
  listSessions: {
    valid: () => [{ limit: 1 }],
    slots: [
      { name: "query", at: (_, v) => [v], bad: [null, 5, "x"] },
      { name: "query.limit", at: (_, v) => [{ limit: v }], bad: [-1, 1.5, "3", null] },
      { name: "query.before", at: (_, v) => [{ before: v }], bad: NOT_SESSION },
    ],
  },
  recentSessions: { valid: () => [1], slots: [{ name: "limit", at: (_, v) => [v], bad: [-1, 1.5, "3", null] }] },
  search: {
    valid: (c) => [{ text: "x", session: c.s, limit: 5 }],
    slots: [
      { name: "query", at: (_, v) => [v], bad: [null, 5, "x"] },
      { name: "query.text", at: (_, v) => [{ text: v }], bad: [5, null, {}, "", "  ", "!!", "a ".repeat(17)] },
      { name: "query.session", at: (_, v) => [{ text: "x", session: v }], bad: NOT_SESSION },
      { name: "query.limit", at: (_, v) => [{ text: "x", limit: v }], bad: [0, -1, 1.5, "3", null, 1001] },
      { name: "query.before", at: (_, v) => [{ text: "x", before: v }], bad: NOT_ID },
    ],
  },
  searchBacklog: { valid: () => [], slots: [] },
  indexSearch: {
    valid: () => [[], 0],
    slots: [
      { name: "entries", at: (_, v) => [v, 0], bad: [null, 5, "x", {}] },
      { name: "entry", at: (_, v) => [[v], 0], bad: [null, 5, "x"] },
      { name: "entry.event", at: (_, v) => [[{ event: v, text: "x" }], 0], bad: NOT_ID },
      { name: "entry.text", at: (c, v) => [[{ event: c.head, text: v }], 0], bad: [5, null, {}] },
      { name: "backlog", at: (_, v) => [[], v], bad: [-1, 1.5, "3", null, Number.NaN] },
    ],
  },
  findSessions: { valid: () => ["0"], slots: [{ name: "prefix", at: (_, v) => [v], bad: [5, null, {}] }] },
  updateSession: {
    valid: (c) => [c.s, { title: "t" }],
    slots: [
      { name: "id", at: (_, v) => [v, { title: "t" }], bad: NOT_SESSION },
      { name: "changes", at: (c, v) => [c.s, v], bad: [null, undefined, 5] },
      { name: "title", at: (c, v) => [c.s, { title: v }], bad: [5, [], "\ud800"] },
      { name: "metadata", at: (c, v) => [c.s, { metadata: v }], bad: [null, 5, ["x"], { cycle: cyclic() }] },
    ],
  },
  removeSession: {
    valid: (c) => [c.s, { dryRun: true }],
    slots: [
      { name: "id", at: (_, v) => [v, { dryRun: true }], bad: NOT_SESSION },
      { name: "options", at: (c, v) => [c.s, v], bad: [null, 5, "x"] },
      { name: "options.dryRun", at: (c, v) => [c.s, { dryRun: v }], bad: [1, "yes", null] },
      { name: "options.live", at: (c, v) => [c.s, { dryRun: true, live: v }], bad: [1, "f", null, {}] },
    ],
  },
  collectGarbage: {
    valid: () => [{ dryRun: true }],
    slots: [
      { name: "options", at: (_, v) => [v], bad: [null, 5, "x"] },
      { name: "options.dryRun", at: (_, v) => [{ dryRun: v }], bad: [1, "yes", null] },
      { name: "options.live", at: (_, v) => [{ dryRun: true, live: v }], bad: [1, "f", null, {}] },
      { name: "options.refs", at: (_, v) => [{ dryRun: true, refs: v }], bad: [1, "f", null, {}] },
    ],
  },
  reserve: {
    valid: (c) => [c.s, 2],
    slots: [
      { name: "session", at: (_, v) => [v], bad: NOT_SESSION },
      { name: "count", at: (c, v) => [c.s, v], bad: [0, -1, 1.5, Number.NaN, "2", null, Symbol("n")] },
    ],
  },
  branches: { valid: (c) => [c.s], slots: [{ name: "session", at: (_, v) => [v], bad: NOT_SESSION }] },
  branch: {
    valid: (c) => [c.s, "main"],
    slots: [
      { name: "session", at: (_, v) => [v, "main"], bad: NOT_SESSION },
      { name: "name", at: (c, v) => [c.s, v], bad: [5, null, {}] },
    ],
  },
  append: {
    valid: (c) => [c.s, "main", c.head, [ev("x")]],
    slots: [
      { name: "session", at: (c, v) => [v, "main", c.head, [ev("x")]], bad: NOT_SESSION },
      { name: "branch", at: (c, v) => [c.s, v, c.head, [ev("x")]], bad: [5, null, {}] },
      { name: "expectedHead", at: (c, v) => [c.s, "main", v, [ev("x")]], bad: NOT_ID },
      { name: "events", at: (c, v) => [c.s, "main", c.head, v], bad: ["events", null, 5, {}] },
      ...eventSlots("the event", (c, e) => [c.s, "main", c.head, [e]]),
      ...eventSlots("event 1 of a group", (c, e) => [c.s, "main", c.head, [ev("ok"), e]]),
      { name: "options.lease", at: (c, v) => [c.s, "main", c.head, [ev("x")], { lease: v }], bad: [0, -1, 1.5, "1", null] },
    ],
  },
  fork: {
    valid: (c) => [c.s, c.genesis, "forked"],
    slots: [
      { name: "session", at: (c, v) => [v, c.genesis, "f"], bad: NOT_SESSION },
      { name: "at", at: (c, v) => [c.s, v, "f"], bad: NOT_ID },
      { name: "name", at: (c, v) => [c.s, c.genesis, v], bad: NOT_NAME },
    ],
  },
  moveHead: {
    valid: (c) => [c.s, "main", c.head],
    slots: [
      { name: "session", at: (c, v) => [v, "main", c.genesis], bad: NOT_SESSION },
      { name: "branch", at: (c, v) => [c.s, v, c.genesis], bad: [5, null] },
      { name: "to", at: (c, v) => [c.s, "main", v], bad: NOT_ID },
      { name: "options", at: (c, v) => [c.s, "main", c.genesis, v], bad: [null, ...NOT_OBJECT] },
      { name: "options.expected", at: (c, v) => [c.s, "main", c.genesis, { expected: v }], bad: NOT_ID },
      { name: "options.keepAs", at: (c, v) => [c.s, "main", c.genesis, { keepAs: v }], bad: NOT_NAME },
    ],
  },
  event: { valid: (c) => [c.head], slots: [{ name: "id", at: (_, v) => [v], bad: NOT_ID }] },
  eventMeta: { valid: (c) => [c.head], slots: [{ name: "id", at: (_, v) => [v], bad: NOT_ID }] },
  events: {
    valid: (c) => [[c.head, c.genesis]],
    slots: [
      { name: "ids", at: (_, v) => [v], bad: ["1", 1, null, {}] },
      { name: "an id", at: (c, v) => [[c.head, v]], bad: NOT_ID },
    ],
  },
  eventData: {
    valid: (c) => [[c.head, c.genesis]],
    slots: [
      { name: "ids", at: (_, v) => [v], bad: ["1", 1, null, {}] },
      { name: "an id", at: (c, v) => [[c.head, v]], bad: NOT_ID },
    ],
  },
  chainData: chainRead(),
  chain: chainRead(),
  chainMeta: chainRead(),
  firstLabeled: {
    valid: (c) => [c.head, "label", 0],
    slots: [
      { name: "head", at: (_, v) => [v, "label"], bad: NOT_ID },
      { name: "label", at: (c, v) => [c.head, v], bad: [5, null, {}, ["x"]] },
      { name: "afterDepth", at: (c, v) => [c.head, "label", v], bad: NOT_COUNT },
    ],
  },
  log: {
    valid: (c) => [c.s, { limit: 2 }],
    slots: [
      { name: "session", at: (_, v) => [v], bad: NOT_SESSION },
      { name: "query", at: (c, v) => [c.s, v], bad: [null, ...NOT_OBJECT] },
      { name: "query.branch", at: (c, v) => [c.s, { branch: v }], bad: [5, null, {}] },
      { name: "query.after", at: (c, v) => [c.s, { after: v }], bad: NOT_ID },
      { name: "query.limit", at: (c, v) => [c.s, { limit: v }], bad: NOT_COUNT },
    ],
  },
  isAncestor: {
    valid: (c) => [c.genesis, c.head],
    slots: [
      { name: "ancestor", at: (c, v) => [v, c.head], bad: NOT_ID },
      { name: "descendant", at: (c, v) => [c.genesis, v], bad: NOT_ID },
    ],
  },
  atDepth: {
    valid: (c) => [c.head, 1],
    slots: [
      { name: "head", at: (_, v) => [v, 1], bad: NOT_ID },
      { name: "depth", at: (c, v) => [c.head, v], bad: ["x", 1.5, Number.NaN, Number.POSITIVE_INFINITY, null] },
    ],
  },
  putSnapshot: {
    valid: (c) => [c.head, "h", [c.hash, null]],
    slots: [
      { name: "event", at: (c, v) => [v, "h", [c.hash]], bad: NOT_ID },
      { name: "header", at: (c, v) => [c.head, v, [c.hash]], bad: [5, null, {}] },
      { name: "pages", at: (c, v) => [c.head, "h", v], bad: ["pages", null, {}, 5] },
      { name: "a page", at: (c, v) => [c.head, "h", [c.hash, v]], bad: [...NOT_HASH.filter((h) => h !== null), undefined, {}] },
    ],
  },
  nearestSnapshot: { valid: (c) => [c.head], slots: [{ name: "event", at: (_, v) => [v], bad: NOT_ID }] },
  snapshots: { valid: (c) => [c.s], slots: [{ name: "session", at: (_, v) => [v], bad: NOT_SESSION }] },
  putBlob: { valid: () => ["bytes"], slots: [{ name: "data", at: (_, v) => [v], bad: [42, null, {}, [1, 2], new ArrayBuffer(2)] }] },
  getBlob: { valid: (c) => [c.hash], slots: [{ name: "hash", at: (_, v) => [v], bad: NOT_HASH }] },
  getBlobs: {
    valid: (c) => [[c.hash]],
    slots: [
      { name: "hashes", at: (_, v) => [v], bad: ["h", null, 5] },
      { name: "a hash", at: (c, v) => [[c.hash, v]], bad: NOT_HASH },
    ],
  },
  hasBlob: { valid: (c) => [c.hash], slots: [{ name: "hash", at: (_, v) => [v], bad: NOT_HASH }] },
  acquireLease: {
    valid: (c) => [c.s, "other", "owner"],
    slots: [
      { name: "session", at: (_, v) => [v, "main", "o"], bad: NOT_SESSION },
      { name: "branch", at: (c, v) => [c.s, v, "o"], bad: NOT_NAME },
      { name: "owner", at: (c, v) => [c.s, "main", v], bad: ["", "x".repeat(4097), 5, null, "\ud800"] },
      { name: "stale", at: (c, v) => [c.s, "main", "o", v], bad: ["yes", 1, null, {}] },
    ],
  },
  renewLease: leaseCall(),
  releaseLease: leaseCall(),
  lease: {
    valid: (c) => [c.s, "leased"],
    slots: [
      { name: "session", at: (_, v) => [v, "main"], bad: NOT_SESSION },
      { name: "branch", at: (c, v) => [c.s, v], bad: NOT_NAME },
    ],
  },
  verify: {
    valid: (c) => [c.s],
    slots: [
      { name: "session", at: (_, v) => [v], bad: [42, null, {}] },
      { name: "hooks", at: (c, v) => [c.s, v], bad: [null, 5, "h"] },
      { name: "hooks.checkEvent", at: (c, v) => [c.s, { checkEvent: v }], bad: [5, "f", {}] },
      { name: "hooks.checkSnapshot", at: (c, v) => [c.s, { checkSnapshot: v }], bad: [5, null] },
      { name: "hooks.progress", at: (c, v) => [c.s, { progress: v }], bad: [true, {}] },
    ],
  },
};

function chainRead(): Entry {
  return {
    valid: (c) => [c.head, 0, 10],
    slots: [
      { name: "head", at: (_, v) => [v], bad: NOT_ID },
      { name: "afterDepth", at: (c, v) => [c.head, v], bad: NOT_COUNT },
      { name: "limit", at: (c, v) => [c.head, 0, v], bad: NOT_COUNT },
    ],
  };
}

function leaseCall(): Entry {
  return {
    valid: (c) => [c.s, "leased", c.token],
    slots: [
      { name: "session", at: (c, v) => [v, "leased", c.token], bad: NOT_SESSION },
      { name: "branch", at: (c, v) => [c.s, v, c.token], bad: NOT_NAME },
      { name: "token", at: (c, v) => [c.s, "leased", v], bad: [0, -1, 1.5, "1", null] },
    ],
  };
}

function cyclic(): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  o.self = o;
  return o;
}

/** Values no caller should pass anywhere; a store answers each with a result or a StoreError, never a crash. */
const HOSTILE: readonly unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 53,
  "",
  "x",
  "\ud800",
  "Z".repeat(100_000),
  1n,
  Symbol("hostile"),
  {},
  [],
  [null],
  [1, "x"],
  Object.create(null),
  () => 1,
  async () => 1,
  new Date(0),
  new Map([[1, 2]]),
  Buffer.from("x"),
  new Uint8Array(2),
  { kind: "k", data: "x" },
  // biome-ignore lint/suspicious/noThenProperty: a value that looks half like a promise is hostile input too
  { then: 1 },
  { toString: () => 5, valueOf: () => 5 },
];

/** Codes a well-formed but unexpected call may get: what the data says, not the store's failure. */
const ANSWERS = new Set(["bad-input", "not-found", "conflict", "exists", "lease-lost", "in-use"]);

/** A value as a test names it (never throws: symbols, BigInts and objects without a prototype included). */
function label(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 20 ? `${v.slice(0, 20)}…` : v);
  if (typeof v === "symbol" || typeof v === "bigint" || typeof v === "function") return `a ${typeof v}`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return `a ${typeof v}`;
  }
}

const call = (store: Store, method: StoreMethod, args: unknown[]): unknown =>
  (store[method] as (...a: unknown[]) => unknown).apply(store, args);

async function context(store: Store): Promise<Ctx> {
  const s = await session(store, 2);
  const hash = await store.putBlob("page");
  const lease = await store.acquireLease(s.id, "leased", "holder");
  if (!lease.ok) throw new Error("lease not acquired");
  return { s: s.id, genesis: s.genesis, head: await headOf(store, s.id), hash, token: lease.lease.token };
}

export function errorsConformance(kit: Kit): void {
  describe("ST-20/26 every method checks its arguments", () => {
    it("the table covers every method of Store, and every method with arguments has its arguments in it", async () => {
      expect(Object.keys(CALLS).sort()).toEqual([...STORE_METHODS].sort());
      const store = await kit.open();
      for (const m of STORE_METHODS) {
        expect(typeof store[m], m).toBe("function");
        if (CALLS[m].slots.length === 0) expect((store[m] as (...a: unknown[]) => unknown).length, `${m} takes no argument`).toBe(0);
      }
    });

    it("bad input to any method is bad-input, says where, and writes nothing", async () => {
      for (const m of STORE_METHODS) {
        const store = await kit.open();
        const c = await context(store);
        const before = await fingerprint(store);
        for (const slot of CALLS[m].slots)
          for (const v of slot.bad) {
            // A body that awaits is the asynchronous port's own (decision 0035); the synchronous store refuses it.
            if (kit.traits.asynchronous === true && m === "transaction" && typeof v === "function") continue;
            let error: unknown;
            try {
              await call(store, m, slot.at(c, v));
            } catch (e) {
              error = e;
            }
            const what = `${m} with ${slot.name} = ${label(v)}`;
            expect(error, what).toBeInstanceOf(StoreError);
            expect((error as StoreError).code, `${what}: ${(error as Error).message}`).toBe("bad-input");
            expect((error as Error).message.length, what).toBeGreaterThan(20);
          }
        expect(await fingerprint(store), `${m}: a refused call wrote nothing`).toBe(before);
        await store.close();
      }
    });

    it("whatever any argument is, a method returns or throws a StoreError with a code about the input — never a raw TypeError or RangeError, never internal", async () => {
      for (const m of STORE_METHODS) {
        if (m === "close") continue;
        const store = await kit.open();
        const c = await context(store);
        for (const slot of CALLS[m].slots)
          for (const v of HOSTILE) {
            const args = slot.at(c, v);
            try {
              await call(store, m, args);
            } catch (e) {
              const what = `${m} with ${slot.name} = ${label(v)}`;
              expect(e, `${what}: ${String(e)}`).toBeInstanceOf(StoreError);
              expect(ANSWERS.has((e as StoreError).code), `${what}: ${(e as StoreError).code}: ${(e as Error).message}`).toBe(true);
            }
          }
        expect((await store.verify()).findings, m).toEqual([]);
        await store.close();
      }
    });

    it("every method of a closed store is refused with closed, whatever its arguments", async () => {
      const store = await kit.open();
      const c = await context(store);
      await store.close();
      for (const m of STORE_METHODS) {
        if (m === "close") continue;
        await fails(() => call(store, m, CALLS[m].valid(c)), "closed", /was closed/);
        for (const slot of CALLS[m].slots) await fails(() => call(store, m, slot.at(c, slot.bad[0])), "closed");
      }
    });
  });

  describe("ST-20 malformed input is refused before anything is written, on every path", () => {
    it("text that cannot be stored as it is (a lone surrogate) is refused, in every text field; paired surrogates are kept", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = await headOf(store, s.id);
      for (const bad of [
        { kind: "patch@1", data: "a\ud800b" },
        { kind: "patch@1", data: "x\udc00" },
        { kind: "patch@\ud83d", data: "{}" },
        { kind: "patch@1", data: "{}", label: "l\udfff" },
        { kind: "patch@1", data: "{}", by: "\ud800" },
      ]) {
        expect(await code(() => store.append(s.id, "main", head, [bad])), JSON.stringify(bad)).toBe("bad-input");
        expect(await code(() => store.append(s.id, "main", head, [ev("ok"), bad]))).toBe("bad-input");
      }
      await fails(
        () => store.append(s.id, "main", head, [{ kind: "patch@1", data: "a\ud800b" }]),
        "bad-input",
        /data is not well-formed Unicode \(a lone surrogate, U\+D800, at index 1\), so it cannot be stored as text; nothing was written/,
      );
      expect(await code(() => store.createSession({ title: "t\ud800", genesis: { kind: "genesis@1", data: "{}" } }))).toBe("bad-input");
      expect(await code(() => store.acquireLease(s.id, "main", "pid \udc00"))).toBe("bad-input");
      expect(await store.log(s.id)).toHaveLength(2);
      // What is stored reads back exactly, and its digest checks (ST-21): emoji, escapes of surrogates in JSON.
      const [m] = await store.append(s.id, "main", head, [{ kind: "patch@1", label: "𝄞", data: '{"t":"\\ud800 😀"}' }]);
      expect((await store.event(m?.id as EventId))?.data).toBe('{"t":"\\ud800 😀"}');
      expect((await store.event(m?.id as EventId))?.label).toBe("𝄞");
      expect((await store.verify()).findings).toEqual([]);
    });

    it("an append that could take a fast path checks kind, data, label, by and ts like a group commit", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = await headOf(store, s.id);
      for (const bad of [
        { kind: "", data: "x" },
        { data: "x" },
        { kind: "k", data: 42 },
        { kind: "k" },
        { kind: "k", data: "x", label: 5 },
        { kind: "k", data: "x", by: {} },
        { kind: "k", data: "x", ts: "now" },
        null,
        "event",
      ]) {
        // main owns its line and its head was just appended: the single event takes the fast path.
        expect(await code(() => store.append(s.id, "main", head, [bad as never])), JSON.stringify(bad)).toBe("bad-input");
        expect(await code(() => store.append(s.id, "main", head, [ev("ok"), bad as never])), JSON.stringify(bad)).toBe("bad-input");
      }
      await fails(() => store.append(s.id, "main", head, [{ kind: "", data: "x" }]), "bad-input", /needs a kind .* nothing was written/);
      expect(await store.log(s.id)).toHaveLength(2);
      expect((await store.append(s.id, "main", head, [ev("fine")]))[0]?.depth).toBe(3);
      expect(await code(() => store.append(s.id, "main", "7" as never, [ev("x")]))).toBe("bad-input");
      expect(await code(() => store.append(s.id, "main", head, "events" as never))).toBe("bad-input");
      expect(await code(() => store.append(42 as never, "main", head, [ev("x")]))).toBe("bad-input");
      expect((await store.verify()).findings).toEqual([]);
    });

    it("reads with arguments of the wrong type are bad-input StoreErrors, never raw TypeErrors or RangeErrors", async () => {
      const store = await kit.open();
      const s = await session(store, 2);
      const head = await headOf(store, s.id);
      const calls: [string, () => unknown][] = [
        ["getBlob(123)", () => store.getBlob(123 as never)],
        ["getBlob('abc')", () => store.getBlob("abc")],
        ["hasBlob(null)", () => store.hasBlob(null as never)],
        ["getBlobs([1])", () => store.getBlobs([1 as never])],
        ["putBlob(42)", () => store.putBlob(42 as never)],
        ["eventMeta({})", () => store.eventMeta({} as never)],
        ["event('1')", () => store.event("1" as never)],
        ["events('1')", () => store.events("1" as never)],
        ["chain(1.5)", () => store.chain(1.5 as never)],
        ["chain(head, -1)", () => store.chain(head, -1)],
        ["chainMeta(head, 0, NaN)", () => store.chainMeta(head, 0, Number.NaN)],
        ["log(s, {limit: -1})", () => store.log(s.id, { limit: -1 })],
        ["log(s, {after: 'x'})", () => store.log(s.id, { after: "x" as never })],
        ["atDepth(head, 'x')", () => store.atDepth(head, "x" as never)],
        ["getSession(1)", () => store.getSession(1 as never)],
        ["updateSession(s, {metadata: 1})", () => store.updateSession(s.id, { metadata: 1 as never })],
        ["createSession({})", () => store.createSession({} as never)],
        ["createSession(bigint metadata)", () => store.createSession({ metadata: { n: 1n }, genesis: ev("{}") })],
        ["fork(s, 'x', 'f')", () => store.fork(s.id, "x" as never, "f")],
        ["moveHead(s, 'main', null)", () => store.moveHead(s.id, "main", null as never)],
        ["nearestSnapshot([])", () => store.nearestSnapshot([] as never)],
        ["verify(5)", () => store.verify(5 as never)],
      ];
      for (const [name, f] of calls) expect(await code(f), name).toBe("bad-input");
      expect(await store.getBlob("0".repeat(64))).toBeUndefined();
      expect(await store.eventMeta(0 as EventId)).toBeUndefined();
      expect(await store.listSessions()).toHaveLength(1);
    });

    it("a timestamp that is not whole milliseconds from 1970 to the end of 9999 is bad-input, on every path, and nothing is written", async () => {
      const store = await kit.open();
      const s = await session(store, 1);
      const head = await headOf(store, s.id);
      for (const ts of BAD_TS as number[]) {
        await fails(
          () => store.append(s.id, "main", head, [{ kind: "patch@1", data: "{}", ts }]),
          "bad-input",
          /ts must be whole milliseconds/,
        );
        await fails(
          () => store.append(s.id, "main", head, [ev("ok"), { kind: "patch@1", data: "{}", ts }]),
          "bad-input",
          /event 1: ts must be/,
        );
        await fails(() => store.createSession({ genesis: { kind: "genesis@1", data: "{}", ts } }), "bad-input", /ts must be/);
      }
      expect(await store.log(s.id)).toHaveLength(2);
      expect(await store.listSessions()).toHaveLength(1);
      expect((await store.append(s.id, "main", head, [{ kind: "patch@1", data: "{}", ts: 0 }]))[0]?.ts).toBe(0);
      const next = await headOf(store, s.id);
      expect((await store.append(s.id, "main", next, [{ kind: "patch@1", data: "{}", ts: TS_MAX }]))[0]?.ts).toBe(TS_MAX);
    });

    it("a store clock that gives such a timestamp is refused the same way, and nothing is written", async () => {
      let t = 1_000;
      const store = await kit.open({ now: () => t });
      const s = await session(store, 1);
      t = 1e300;
      await fails(() => store.createSession({ genesis: { kind: "genesis@1", data: "{}" } }), "bad-input", /the store's clock/);
      const head = await headOf(store, s.id);
      await fails(() => store.append(s.id, "main", head, [ev("x")]), "bad-input", /the store's clock/);
      t = 2_000;
      expect(await store.listSessions()).toHaveLength(1);
      expect(((await store.append(s.id, "main", head, [ev("x")]))[0] as EventMeta).ts).toBe(2000);
    });
  });
}
