/**
 * SE-10 on SQLite (decision 0047): a text the store can derive again is written nowhere with its
 * event. The writing connection holds it until its next flush; every event of the kind above the
 * kind's watermark is found by a search all the same (from the held text, or derived again from
 * its payload in any other connection), and the flush indexes them and raises the watermark. A
 * writer killed with SIGKILL (the real process) loses nothing a search finds; removal lowers the
 * watermark, so ids SQLite hands out again are indexed too.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventId, type EventInput, openStore, registerSearchText, type SessionId, type SqliteStore } from "../src/index.ts";
import { killWriterAfter, tempDir } from "./helpers.ts";

const KIND = "held-test@1";
registerSearchText(KIND, (data) => (JSON.parse(data) as { text: string }).text);
const KEY = `search_upto:${KIND}`;

const derived = (text: string): EventInput => ({ kind: KIND, data: JSON.stringify({ text }), search: text, searchDerived: true });
const given = (text: string): EventInput => ({ kind: "given-test@1", data: "{}", search: text });

const count = (s: SqliteStore, table: string) => Number(s.database.prepare(`SELECT count(*) FROM ${table}`).pluck().get());
const watermark = (s: SqliteStore) => s.database.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(KEY) as string | undefined;
const maxId = (s: SqliteStore) => Number(s.database.prepare("SELECT MAX(id) FROM events").pluck().get());

function session(store: SqliteStore): { id: SessionId; add: (e: EventInput) => EventId } {
  const { session, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
  let head: EventId = genesis.id;
  return {
    id: session.id,
    add: (e) => {
      head = (store.append(session.id, "main", head, [e])[0] as { id: EventId }).id;
      return head;
    },
  };
}

const WORDS = ["alpha", "Beta", "gamma", "read_file", "src/a.ts", "Décision", "x1", "2026-11-02", "δέλτα", "日本語", "--"];
const text = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(" ", "\n", ", ", "/")), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.map(([w, sep]) => w + sep).join(""));
const query = fc
  .array(
    fc.constantFrom("alpha", "beta", "GAMMA", "read_file", '"read file"', "src", "décision", "x1", "2026", "δέλτα", '"alpha beta"', "a.ts"),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((q) => q.join(" "));

describe("SE-10 derived texts are held, not written, and found above the watermark", () => {
  it("a derived append writes no pending row and no kept text; the flush indexes it and raises the watermark to the newest event", () => {
    const path = join(tempDir(), "held.db");
    const store = openStore(path) as SqliteStore;
    expect(watermark(store)).toBeUndefined();
    const s = session(store);
    const before = maxId(store);
    const ids = Array.from({ length: 100 }, (_, i) => s.add(derived(`held ${i} marker${i}`)));
    expect(count(store, "search_pending")).toBe(0);
    expect(count(store, "search_text")).toBe(0);
    expect(count(store, "search")).toBe(0);
    expect(watermark(store), "made before the first held event, at the newest id then").toBe(String(before));
    // Found before the flush: by this connection (its held texts) and by another one (from the payloads).
    const reader = openStore(path, { readonly: true }) as SqliteStore;
    for (const q of ["marker7", '"held 42"', "held"])
      expect(reader.search({ text: q, limit: 200 }).map((h) => [h.event, h.snippet])).toEqual(
        store.search({ text: q, limit: 200 }).map((h) => [h.event, h.snippet]),
      );
    expect(reader.search({ text: "held", limit: 200 }).map((h) => h.event)).toEqual([...ids].reverse());
    expect(store.flushSearch()).toBe(100);
    expect(count(store, "search")).toBe(100);
    expect(watermark(store)).toBe(String(maxId(store)));
    expect(reader.search({ text: "held", limit: 200 }).map((h) => h.event)).toEqual([...ids].reverse());
    expect(store.search({ text: "marker7" }).map((h) => h.snippet)).toEqual(["held 7 marker7"]);
    reader.close();
    store.close();
  });

  it("every 256 held texts the connection flushes; held, unswept and indexed answer alike, given texts beside them (any texts and queries)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, fc.boolean()), { minLength: 1, maxLength: 40 }),
        fc.array(query, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (texts, queries, cut) => {
          const path = join(tempDir(), "p.db");
          const store = openStore(path) as SqliteStore;
          const s = session(store);
          const split = cut % (texts.length + 1);
          const ids: EventId[] = [];
          const add = ([t, d]: [string, boolean]) => ids.push(s.add(d ? derived(t) : given(t)));
          texts.slice(0, split).forEach(add);
          store.flushSearch();
          texts.slice(split).forEach(add);
          /** Hits by the place of their event among the texts (two files give different ids). */
          const answers = (x: SqliteStore, order: EventId[]) =>
            queries.map((q) => x.search({ text: q, limit: 1000 }).map((h) => [order.indexOf(h.event), h.snippet, h.marks]));
          const held = answers(store, ids);
          const other = openStore(path, { readonly: true }) as SqliteStore;
          expect(answers(other, ids), "unswept, from the payloads").toEqual(held);
          store.flushSearch();
          expect(answers(store, ids), "indexed").toEqual(held);
          expect(answers(other, ids)).toEqual(held);
          // The same texts, every one given (the pending rows of SE-4): the same hits.
          const ref = openStore(":memory:") as SqliteStore;
          const r = session(ref);
          const refIds = texts.map(([t]) => r.add(given(t)));
          expect(answers(ref, refIds), "as given texts").toEqual(held);
          other.close();
          store.close();
          ref.close();
        },
      ),
      { numRuns: 40 },
    );
  });

  it("the connection flushes every 256 held texts, and a transaction of more than 4,096 spills the rest to pending rows with no kept copy", () => {
    const store = openStore(join(tempDir(), "batch.db")) as SqliteStore;
    const s = session(store);
    for (let i = 0; i < 300; i++) s.add(derived(`row ${i} common`));
    expect(count(store, "search")).toBe(256);
    const t = session(store);
    store.transaction(() => {
      for (let i = 0; i < 5000; i++) t.add(derived(`big ${i} bulk`));
    });
    // 44 texts of the first 300 were still held: 4,096 held in all, the rest spilled.
    expect(count(store, "search_pending")).toBe(5000 - (4096 - 44));
    store.flushSearch();
    expect(count(store, "search_pending")).toBe(0);
    expect(count(store, "search_text")).toBe(0);
    expect(store.search({ text: "bulk", limit: 1000, session: t.id }).length).toBe(1000);
    expect(store.search({ text: '"big 4999"' }).length).toBe(1);
    expect(store.search({ text: '"big 17"' }).length).toBe(1);
    store.close();
  });

  it("spilled rows moved by a process that does not sweep the kind are found once, above the watermark and after the sweep", () => {
    const path = join(tempDir(), "spill-moved.db");
    const store = openStore(path) as SqliteStore;
    const t = session(store);
    store.transaction(() => {
      for (let i = 0; i < 4200; i++) t.add(derived(`spill${i} bulk`));
    });
    expect(count(store, "search_pending")).toBe(4200 - 4096);
    // Another writer without the kind's function opens the file: its flush moves the pending rows
    // and leaves the watermark where it is.
    const mark = watermark(store);
    const r = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "search-writer.ts"), path, "open"], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(count(store, "search_pending")).toBe(0);
    expect(watermark(store)).toBe(mark);
    for (const i of [4199, 4100, 17]) expect(store.search({ text: `spill${i}` }).length, `spill${i} before the sweep`).toBe(1);
    store.flushSearch();
    expect(Number(watermark(store))).toBe(maxId(store));
    for (const i of [4199, 4100, 17]) expect(store.search({ text: `spill${i}` }).length, `spill${i} after the sweep`).toBe(1);
    expect(store.search({ text: "bulk", limit: 1000 }).length).toBe(1000);
    store.close();
  });

  it("a rolled-back transaction leaves no held text: its ids, handed out again, are indexed with the events that got them; an event of a derived kind appended without a text is indexed from its payload", () => {
    const store = openStore(join(tempDir(), "rollback.db")) as SqliteStore;
    const s = session(store);
    s.add(derived("kept first"));
    const { session: b, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
    expect(() =>
      store.transaction(() => {
        store.append(b.id, "main", genesis.id, [derived("rolled back words")]);
        throw new Error("no");
      }),
    ).toThrow("no");
    // The id goes to an event of the kind appended without a text: indexed from its payload.
    const again = store.append(b.id, "main", genesis.id, [{ kind: KIND, data: JSON.stringify({ text: "after the rollback" }) }])[0] as {
      id: EventId;
    };
    expect(store.search({ text: "rolled" }), "unswept").toEqual([]);
    store.flushSearch();
    expect(store.search({ text: "rolled" })).toEqual([]);
    expect(store.search({ text: "rollback" }).map((h) => h.event)).toEqual([again.id]);
    store.close();
  });

  it("removing the newest session lowers the watermark: ids SQLite hands out again are indexed, a held text of a removed event is not used", () => {
    const path = join(tempDir(), "rm.db");
    const a = openStore(path) as SqliteStore;
    const s = session(a);
    s.add(derived("older session words"));
    a.flushSearch();
    // b's events are the newest; this connection holds their texts, unflushed.
    const b = session(a);
    const bIds = Array.from({ length: 5 }, (_, i) => b.add(derived(`doomed ${i}`)));
    const other = openStore(path) as SqliteStore;
    other.removeSession(b.id);
    expect(Number(watermark(other))).toBeLessThanOrEqual(maxId(other));
    const c = session(other);
    const cIds = Array.from({ length: 5 }, (_, i) => c.add(derived(`reborn ${i}`)));
    expect(
      cIds.some((id) => bIds.includes(id)),
      "SQLite reused ids",
    ).toBe(true);
    // The first connection flushes: its held texts name events that are gone (the ids are c's now).
    a.flushSearch();
    for (const x of [a, other]) {
      expect(x.search({ text: "doomed" })).toEqual([]);
      expect(x.search({ text: "reborn", limit: 50 }).map((h) => h.event)).toEqual([...cIds].reverse());
    }
    other.flushSearch();
    expect(a.search({ text: "reborn", limit: 50 }).map((h) => h.snippet)).toEqual([4, 3, 2, 1, 0].map((i) => `reborn ${i}`));
    a.close();
    other.close();
  });

  it("two writers of different sessions at once: each flush sweeps the other's events too; every committed event is found once, before and after both are killed", async () => {
    const path = join(tempDir(), "two-writers.db");
    const setup = openStore(path);
    const ids = [0, 1].map(() => setup.createSession({ genesis: { kind: "genesis@1", data: "{}" } }).session.id).sort();
    setup.close();
    // Both past several flushes (every 256 held texts), killed at different moments.
    const [a, b] = await Promise.all([killWriterAfter(path, 700, "derived", 0), killWriterAfter(path, 900, "derived", 1)]);
    const check = (s: SqliteStore, what: string) => {
      for (const [k, printed] of [a, b].entries())
        for (const i of [0, 255, 256, 511, 699, printed.size - 1]) {
          if (!printed.has(i)) continue;
          expect(
            s.search({ text: `token${i}`, session: ids[k] }).map((h) => h.event),
            `${what}: token${i} of writer ${k}`,
          ).toEqual([printed.get(i)]);
        }
      const events = s.database.prepare("SELECT count(*) FROM events WHERE kind = ?").pluck().get(KIND) as number;
      expect(s.search({ text: "shared words", limit: 1000 }).length, `${what}: the newest 1,000 of all`).toBe(Math.min(1000, events));
    };
    const ro = openStore(path, { readonly: true }) as SqliteStore;
    check(ro, "before any sweep of the killed writers' tails");
    ro.close();
    const rw = openStore(path) as SqliteStore;
    const events = rw.database.prepare("SELECT count(*) FROM events WHERE kind = ?").pluck().get(KIND) as number;
    expect(count(rw, "search"), "every event indexed once, none twice").toBe(events);
    expect(watermark(rw)).toBe(String(maxId(rw)));
    check(rw, "after the next writer's sweep");
    expect(rw.verify().findings).toEqual([]);
    rw.close();
  }, 120_000);

  it("a writer killed with SIGKILL: every committed event is found before any flush, nothing else; the next writer indexes the rest", async () => {
    for (let trial = 0; trial < 4; trial++) {
      const path = join(tempDir(), `killed-${trial}.db`);
      const setup = openStore(path);
      setup.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      setup.close();
      const printed = await killWriterAfter(path, 50 + trial * 170 + Math.floor(Math.random() * 60), "derived");
      const ro = openStore(path, { readonly: true }) as SqliteStore;
      const events = ro.database.prepare("SELECT id FROM events WHERE kind = ? ORDER BY id DESC").pluck().all(KIND) as number[];
      const indexed = ro.database.prepare("SELECT rowid FROM search").pluck().all() as number[];
      expect(
        indexed.every((id) => events.includes(id)),
        "no index row of an event that is not in the log",
      ).toBe(true);
      expect(Number(watermark(ro))).toBeLessThanOrEqual(events[0] as number);
      for (const [i, id] of printed)
        expect(
          ro.search({ text: `token${i}` }).map((h) => h.event),
          `token${i}`,
        ).toEqual([id]);
      expect(ro.search({ text: "shared words", limit: 1000 }).map((h) => h.event)).toEqual(events.slice(0, 1000));
      ro.close();
      const rw = openStore(path) as SqliteStore;
      expect(count(rw, "search"), "the next writer indexed what the killed one held").toBe(events.length);
      expect(watermark(rw)).toBe(String(maxId(rw)));
      expect(rw.search({ text: "shared words", limit: 1000 }).map((h) => h.event)).toEqual(events.slice(0, 1000));
      expect(rw.verify().findings).toEqual([]);
      rw.close();
    }
  }, 120_000);
});
