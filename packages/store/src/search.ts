/**
 * Search (SE-4 … SE-6), the part every backend shares: what a query means (words and phrases, each
 * cut into words of letters and digits, as both backends' indexes cut the text), and the snippet
 * a hit shows, cut from the event's text here so that every backend shows the same one.
 */
import { StoreError } from "./errors.ts";
import { type EventId, MAX_SEARCH_TERMS, type SearchHit, type SearchQuery, type SessionId } from "./types.ts";

/** Default and largest number of hits one search answers. */
export const SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 1000;

/** A query's terms: each a word or a phrase, as its words (lowercase letters and digits). */
export type SearchTerms = readonly (readonly string[])[];

const NOT_WORD = /[^\p{L}\p{N}]+/u;

/** The words of a text as the indexes cut it: runs of letters and digits, lowercased. */
export function searchWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(NOT_WORD)
    .filter((w) => w !== "");
}

/**
 * The terms of `text` (SE-4): `"…"` is a phrase, anything else a word; punctuation inside a word
 * (`read_file`, `2026-11-02`) makes it a phrase of its parts. Throws `bad-input` for a query with
 * no word, or more than {@link MAX_SEARCH_TERMS} terms.
 */
export function searchTerms(text: string): SearchTerms {
  const terms: string[][] = [];
  for (const m of text.matchAll(/"([^"]*)"?|[^\s"]+/g)) {
    const words = searchWords(m[1] ?? m[0]);
    if (words.length > 0) terms.push(words);
  }
  if (terms.length === 0)
    throw new StoreError("bad-input", `a search needs at least one word of letters or digits, got ${JSON.stringify(text.slice(0, 80))}`);
  if (terms.length > MAX_SEARCH_TERMS)
    throw new StoreError("bad-input", `a search takes at most ${MAX_SEARCH_TERMS} words and phrases, got ${terms.length}`);
  return terms;
}

/**
 * True when `text` holds every term: each term's words, adjacent and in order, among the text's
 * words as {@link searchWords} cuts them — what the index answers, for rows not yet in it.
 */
export function matchesTerms(text: string, terms: SearchTerms): boolean {
  const words = searchWords(text);
  return terms.every((term) => {
    const first = term[0] as string;
    for (let i = words.indexOf(first); i >= 0 && i + term.length <= words.length; i = words.indexOf(first, i + 1)) {
      let k = 1;
      while (k < term.length && words[i + k] === term[k]) k++;
      if (k === term.length) return true;
    }
    return false;
  });
}

/**
 * Whether a candidate of an index of words (SE-9, decision 0048) is a hit: its text holds every
 * term by {@link matchesTerms} — unless that text is not the one indexed (derived, in a process
 * with no function for its kind: SE-8's fallback text), where the index's answer is taken.
 */
export function candidateHolds(text: string, kept: boolean, kind: string, terms: SearchTerms): boolean {
  return !(kept || derivable(kind, true)) || matchesTerms(text, terms);
}

/** The limit a query asks for, checked. */
export function searchLimit(query: SearchQuery): number {
  const limit = query.limit ?? SEARCH_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
    throw new StoreError("bad-input", `search: limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${String(limit)}`);
  return limit;
}

/**
 * An FTS5 MATCH expression for the terms: every term, each a phrase of its words, in the `text`
 * column; with `session` (letters and digits), only that session's events.
 */
export function fts5Query(terms: SearchTerms, session?: string): string {
  const text = terms.map((words) => `text : "${words.join(" ")}"`).join(" AND ");
  return session === undefined ? text : `session : "${session}" AND ${text}`;
}

/**
 * An FTS5 MATCH expression for an index of words without their positions (SQLite schema 6, SE-9):
 * every word of every term, and with `session` its id (a token of the `session` column: such an
 * index has no column filters). It answers candidates, a superset of the hits: the phrases, and
 * that each word is in the text and not only the session id, are checked on the candidate's text
 * ({@link matchesTerms}).
 */
export function fts5Words(terms: SearchTerms, session?: string): string {
  const words = [...new Set(terms.flat())].map((w) => `"${w}"`);
  if (session !== undefined) words.push(`"${session}"`);
  return words.join(" AND ");
}

/** Characters of context a snippet keeps before its first match, and its longest length. */
const BEFORE = 40;
const SNIPPET = 160;

/**
 * The snippet of a hit (SE-5): the text around the first match of any term, whitespace made single
 * spaces, "…" where it was cut, and where each term matched in it.
 */
