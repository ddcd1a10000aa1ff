/**
 * The SQLite search index (SE-4 … SE-10): the FTS5 table and its pending tail — the rows appends
 * write for texts the store cannot derive again (SE-4), and the events above each kind's watermark
 * whose derived texts the writing connection holds (SE-10). A search reads the index and both
 * tails in one read transaction; a flush sweeps the watermarks and moves the pending rows in one
 * write transaction. The backend (backend.ts) owns the file and hands this what it reads with.
 */
import type Database from "better-sqlite3";
import { StoreError } from "../errors.ts";
import {
  candidateHolds,
  derivable,
  derivedKinds,
  derivedSearchText,
  derivedTextOf,
  fts5Query,
  fts5Words,
  MAX_SEARCH_LIMIT,
  matchesTerms,
  type SearchTerms,
  searchHit,
  searchLimit,
  searchTerms,
} from "../search.ts";
import type { EventId, SearchEntry, SearchHit, SearchQuery } from "../types.ts";
import { type Appends, watermarkKey } from "./appends.ts";
import { fromSqlite } from "./errors.ts";
import { SEARCH_TEXT_VERSION, SEARCH_VERSION, WATERMARK_VERSION, WORD_SEARCH_VERSION } from "./schema.ts";
import type { KeptSearchRow, SearchRow, Statements } from "./statements.ts";

/**
 * The words of `terms` a tail (pending rows, events above a watermark) is narrowed by in SQL:
 * those of ASCII letters and digits, which `LIKE` finds in a text or payload as they are (it folds
 * ASCII case); each row is then matched by `matchesTerms`.
 */
const likeWords = (terms: SearchTerms): string[] => terms.flat().filter((w) => /^[a-z0-9]+$/.test(w));

/** What the index uses of its backend. */
export interface SearchHost {
  readonly db: Database.Database;
  readonly st: Statements;
  readonly appends: Appends;
  readonly path: string;
  readonly schemaVersion: number;
  /** Opened for writing (only a writer moves rows into the index). */
  readonly writable: boolean;
  tx<T>(fn: () => T): T;
  read<T>(fn: () => T): T;
  eventData(ids: readonly EventId[]): Map<EventId, string>;
  eventKind(id: EventId): string | undefined;
}

export class SearchIndex {
  readonly #h: SearchHost;
  /** Whether the index keeps no copy of derived texts (SE-8); undefined: not read yet. */
  #noCopy: boolean | undefined;
  /** Whether the index holds words without their positions (SE-9); undefined: not read yet. */
  #wordsOnly: boolean | undefined;

  constructor(host: SearchHost) {
    this.#h = host;
  }

  /**
   * Whether a writer killed before its flush left pending rows or derived texts not yet indexed
   * (SE-10): the first writer to open the file indexes them.
   */
  leftByAKilledWriter(): boolean {
    return this.#h.writable && this.#h.schemaVersion >= SEARCH_VERSION && ((this.#h.st.countPending.get() ?? 0) > 0 || this.#unswept());
  }

  /** The watermark of each kind some writer held derived texts of (SE-10), by kind. */
  #watermarks(): Map<string, number> {
    const out = new Map<string, number>();
    if (this.#h.schemaVersion < WATERMARK_VERSION) return out;
    for (const r of this.#h.st.watermarks.all()) out.set(r.key.slice(watermarkKey("").length), Number(r.value));
    return out;
  }

  /** Whether an event of a kind this process derives is above its watermark (SE-10). */
  #unswept(): boolean {
    const marks = this.#watermarks();
    return derivedKinds().some((k) => {
      const w = marks.get(k);
      return w !== undefined && this.#h.st.hasUnswept.get(w, k) !== undefined;
    });
  }

