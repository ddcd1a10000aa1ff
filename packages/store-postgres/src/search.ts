/**
 * Full-text search on PostgreSQL (SE-4 … SE-6, SE-8; decisions 0039 and 0048): each event's
 * lexemes (`events.search_tsv`, without positions, made from the words cut in TypeScript) under a
 * partial GIN index, and its text where the store cannot derive it again (`events.search`). A
 * query is the AND of its words; a phrase is checked on each candidate's text (`matchesTerms`), a
 * page of candidates at a time, so both backends answer alike. The backend (backend.ts) owns the
 * pool and hands this what it reads with.
 */
import { type EventId, type SearchEntry, type SearchHit, type SearchQuery, StoreError } from "@strata/store";
import {
  candidateHolds,
  derivedKinds,
  derivedSearchText,
  MAX_SEARCH_LIMIT,
  type SearchHitRow,
  searchHit,
  searchLimit,
  searchTerms,
} from "@strata/store/backend";
import type { PgConnection } from "./connection.ts";
import type { Row } from "./rows.ts";
import { indexWords, lexemeQuery, TSV } from "./schema.ts";

/** Event ids a search walks down first before it asks the GIN index for the rest (SE-4). */
const SEARCH_WINDOW = 10_000;

/** What the search reads with: the backend's connection, its schema (quoted), its payload reads. */
export interface SearchHost {
  readonly db: PgConnection;
  readonly s: string;
  eventData(ids: readonly EventId[]): Promise<Map<EventId, string>>;
}

export class PgSearch {
  constructor(private readonly h: SearchHost) {}

  async search(query: SearchQuery): Promise<SearchHit[]> {
    const terms = searchTerms(query.text);
    const limit = searchLimit(query);
    const lexemes = lexemeQuery(terms);
    if (lexemes === undefined) return [];
    // Candidates hold every word (decision 0048); unless they are exactly the terms' matches, each is
    // checked on its text and the next page read until `limit` are kept (SE-9's rule, as on SQLite).
    const out: SearchHit[] = [];
    let below = query.before;
    for (let page = limit; ; page = Math.min(page * 2, MAX_SEARCH_LIMIT)) {
      const rows = await this.#candidates(lexemes.query, below, page, query.session);
      // SE-8: a text the store did not keep (derived from the payload) is derived again, one read for all.
      const missing = rows.filter((r) => r.text === null).map((r) => Number(r.id) as EventId);
      const data = missing.length === 0 ? undefined : await this.h.eventData(missing);
      for (const r of rows) {
        const row = r as unknown as SearchHitRow;
        const text = r.text !== null ? row.text : derivedSearchText(row.kind, data?.get(Number(r.id) as EventId) ?? "");
        if (!lexemes.exact && !candidateHolds(text, r.text !== null, row.kind, terms)) continue;
        out.push(searchHit({ ...row, text }, terms));
        if (out.length === limit) return out;
      }
      if (lexemes.exact || rows.length < page) return out;
      below = Number((rows[rows.length - 1] as Row).id) as EventId;
    }
  }

  /**
   * The newest `limit` events below `before` (default: all) whose lexemes hold every word of
   * `query` (a `tsquery`), newest first, in one read transaction.
   */
  async #candidates(query: string, before: number | undefined, limit: number, session: string | undefined): Promise<Row[]> {
    const s = this.h.s;
    const cols = "e.id, e.search AS text, e.kind, e.label, e.by, e.ts, g.session";
    const from = `${s}.events e JOIN ${s}.segments g ON g.id = e.segment`;
    // Every statement is planned with its words (sent unnamed): a cached generic plan cannot tell a
    // rare word from a common one.
    return this.h.db.read(async () => {
      if (session !== undefined)
        return this.h.db.q(
          `SELECT ${cols} FROM ${from}
           WHERE e.search_tsv @@ $1::tsquery AND ($2::bigint IS NULL OR e.id < $2) AND g.session = $4
           ORDER BY e.id DESC LIMIT $3`,
          [query, before ?? null, limit, session],
          "each",
        );
      // The newest SEARCH_WINDOW events first, walked down by id: a common word's page is there.
      // The planner cannot tell how rare a word absent from its statistics is, and walking all the
      // ids for a rare one reads the table (1 hit in 1,000,000 events: 250–345 ms); so what the
      // window lacks is taken from the GIN index's matches below it, sorted (a rare word's few).
      const top = before ?? Number((await this.h.db.one<{ top: string | null }>(`SELECT max(id) + 1 AS top FROM ${s}.events`))?.top ?? 1);
      const low = Math.max(0, top - SEARCH_WINDOW);
      const recent = await this.h.db.q(
        `SELECT ${cols} FROM ${from}
         WHERE e.search_tsv @@ $1::tsquery AND e.id < $2 AND e.id >= $3
         ORDER BY e.id DESC LIMIT $4`,
        [query, top, low, limit],
        "each",
      );
      if (recent.length === limit || low === 0) return recent;
      // Through the GIN index (a bitmap scan): neither a table scan nor a walk of the ids.
      await this.h.db.q("SET LOCAL enable_seqscan = off");
      await this.h.db.q("SET LOCAL enable_indexscan = off");
      const older = await this.h.db.q(
        `WITH m AS MATERIALIZED (SELECT e.id FROM ${s}.events e WHERE e.search_tsv @@ $1::tsquery AND e.id < $2)
         SELECT ${cols} FROM m JOIN ${s}.events e ON e.id = m.id JOIN ${s}.segments g ON g.id = e.segment
         ORDER BY m.id DESC LIMIT $3`,
        [query, low, limit - recent.length],
        "each",
      );
      await this.h.db.q("RESET enable_seqscan");
      await this.h.db.q("RESET enable_indexscan");
      return [...recent, ...older];
    });
  }

  async searchBacklog(): Promise<number> {
    const row = await this.h.db.one(`SELECT value FROM ${this.h.s}.meta WHERE key = 'search_backlog'`);
    return row === undefined ? 0 : Number(row.value);
  }

  async indexSearch(entries: readonly SearchEntry[], backlog: number): Promise<void> {
    const s = this.h.s;
    await this.h.db.write(async () => {
      const row = await this.h.db.one(`SELECT value FROM ${s}.meta WHERE key = 'search_backlog' FOR UPDATE`);
      const now = row === undefined ? 0 : Number(row.value);
      if (backlog > now) throw new StoreError("bad-input", `indexSearch: the backlog is ${now}; it can only go down (to ${backlog} asked)`);
      const above = entries.find((e) => e.event > now);
      if (above !== undefined)
        throw new StoreError(
          "bad-input",
          `indexSearch: event ${above.event} is above the backlog (${now}): it was indexed when it was written`,
        );
      if (entries.length > 0)
        await this.h.db.q(
          `UPDATE ${s}.events e SET search = CASE WHEN v.derived AND e.kind = ANY($5::text[]) THEN NULL ELSE v.text END, search_tsv = ${TSV("v.words")}
           FROM unnest($1::bigint[], $2::text[], $3::text[], $4::boolean[]) AS v(id, text, words, derived) WHERE e.id = v.id`,
          [
            entries.map((e) => e.event),
            entries.map((e) => e.text),
            entries.map((e) => indexWords(e.text)),
            entries.map((e) => e.derived === true),
            derivedKinds(),
          ],
        );
      if (backlog === 0) await this.h.db.q(`DELETE FROM ${s}.meta WHERE key = 'search_backlog'`);
      else await this.h.db.q(`UPDATE ${s}.meta SET value = $1 WHERE key = 'search_backlog'`, [String(backlog)]);
    });
  }
}
