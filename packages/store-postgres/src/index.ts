/**
 * @strata/store-postgres — the strata event log on PostgreSQL (issue 15, decision 0035): the
 * asynchronous storage port (`AsyncStore` of @strata/store) over a `pg` pool, for fleets of
 * workers, inspectors and dashboards sharing one session log. Same contract as the SQLite store,
 * proven by the same conformance suite.
 *
 *   const store = await openPgStore("postgres://strata@db.internal/strata?schema=agents");
 */
import { type AsyncStore, checkedAsyncStore, type SessionId, StoreError } from "@strata/store";
import { ARGS } from "@strata/store/backend";
import pg from "pg";
import { PgBackend } from "./backend.ts";
import { fromPg } from "./errors.ts";
import { channelOf, type Follower, type FollowOptions, type FollowUpdate, followBranch } from "./follow.ts";
import { migrate } from "./schema.ts";

export { fromPg } from "./errors.ts";
export type { Follower, FollowOptions, FollowUpdate } from "./follow.ts";
export { PG_MIGRATIONS, PG_SCHEMA_VERSION, type PgMigration } from "./schema.ts";

export interface PgStoreOptions {
  /** The PostgreSQL schema (namespace) the store lives in; default the URL's `?schema=`, else "strata". */
  readonly schema?: string;
  /** Clock for timestamps (tests pin it). */
  readonly now?: () => number;
  /** Largest event payload kept inline, in bytes (default 1 MiB); larger ones become blobs. */
  readonly inlineLimit?: number;
  /** Connections in the pool (default 10). A connection is held only for one statement or one short transaction. */
  readonly max?: number;
  /** `statement_timeout` of every connection, ms (default 30,000). */
  readonly statementTimeout?: number;
  /** `idle_in_transaction_session_timeout`, ms (default 60,000): a transaction left open by a dead client ends. */
  readonly idleInTransactionTimeout?: number;
  /** How long to wait for a connection, ms (default 10,000). */
  readonly connectTimeout?: number;
  /** `application_name` of the store's connections, as `pg_stat_activity` shows them (default "strata"). */
  readonly applicationName?: string;
  /** Named prepared statements (default true); false for PgBouncer before 1.21 in transaction mode. */
  readonly prepare?: boolean;
}

/** A store on PostgreSQL: the asynchronous port, plus what a fleet's operator reads. */
export interface PgStore extends AsyncStore {
  /** The schema version found when opening (before migrating). */
  readonly schemaVersion: number;
  /** The PostgreSQL schema it lives in. */
  readonly schema: string;
  /**
   * Follows a branch as other processes and machines write it (follow.ts): `onUpdate` gets every
   * new event once, in order, and is told when the branch moved elsewhere. Uses a connection of its
   * own (LISTEN), and a poll as a safety net.
   */
  follow(session: SessionId, branch: string, onUpdate: (update: FollowUpdate) => void, options?: FollowOptions): Follower;
}

/** A schema name: a plain identifier (it is quoted, but kept simple so URLs and logs stay readable). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** True when `s` names a PostgreSQL store (`postgres://` or `postgresql://`). */
export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

/** int8 as a number (ids, depths, timestamps and tokens are all below 2^53), bytea as a Buffer. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/**
 * Opens (and creates or migrates) the store in `url`'s database, in schema `options.schema` or the
 * URL's `?schema=` (default "strata"). Fails with `cannot-open` when the server cannot be reached or
 * refuses the login, `not-strata` when the schema holds something else, `newer-schema` when a newer
 * strata wrote it; nothing is changed then.
 */
export async function openPgStore(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreError(
      "bad-input",
      `not a PostgreSQL URL: ${JSON.stringify(url)}; write postgres://user[:password]@host[:port]/database[?schema=name]`,
    );
  }
  if (!isPostgresUrl(url))
    throw new StoreError("bad-input", `not a PostgreSQL URL: ${JSON.stringify(url)}; it must start with postgres://`);
  const schema = options.schema ?? parsed.searchParams.get("schema") ?? "strata";
  if (!SCHEMA_NAME.test(schema))
    throw new StoreError(
      "bad-input",
      `schema name ${JSON.stringify(schema)} is not allowed: use lowercase letters, digits and "_", starting with a letter or "_"`,
    );
  parsed.searchParams.delete("schema");
  const shown = new URL(parsed.href);
  if (shown.password !== "") shown.password = "***";
  shown.searchParams.set("schema", schema);
  const pool = new pg.Pool({
    connectionString: parsed.href,
    max: options.max ?? 10,
    statement_timeout: options.statementTimeout ?? 30_000,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeout ?? 60_000,
    connectionTimeoutMillis: options.connectTimeout ?? 10_000,
    application_name: options.applicationName ?? "strata",
    types,
  });
  // An idle connection the server ended (a restart, a proxy's timeout) is dropped by the pool and
  // a new one made on the next call; the event must not crash the process.
  pool.on("error", () => {});
  let version: number;
  const client = await pool.connect().catch(async (e: unknown) => {
    await pool.end().catch(() => {});
    const mapped = fromPg(e, `connecting to ${shown.host}`);
    const why = mapped instanceof StoreError ? mapped.message : e instanceof Error ? e.message : String(e);
    throw new StoreError(
      "cannot-open",
      `cannot connect to PostgreSQL at ${shown.host || "localhost"}${shown.pathname}: ${why}; is the server running, and is the URL right?`,
      { cause: e },
    );
  });
  try {
    await client.query("BEGIN");
    version = await migrate(client, schema);
    await client.query("COMMIT");
    client.release();
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(true);
    await pool.end().catch(() => {});
    throw e instanceof StoreError ? e : (fromPg(e, `opening ${shown.href}`) as Error);
  }
  const backend = new PgBackend(shown.href, pool, schema, options);
  const store = checkedAsyncStore(backend, fromPg) as PgStore;
  const channel = channelOf(schema);
  const listener = () => new pg.Client({ connectionString: parsed.href, application_name: "strata-follow", types });
  const follow = (session: SessionId, branch: string, onUpdate: (u: FollowUpdate) => void, opts?: FollowOptions): Follower => {
    if (store.closed) throw new StoreError("closed", `the store at ${shown.href} was closed`);
    ARGS.branch(session, branch);
    if (typeof onUpdate !== "function") throw new StoreError("bad-input", "follow takes a function to call with each update");
    return followBranch(store, listener, channel, session, branch, onUpdate, opts);
  };
  Object.defineProperties(store, { schemaVersion: { value: version }, schema: { value: schema }, follow: { value: follow } });
  return store;
}
