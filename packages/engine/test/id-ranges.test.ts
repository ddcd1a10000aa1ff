/**
 * EN-17: id ranges across lines of history — a failed commit or recipe leaves no range behind, a
 * literal high-water-mark op is refused (EN-3), a new line starts with one page and grows by
 * doubling, a fork's first recipe runs once; no id ever names two elements (L5).
 */
import { type NodeId, type NodeSpec, nodeId, toSnapshot } from "@strata/dom";
import { type EventId, openStore, type Store } from "@strata/store";
import { describe, expect, it } from "vitest";
import { EngineError, materialize, replayVerify, Session, verifyStore } from "../src/index.ts";
import { ID_BLOCK, Journal } from "../src/internal.ts";

const n = nodeId;
const BODY = n(3);
const big = (count: number, tag = "big"): NodeSpec => ({ tag, children: Array.from({ length: count }, () => ({ tag: "c" })) });

/** Every id minted after genesis, with what it holds, on each branch head of the session. */
function idsByBranch(store: Store, session: Session): Map<string, Map<number, string>> {
  const out = new Map<string, Map<number, string>>();
  for (const b of store.branches(session.id)) {
    const t = materialize(store, b.head);
    const ids = new Map<number, string>();
    for (let page = 1; page < t.pageCount; page++)
      for (let id = page * 256; id < (page + 1) * 256; id++) {
        const r = t.get(id);
        if (r !== undefined) ids.set(id, `${r.tag}:${r.text}:${r.attr("line") ?? ""}`);
      }
    out.set(b.name, ids);
  }
  return out;
}

/** L5: an id two branch heads both hold names the same element (shared history), never two. */
function expectNoIdNamesTwoElements(store: Store, session: Session): void {
  const seen = new Map<number, string>();
  for (const [, ids] of idsByBranch(store, session))
    for (const [id, what] of ids) {
      const before = seen.get(id);
      if (before !== undefined) expect(`${id} ${what}`).toBe(`${id} ${before}`);
      else seen.set(id, what);
    }
}

