/**
 * SE-8 on SQLite (decision 0045): the search index keeps no copy of a text the store can derive
 * again from the payload. Version 5's FTS5 table is contentless; `search_text` holds only the texts
 * given without a way to derive them; a version 4 file whose index holds rows keeps its table (and
 * its copy) and searches as before; a process that cannot derive a kind still shows the words.
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EventId, type EventInput, openStore, registerSearchText, SCHEMA_VERSION, type SqliteStore } from "../src/index.ts";
import { derivedSearchText } from "../src/search.ts";
import { tempDir } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "../../..");
const KIND = "copyless-test@1";
registerSearchText(KIND, (data) => (JSON.parse(data) as { text: string }).text);

const WORDS = "the store keeps every event in order and a branch is a head pointer over the log".split(" ");
/** A text of about 2 KB, different for each `i`. */
const textOf = (i: number): string =>
  Array.from({ length: 400 }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(" ") + ` marker${i}`;
const derived = (i: number): EventInput => ({
  kind: KIND,
  data: JSON.stringify({ text: textOf(i) }),
  search: textOf(i),
  searchDerived: true,
});
const given = (i: number): EventInput => ({ kind: KIND, data: "{}", search: textOf(i) });

/** Bytes of each table (and its indexes) of the file, by name. */
function tableBytes(store: SqliteStore): Map<string, number> {
  const rows = store.database.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all() as {
    name: string;
    bytes: number;
  }[];
  return new Map(rows.map((r) => [r.name, r.bytes]));
}

function write(store: SqliteStore, inputs: (i: number) => EventInput, n: number): void {
  const { session, genesis } = store.createSession({ title: "t", genesis: { kind: "genesis@1", data: "{}" } });
  let head: EventId = genesis.id;
  for (let i = 0; i < n; i++) head = (store.append(session.id, "main", head, [inputs(i)])[0] as { id: EventId }).id;
  store.flushSearch();
}

describe("SE-8 the SQLite index keeps no copy of derived texts", () => {
  it("derived texts are indexed with no copy anywhere in the file; texts given otherwise are kept once", () => {
    const dir = tempDir();
    const a = openStore(join(dir, "derived.db")) as SqliteStore;
    write(a, derived, 600);
    const b = openStore(join(dir, "given.db")) as SqliteStore;
    write(b, given, 600);
    const textBytes = 600 * textOf(0).length;
    const ta = tableBytes(a);
    const tb = tableBytes(b);
    expect(ta.has("search_content")).toBe(false);
    expect(a.database.prepare("SELECT count(*) FROM search_text").pluck().get()).toBe(0);
    expect(b.database.prepare("SELECT count(*) FROM search_text").pluck().get()).toBe(600);
    // Derived: the index's own tables only, well under the texts' size; given: the texts once more, kept apart.
    const ftsA = [...ta].filter(([n]) => n.startsWith("search")).reduce((s, [, v]) => s + v, 0);
    expect(ftsA).toBeLessThan(textBytes * 0.6);
    expect(tb.get("search_text") as number).toBeGreaterThan(textBytes);
    // Both find the same events with the same snippets.
    for (const w of ["marker0", "marker299", "marker599", '"every order" marker17']) {
      const ha = a.search({ text: w }).map((h) => [h.event, h.snippet, h.marks]);
      expect(ha.length).toBeGreaterThan(0);
      expect(ha).toEqual(b.search({ text: w }).map((h) => [h.event, h.snippet, h.marks]));
    }
    a.close();
    b.close();
  });

  it("a version 4 file whose index holds rows keeps it (and its copy): it searches as before, and new rows are found", () => {
    const dir = tempDir();
    const path = join(dir, "v4.db");
    copyFileSync(join(ROOT, "fixtures/store/v4.db"), path);
    const store = openStore(path) as SqliteStore;
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    expect(store.database.prepare("SELECT value FROM meta WHERE key = 'search_copy'").pluck().get()).toBe("kept");
    expect(store.search({ text: "planning experiment" }).map((h) => h.snippet)).toEqual(["the experiment branch reads notes/planning.md"]);
    const [s] = store.listSessions();
    const head = store.branch(s?.id as never, "main")?.head as EventId;
    store.append(
      s?.id as never,
      "main",
      head,
      Array.from({ length: 300 }, (_, i) => derived(i)),
    );
    store.flushSearch();
    expect(store.search({ text: "marker123" }).map((h) => h.snippet.endsWith("marker123"))).toEqual([true]);
    expect(store.verify().findings).toEqual([]);
    store.close();
  });

  it("a file whose index was empty is made contentless when it migrates (an older file's events are its backlog)", () => {
    const dir = tempDir();
    const path = join(dir, "v3.db");
    copyFileSync(join(ROOT, "fixtures/store/v3.db"), path);
    const store = openStore(path) as SqliteStore;
    expect(store.database.prepare("SELECT value FROM meta WHERE key = 'search_copy'").pluck().get()).toBeUndefined();
    expect(store.database.prepare("SELECT sql FROM sqlite_schema WHERE name = 'search'").pluck().get()).toMatch(/content = ''/);
    expect(store.searchBacklog()).toBeGreaterThan(0);
    store.close();
  });

  it("a process that cannot derive a kind shows the payload's strings, so the snippet still holds the words", () => {
    expect(derivedSearchText("no-such-kind@1", '{"ops":[["ins",3,null,{"tag":"text","text":"needle in here"}]],"n":2}')).toBe(
      "ins\ntext\nneedle in here",
    );
    expect(derivedSearchText(KIND, JSON.stringify({ text: "as derived" }))).toBe("as derived");
    // A payload the function cannot read: its strings.
    expect(derivedSearchText(KIND, '{"other":"words"}')).toBe("words");
    expect(derivedSearchText("no-such-kind@1", "not json")).toBe("not json");
  });
});
