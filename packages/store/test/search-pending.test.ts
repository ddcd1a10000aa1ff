/**
 * SQLite's search tail (SE-4, decision 0039): appends write a plain pending row and move rows into
 * the FTS5 index 256 at a time; a search reads both. The index and the tail must answer alike
 * (fast-check: any texts, any queries, any moment of the move), the batch must move, and a writer
 * killed with SIGKILL (the real process) must leave every committed event found and no row of an
 * event that was not committed, with the next writer moving what it left.
 */
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventId, openStore, type SqliteStore } from "../src/index.ts";
import { killWriterAfter, tempDir } from "./helpers.ts";

const WORDS = ["alpha", "Beta", "gamma", "read_file", "src/a.ts", "Décision", "ÉTÉ", "x1", "2026-11-02", "δέλτα", "日本語", "--", "✓"];
const text = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(" ", "\n", ", ", "  ", "/")), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.map(([w, sep]) => w + sep).join(""));
const query = fc
  .array(
    fc.constantFrom(
      "alpha",
      "beta",
      "GAMMA",
      "read_file",
      '"read file"',
      "src",
      "décision",
      "été",
      "x1",
      "2026",
      "δέλτα",
      "日本語",
      '"alpha beta"',
      "a.ts",
    ),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((q) => q.join(" "));

const pending = (s: SqliteStore) => Number(s.database.prepare("SELECT count(*) FROM search_pending").pluck().get());
const indexed = (s: SqliteStore) => Number(s.database.prepare("SELECT count(*) FROM search").pluck().get());

describe("SE-4 SQLite: the pending tail and the index answer alike", () => {
  it("any texts and queries: the same hits all pending, half moved, all moved", () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 40 }),
        fc.array(query, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (texts, queries, cut) => {
          const store = openStore(":memory:") as SqliteStore;
          const { session, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
          let head: EventId = genesis.id;
          const answers = () => queries.map((q) => store.search({ text: q, limit: 1000 }).map((h) => [h.event, h.snippet, h.marks]));
          const split = cut % (texts.length + 1);
          const add = (t: string, label: string) => {
            head = (store.append(session.id, "main", head, [{ kind: "patch@1", label, data: "{}", search: t }])[0] as { id: EventId }).id;
          };
          for (const [i, t] of texts.slice(0, split).entries()) add(t, `e${i}`);
          store.flushSearch();
          for (const [i, t] of texts.slice(split).entries()) add(t, `f${i}`);
          const half = answers();
          store.flushSearch();
          expect(pending(store)).toBe(0);
          expect(answers()).toEqual(half);
          // All pending: the same store's texts again, in a fresh store, never moved.
          const other = openStore(":memory:") as SqliteStore;
          const o = other.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
          let h: EventId = o.genesis.id;
          for (const t of texts)
            h = (other.append(o.session.id, "main", h, [{ kind: "patch@1", data: "{}", search: t }])[0] as { id: EventId }).id;
          expect(pending(other)).toBe(texts.length);
          const offset = (o.genesis.id as number) - (genesis.id as number);
          expect(queries.map((q) => other.search({ text: q, limit: 1000 }).map((x) => [x.event - offset, x.snippet, x.marks]))).toEqual(
            half,
          );
          store.close();
          other.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it("every 256 rows an appending connection moves them into the index; close moves the rest; paging spans both", () => {
    const path = join(tempDir(), "batch.db");
    const store = openStore(path) as SqliteStore;
    const { session, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
    let head: EventId = genesis.id;
    const ids: EventId[] = [];
    for (let i = 0; i < 300; i++) {
      head = (store.append(session.id, "main", head, [{ kind: "patch@1", data: "{}", search: `row ${i} common` }])[0] as { id: EventId })
        .id;
      ids.push(head);
    }
    expect(indexed(store)).toBe(256);
    expect(pending(store)).toBe(44);
    const seen: number[] = [];
    let before: EventId | undefined;
    for (;;) {
      const page = store.search({ text: "common", limit: 50, ...(before === undefined ? {} : { before }) });
      seen.push(...page.map((h) => h.event));
      if (page.length < 50) break;
      before = page[page.length - 1]?.event;
    }
    expect(seen).toEqual([...ids].reverse());
    store.close();
    const again = openStore(path, { readonly: true }) as SqliteStore;
    expect(pending(again)).toBe(0);
    expect(indexed(again)).toBe(300);
    again.close();
  });

  it("a writer killed with SIGKILL: every committed event is found, nothing else is; the next writer moves its pending rows", async () => {
    for (let trial = 0; trial < 4; trial++) {
      const path = join(tempDir(), `killed-${trial}.db`);
      const setup = openStore(path);
      setup.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      setup.close();
      const printed = await killWriterAfter(path, 50 + trial * 170 + Math.floor(Math.random() * 60));
      const ro = openStore(path, { readonly: true }) as SqliteStore;
      const events = new Set(ro.database.prepare("SELECT id FROM events").pluck().all() as number[]);
      const rows = ro.database.prepare("SELECT id FROM search_pending UNION ALL SELECT rowid FROM search").pluck().all() as number[];
      expect(
        rows.every((id) => events.has(id)),
        "no search row of an event that is not in the log",
      ).toBe(true);
      expect(new Set(rows).size).toBe(rows.length);
      for (const [i, id] of printed)
        expect(
          ro.search({ text: `token${i}` }).map((h) => h.event),
          `token${i}`,
        ).toEqual([id]);
      const all = ro.search({ text: "shared words", limit: 1000 }).length;
      expect(all).toBeGreaterThanOrEqual(Math.min(printed.size, 1000));
      ro.close();
      const rw = openStore(path) as SqliteStore;
      expect(pending(rw), "the next writer moved the pending rows").toBe(0);
      expect(rw.search({ text: "shared words", limit: 1000 }).length).toBe(all);
      expect(rw.verify().findings).toEqual([]);
      rw.close();
    }
  }, 120_000);
});
