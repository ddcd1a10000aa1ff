/**
 * The PostgreSQL schema (decision 0035) and its ordered migrations. A store is one PostgreSQL schema
 * (namespace) — `strata` by default — so several stores can share a database, and every statement
 * names its tables with the schema, so no connection carries state (`search_path`) and the store
 * works behind PgBouncer in transaction mode.
 *
 * Version 1:
 * - `events` is the log; rows are never updated or deleted. `segment` + `depth` place an event on
 *   its chain (ST-6, ST-7). The unique index `events_chain (segment, depth)` is the compare-and-swap
 *   of every append — two writers cannot both take the depth after a tip — and it covers what a
 *   listing reads (`INCLUDE`), so history is listed from the index without touching payloads (ST-5).
 * - `segments`: maximal runs appended one after another on one line of history; a fork or rewind
 *   starts a new one whose parent is the segment it left at `fork_depth`. A fork itself is one row
 *   in `branches` (ST-10): no event, snapshot or blob is copied, history is shared by reference.
 * - `branches`: named heads; `head IS NULL` means the branch follows the tip of its segment.
 * - `snapshots`: opaque headers and page directories; pages, directory chunks and large payloads
 *   are `blobs`, content-addressed by sha256 and shared by every branch and session (ST-13, ST-14).
 * - `leases`: one row per (session, branch) ever leased, with the last fencing token (ST-23).
 * - Ids and names compare bytewise (`COLLATE "C"`): a prefix search is a range of the primary key
 *   whatever the database's collation.
 */
import { StoreError } from "@strata/store";
import { searchWords } from "@strata/store/backend";

/** The schema version this build writes. */
export const PG_SCHEMA_VERSION = 3;

/** A quoted PostgreSQL identifier. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The longest lexeme, in bytes: shorter than PostgreSQL's `MAXSTRLEN` (2,047), as `to_tsvector` and `tsquery` keep them. */
export const MAX_LEXEME_BYTES = 2046;

/** The most lexeme bytes one `tsvector` holds (PostgreSQL's `MAXSTRPOS`, 2^20 − 1). */
export const MAX_TSVECTOR_BYTES = 1_048_575;

/**
 * The lexemes an event's text is indexed by (SE-4, decision 0048): its words as `searchWords` cuts
 * them (runs of letters and digits, lowercased) — the same cut as SQLite's FTS5 and as every query
 * — each once, in order of first use, joined by spaces; the server makes them a `tsvector` as they
 * are (`array_to_tsvector`, {@link TSV}), with no parser and no positions. Cutting on the server
 * would depend on the cluster's locale (`[:alnum:]` and `lower` know no letter beyond ASCII under
 * `C`), and its parser is most of an append's cost. A word longer than a lexeme can be is left out
 * (as `to_tsvector` leaves it out), and so are the words after the first MAX_TSVECTOR_BYTES bytes
 * of distinct ones (where `to_tsvector` fails the statement); `array_to_tsvector` checks neither.
 */
export function indexWords(text: string | undefined | null): string | null {
  if (text === undefined || text === null) return null;
  const seen = new Set<string>();
  let longest = 0;
  for (const w of searchWords(text))
    if (!seen.has(w)) {
      seen.add(w);
      if (w.length > longest) longest = w.length;
    }
  const joined = [...seen].join(" ");
  // ASCII: one byte a character. Else each word's bytes are counted.
  if (longest <= MAX_LEXEME_BYTES && joined.length <= MAX_TSVECTOR_BYTES && ASCII.test(joined)) return joined;
  const kept: string[] = [];
  let bytes = 0;
  for (const w of seen) {
    const n = Buffer.byteLength(w, "utf8");
    if (n > MAX_LEXEME_BYTES) continue;
    if (bytes + n > MAX_TSVECTOR_BYTES) break;
    kept.push(w);
    bytes += n;
  }
  return kept.join(" ");
}

const ASCII = /^\p{ASCII}*$/u;

/** The `tsvector` of the lexemes `x` holds, as {@link indexWords} gives them (SQL). */
export function TSV(x: string): string {
  return `array_to_tsvector(string_to_array(${x}, ' '))`;
}

/**
 * The `tsquery` text of every word of `terms` that the index can hold (ANDed, each quoted: no
 * parser, no normalization), and whether its matches are exactly the terms' (every term one word,
 * none left out); otherwise each match is checked on its text (`matchesTerms`). Undefined: no
 * word of the query can be a lexeme.
 */
export function lexemeQuery(terms: readonly (readonly string[])[]): { query: string; exact: boolean } | undefined {
  const words = [...new Set(terms.flat())];
  const kept = words.filter((w) => Buffer.byteLength(w, "utf8") <= MAX_LEXEME_BYTES);
  if (kept.length === 0) return undefined;
  return {
    query: kept.map((w) => `'${w.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`).join(" & "),
    exact: kept.length === words.length && terms.every((t) => t.length === 1),
  };
}

