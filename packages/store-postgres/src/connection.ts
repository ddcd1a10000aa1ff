/**
 * The PostgreSQL backend's connections (decision 0035): statements in autocommit on any pooled
 * connection, or on the current transaction's — found through `AsyncLocalStorage`, so every store
 * call a transaction's body makes, across its awaits, goes to that connection. A nested
 * transaction is a savepoint; a rollback undoes the cache changes recorded during it. A connection
 * is taken for one statement or one transaction and given back, never held between calls.
 * Statements are named prepared statements unless `prepare` is false.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { SessionId } from "@strata/store";
import type { Pool, PoolClient, QueryResultRow } from "pg";

type Row = QueryResultRow;

/** The connection a transaction's calls go to, and what its rollback must undo in the caches. */
export interface Tx {
  readonly client: PoolClient;
  readonly read: boolean;
  savepoints: number;
  readonly undo: (() => void)[];
  /** Sessions whose followers are woken once this transaction commits. */
  readonly wakes: Set<SessionId>;
}

export class PgConnection {
  readonly #tx = new AsyncLocalStorage<Tx>();
  /** Statement text → prepared statement name. */
  readonly #names = new Map<string, string>();

  constructor(
    readonly pool: Pool,
    private readonly prepare: boolean,
    /** Called once a write transaction has committed. */
    private readonly onCommit: (tx: Tx) => void,
  ) {}

  /** The transaction the current call runs in, if any. */
  current(): Tx | undefined {
    return this.#tx.getStore();
  }

  /**
   * Runs one statement on the current transaction's connection, or on any pooled one (autocommit).
   * `planned: "each"` sends it unnamed, so the server plans it with its values every time: for a
   * statement whose best plan depends on them (a rare word or a common one, SE-4), which a named
   * statement's cached generic plan would not see.
   */
  async q<R extends Row = Row>(text: string, values?: unknown[], planned: "once" | "each" = "once"): Promise<R[]> {
    const tx = this.#tx.getStore();
    const query = this.prepare && planned === "once" ? { name: this.#nameOfText(text), text, values } : { text, values };
    const r = tx === undefined ? await this.pool.query<R>(query) : await tx.client.query<R>(query);
    return r.rows;
  }

  /** The name of a statement's text (one per text in this backend, so a name never means two statements). */
  #nameOfText(text: string): string {
    let name = this.#names.get(text);
    if (name === undefined) {
      name = `strata_${this.#names.size}`;
      this.#names.set(text, name);
    }
    return name;
  }

  async one<R extends Row = Row>(text: string, values?: unknown[]): Promise<R | undefined> {
    return (await this.q<R>(text, values))[0];
  }

  async read<T>(fn: () => T | Promise<T>): Promise<T> {
    // Inside a transaction (write or read) every read already sees one state.
    if (this.#tx.getStore() !== undefined) return await fn();
    return this.#begin(true, fn);
  }

  /** Runs `fn` in a write transaction: a savepoint inside the current one, else a new one. */
  async write<T>(fn: () => T | Promise<T>): Promise<T> {
    const outer = this.#tx.getStore();
    if (outer === undefined) return this.#begin(false, fn);
    const name = `sp${++outer.savepoints}`;
    const mark = outer.undo.length;
    await outer.client.query(`SAVEPOINT ${name}`);
    try {
      const out = await fn();
      await outer.client.query(`RELEASE SAVEPOINT ${name}`);
      return out;
    } catch (e) {
      await outer.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      undoTo(outer.undo, mark);
      throw e;
    }
  }

  /** A new transaction on a connection of its own, released (never held) once it ends. */
  async #begin<T>(read: boolean, fn: () => T | Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx: Tx = { client, read, savepoints: 0, undo: [], wakes: new Set() };
    let broken: Error | undefined;
    try {
      await client.query(read ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN ISOLATION LEVEL READ COMMITTED");
      let out: T;
      try {
        out = await this.#tx.run(tx, fn);
      } catch (e) {
        await client.query("ROLLBACK").catch((x: Error) => {
          broken = x;
        });
        undoTo(tx.undo, 0);
        throw e;
      }
      try {
        await client.query(read ? "ROLLBACK" : "COMMIT");
      } catch (e) {
        broken = e as Error;
        undoTo(tx.undo, 0);
        throw e;
      }
      this.onCommit(tx);
      return out;
    } finally {
      client.release(broken);
    }
  }

  /** Records how to take back a cache change if the current transaction rolls back. */
  onRollback(undo: () => void): void {
    this.#tx.getStore()?.undo.push(undo);
  }
}

/** Undoes cache changes recorded after `mark`, newest first. */
function undoTo(undo: (() => void)[], mark: number): void {
  while (undo.length > mark) (undo.pop() as () => void)();
}
