/**
 * `strata search` (CLI-38, SE-4 … SE-6) through the real binary in fresh processes: hits as
 * HANDLE@EVENT that other commands take, paging, the session filter, --json in the vocabulary,
 * usage errors before any file is opened, and a database from before the index (schema 3),
 * indexed once on the first search with nothing already stored changed.
 */
import { copyFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, demoDir, json, type Result, ROOT, strata, tempDir } from "./cli-kit.ts";
import { checkVocabulary, SCHEMAS } from "./schemas.ts";

afterAll(cleanup);
const ajv = new Ajv2020({ strict: false, allErrors: true });
const check = ajv.compile(SCHEMAS.search);

interface Doc {
  query: string;
  session: string | null;
  next: number | null;
  indexedCount: number;
  hits: {
    address: string;
    session: string;
    handle: string;
    event: number;
    label: string | null;
    snippet: string;
    marks: [number, number][];
  }[];
}
function doc(r: Result): Doc {
  const d = json<Doc>(r);
  if (!check(d)) throw new Error(`--json of search: ${ajv.errorsText(check.errors)}`);
  expect(checkVocabulary(d)).toEqual([]);
  return d;
}

describe("CLI-38 SE-7 strata search", () => {
  let dir = "";
  let db = "";
  const ids: string[] = [];
  beforeAll(() => {
    dir = tempDir();
    db = join(dir, "s.db");
    const store = openStore(db, { create: true });
    for (let k = 0; k < 3; k++) {
      const s = Session.create(store, { title: `task ${k}` });
      ids.push(s.id);
      for (let i = 0; i < 12; i++)
        s.commit(
          [
            [
              "ins",
              nodeId(3),
              null,
              { tag: "turn", text: `session ${k} step ${i}: ${i % 4 === 0 ? "deploy the zebra service" : "routine check"}` },
            ],
          ],
          {
            label: `step.${i}`,
          },
        );
    }
    store.close();
  });

  it("finds events of every session newest first, as HANDLE@EVENT with the label and a snippet; show takes the address", async () => {
    const r = await strata(dir, ["search", "zebra", "deploy", "--db", db]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(18);
    expect(lines[0]).toMatch(/^[0-9A-Z]{6}@\d+ {2}.*ago {2}step\.8$/);
    expect(lines[1]).toBe("  session 2 step 8: deploy the zebra service");
    expect(lines.at(-1)).toBe("  session 0 step 0: deploy the zebra service");
    const address = (lines[0] as string).split(" ")[0] as string;
    const shown = await strata(dir, ["show", address, "--db", db, "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(json<{ event: number }>(shown).event).toBe(Number(address.split("@")[1]));
    expect(r.stderr).toBe("");
  });

  it("--json is one document in the vocabulary; -q prints only the addresses; no hit is exit 0", async () => {
    const d = doc(await strata(dir, ["search", "ZEBRA", "--db", db, "--json"]));
    expect(d.hits).toHaveLength(9);
    expect(d.next).toBeNull();
    expect(d.indexedCount).toBe(0);
    expect(d.hits.map((h) => h.event)).toEqual([...d.hits.map((h) => h.event)].sort((a, b) => b - a));
    for (const h of d.hits) {
      expect(h.address).toBe(`${h.handle}@${h.event}`);
      expect(h.marks.map(([s, e]) => h.snippet.slice(s, e))).toEqual(["zebra"]);
    }
    const q = await strata(dir, ["search", "zebra", "--db", db, "-q"]);
    expect(q.stdout.trimEnd().split("\n")).toEqual(d.hits.map((h) => h.address));
    const none = await strata(dir, ["search", "unicorn", "--db", db]);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/no event holds "unicorn"/);
    expect(doc(await strata(dir, ["search", "unicorn", "--db", db, "--json"])).hits).toEqual([]);
  });

  it("--limit and --before page through every hit once; the page says how to get the next", async () => {
    const all = doc(await strata(dir, ["search", "routine", "--db", db, "--json", "--limit", "1000"])).hits.map((h) => h.event);
    expect(all).toHaveLength(27);
    const seen: number[] = [];
    let before: number | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const d: Doc = doc(
        await strata(dir, [
          "search",
          "routine",
          "--db",
          db,
          "--json",
          "--limit",
          "10",
          ...(before === null ? [] : ["--before", String(before)]),
        ]),
      );
      seen.push(...d.hits.map((h) => h.event));
      before = d.next;
      if (before === null) break;
    }
    expect(seen).toEqual(all);
    const text = await strata(dir, ["search", "routine", "--db", db, "--limit", "10"]);
    expect(text.stdout).toMatch(/more: strata search routine --before \d+\n$/);
  });

  it("--session narrows to one session, by handle, prefix or @last", async () => {
    const d = doc(await strata(dir, ["search", "zebra", "--db", db, "--json", "--session", (ids[1] as string).slice(-6)]));
    expect(new Set(d.hits.map((h) => h.session))).toEqual(new Set([ids[1]]));
    expect(d.session).toBe(ids[1]);
    expect(d.hits).toHaveLength(3);
    const last = doc(await strata(dir, ["search", "zebra", "--db", db, "--json", "--session", "@last"]));
    expect(last.hits).toHaveLength(3);
    const unknown = await strata(dir, ["search", "zebra", "--db", db, "--session", "ZZZZZZ"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/ZZZZZZ/);
  });

  it("bad queries and options are usage errors (exit 2) found before any file is opened or created", async () => {
    const empty = tempDir();
    for (const args of [
      ["search", "!!!"],
      ["search", '""'],
      ["search", ...Array.from({ length: 17 }, (_, i) => `w${i}`)],
      ["search", "x", "--limit", "0"],
      ["search", "x", "--limit", "5000"],
      ["search", "x", "--limit", "ten"],
      ["search", "x", "--before", "abc"],
      ["search"],
    ]) {
      const r = await strata(empty, args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(readdirSync(empty)).toEqual([]);
    const nodb = await strata(empty, ["search", "x"]);
    expect(nodb.code).toBe(1);
    expect(nodb.stderr).toMatch(/no strata database/);
    expect(existsSync(join(empty, ".strata"))).toBe(false);
  });

  it("SE-6: a database of schema 3 is migrated and indexed on the first search, with a note; what it stored reads back the same", async () => {
    const d = tempDir();
    const old = join(d, "old.db");
    copyFileSync(join(ROOT, "fixtures", "store", "v3.db"), old);
    const before = openStore(old, { readonly: true });
    const logs = before.listSessions().map((s) => before.log(s.id).map((e) => [e.id, e.digest]));
    before.close();
    const first = await strata(d, ["search", "anything", "--db", old]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/indexing \d+ older events for search/);
    const after = openStore(old, { readonly: true });
    expect(after.schemaVersion).toBeGreaterThanOrEqual(4);
    expect(after.searchBacklog()).toBe(0);
    expect(after.listSessions().map((s) => after.log(s.id).map((e) => [e.id, e.digest]))).toEqual(logs);
    expect(after.verify().findings).toEqual([]);
    after.close();
    // Once: the second search indexes nothing and says nothing of it.
    const second = await strata(d, ["search", "anything", "--db", old, "--json"]);
    expect(doc(second).indexedCount).toBe(0);
    expect(second.stderr).toBe("");
  });

  it("the demo's messages, tool calls and outputs are found: a tool by name, a file by path", async () => {
    const d = demoDir();
    const run = await strata(d, ["run", "-q"]);
    expect(run.code, run.stderr).toBe(0);
    const tool = doc(await strata(d, ["search", "read_file", "--json"]));
    expect(tool.hits.length).toBeGreaterThan(0);
    expect(tool.hits.some((h) => h.snippet.startsWith("read_file"))).toBe(true);
    const file = doc(await strata(d, ["search", "notes/2026-11-02-planning.md", "--json"]));
    expect(file.hits.length).toBeGreaterThan(0);
    const said = doc(await strata(d, ["search", '"meeting notes"', "--json"]));
    expect(said.hits.map((h) => h.label)).toContain("turn.user");
  });
});