export function snippetOf(text: string, terms: SearchTerms): { snippet: string; marks: [number, number][] } {
  const patterns = terms.map((words) => termPattern(words));
  let first = -1;
  for (const re of patterns) {
    re.lastIndex = 0;
    const m = re.exec(text);
    if (m !== null && (first < 0 || m.index < first)) first = m.index;
  }
  if (first < 0) first = 0;
  let start = Math.max(0, first - BEFORE);
  // Start at a word's beginning when one is near.
  if (start > 0) {
    const space = text.slice(start, first).search(/\s/);
    if (space >= 0) start += space + 1;
  }
  let end = Math.min(text.length, start + SNIPPET);
  if (end < text.length) {
    const space = text.slice(first, end).lastIndexOf(" ");
    if (space > 0 && first + space > start + SNIPPET / 2) end = first + space;
  }
  const body = text.slice(start, end).replace(/\s+/g, " ").trim();
  const snippet = `${start > 0 ? "…" : ""}${body}${end < text.length ? "…" : ""}`;
  const marks: [number, number][] = [];
  for (const re of patterns) {
    re.lastIndex = 0;
    for (const m of snippet.matchAll(re)) marks.push([m.index, m.index + m[0].length]);
  }
  marks.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const m of marks) {
    const last = merged[merged.length - 1];
    if (last !== undefined && m[0] <= last[1]) last[1] = Math.max(last[1], m[1]);
    else merged.push(m);
  }
  return { snippet, marks: merged };
}

function termPattern(words: readonly string[]): RegExp {
  const body = words.map((w) => w.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")).join("[^\\p{L}\\p{N}]+");
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, "giu");
}

/**
 * Searchable text derived from payloads (SE-8, decision 0045). The store never reads a payload's
 * format; the code that writes a kind of event may register how its searchable text is derived
 * from the payload (`@strata/engine` does for `patch@1`). An event appended with
 * `searchDerived: true` whose kind has a function registered is then indexed without a copy of
 * its text: a hit's snippet is cut from the text derived again from the payload.
 */
const DERIVED = new Map<string, (data: string) => string | undefined>();

/** Registers how the searchable text of events of `kind` is derived from their payload (SE-8). */
export function registerSearchText(kind: string, derive: (data: string) => string | undefined): void {
  DERIVED.set(kind, derive);
}

/** The kinds whose searchable text this process can derive from their payload (SE-8). */
export function derivedKinds(): string[] {
  return [...DERIVED.keys()];
}

/** The text a store keeps of an event's searchable text: none when it can derive it again (SE-8). */
export function keptSearchText(e: { readonly kind: string; readonly search?: string; readonly searchDerived?: boolean }): string | null {
  return e.search === undefined || derivable(e.kind, e.searchDerived) ? null : e.search;
}

/** True when the store may keep no copy of an event's searchable text: it says it is derived, and this process can derive it. */
export function derivable(kind: string, derived: boolean | undefined): boolean {
  return derived === true && DERIVED.has(kind);
}

/**
 * The text the function registered for `kind` derives from `data` (SE-10's sweep): undefined when
 * none is registered in this process, the payload has no searchable text, or the function cannot
 * read it.
 */
export function derivedTextOf(kind: string, data: string): string | undefined {
  const derive = DERIVED.get(kind);
  if (derive === undefined) return undefined;
  try {
    return derive(data);
  } catch {
    return undefined;
  }
}

/**
 * The searchable text of an event indexed without a copy: derived from its payload by the function
 * registered for its kind; in a process where none is registered (the store used without the code
 * that wrote the event), the payload's string values in order, one a line, so the snippet still
 * shows the words it was found by.
 */
export function derivedSearchText(kind: string, data: string): string {
  // A payload the function cannot read, or of a kind with none here: its strings, as below.
  const derived = derivedTextOf(kind, data);
  if (derived !== undefined) return derived;
  const out: string[] = [];
  try {
    const stack: unknown[] = [JSON.parse(data)];
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v === "string") out.push(v);
      else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      else if (typeof v === "object" && v !== null) {
        const vals = Object.values(v);
        for (let i = vals.length - 1; i >= 0; i--) stack.push(vals[i]);
      }
    }
  } catch {
    return data;
  }
  return out.join("\n");
}

/** A backend's row of a hit: the event's fields and its searchable text. */
export interface SearchHitRow {
  readonly id: number | string;
  readonly session: string;
  readonly kind: string;
  readonly label: string | null;
  readonly by: string | null;
  readonly ts: number | string;
  readonly text: string;
}

/** The hit of a row (SE-4), with its snippet (SE-5): the same on every backend. */
export function searchHit(r: SearchHitRow, terms: SearchTerms): SearchHit {
  return {
    event: Number(r.id) as EventId,
    session: r.session as SessionId,
    kind: r.kind,
    label: r.label ?? null,
    by: r.by ?? null,
    ts: Number(r.ts),
    ...snippetOf(r.text, terms),
  };
}
