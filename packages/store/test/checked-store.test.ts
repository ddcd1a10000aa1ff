/**
 * ST-20, ST-26 (decision 0023): the contract's wrapper (`CheckedStore`) — one wrapper for every
 * backend, with the methods on its prototype (so a Store can be wrapped in a Proxy and in another
 * wrapper), one error mapping (a failure of the store's own is `internal`, never the caller's
 * `bad-input`), and better-sqlite3 behind the SQLite backend's modules only.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CheckedStore,
  checkedStore,
  type EventId,
  openStore,
  type SqliteStore,
  STORE_METHODS,
  type Store,
  StoreError,
  type StoreMethod,
  toStoreError,
} from "../src/index.ts";
import { ev, session } from "./helpers.ts";

const SRC = join(import.meta.dirname, "../src");

/** `f` throws a StoreError with `code`; returns it. */
function fails(f: () => unknown, code: string): StoreError {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, String(error)).toBeInstanceOf(StoreError);
  expect((error as StoreError).code, (error as Error).message).toBe(code);
  return error as StoreError;
}

describe("ST-26 the contract's wrapper (decision 0023)", () => {
  it("every method of Store is a method of the wrapper's prototype, none an own property of a store", () => {
    const store = openStore(":memory:");
    for (const m of STORE_METHODS) {
      expect(Object.hasOwn(CheckedStore.prototype, m), m).toBe(true);
      expect(Object.hasOwn(store, m), `${m} is not rewritten on the instance`).toBe(false);
    }
    expect(store).toBeInstanceOf(CheckedStore);
  });

  it("a store wraps in a Proxy: one that forwards everything, and one that instruments every method", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = session(store, 2);
    const plain = new Proxy(store, {});
    expect(plain.closed).toBe(false);
    expect(plain.path).toBe(":memory:");
    expect(plain.access).toBe("read-write");
    expect(plain.log(s.id)).toHaveLength(3);
    const [m] = plain.append(s.id, "main", plain.branch(s.id, "main")?.head as EventId, [ev("through a proxy")]);
    expect(plain.event(m?.id as EventId)?.data).toBe("through a proxy");
    const calls = new Map<string, number>();
    const counted = new Proxy(store, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if (typeof v !== "function" || !STORE_METHODS.includes(key as StoreMethod)) return v;
        return (...args: unknown[]) => {
          calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
          return v.apply(receiver, args);
        };
      },
    });
    counted.append(s.id, "main", m?.id as EventId, [ev("counted")]);
    counted.chain(counted.branch(s.id, "main")?.head as EventId);
    expect(Object.fromEntries(calls)).toEqual({ append: 1, branch: 1, chain: 1 });
    expect(fails(() => counted.append(42 as never, "main", 1 as EventId, []), "bad-input").message).toMatch(
      /append: expected a session id/,
    );
  });

  it("checkedStore wraps any Store, a checked one included, with the same checks and errors", () => {
    const inner = openStore(":memory:");
    const store: Store = checkedStore(inner);
    const s = session(store, 1);
    expect(store.log(s.id)).toHaveLength(2);
    fails(() => store.fork(s.id, s.genesis, "bad@name"), "bad-input");
    fails(() => store.append(s.id, "nope", s.genesis, [ev("x")]), "not-found");
    const mine = new TypeError("mine");
    let passed: unknown;
    try {
      store.transaction(() => {
        throw mine;
      });
    } catch (e) {
      passed = e;
    }
    expect(passed).toBe(mine);
    store.close();
    expect(inner.closed).toBe(true);
    fails(() => store.listSessions(), "closed");
  });

  it("a failure of the store's own (here: its connection closed under it) is internal, not the caller's bad-input", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = session(store, 1);
    store.database.close(); // behind the store's back: the driver now throws TypeErrors
    for (const call of [() => store.listSessions(), () => store.log(s.id), () => store.append(s.id, "main", s.genesis, [ev("x")])]) {
      const e = fails(call, "internal");
      expect(e.message).toMatch(/internal error in the store \(.*\); please report it/);
      expect(e.cause).toBeInstanceOf(TypeError);
    }
  });

  it("toStoreError keeps StoreErrors, maps file-system errors by their code, and calls everything else internal", () => {
    const kept = new StoreError("conflict", "x");
    expect(toStoreError(kept, "w")).toBe(kept);
    const sys = (code: string) => Object.assign(new Error(code), { code });
    expect(toStoreError(sys("ENOSPC"), "w").code).toBe("disk-full");
    expect(toStoreError(sys("EROFS"), "w").code).toBe("read-only");
    expect(toStoreError(sys("EIO"), "w").code).toBe("io");
    for (const e of [new TypeError("t"), new RangeError("r"), new Error("e"), "a string", Symbol("s"), Object.create(null), undefined])
      expect(toStoreError(e, "w").code).toBe("internal");
    // A backend's own mapping comes first.
    expect(toStoreError(new Error("x"), "w", () => new StoreError("busy", "mapped")).code).toBe("busy");
    expect(toStoreError(new Error("x"), "w", (e) => e).code).toBe("internal");
  });
});

describe("ST-26 SQLite behind its own modules", () => {
  it("better-sqlite3 is imported only under src/sqlite/, and the contract's modules import nothing from there", () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : [join(dir, d.name)]));
    const offenders: string[] = [];
    for (const file of files(SRC).filter((f) => f.endsWith(".ts"))) {
      const path = relative(SRC, file);
      const text = readFileSync(file, "utf8");
      const imports = [...text.matchAll(/^(?:import|export)[^"']*from\s*["']([^"']+)["']/gm)].map((m) => m[1] as string);
      if (path.startsWith("sqlite/")) continue;
      if (imports.includes("better-sqlite3")) offenders.push(`${path} imports better-sqlite3`);
      if (path !== "index.ts" && imports.some((i) => i.startsWith("./sqlite/"))) offenders.push(`${path} imports the SQLite backend`);
    }
    expect(offenders).toEqual([]);
    expect(files(join(SRC, "sqlite")).length).toBeGreaterThan(5);
  });
});
