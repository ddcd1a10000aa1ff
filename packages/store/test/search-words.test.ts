/**
 * SE-9 on SQLite (decision 0046): a schema 6 index records which events hold a word, not where
 * (FTS5 `detail = none`); phrases, and that a word is in the text rather than only in the
 * session id, are checked on each candidate's text. The reference is the positional index a
 * version 5 file keeps when it migrates: the same events give the same hits, page for page.
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EventId, type EventInput, openStore, registerSearchText, type SessionId, type SqliteStore } from "../src/index.ts";
import { tempDir } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "../../..");
const KIND = "words-test@1";
registerSearchText(KIND, (data) => (JSON.parse(data) as { text: string }).text);

/** Words no fixture holds, few enough that phrases are often adjacent and often not. */
const VOCAB = ["zarn", "quil", "vope", "mirth", "kest", "dolo", "fenn", "brisk"];

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const derived = (text: string): EventInput => ({ kind: KIND, data: JSON.stringify({ text }), search: text, searchDerived: true });
const given = (text: string): EventInput => ({ kind: KIND, data: "{}", search: text });

/** Bytes of the search index's own tables. */
function indexBytes(store: SqliteStore): number {
  return Number(
    store.database
      .prepare("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'search%' AND name <> 'search_pending' AND name <> 'search_text'")
      .pluck()
      .get(),
  );
}

const detailOf = (store: SqliteStore): string =>
  String(store.database.prepare("SELECT sql FROM sqlite_master WHERE name = 'search'").pluck().get());

/** Appends `inputs` to a new session, one event per append; answers the session and the ids in order. */
function write(store: SqliteStore, inputs: readonly EventInput[]): { session: SessionId; ids: EventId[] } {
  const { session, genesis } = store.createSession({ title: "words", genesis: { kind: "genesis@1", data: "{}" } });
  let head: EventId = genesis.id;
  const ids: EventId[] = [];
  for (const e of inputs) {
    head = (store.append(session.id, "main", head, [e])[0] as { id: EventId }).id;
    ids.push(head);
  }
  return { session: session.id, ids };
}

/** A fresh schema 6 file (words only) and a version 5 fixture migrated (its positional index kept), both holding `inputs`. */
function pair(inputs: readonly EventInput[]) {
  const dir = tempDir();
  const words = openStore(join(dir, "words.db")) as SqliteStore;
  const path = join(dir, "v5.db");
  copyFileSync(join(ROOT, "fixtures/store/v5.db"), path);
  const positions = openStore(path) as SqliteStore;
  return { words, positions, w: write(words, inputs), p: write(positions, inputs) };
}

