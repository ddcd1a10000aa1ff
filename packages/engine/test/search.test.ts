/**
 * SE-2 and SE-6 through the public API: what a commit makes searchable (the texts its ops write, a
 * call's tool, a file's path — never other attributes), and the backlog of a file older than the
 * index, indexed by `indexSearchBacklog` in batches that a crash cannot leave half-done. On every
 * storage port.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeId, OP_KINDS, type Op } from "@strata/dom";
import { openStore, type SqliteStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { encodePatch, MAX_SEARCH_CHARS, PATCH_KIND, searchTextOf, searchTextOfPayload } from "../src/events.ts";
import { indexSearchBacklog, Session } from "../src/index.ts";
import { PORTS } from "./ports.ts";

const n = nodeId;

describe.each(PORTS)("SE-2 what a commit makes searchable, on $name", (port) => {
  it("texts written by ins, text and append; a call's tool and a file's path; not other attributes; nothing for a patch without text", async () => {
    const place = port.place();
    try {
      const store = await place.open();
      const s = await Session.create(store);
      let first = n(1);
      await s.commit((d) => {
        const t = d.appendChild(n(3), { tag: "turn", attrs: { role: "user" } });
        first = t;
        d.appendChild(t, { tag: "text", text: "Please summarise the quarterly figures" });
      });
      const call = await s.commit((d) => {
        const t = d.appendChild(n(3), { tag: "turn", attrs: { role: "assistant" } });
        const c = d.appendChild(t, { tag: "call", attrs: { tool: "read_file", status: "running" } });
        d.appendChild(c, { tag: "args", text: '{"path":"reports/q3.csv"}' });
      });
      await s.commit((d) => void d.appendChild(n(2), { tag: "file", attrs: { path: "notes/zebra-plan.md", mode: "644" } }));
      await s.commit([["set", first, "status", "unusual-status-word"]]);
      expect((await store.search({ text: "quarterly figures" })).map((h) => h.label)).toHaveLength(1);
      const byTool = await store.search({ text: "read_file" });
      expect(byTool.map((h) => h.event)).toEqual([call.id]);
      expect(byTool[0]?.snippet).toBe('read_file {"path":"reports/q3.csv"}');
      expect(await store.search({ text: "q3 csv" })).toHaveLength(1);
      expect(await store.search({ text: "zebra plan" })).toHaveLength(1);
      expect(await store.search({ text: "unusual status word" }), "other attributes are not indexed").toEqual([]);
      expect(await store.search({ text: "running" })).toEqual([]);
      expect(await store.search({ text: "assistant" })).toEqual([]);
    } finally {
      await place.dispose();
    }
  });
});

describe("SE-2 searchTextOf", () => {
  it("cuts at MAX_SEARCH_CHARS, never inside a surrogate pair; whitespace only is no text", () => {
    const long = `${"a".repeat(MAX_SEARCH_CHARS - 1)}😀tail`;
    const cut = searchTextOf([["ins", n(3), null, { tag: "t", text: long }]]) as string;
    expect(cut.length).toBe(MAX_SEARCH_CHARS - 1);
    expect(searchTextOf([["ins", n(3), null, { tag: "t", text: "  \n " }]])).toBeUndefined();
    expect(searchTextOf([["set", n(4), "status", "x"]])).toBeUndefined();
    expect(
      searchTextOf([
        ["append", n(4), "more"],
        ["text", n(5), "words"],
      ]),
    ).toBe("more\nwords");
    expect(searchTextOfPayload("genesis@1", "{}")).toBeUndefined();
    expect(searchTextOfPayload("patch@1", "not json")).toBeUndefined();
    expect(searchTextOfPayload("patch@1", JSON.stringify({ ops: [["append", 4, "hi"]] }))).toBe("hi");
  });
});

describe("SE-8 the store keeps no copy of a commit's searchable text", () => {
  it("for every op kind, the text a commit gives the store is what the function registered for patch@1 derives from the payload", () => {
    const every: Op[] = [
      ["ins", n(3), null, { tag: "call", attrs: { tool: "grep", path: "src/a.ts" }, children: [{ tag: "args", text: "needle" }] }],
      ["set", n(5), "path", "docs/b.md"],
      ["set", n(5), "k", null],
      ["text", n(9), "replaced words"],
      ["append", n(9), " and more"],
      ["mv", n(6), n(7), null],
      ["rm", n(4)],
      ["set", 0, "hwm", "20"],
    ];
    expect(new Set(every.map((op) => op[0]))).toEqual(new Set(OP_KINDS));
    for (let i = 0; i < every.length; i++)
      for (const ops of [[every[i] as Op], every.slice(0, i + 1), every.slice(i)])
        expect(searchTextOfPayload(PATCH_KIND, encodePatch(ops))).toBe(searchTextOf(ops));
  });

  it("a session's commits leave no text in search_text, and every hit's snippet is derived again from its payload", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-se7-"));
    const store = openStore(join(dir, "s.db")) as SqliteStore;
    const s = Session.create(store);
    for (let i = 0; i < 300; i++)
      s.commit((d) => {
        const t = d.appendChild(n(3), { tag: "turn", attrs: { role: "assistant" } });
        d.appendChild(t, { tag: "text", text: `answer number a${i} about the quarterly figures` });
      });
    store.flushSearch();
    expect(store.database.prepare("SELECT count(*) FROM search_text").pluck().get()).toBe(0);
    expect(store.search({ text: "a7 quarterly" }).map((h) => h.snippet)).toEqual(["answer number a7 about the quarterly figures"]);
    expect(store.search({ text: "a299" }).map((h) => h.snippet)).toEqual(["answer number a299 about the quarterly figures"]);
    s.close();
    store.close();
  });
});

describe("SE-6 the backlog of a file older than the index", () => {
  /** A store with sessions whose events are all in the backlog, as a file migrated from schema 3 is. */
  function olderFile(): { path: string; texts: Map<number, string> } {
    const path = join(mkdtempSync(join(tmpdir(), "strata-se6-")), "s.db");
    const store = openStore(path);
    const texts = new Map<number, string>();
    for (let k = 0; k < 3; k++) {
      const s = Session.create(store);
      for (let i = 0; i < 40; i++) {
        const text = `session ${k} step ${i} ${i % 7 === 0 ? "milestone" : "routine"} work`;
        const e = s.commit((d) => void d.appendChild(n(3), { tag: "turn", text }));
        texts.set(e.id, text);
      }
    }
    const db = (store as SqliteStore).database;
    (store as SqliteStore).flushSearch();
    db.exec("DELETE FROM search");
    db.prepare("INSERT INTO meta (key, value) VALUES ('search_backlog', ?)").run(String(Math.max(...texts.keys())));
    store.close();
    return { path, texts };
  }

  it("indexSearchBacklog indexes every older event, newest first, in batches with progress; then the backlog is 0", async () => {
    const { path, texts } = olderFile();
    const store = openStore(path);
    expect(store.searchBacklog()).toBe(Math.max(...texts.keys()));
    expect(store.search({ text: "milestone" })).toEqual([]);
    const seen: number[] = [];
    const indexed = indexSearchBacklog(store, { batch: 25, progress: (left) => seen.push(left) });
    expect(indexed).toBe(texts.size);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    expect(seen.at(-1)).toBe(0);
    expect(seen.length).toBeGreaterThan(4);
    expect(store.searchBacklog()).toBe(0);
    const hits = store.search({ text: "milestone work", limit: 1000 });
    expect(hits.map((h) => h.event)).toEqual(
      [...texts]
        .filter(([, t]) => t.includes("milestone"))
        .map(([id]) => id)
        .reverse(),
    );
    expect(hits.every((h) => h.snippet === texts.get(h.event))).toBe(true);
    expect(store.verify().findings).toEqual([]);
    // Nothing left: a second run indexes nothing.
    expect(indexSearchBacklog(store)).toBe(0);
    store.close();
  });

  it("a run cut off between batches leaves what it indexed indexed; the next run finishes and finds the same", () => {
    const { path, texts } = olderFile();
    const store = openStore(path);
    let batches = 0;
    expect(() =>
      indexSearchBacklog(store, {
        batch: 10,
        progress: () => {
          if (++batches === 3) throw new Error("cut off");
        },
      }),
    ).toThrow("cut off");
    const left = store.searchBacklog();
    expect(left).toBe(Math.max(...texts.keys()) - 30);
    // The events above the backlog are found already; the rest are not yet.
    const partial = store.search({ text: "routine", limit: 1000 });
    expect(partial.every((h) => h.event > left)).toBe(true);
    expect(partial.length).toBeGreaterThan(0);
    store.close();
    const again = openStore(path);
    indexSearchBacklog(again);
    expect(again.searchBacklog()).toBe(0);
    expect(again.search({ text: "routine", limit: 1000 })).toHaveLength([...texts.values()].filter((t) => t.includes("routine")).length);
    expect(again.verify().findings).toEqual([]);
    again.close();
  });

  it("over the asynchronous port too", async () => {
    const { path, texts } = olderFile();
    const { asyncStore } = await import("@strata/store");
    const store = asyncStore(openStore(path));
    expect(await indexSearchBacklog(store, { batch: 50 })).toBe(texts.size);
    expect(await store.searchBacklog()).toBe(0);
    expect(await store.search({ text: "session 2 step 39" })).toHaveLength(1);
    await store.close();
  });
});
