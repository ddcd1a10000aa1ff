/**
 * The asynchronous storage port (decision 0035, revisiting 0007): the `Store` contract with every
 * method answering a promise, for a backend across a network (PostgreSQL, issue 15). Its rules are
 * the synchronous contract's, word for word — the conformance suite (ST-27) runs unchanged against
 * both — with three differences that only asynchrony makes:
 *
 * - `transaction(fn)` and `readTransaction(fn)` accept a body that returns a promise: every store
 *   call the body makes, before or after its awaits, runs in the body's transaction (the backend
 *   finds the transaction through `AsyncLocalStorage`, not through a connection the caller holds).
 *   Other calls made meanwhile — another session, another request — run outside it.
 * - `acquireLease`'s `stale` may answer a promise.
 * - `close()` answers a promise (a pool's connections end).
 *
 * `AsyncCheckedStore` is the port's edge, as `CheckedStore` is the synchronous one's: the same
 * argument checks (arg-checks.ts), `closed` first, writes refused inside a read transaction or
 * `verify` — by scope, so a write elsewhere at the same time is not refused — and every error
 * mapped once. `asyncStore(store)` gives a synchronous store (SQLite) the port, so the code above
 * it is written once for both backends.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ARGS, WRITES } from "./arg-checks.ts";
import { Callback, type ErrorMapping } from "./checked-store.ts";
import { StoreError, toStoreError } from "./errors.ts";
import type { VerifyHooks } from "./store.ts";
import { STORE_METHODS, type Store, type StoreMethod } from "./store.ts";
import type { LeaseInfo, LeaseResult, SessionId, VerifyReport } from "./types.ts";

/** A synchronous method of `Store` as the port has it: the same arguments, its result as a promise. */
type Promised<M> = M extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

/** The methods whose form is the synchronous one's, promised. */
type PromisedMethods = {
  readonly [K in Exclude<StoreMethod, "transaction" | "readTransaction" | "acquireLease" | "verify">]: Promised<Store[K]>;
};

/** The asynchronous storage port: `Store`, every method a promise (see the module's comment). */
export interface AsyncStore extends PromisedMethods {
  readonly path: string;
  readonly closed: boolean;
  /** Runs `fn` in one write transaction; every store call `fn` makes, across its awaits, is inside it. */
  transaction<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Runs `fn` against one consistent committed state (ST-17); writes inside are `bad-input`. */
  readTransaction<T>(fn: () => T | Promise<T>): Promise<T>;
  acquireLease(
    session: SessionId,
    branch: string,
    owner: string,
    stale?: (holder: LeaseInfo) => boolean | Promise<boolean>,
  ): Promise<LeaseResult>;
  verify(session?: SessionId, hooks?: VerifyHooks): Promise<VerifyReport>;
}

/**
 * Marks an object as the asynchronous port (every `AsyncCheckedStore`, every `asyncStore(…)`): code
 * written for both ports (the engine's `Session`) asks {@link isAsyncStore} which one it was given.
 */
const ASYNC_PORT = Symbol.for("strata.asyncStore");

/** True for the asynchronous port (an `AsyncStore`), false for a synchronous `Store`. */
export function isAsyncStore(store: unknown): store is AsyncStore {
  return typeof store === "object" && store !== null && (store as { [ASYNC_PORT]?: unknown })[ASYNC_PORT] === true;
}

/** The scope a read transaction's (or verify's) calls run in: writes inside it are refused. */
const READING = Symbol("reading");

/** Wraps an asynchronous backend in the contract's checks (see {@link AsyncCheckedStore}). */
export function checkedAsyncStore(inner: AsyncStore, mapError?: ErrorMapping): AsyncStore {
  return new AsyncCheckedStore(inner, mapError) as unknown as AsyncStore;
}

/**
 * The port's edge. Its methods are made from `STORE_METHODS` and the argument table (`ARGS`):
 * every method checks `closed`, then its arguments, then (a write) that it is not inside a read
 * scope, then awaits the backend and maps what it throws — except what the caller's own callbacks
 * threw, which passes unchanged (ST-20).
 */
export class AsyncCheckedStore {
  readonly #scope = new AsyncLocalStorage<typeof READING>();

  constructor(
    protected readonly inner: AsyncStore,
    private readonly mapError?: ErrorMapping,
  ) {}