describe("SE-9 a schema 6 index holds words without positions", () => {
  it("a new file's index is detail=none and a small fraction of a positional one for the same texts; a version 5 index with rows keeps its positions", () => {
    const r = rng(9);
    const texts = Array.from(
      { length: 400 },
      (_, i) => `${Array.from({ length: 300 }, () => VOCAB[Math.floor(r() * VOCAB.length)]).join(" ")} marker${i}`,
    );
    const { words, positions } = pair(texts.map(derived));
    words.flushSearch();
    positions.flushSearch();
    expect(detailOf(words)).toMatch(/detail = none/);
    expect(detailOf(positions)).not.toMatch(/detail/);
    expect(positions.schemaVersion).toBe(words.schemaVersion);
    // Positions of 300 words per text against one row id per word.
    expect(indexBytes(words)).toBeLessThan(indexBytes(positions) * 0.35);
    words.close();
    positions.close();
  });

  it("a phrase is found only where its words are adjacent and in order, indexed or pending, derived or given", () => {
    const dir = tempDir();
    const store = openStore(join(dir, "s.db")) as SqliteStore;
    const inputs = [
      derived("zarn quil vope"), // 0: "zarn quil" adjacent
      derived("quil zarn vope"), // 1: out of order
      given("zarn vope quil"), // 2: apart
      given("the zarn-quil pair"), // 3: adjacent through punctuation
    ];
    const { ids } = write(store, inputs);
    const hits = () => store.search({ text: '"zarn quil"' }).map((h) => h.event);
    expect(hits(), "pending").toEqual([ids[3], ids[0]]);
    store.flushSearch();
    expect(hits(), "indexed").toEqual([ids[3], ids[0]]);
    // Both words, in any order: every one.
    expect(store.search({ text: "zarn quil" }).map((h) => h.event)).toEqual([...ids].reverse());
    store.close();
  });

  it("a word that is a session's id finds only the events whose text holds it, not every event of that session", () => {
    const dir = tempDir();
    const store = openStore(join(dir, "s.db")) as SqliteStore;
    const a = write(store, [derived("kest one"), derived("kest two")]);
    const id = a.session.toLowerCase();
    const b = write(store, [derived(`see session ${id} for kest`), derived("nothing here")]);
    store.flushSearch();
    expect(store.search({ text: id }).map((h) => h.event)).toEqual([b.ids[0]]);
    expect(store.search({ text: a.session }).map((h) => h.event)).toEqual([b.ids[0]]);
    expect(store.search({ text: "kest", session: a.session }).map((h) => h.event)).toEqual([...a.ids].reverse());
    expect(store.search({ text: `kest ${id}`, session: b.session }).map((h) => h.event)).toEqual([b.ids[0]]);
    store.close();
  });

  it("the newest hits are found past any number of candidates that fail the phrase", () => {
    const dir = tempDir();
    const store = openStore(join(dir, "s.db")) as SqliteStore;
    const inputs = [derived("mirth fenn"), ...Array.from({ length: 2500 }, (_, i) => derived(`fenn ${i} mirth`))];
    const { ids } = write(store, inputs);
    store.flushSearch();
    expect(store.search({ text: '"mirth fenn"', limit: 1 }).map((h) => h.event)).toEqual([ids[0]]);
    expect(store.search({ text: "mirth fenn", limit: 3 }).map((h) => h.event)).toEqual([ids[2500], ids[2499], ids[2498]]);
    store.close();
  });

  it("random queries give the hits of the positional index: the same events, snippets and marks, page by page, in a session and across sessions", () => {
    const r = rng(46);
    const pick = () => VOCAB[Math.floor(r() * VOCAB.length)] as string;
    const inputs = Array.from({ length: 700 }, (_, i) => {
      const text = Array.from({ length: 3 + Math.floor(r() * 12) }, pick).join(r() < 0.2 ? "-" : " ");
      return i % 5 === 0 ? given(text) : derived(text);
    });
    const { words, positions, w, p } = pair(inputs);
    // This session indexed…
    words.flushSearch();
    positions.flushSearch();
    // A second session, left pending when the queries run.
    const extra = Array.from({ length: 100 }, () => derived(Array.from({ length: 6 }, pick).join(" ")));
    const w2 = write(words, extra);
    const p2 = write(positions, extra);
    /** Each event by its place in the two sessions (the files' ids differ). */
    const places = (first: EventId[], second: EventId[]) =>
      new Map<number, string>([...first.map((id, i) => [id, `a${i}`] as const), ...second.map((id, i) => [id, `b${i}`] as const)]);
    const wm = places(w.ids, w2.ids);
    const pm = places(p.ids, p2.ids);
    for (let q = 0; q < 150; q++) {
      const terms = Array.from({ length: 1 + Math.floor(r() * 3) }, () =>
        r() < 0.5 ? pick() : `"${Array.from({ length: 2 + Math.floor(r() * 2) }, pick).join(" ")}"`,
      ).join(" ");
      const limit = 1 + Math.floor(r() * 30);
      const inSession = r() < 0.4;
      const page = (store: SqliteStore, session: SessionId, map: Map<number, string>) => {
        const out: string[][] = [];
        let before: number | undefined;
        for (let k = 0; k < 4; k++) {
          const hits = store.search({
            text: terms,
            limit,
            ...(inSession ? { session } : {}),
            ...(before === undefined ? {} : { before: before as EventId }),
          });
          out.push(hits.map((h) => `${map.get(h.event)} ${h.snippet} ${JSON.stringify(h.marks)}`));
          if (hits.length < limit) break;
          before = (hits.at(-1) as { event: number }).event;
        }
        return out;
      };
      expect(page(words, w.session, wm), terms).toEqual(page(positions, p.session, pm));
    }
    words.close();
    positions.close();
  });
});
