/** Conformance, SE-4 … SE-6: full-text search over every event's searchable text, on every backend. */
import { describe, expect, it } from "vitest";
import { type EventId, type EventInput, registerSearchText, type SearchHit, type SessionId, type Store } from "../../src/index.ts";
import { fails, headOf, type Kit } from "./kit.ts";

const said = (search: string, label?: string): EventInput => ({ kind: "patch@1", label: label ?? null, data: "{}", search });
const labels = (hits: readonly SearchHit[]) => hits.map((h) => h.label);

/** A new session: its id and its genesis event's. */
async function made(store: Store, genesis: EventInput): Promise<{ session: SessionId; genesis: EventId }> {
  const r = await store.createSession({ title: "t", genesis });
  return { session: r.session.id, genesis: r.genesis.id };
}

export function searchConformance(kit: Kit): void {
  describe("SE-4/5/6 search", () => {
    it("SE-4: every word anywhere in an event's text, any case, newest first; each hit names its event and session", async () => {
      const store = await kit.open({ now: () => 1_700_000_000_000 });
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      const [a, b, c, d] = await store.append(session, "main", genesis, [
        said("Read the planning notes", "a"),
        said("the notes say: planning is late", "b"),
        { kind: "patch@1", label: "c", data: '{"planning notes":1}' },
        said("NOTES about PLANNING, in capitals", "d"),
      ]);
      const hits = await store.search({ text: "planning notes" });
      expect(labels(hits)).toEqual(["d", "b", "a"]);
      // An event without searchable text is never found, whatever its payload holds.
      expect(hits.map((h) => h.event)).not.toContain(c?.id);
      expect(hits[0]).toMatchObject({ event: d?.id, session, kind: "patch@1", label: "d", by: null, ts: 1_700_000_000_000 });
      expect(hits[2]).toMatchObject({
        event: a?.id,
        snippet: "Read the planning notes",
        marks: [
          [9, 17],
          [18, 23],
        ],
      });
      expect(labels(await store.search({ text: "PLANNING" }))).toEqual(["d", "b", "a"]);
      expect(await store.search({ text: "planning missing" })).toEqual([]);
      // Words are whole words: a prefix is not a hit.
      expect(await store.search({ text: "plan" })).toEqual([]);
      expect(b?.id).toBeGreaterThan(a?.id as number);
    });

    it("SE-4: a quoted phrase is its words in order; punctuation inside a word makes it a phrase of its parts", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      await store.append(session, "main", genesis, [
        said("open questions remain", "phrase"),
        said("questions are open", "reversed"),
        said("called read_file on src/a.ts", "snake"),
        said("read-file was called", "kebab"),
        said("file read, then written", "apart"),
        said("2026-11-02 was the date", "date"),
      ]);
      expect(labels(await store.search({ text: '"open questions"' }))).toEqual(["phrase"]);
      expect(labels(await store.search({ text: "open questions" }))).toEqual(["reversed", "phrase"]);
      expect(labels(await store.search({ text: "read_file" }))).toEqual(["kebab", "snake"]);
      expect(labels(await store.search({ text: '"read file"' }))).toEqual(["kebab", "snake"]);
      expect(labels(await store.search({ text: "src/a.ts" }))).toEqual(["snake"]);
      expect(labels(await store.search({ text: "2026-11-02" }))).toEqual(["date"]);
      // An unclosed quote runs to the end of the query.
      expect(labels(await store.search({ text: 'file "open questions' }))).toEqual([]);
      expect(labels(await store.search({ text: '"open questions' }))).toEqual(["phrase"]);
    });

    it("SE-4: a phrase is found below many newer events that hold its words apart; pages stay exact", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      // An index of words (SQLite's `detail = none`, PostgreSQL's vectors without positions) gives
      // every event below as a candidate; only the checked text tells the phrase from its words.
      const [old1, old2] = await store.append(session, "main", genesis, [
        said("the merge conflict again", "old1"),
        said("one merge conflict", "old2"),
      ]);
      const apart: EventInput[] = [];
      for (let i = 0; i < 130; i++) apart.push(said(i % 2 === 0 ? `conflict before merge ${i}` : `merge, then no conflict ${i}`));
      const tip = await store.append(session, "main", (old2 as { id: EventId }).id, apart);
      const [late] = await store.append(session, "main", (tip.at(-1) as { id: EventId }).id, [said("a late merge conflict", "late")]);
      expect(labels(await store.search({ text: '"merge conflict"' }))).toEqual(["late", "old2", "old1"]);
      const first = await store.search({ text: '"merge conflict"', limit: 2 });
      expect(first.map((h) => h.event)).toEqual([late?.id, old2?.id]);
      expect((await store.search({ text: '"merge conflict"', before: first[1]?.event, limit: 2 })).map((h) => h.event)).toEqual([old1?.id]);
      expect((await store.search({ text: '"conflict merge"' })).map((h) => h.event)).toEqual([]);
      // Without the quotes, every event that holds both words.
      expect(await store.search({ text: "merge conflict", limit: 200 })).toHaveLength(133);
      expect(labels(await store.search({ text: '"merge conflict" again' }))).toEqual(["old1"]);
    });

    it("SE-4: letters beyond ASCII fold case and keep their accents; symbols are not words", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      await store.append(session, "main", genesis, [
        said("Décisions ✓ 𝄞 and open questions", "fr"),
        said("decisions without accents", "ascii"),
        said("Ελληνικά κείμενα και 日本語", "other"),
      ]);
      expect(labels(await store.search({ text: "DÉCISIONS" }))).toEqual(["fr"]);
      expect(labels(await store.search({ text: "decisions" }))).toEqual(["ascii"]);
      expect(labels(await store.search({ text: "ελληνικά" }))).toEqual(["other"]);
      expect(labels(await store.search({ text: "日本語" }))).toEqual(["other"]);
      expect(labels(await store.search({ text: "décisions ✓" })), "a symbol in a query is no word").toEqual(["fr"]);
      await fails(() => store.search({ text: "✓ 𝄞 --" }), "bad-input", /at least one word/);
    });

    it("SE-4: session, before and limit narrow a search; pages of `before` cover every hit once", async () => {
      const store = await kit.open();
      const one = await made(store, { kind: "genesis@1", data: "{}" });
      const two = await made(store, { kind: "genesis@1", data: "{}" });
      const written = new Map<SessionId, EventId[]>([
        [one.session, []],
        [two.session, []],
      ]);
      for (let i = 0; i < 12; i++) {
        const s = i % 3 === 0 ? two : one;
        const head = await headOf(store, s.session);
        const [e] = await store.append(s.session, "main", head, [said(`step ${i} of the common run`, `s${i}`)]);
        written.get(s.session)?.push(e?.id as EventId);
      }
      const all = await store.search({ text: "common run", limit: 1000 });
      expect(all).toHaveLength(12);
      expect(all.map((h) => h.event)).toEqual([...all.map((h) => h.event)].sort((a, b) => b - a));
      const inTwo = await store.search({ text: "common", session: two.session });
      expect(inTwo.map((h) => h.event)).toEqual([...(written.get(two.session) ?? [])].reverse());
      expect(inTwo.every((h) => h.session === two.session)).toBe(true);
      // Paging: each page's last hit is the next page's `before`.
      const pages: EventId[] = [];
      let before: EventId | undefined;
      for (;;) {
        const page = await store.search({ text: "common", limit: 5, ...(before === undefined ? {} : { before }) });
        pages.push(...page.map((h) => h.event));
        if (page.length < 5) break;
        before = page[page.length - 1]?.event;
      }
      expect(pages).toEqual(all.map((h) => h.event));
      expect(await store.search({ text: "common", limit: 3 })).toHaveLength(3);
      expect(await store.search({ text: "common", session: "01NOSUCHSESSION0000000000" as SessionId })).toEqual([]);
    });

    it("SE-4: every way an event is written indexes it: genesis, one event, a group, the first after a fork or rewind", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}", search: "genesis words" });
      const [one] = await store.append(session, "main", genesis, [said("single words", "single")]);
      await store.append(session, "main", one?.id as EventId, [said("group words", "g1"), said("group words again", "g2")]);
      await store.fork(session, one?.id as EventId, "side");
      const [forked] = await store.append(session, "side", one?.id as EventId, [said("forked words", "forked")]);
      await store.moveHead(session, "main", one?.id as EventId);
      await store.append(session, "main", one?.id as EventId, [said("rewound words", "rewound")]);
      expect(labels(await store.search({ text: "words" }))).toEqual(["rewound", "forked", "g2", "g1", "single", null]);
      // History a fork shares is one event: found once, with the session it belongs to.
      const single = await store.search({ text: "single" });
      expect(single).toHaveLength(1);
      expect(single[0]?.session).toBe(session);
      expect(forked?.id).toBeDefined();
    });

    it("SE-5: a snippet is the text around the first match on one line, cut with …, its marks where the words are", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      const long = `${"lorem ipsum ".repeat(30)}the needle\nis  here ${"dolor sit ".repeat(30)}`;
      await store.append(session, "main", genesis, [said(long, "long")]);
      const [hit] = await store.search({ text: "needle here" });
      const snippet = hit?.snippet as string;
      expect(snippet.startsWith("…")).toBe(true);
      expect(snippet.endsWith("…")).toBe(true);
      expect(snippet).toContain("the needle is here");
      expect(snippet).not.toMatch(/\n|\s{2}/);
      expect(snippet.length).toBeLessThanOrEqual(162);
      expect(hit?.marks.map(([s, e]) => snippet.slice(s, e))).toEqual(["needle", "here"]);
    });

    it("SE-4: bad queries are bad-input naming what is wrong; nothing changes", async () => {
      const store = await kit.open();
      for (const text of ["", "   ", '""', "!!!"]) await fails(() => store.search({ text }), "bad-input", /at least one word/);
      await fails(() => store.search({ text: Array.from({ length: 17 }, (_, i) => `w${i}`).join(" ") }), "bad-input", /at most 16/);
      for (const limit of [0, -1, 1.5, 1001]) await fails(() => store.search({ text: "x", limit }), "bad-input", /limit/);
    });

    it("SE-6: a new store has no backlog; indexSearch only lowers it and only takes events at or below it", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      expect(await store.searchBacklog()).toBe(0);
      await store.indexSearch([], 0);
      await fails(() => store.indexSearch([], 5), "bad-input", /can only go down/);
      await fails(() => store.indexSearch([{ event: genesis, text: "late words" }], 0), "bad-input", /above the backlog/);
      expect(await store.search({ text: "late" })).toEqual([]);
      expect(await store.searchBacklog()).toBe(0);
      expect(session).toBeDefined();
    });

    kit.withHandles("SE-4: what one handle writes another finds, and the index verifies clean from both", async () => {
      const a = await kit.open();
      const { session, genesis } = await made(a, { kind: "genesis@1", data: "{}" });
      await a.append(session, "main", genesis, [said("written by a", "a")]);
      const b = await kit.connect(a);
      await b.append(session, "main", await headOf(b, session), [said("written by b", "b")]);
      expect(labels(await a.search({ text: "written" }))).toEqual(["b", "a"]);
      await b.append(session, "main", await headOf(b, session), [said("b again", "b2")]);
      expect((await a.verify()).findings).toEqual([]);
      expect((await b.verify()).findings).toEqual([]);
      expect(labels(await a.search({ text: "again" }))).toEqual(["b2"]);
    });

    it("SE-8: a text derived from the payload is found, and its snippet derived again; one the store cannot derive is kept", async () => {
      registerSearchText("derived-test@1", (data) => (JSON.parse(data) as { t: string }).t);
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      const derived = (i: number): EventInput => ({
        kind: "derived-test@1",
        label: `d${i}`,
        data: JSON.stringify({ t: `derived words number w${i} here`, noise: "ignored" }),
        search: `derived words number w${i} here`,
        searchDerived: true,
      });
      // More than a batch of pending rows (SQLite moves 256 at a time into its index), so both the index and its tail answer.
      let head = genesis;
      for (let i = 0; i < 300; i += 50) {
        const metas = await store.append(
          session,
          "main",
          head,
          Array.from({ length: 50 }, (_, k) => derived(i + k)),
        );
        head = (metas.at(-1) as { id: EventId }).id;
      }
      await store.append(session, "main", head, [
        // Said to be derived, but of a kind nothing derives: the store keeps the text it was given.
        { kind: "patch@1", label: "kept", data: "{}", search: "derived words kept as given", searchDerived: true },
      ]);
      for (const w of ["w0", "w1", "w255", "w299"]) {
        const [hit] = await store.search({ text: `${w} derived` });
        expect(hit?.label).toBe(`d${w.slice(1)}`);
        expect(hit?.snippet).toBe(`derived words number ${w} here`);
      }
      const [kept] = await store.search({ text: "kept given" });
      expect(kept).toMatchObject({ label: "kept", snippet: "derived words kept as given" });
      expect((await store.search({ text: "derived words", limit: 1000 })).length).toBe(301);
      expect((await store.verify()).findings).toEqual([]);
      // The rows go with their session.
      await store.removeSession(session);
      expect(await store.search({ text: "derived" })).toEqual([]);
    });

    it("a search hit is a plain object of the documented fields", async () => {
      const store = await kit.open();
      const { session, genesis } = await made(store, { kind: "genesis@1", data: "{}" });
      await store.append(session, "main", genesis, [{ ...said("fields here", "f"), by: "agent" }]);
      const [hit] = await store.search({ text: "fields" });
      expect(Object.keys(hit ?? {}).sort()).toEqual(["by", "event", "kind", "label", "marks", "session", "snippet", "ts"]);
      expect(hit?.by).toBe("agent");
      expect(Array.isArray(hit?.marks)).toBe(true);
    });
  });
}