  get path(): string {
    return this.inner.path;
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  async close(): Promise<void> {
    try {
      await this.inner.close();
    } catch (e) {
      throw toStoreError(e, "store.close", this.mapError);
    }
  }

  async transaction<T>(fn: () => T | Promise<T>): Promise<T> {
    const own = new Callback();
    try {
      this.#enter("transaction", [fn]);
      return await this.inner.transaction(own.wrap(fn));
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.transaction", this.mapError);
    }
  }

  async readTransaction<T>(fn: () => T | Promise<T>): Promise<T> {
    const own = new Callback();
    try {
      this.#enter("readTransaction", [fn]);
      return await this.#scope.run(READING, () => this.inner.readTransaction(own.wrap(fn)));
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.readTransaction", this.mapError);
    }
  }

  async acquireLease(
    session: SessionId,
    branch: string,
    owner: string,
    stale?: (holder: LeaseInfo) => boolean | Promise<boolean>,
  ): Promise<LeaseResult> {
    const own = new Callback();
    try {
      this.#enter("acquireLease", [session, branch, owner, stale]);
      return await this.inner.acquireLease(session, branch, owner, stale === undefined ? undefined : own.wrap(stale));
    } catch (e) {
      throw own.threw(e) ? e : toStoreError(e, "store.acquireLease", this.mapError);
    }
  }

  async verify(session?: SessionId, hooks: VerifyHooks = {}): Promise<VerifyReport> {
    try {
      this.#enter("verify", [session, hooks]);
      // Verify only reads (ST-17): a hook that writes is refused like a write inside readTransaction.
      return await this.#scope.run(READING, () => this.inner.verify(session, hooks));
    } catch (e) {
      throw toStoreError(e, "store.verify", this.mapError);
    }
  }

  /** The checks every call makes before the backend sees it: open, arguments, no write in a read scope. */
  #enter(method: StoreMethod, args: readonly unknown[]): void {
    if (this.inner.closed) throw new StoreError("closed", `the store at ${this.inner.path} was closed`);
    ARGS[method](...args);
    if (WRITES.has(method) && this.#scope.getStore() === READING)
      throw new StoreError(
        "bad-input",
        `store.${method} was called inside store.readTransaction, which only reads; write outside it (or use store.transaction)`,
      );
  }

  static {
    Object.defineProperty(AsyncCheckedStore.prototype, ASYNC_PORT, { value: true });
    const special = new Set<string>(["close", "transaction", "readTransaction", "acquireLease", "verify"]);
    for (const method of STORE_METHODS) {
      if (special.has(method)) continue;
      const where = `store.${method}`;
      Object.defineProperty(AsyncCheckedStore.prototype, method, {
        configurable: true,
        writable: true,
        value: async function (this: AsyncCheckedStore, ...args: unknown[]): Promise<unknown> {
          try {
            this.#enter(method, args);
            return await (this.inner[method] as (...a: unknown[]) => Promise<unknown>)(...args);
          } catch (e) {
            throw toStoreError(e, where, this.mapError);
          }
        },
      });
    }
  }
}

/**
 * A synchronous store behind the port: every method answers a promise of what the store answers —
 * except inside a transaction, a read transaction or `verify`, whose bodies and hooks the store
 * runs at once: calls made there answer at once too, so a body written with `drive`/`value`
 * (steps.ts) finishes inside the synchronous transaction, as the store requires (a body that
 * awaits is refused: `bad-input`). `defer` settles each promise on a later turn of the event loop
 * (a test that forgot an `await` then meets a promise where it expected a value).
 */
export function asyncStore(store: Store, options: { defer?: boolean } = {}): AsyncStore {
  let inside = 0;
  // The methods on the port's prototype, as a class's are (a caller may list them there).
  const methods: Record<string | symbol, unknown> = {
    [ASYNC_PORT]: true,
    get path() {
      return store.path;
    },
    get closed() {
      return store.closed;
    },
  };
  for (const method of STORE_METHODS) {
    const f = store[method] as (...a: unknown[]) => unknown;
    const scoped = SCOPES.has(method);
    const run = (args: unknown[]): unknown => {
      if (!scoped) return f.apply(store, args);
      inside++;
      try {
        return f.apply(store, args);
      } finally {
        inside--;
      }
    };
    methods[method] = (...args: unknown[]) => {
      if (inside > 0) return run(args);
      return new Promise((resolve, reject) => {
        const settle = () => {
          try {
            resolve(run(args));
          } catch (e) {
            reject(e);
          }
        };
        if (options.defer === true) setImmediate(settle);
        else settle();
      });
    };
  }
  return Object.create(methods) as AsyncStore;
}

/** Methods whose callbacks the synchronous store runs at once: calls made from them answer at once. */
const SCOPES: ReadonlySet<string> = new Set(["transaction", "readTransaction", "verify"]);