export interface PgMigration {
  readonly version: number;
  readonly description: string;
  /** The DDL, for schema `s` (already quoted). */
  sql(s: string): string;
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: "sessions, segments, branches, events, snapshots, blobs, leases",
    sql: (s) => `
      CREATE TABLE ${s}.sessions (
        id text COLLATE "C" PRIMARY KEY,
        title text,
        created bigint NOT NULL,
        metadata text NOT NULL DEFAULT '{}',
        counter bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE ${s}.segments (
        id bigserial PRIMARY KEY,
        session text COLLATE "C" NOT NULL,
        parent bigint,
        fork_depth integer NOT NULL
      );
      CREATE INDEX segments_session ON ${s}.segments (session, id);
      CREATE TABLE ${s}.branches (
        session text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        segment bigint NOT NULL,
        head bigint,
        created bigint NOT NULL,
        origin text NOT NULL,
        origin_event bigint,
        PRIMARY KEY (session, name)
      );
      CREATE TABLE ${s}.events (
        id bigserial PRIMARY KEY,
        segment bigint NOT NULL,
        depth integer NOT NULL,
        prior bigint,
        kind text NOT NULL,
        label text,
        by text,
        ts bigint NOT NULL,
        digest bytea NOT NULL,
        blob bytea,
        data text NOT NULL
      );
      CREATE UNIQUE INDEX events_chain ON ${s}.events (segment, depth) INCLUDE (id, prior, kind, label, by, ts, digest);
      CREATE TABLE ${s}.snapshots (
        event bigint PRIMARY KEY,
        segment bigint NOT NULL,
        depth integer NOT NULL,
        header text NOT NULL,
        pages bytea NOT NULL
      );
      CREATE INDEX snapshots_chain ON ${s}.snapshots (segment, depth);
      CREATE TABLE ${s}.blobs (
        hash bytea PRIMARY KEY,
        size integer NOT NULL,
        data bytea NOT NULL
      );
      CREATE TABLE ${s}.leases (
        session text COLLATE "C" NOT NULL,
        branch text COLLATE "C" NOT NULL,
        token bigint NOT NULL,
        owner text,
        acquired bigint,
        renewed bigint,
        PRIMARY KEY (session, branch)
      );
    `,
  },
  {
    // Version 2 (decision 0039): every event's searchable text (`search`, NULL when it has none)
    // and its lexemes (`search_tsv`, of the words `indexWords` cuts), with a GIN index of the events that
    // have some; the events a schema already holds are its backlog (meta `search_backlog`),
    // indexed after the migration (SE-6).
    version: 2,
    description: "full-text search index",
    sql: (s) => `
      ALTER TABLE ${s}.events ADD COLUMN search text;
      ALTER TABLE ${s}.events ADD COLUMN search_tsv tsvector;
      CREATE INDEX events_search ON ${s}.events USING gin (search_tsv) WHERE search_tsv IS NOT NULL;
      INSERT INTO ${s}.meta (key, value) SELECT 'search_backlog', max(id)::text FROM ${s}.events HAVING max(id) IS NOT NULL;
    `,
  },
  {
    // Version 3 (decision 0048): lexemes are written without positions (`array_to_tsvector` of the
    // words cut in TypeScript) and queries are the AND of the words, phrases checked on the text.
    // The rows version 2 wrote keep their positions (same lexemes; the new queries find them); no
    // table changes. A version 2 build refuses a version 3 schema: its phrase queries (`<->`)
    // never match a vector without positions.
    version: 3,
    description: "search lexemes without positions",
    sql: (s) => `COMMENT ON INDEX ${s}.events_search IS 'strata: lexemes without positions from schema version 3 (decision 0048)'`,
  },
];

/** What a query runner gives the migration (one connection, inside its transaction). */
export interface MigrationClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Brings schema `name` to PG_SCHEMA_VERSION inside the caller's transaction, under an advisory lock
 * on the schema's name (two processes opening a new database at once: one creates, the other
 * waits and finds it made). Refuses a schema of a newer strata (`newer-schema`) and one that holds
 * tables but is not a strata store (`not-strata`); changes nothing then. Returns the version found.
 */
export async function migrate(client: MigrationClient, name: string): Promise<number> {
  const s = ident(name);
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`strata:${name}`]);
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
  const meta = await client.query("SELECT to_regclass($1) AS t", [`${s}.meta`]);
  let version = 0;
  if (meta.rows[0]?.t === null) {
    const tables = await client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1", [name]);
    if (Number(tables.rows[0]?.n) > 0)
      throw new StoreError(
        "not-strata",
        `schema ${name} holds tables but is not a strata store (no ${name}.meta); choose another schema (?schema=… in the URL) or an empty database`,
      );
    await client.query(`CREATE TABLE ${s}.meta (key text PRIMARY KEY, value text NOT NULL)`);
  } else {
    const row = await client.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`);
    version = Number(row.rows[0]?.value ?? 0);
    if (!Number.isSafeInteger(version) || version < 0)
      throw new StoreError("not-strata", `schema ${name} has an unreadable schema_version; it is not a strata store this build can read`);
  }
  if (version > PG_SCHEMA_VERSION)
    throw new StoreError(
      "newer-schema",
      `schema ${name} is a strata store of schema version ${version}, newer than this build reads (${PG_SCHEMA_VERSION}); upgrade strata`,
    );
  const found = version;
  for (const m of PG_MIGRATIONS) {
    if (m.version <= version) continue;
    await client.query(m.sql(s));
    version = m.version;
  }
  if (version !== found)
    await client.query(
      `INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [String(version)],
    );
  return found;
}
