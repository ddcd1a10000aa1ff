/**
 * What every conformance test uses: the factory's stores (closed after each test), small sessions,
 * failures as values, and transaction bodies that run on synchronous and asynchronous stores alike.
 *
 * Every store call in the suite is awaited — awaiting a synchronous result is free — so a backend
 * whose port is asynchronous (issue 15) passes the same tests. Inside a transaction a body cannot
 * await (a synchronous store must finish inside it), so bodies are generators: see {@link body}.
 */
import { afterEach, expect, it } from "vitest";
import { type EventId, type EventInput, type EventMeta, type SessionId, type Store, StoreError } from "../../src/index.ts";
import { drive, value } from "../../src/steps.ts";

/** What the suite asks of a factory's store. */
export interface ConformanceOptions {
  /** The store's clock (ms since the epoch), when a test pins it; the backend's own clock otherwise. */
  readonly now?: () => number;
}

/** Makes a new, empty store (a new database each call). It may be async. */
export type StoreFactory = (options: ConformanceOptions) => Store | Promise<Store>;

/** What a backend can do besides the contract, which decides which tests run. */
export interface BackendTraits {
  /**
   * Opens another handle on the database `store` was made on (as another process would: its own
   * connection and caches), also after `store` was closed. Without it — a private in-memory store —
   * the tests of several handles and of durability do not apply.
   */
  readonly connect?: (store: Store) => Store | Promise<Store>;
  /**
   * Runs of each model-based property (default: `STRATA_FC_RUNS`, else 300 for chains and 200 for
   * rollbacks). Each run makes a store: a backend whose stores are slow to make may run fewer.
   */
  readonly propertyRuns?: number;
  /**
   * The backend is the asynchronous port (decision 0035): a transaction body may await (so one
   * returning a promise is valid, not `bad-input`), and a call answers a promise even when it is
   * refused (a verify hook that writes gets a rejected promise, not a throw).
   */
  readonly asynchronous?: boolean;
}

/** The factory and traits, with every store they made closed after each test. */
export class Kit {
  readonly #opened: Store[] = [];

  constructor(
    readonly name: string,
    private readonly factory: StoreFactory,
    readonly traits: BackendTraits,
  ) {
    afterEach(async () => {
      for (const s of this.#opened.splice(0)) if (!s.closed) await s.close();
    });
  }

  /** Runs of a model-based property whose default is `runs`. */
  runs(runs: number): number {
    return Number(process.env.STRATA_FC_RUNS ?? this.traits.propertyRuns ?? runs);
  }

  /** A new, empty store. */
  async open(options: ConformanceOptions = {}): Promise<Store> {
    const store = await this.factory(options);
    this.#opened.push(store);
    return store;
  }

  /**
   * A test that needs several handles on one database (or a store reopened): registered only for a
   * backend that has `connect` (a private in-memory store has no second handle).
   */
  withHandles(name: string, test: () => Promise<void>, timeout?: number): void {
    if (this.traits.connect !== undefined) it(name, test, timeout);
  }

  /** Another handle on `store`'s database (only where the backend has `connect`). */
  async connect(store: Store): Promise<Store> {
    const connect = this.traits.connect;
    if (connect === undefined) throw new Error(`${this.name} cannot open a second handle: this test should not run`);
    const other = await connect(store);
    this.#opened.push(other);
    return other;
  }
}

export const ev = (data: string, label?: string): EventInput => ({ kind: "patch@1", label: label ?? null, data });

export const ids = (list: readonly { id: EventId }[]) => list.map((e) => e.id as number);

/** A session with `n` events after genesis on main. */
export async function session(store: Store, n = 0): Promise<{ id: SessionId; genesis: EventId; events: EventMeta[] }> {
  const { session, genesis } = await store.createSession({ title: "test", genesis: { kind: "genesis@1", data: "{}" } });
  const events: EventMeta[] = [];
  let head = genesis.id;
  for (let i = 0; i < n; i++) {
    const [m] = await store.append(session.id, "main", head, [ev(`{"n":${i}}`, `e${i}`)]);
    events.push(m as EventMeta);
    head = (m as EventMeta).id;
  }
  return { id: session.id, genesis: genesis.id, events };
}

/** The head of `branch` (default main), which must exist. */
export async function headOf(store: Store, s: SessionId, branch = "main"): Promise<EventId> {
  const b = await store.branch(s, branch);
  if (b === undefined) throw new Error(`no branch ${branch}`);
  return b.head;
}

/** What `f` throws (synchronously or as a rejection); fails the test if it does not throw. */
export async function failure(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error(`expected a failure from ${String(f)}`);
}

/** The code of the StoreError `f` throws (anything else fails the test); "no error" if it returns. */
export async function code(f: () => unknown): Promise<string> {
  try {
    await f();
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(StoreError);
    return (e as StoreError).code;
  }
  return "no error";
}

/** `f` fails with a StoreError of `code` whose message matches every pattern; returns it. */
export async function fails(f: () => unknown, errorCode: string, ...patterns: RegExp[]): Promise<StoreError> {
  const e = await failure(f);
  expect(e, String(e)).toBeInstanceOf(StoreError);
  expect((e as StoreError).code, (e as Error).message).toBe(errorCode);
  for (const p of patterns) expect((e as Error).message).toMatch(p);
  return e as StoreError;
}

/**
 * A transaction body (for `transaction` and `readTransaction`) written as a generator, so that the
 * same test runs on a synchronous store and on an asynchronous one: each `yield* value(call)`
 * gives the call's result — at once when it is a plain value (a synchronous store: the whole body
 * runs inside the synchronous transaction, as the store requires), after it settles when it is a
 * promise (an asynchronous store: the body is then a promise too). Errors come back into the
 * body where they happened.
 */
export function body<T>(make: () => Generator<unknown, T, unknown>): () => T {
  return () => drive(make()) as T;
}

export { value };

/**
 * Everything a caller can read of a store, as one value: sessions, branches, every branch's log,
 * snapshots, leases of every branch, and what verify counts. Equal before and after a refused call
 * means the call wrote nothing.
 */
export async function fingerprint(store: Store): Promise<string> {
  const out: unknown[] = [];
  for (const s of await store.listSessions()) {
    const branches = await store.branches(s.id);
    const logs: unknown[] = [];
    for (const b of branches) logs.push([b, await store.log(s.id, { branch: b.name }), await store.lease(s.id, b.name)]);
    out.push([s, logs, await store.snapshots(s.id)]);
  }
  const r = await store.verify();
  out.push([r.sessions, r.events, r.snapshots, r.blobs]);
  return JSON.stringify(out);
}