  /**
   * Indexes the events above each watermark of a kind this process derives (SE-10) — the texts
   * this connection holds as they are, the others derived again from their payloads — and raises
   * the watermark to the newest event; inside the flush's transaction. A kind no function is
   * registered for here is left to a process that has one. Answers how many texts it indexed.
   */
  #sweep(): number {
    const marks = this.#watermarks();
    let n = 0;
    for (const kind of derivedKinds()) {
      const w = marks.get(kind);
      if (w === undefined) continue;
      const rows = this.#h.st.unswept.all(w, kind);
      const texts = this.#tailTexts(kind, rows);
      for (const r of rows) {
        const text = texts.get(r.id);
        if (text === undefined) continue;
        this.#h.st.insertSearch.run(r.id, text, r.session);
        n++;
      }
      this.#h.st.raiseWatermark.run(watermarkKey(kind));
    }
    return n;
  }

  /**
   * The events above their kind's watermark (SE-10) that hold every term, newest first: texts
   * this connection holds, else derived from the payload (read only for the rows whose payload
   * holds the query's ASCII words, as `LIKE` reads them: a word of the text is in the payload's
   * JSON as it is). At most the texts written since each writer's last flush.
   */
  #unsweptHits(terms: SearchTerms, before: number, session: string | undefined): SearchRow[] {
    const out: SearchRow[] = [];
    const likes = likeWords(terms);
    for (const [kind, w] of this.#watermarks()) {
      const sql = `SELECT e.id, e.kind, e.label, e.by, e.ts, g.session FROM events e JOIN segments g ON g.id = e.segment
        WHERE e.id > ? AND e.kind = ? AND e.id < ?${session === undefined ? "" : " AND g.session = ?"}
          ${likes.map(() => " AND (e.blob IS NOT NULL OR e.data LIKE ?)").join("")}
          AND NOT EXISTS (SELECT 1 FROM search_pending p WHERE p.id = e.id)
          AND NOT EXISTS (SELECT 1 FROM search x WHERE x.rowid = e.id)
        ORDER BY e.id DESC`;
      const args: unknown[] = [w, kind, before, ...(session === undefined ? [] : [session]), ...likes.map((x) => `%${x}%`)];
      const rows = this.#h.db.prepare(sql).all(...args) as Omit<SearchRow, "text">[];
      const texts = this.#tailTexts(kind, rows);
      for (const r of rows) {
        const text = texts.get(r.id);
        if (text !== undefined && matchesTerms(text, terms)) out.push({ ...r, text });
      }
    }
    return out;
  }

  /**
   * The texts of events above their kind's watermark (SE-10): the one this connection holds, else
   * derived again from the payload (one read for all of them) — by the kind's function, and in a
   * process that has none by SE-8's fallback text (which is never indexed: the sweep only takes
   * kinds it has a function for). Undefined: the event has no searchable text.
   */
  #tailTexts(kind: string, rows: readonly { id: number; session: string }[]): Map<number, string | undefined> {
    const out = new Map<number, string | undefined>();
    const missing: EventId[] = [];
    for (const r of rows) {
      const held = this.#h.appends.heldText(r.id, r.session);
      if (held !== undefined) out.set(r.id, held);
      else missing.push(r.id as EventId);
    }
    if (missing.length === 0) return out;
    const derive = derivedKinds().includes(kind) ? derivedTextOf : derivedSearchText;
    for (const [id, data] of this.#h.eventData(missing)) out.set(id, derive(kind, data));
    return out;
  }

  search(query: SearchQuery): SearchHit[] {
    const terms = searchTerms(query.text);
    const limit = searchLimit(query);
    this.#searchable();
    const before = query.before ?? Number.MAX_SAFE_INTEGER;
    const session = query.session;
    if (session !== undefined && !/^[0-9A-Za-z]+$/.test(session)) return [];
    // The index and its pending tail, read in one state (a move between two reads would hide rows).
    const rows = this.#h.read(() => {
      const indexed = this.#wordIndex()
        ? this.#wordHits(terms, before, session, limit)
        : this.#contentless()
          ? this.#derivedTexts(
              session === undefined
                ? this.#h.st.searchKept.all(fts5Query(terms), before, limit)
                : this.#h.st.searchKeptIn.all(fts5Query(terms, session), before, session, limit),
            )
          : session === undefined
            ? this.#h.st.search.all(fts5Query(terms), before, limit)
            : this.#h.st.searchIn.all(fts5Query(terms, session), before, session, limit);
      const pending = [...this.#pendingHits(terms, before, session), ...this.#unsweptHits(terms, before, session)];
      return pending.length === 0 ? indexed : [...pending, ...indexed].sort((a, b) => b.id - a.id).slice(0, limit);
    });
    return rows.map((r) => searchHit(r, terms));
  }

  /**
   * Whether the index keeps no copy of derived texts (SE-8): a version 5 file whose index was made
   * so (not one whose version 4 index was kept, meta `search_copy`).
   */
  #contentless(): boolean {
    this.#noCopy ??= this.#h.schemaVersion >= SEARCH_TEXT_VERSION && this.#h.st.searchCopy.get() === undefined;
    return this.#noCopy;
  }

  /**
   * Whether the index records which events hold a word but not where (FTS5 `detail = none`, SE-9):
   * a schema 6 file whose index was made so (one that held rows when it migrated keeps its positions).
   */
  #wordIndex(): boolean {
    this.#wordsOnly ??=
      this.#h.schemaVersion >= WORD_SEARCH_VERSION &&
      /\bdetail\s*=\s*'?none\b/i.test(
        String(this.#h.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'search'").pluck().get() ?? ""),
      );
    return this.#wordsOnly;
  }

  /**
   * The newest `limit` indexed hits of an index of words (SE-9): its candidates — events holding
   * every word, newest first, read a page at a time — kept when their text holds every term as
   * `matchesTerms` reads it (a phrase's words adjacent and in order, a word in the text and not
   * only in the session id). A text derived in a process that has no function for its kind is not
   * the one indexed (SE-8): such a candidate is kept as the index gives it.
   */
  #wordHits(terms: SearchTerms, before: number, session: string | undefined, limit: number): SearchRow[] {
    const match = fts5Words(terms, session);
    const out: SearchRow[] = [];
    let below = before;
    for (let page = limit; ; page = Math.min(page * 2, MAX_SEARCH_LIMIT)) {
      const rows =
        session === undefined ? this.#h.st.searchKept.all(match, below, page) : this.#h.st.searchKeptIn.all(match, below, session, page);
      const texts = this.#derivedTexts(rows);
      for (let i = 0; i < texts.length; i++) {
        const r = texts[i] as SearchRow;
        if (!candidateHolds(r.text, (rows[i] as KeptSearchRow).text !== null, r.kind, terms)) continue;
        out.push(r);
        if (out.length === limit) return out;
      }
      if (rows.length < page) return out;
      below = (rows[rows.length - 1] as KeptSearchRow).id;
    }
  }

  /** Hits of the contentless index with their texts: the one kept apart, else derived again from the payload (one read for all of them). */
  #derivedTexts(rows: readonly KeptSearchRow[]): SearchRow[] {
    const missing = rows.filter((r) => r.text === null).map((r) => r.id as EventId);
    const data = missing.length === 0 ? undefined : this.#h.eventData(missing);
    return rows.map((r) =>
      r.text !== null ? (r as SearchRow) : { ...r, text: derivedSearchText(r.kind, data?.get(r.id as EventId) ?? "") },
    );
  }

  /**
   * The pending rows (not yet moved into the index) that hold every term, newest first: narrowed
   * in SQL by `LIKE` on the ASCII words (LIKE folds ASCII case), matched word by word here by the
   * rule the index applies (`matchesTerms`). At most a few hundred rows per writer.
   */
  #pendingHits(terms: SearchTerms, before: number, session: string | undefined): SearchRow[] {
    const likes = likeWords(terms);
    const sql = `SELECT p.id, p.text, e.kind, e.label, e.by, e.ts, p.session
      FROM search_pending p JOIN events e ON e.id = p.id
      WHERE p.id < ?${session === undefined ? "" : " AND p.session = ?"}${likes.map(() => " AND p.text LIKE ?").join("")}
      ORDER BY p.id DESC`;
    const args: unknown[] = [before, ...(session === undefined ? [] : [session]), ...likes.map((w) => `%${w}%`)];
    return (this.#h.db.prepare(sql).all(...args) as SearchRow[]).filter((r) => matchesTerms(r.text, terms));
  }

  /**
   * Moves the pending search rows into the full-text index (SE-4), in one transaction; answers how
   * many moved. Appends do it every {@link SEARCH_BATCH} rows and `close` does it; a writer killed
   * before leaves them pending, found by searches all the same, and the next writer moves them.
   */
  flush(): number {
    if (this.#h.schemaVersion < SEARCH_VERSION || !this.#h.writable || this.#h.db.inTransaction) return 0;
    try {
      const moved = this.#h.tx(() => {
        // The sweep first: it passes over the events that have pending rows, which move next.
        const swept = this.#h.schemaVersion >= WATERMARK_VERSION ? this.#sweep() : 0;
        const n = this.#h.st.countPending.get() ?? 0;
        if (n > 0) {
          this.#h.st.movePending.run();
          // The texts the index cannot derive again are kept apart (SE-8); a kept version 4 index holds them all.
          if (this.#contentless()) this.#h.st.moveTexts.run();
          this.#h.st.clearPending.run();
        }
        return n + swept;
      });
      this.#h.appends.pending = 0;
      this.#h.appends.held.clear();
      return moved;
    } catch (e) {
      throw fromSqlite(e, "moving pending rows into the search index");
    }
  }

  backlog(): number {
    if (this.#h.schemaVersion < SEARCH_VERSION) return 0;
    const v = this.#h.st.searchBacklog.get();
    return v === undefined ? 0 : Number(v);
  }

  index(entries: readonly SearchEntry[], backlog: number): void {
    this.#searchable();
    try {
      this.#h.tx(() => {
        const now = this.backlog();
        if (backlog > now)
          throw new StoreError("bad-input", `indexSearch: the backlog is ${now}; it can only go down (to ${backlog} asked)`);
        for (const e of entries) {
          if (e.event > now)
            throw new StoreError(
              "bad-input",
              `indexSearch: event ${e.event} is above the backlog (${now}): it was indexed when it was written`,
            );
          this.#h.st.insertSearchOf.run(e.event, e.text, e.event);
          if (this.#contentless() && !derivable(this.#h.eventKind(e.event) ?? "", e.derived))
            this.#h.st.insertSearchText.run(e.event, e.text);
        }
        if (backlog === 0) this.#h.st.clearSearchBacklog.run();
        else this.#h.st.setSearchBacklog.run(String(backlog));
      });
    } catch (e) {
      throw fromSqlite(e, "indexing older events for search");
    }
  }

  /** Refuses search on a file read as it is from before the index (schema 3, read-only). */
  #searchable(): void {
    if (this.#h.schemaVersion < SEARCH_VERSION)
      throw new StoreError(
        "read-only",
        `${this.#h.path} is a store of schema version ${this.#h.schemaVersion}, opened read-only as it is: it has no search index. Open it once for writing (\`strata search\` does, or any command that writes) to add the index; nothing was changed.`,
      );
  }
}