describe("EN-17 id ranges", () => {
  it("a failed commit leaves no range behind: a later commit never mints another line's ids; errors name the caller's ids", () => {
    const store = openStore(":memory:");
    const { journal: main, session } = Journal.create(store);
    store.fork(session.id, main.head.id, "f");
    const f = Journal.open(store, session.id, "f");
    f.commit({ ops: [["ins", BODY, null, big(50, "theirs")]] });
    // Would overflow block 0 (reserving ids), but does not apply: it names the id the caller wrote.
    expect(() =>
      main.commit({
        ops: [
          ["ins", BODY, null, big(3999)],
          ["rm", n(999_999)],
        ],
      }),
    ).toThrow(/rm target 999999 does not exist/);
    main.commit({ ops: [["ins", BODY, null, { tag: "small" }]] });
    main.commit({ ops: [["ins", BODY, null, big(3899, "mine")]] });
    const fIds = new Set<number>();
    for (let id = 256; id <= f.tree.hwm; id++) if (f.tree.has(id)) fIds.add(id);
    const clash = [...fIds].filter((id) => main.tree.has(id));
    expect(clash).toEqual([]);
  });

  it("a recipe that fails while a new range is needed leaves nothing behind either (sessions)", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const f = s.fork(s.head.id, { name: "f" });
    f.commit((d) => void d.appendChild(BODY, { tag: "fx", attrs: { line: "f" } }));
    let runs = 0;
    expect(() =>
      s.commit((d) => {
        runs++;
        d.appendChild(BODY, big(3999));
        if (runs > 1) throw new Error("recipe failed on re-authoring");
      }),
    ).toThrow(/re-authoring/);
    s.commit((d) => void d.appendChild(BODY, { tag: "small", attrs: { line: "main" } }));
    let captured = 0 as NodeId;
    s.commit((d) => {
      captured = d.appendChild(BODY, big(3899, "mine"));
    });
    expect(s.durableTree.get(captured)?.tag).toBe("mine");
    expectNoIdNamesTwoElements(store, s);
  });

  it("a literal high-water-mark op is rejected: ids are minted only in reserved ranges (EN-3, EN-17)", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const before = toSnapshot(s.durableTree);
    expect(() =>
      s.commit([
        ["set", 0, "hwm", "20000"],
        ["ins", BODY, null, { tag: "mine" }],
      ]),
    ).toThrow(/sets the high-water mark/);
    expect(() => s.commit((d) => void d.apply(["set", 0, "hwm", "20000"]))).toThrow(/sets the high-water mark/);
    const { journal } = Journal.create(store);
    expect(() => journal.commit({ ops: [["set", 0, "hwm", "9000"]] })).toThrow(EngineError);
    expect(toSnapshot(s.durableTree)).toBe(before);
    expect(s.log()).toHaveLength(1);
  });

  it("a new line starts with one page of ids and grows by doubling: retries keep the tree dense, ids stay unique", () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { snapshotEvery: 8 });
    for (let i = 0; i < 10; i++) s.commit([["ins", BODY, null, { tag: "m", attrs: { line: "main" }, text: `m${i}` }]]);
    for (let i = 0; i < 300; i++) {
      s.commit([["ins", BODY, null, { tag: "turn", text: `turn ${i}` }]]);
      s.rewind(s.head.prior as EventId);
      s.commit([["ins", BODY, null, { tag: "retry", text: `retry ${i}` }]]);
    }
    // 600 lines of history, two elements each: the mark follows what was minted, not the lines.
    expect(s.durableTree.hwm).toBeLessThan(256 + 10 + 600 + 256);
    expect(s.durableTree.pageCount).toBeLessThan(6);
    // Forks (lines written at the same time) each get their own page, then larger ranges.
    const g = s.log()[0]?.id as EventId;
    const forks = Array.from({ length: 5 }, (_, k) => s.fork(g, { name: `f${k}` }));
    for (const [k, f] of forks.entries()) f.commit([["ins", BODY, null, { tag: "x", attrs: { line: `f${k}` } }]]);
    for (const [k, f] of forks.entries()) f.commit([["ins", BODY, null, big(300, `grow${k}`)]]);
    for (const [k, f] of forks.entries()) f.commit([["ins", BODY, null, { tag: "y", attrs: { line: `f${k}` } }]]);
    expectNoIdNamesTwoElements(store, s);
    // A reopened line keeps minting where it was without clashing.
    const again = Session.open(store, s.id, { branch: "f2" }).session;
    again.commit([["ins", BODY, null, { tag: "z", attrs: { line: "f2-reopened" } }]]);
    forks[3]?.commit([["ins", BODY, null, { tag: "z", attrs: { line: "f3" } }]]);
    expectNoIdNamesTwoElements(store, s);
    expect(replayVerify(store, s.id).ok).toBe(true);
    expect(verifyStore(store).ok).toBe(true);
  });

  it("the first commit of a fork runs its recipe once; commitMany([]) on a fresh fork is []", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const f = s.fork(s.head.id, { name: "f" });
    expect(f.commitMany([])).toEqual([]);
    let runs = 0;
    let id = 0 as NodeId;
    f.commit((d) => {
      runs++;
      id = d.appendChild(BODY, big(10, "first"));
    });
    expect(runs).toBe(1);
    expect(f.durableTree.get(id)?.tag).toBe("first");
    expect(id).toBeGreaterThan(ID_BLOCK);
    // A line growing past its ranges runs a recipe again only if another line took the ids right
    // after its own; the recipe then sees (and captures) the ids it really gets.
    runs = 0;
    for (let i = 0; i < 20; i++) {
      let got = 0 as NodeId;
      s.commit((d) => {
        runs++;
        got = d.appendChild(BODY, big(500, "chunk"));
      });
      expect(s.durableTree.get(got)?.tag).toBe("chunk");
    }
    expect(runs).toBe(21);
    expectNoIdNamesTwoElements(store, s);
    // A single line (nobody else reserving) never runs a recipe twice: its next range follows on.
    const alone = Session.create(store);
    runs = 0;
    for (let i = 0; i < 20; i++)
      alone.commit((d) => {
        runs++;
        d.appendChild(BODY, big(500, "chunk"));
      });
    expect(runs).toBe(20);
  });
});
