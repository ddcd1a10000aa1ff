/**
 * Counting the statements a PostgreSQL store sends, for the benchmarks of bench/postgres/. pg-pool's
 * `query` takes a client through `connect` and sends on it, so wrapping every client the pool hands
 * out (its "acquire" event, for `pool.query` and `pool.connect` alike) counts each statement
 * exactly once.
 */
import type { PgStore } from "@strata/store-postgres";
import type pg from "pg";

/** The kind of a statement, for the breakdown of what an operation sends. */
export function kindOf(text: string): string {
  const t = text.trimStart().slice(0, 200).toUpperCase();
  if (/^(BEGIN|COMMIT|ROLLBACK)\b/.test(t)) return "transaction";
  if (/^(SAVEPOINT|RELEASE|ROLLBACK TO)\b/.test(t)) return "savepoint";
  if (/^SELECT PG_NOTIFY\(/.test(t)) return "notify";
  const m = /^(INSERT INTO|UPDATE|DELETE FROM|SELECT|WITH)\s+("?[A-Z0-9_]+"?\.)?"?([A-Z0-9_]+)/.exec(t);
  if (m === null) return "other";
  const verb = (m[1] as string).split(" ")[0]?.toLowerCase() as string;
  if (verb === "insert" || verb === "update" || verb === "delete") return `${verb} ${(m[3] as string).toLowerCase()}`;
  return verb === "with" ? "with" : "select";
}

/** How a statement is sent: `send(...args)` sends it; a hook may time or trace it around that. */
export type Around = (client: pg.PoolClient, text: string, args: unknown[], send: (...args: unknown[]) => unknown) => unknown;

/** Counts the statements `store`'s pool sends, by kind, and keeps the clients it handed out. */
export class StatementCounter {
  total = 0;
  kinds = new Map<string, number>();
  readonly clients = new Set<pg.PoolClient>();

  constructor(store: PgStore, around?: Around) {
    const pool = (store as unknown as { inner: { pool: pg.Pool } }).inner.pool;
    pool.on("acquire", (client) => {
      if (this.clients.has(client)) return;
      this.clients.add(client);
      const send = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const q = args[0];
        const text = typeof q === "string" ? q : typeof (q as { text?: unknown })?.text === "string" ? (q as { text: string }).text : "";
        this.total++;
        const k = kindOf(text);
        this.kinds.set(k, (this.kinds.get(k) ?? 0) + 1);
        return around === undefined ? send(...args) : around(client, text, args, send);
      };
    });
  }

  reset(): void {
    this.total = 0;
    this.kinds = new Map();
  }
}
