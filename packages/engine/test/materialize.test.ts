/**
 * EN-4, EN-5, EN-10, EN-12, EN-14, EN-16: materialize = nearest snapshot + tail, equal to replay from genesis and to the live
 * tree at every event, on every branch; long texts stored once; verify judges snapshots.
 */
import { nodeId, type Op, type Tree, toSnapshot } from "@strata/dom";
import { type EventId, openStore, type SqliteStore, type Store } from "@strata/store";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { materialize, verifyStore } from "../src/index.ts";
import { Journal, loadSnapshot, TEXT_REF_MIN, TextIndex } from "../src/internal.ts";

const n = nodeId;
const lastChild = (t: Tree, id: number) => {
  const last = t.rec(id)?.last ?? 0;
  return last === 0 ? null : n(last);
};

/** One agent-like step: a turn with an assistant message and a call, then its streamed output. */
function step(j: Journal, i: number, text = `answer ${i} `.repeat(20)): void {
  const t = j.tree;
  j.commit({
    label: "turn",
    ops: [
      [
        "ins",
        n(3),
        lastChild(t, 3),
        {
          tag: "turn",
          attrs: { n: String(i) },
          children: [
            { tag: "assistant", text },
            { tag: "call", attrs: { status: "running" }, children: [{ tag: "output" }] },
          ],
        },
      ],
    ],
  });
  // Read the new ids back from the tree: a commit may raise the id floor first (EN-17).
  const turn = j.tree.rec(3)?.last as number;
  const call = n(j.tree.childIds(turn)[1] as number);
  const out = n(j.tree.childIds(call)[0] as number);
  j.commitMany([
    { ops: [["append", out, `chunk ${i} `.repeat(15)]] },
    {
      label: "tool.result",
      ops: [
        ["append", out, " done"],
        ["set", call, "status", "executed"],
      ],
    },
  ]);
}

describe("EN-4 materialize", () => {
  it("equals the live tree and replay from genesis at every event, with snapshots every K events", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, { title: "m" }, { snapshotEvery: 7 });
    const seen = new Map<EventId, string>([[journal.head.id, toSnapshot(journal.tree)]]);
    for (let i = 0; i < 40; i++) {
      step(journal, i);
      seen.set(journal.head.id, toSnapshot(journal.tree));
    }
    expect(store.snapshots(journal.session).length).toBeGreaterThan(10);
    for (const [id, snap] of seen) {
      expect(toSnapshot(materialize(store, id)), `event ${id}`).toBe(snap);
      expect(toSnapshot(materialize(store, id, { fromGenesis: true }))).toBe(snap);
    }
  });

  it("EN-5 applies at most K events after the nearest snapshot", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, {}, { snapshotEvery: 10 });
    for (let i = 0; i < 30; i++) step(journal, i);
    let folded = 0;
    materialize(store, journal.head.id, { onEvent: () => folded++ });
    expect(folded).toBeLessThan(10 + 3);
    expect(folded).toBeGreaterThanOrEqual(0);
  });

  it("EN-14 reopening a branch gives the same bytes as the writer's live tree (L1), and continues from there", () => {
    const { store, path } = (() => {
      const path = `/tmp/strata-engine-${process.pid}-${Date.now()}.db`;
      return { store: openStore(path), path };
    })();
    const { journal, session } = Journal.create(store, {}, { snapshotEvery: 5 });
    for (let i = 0; i < 23; i++) step(journal, i);
    store.close();
    const again = openStore(path);
    const reopened = Journal.open(again, session.id);
    expect(toSnapshot(reopened.tree)).toBe(toSnapshot(journal.tree));
    step(reopened, 99);
    expect(toSnapshot(materialize(again, reopened.head.id, { fromGenesis: true }))).toBe(toSnapshot(reopened.tree));
    expect(verifyStore(again).ok).toBe(true);
  });

  it("EN-12: a commit that does not apply changes nothing: not the log, the head, nor the live tree", () => {
    const store = openStore(":memory:");
    const { journal, session } = Journal.create(store);
    step(journal, 0);
    const before = { tree: toSnapshot(journal.tree), head: journal.head.id, log: store.log(session.id).length };
    const turn = n(journal.tree.rec(3)?.first as number);
    const assistant = n(journal.tree.rec(turn)?.first as number);
    for (const ops of [
      [["rm", n(2)]],
      [["ins", n(9999), null, { tag: "x" }]],
      [
        ["set", turn, "ok", "1"],
        ["mv", turn, assistant, null],
      ],
      [["ins", n(3), null, { tag: "x", id: n(100) }]],
    ] as Op[][]) {
      expect(() => journal.commit({ ops })).toThrow();
      expect(() => journal.commitMany([{ ops: [["set", turn, "a", "1"]] }, { ops }])).toThrow();
    }
    expect({ tree: toSnapshot(journal.tree), head: journal.head.id, log: store.log(session.id).length }).toEqual(before);
  });
});

describe("EN-10 long texts are stored once", () => {
  it("snapshot pages refer to texts in the log instead of copying them; streamed texts are concatenations", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, {}, { snapshotEvery: 1_000_000 });
    for (let i = 0; i < 50; i++) step(journal, i, `message ${i} `.repeat(200));
    journal.snapshot();
    const db = (store as SqliteStore).database;
    const blobBytes = db.prepare("SELECT sum(length(data)) FROM blobs").pluck().get() as number;
    const logBytes = db.prepare("SELECT sum(length(data)) FROM events").pluck().get() as number;
    expect(logBytes).toBeGreaterThan(50 * 2000);
    expect(blobBytes, "pages hold references, not copies of the texts").toBeLessThan(logBytes / 8);
    const fresh = materialize(store, journal.head.id);
    expect(toSnapshot(fresh)).toBe(toSnapshot(journal.tree));
  });

  it("a text with no single source in the log is stored as a content-addressed blob and read back", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, {}, { snapshotEvery: 1_000_000 });
    const long = "L".repeat(TEXT_REF_MIN + 10);
    journal.commit({ ops: [["ins", n(3), null, { tag: "note", text: long }]] });
    const note = n(journal.tree.rec(3)?.first as number);
    // Edit the text through many appends: more parts than a reference may hold.
    for (let i = 0; i < 80; i++) journal.commit({ ops: [["append", note, `+${i}`]] });
    journal.snapshot();
    const snap = store.nearestSnapshot(journal.head.id);
    const texts = new TextIndex();
    const back = loadSnapshot(store, snap as NonNullable<typeof snap>, texts);
    expect(back.get(note)?.text).toBe(journal.tree.get(note)?.text);
    expect(texts.size).toBeGreaterThan(0);
  });
});

describe("EN-16 verify", () => {
  it("a journal's store verifies clean; a tampered snapshot page is found", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, {}, { snapshotEvery: 4 });
    for (let i = 0; i < 10; i++) step(journal, i);
    expect(verifyStore(store)).toMatchObject({ ok: true, findings: [] });
    // Point one snapshot's first page at another page: replay no longer matches.
    const snaps = store.snapshots(journal.session);
    const target = store.nearestSnapshot(snaps[1]?.id as EventId) as NonNullable<ReturnType<Store["nearestSnapshot"]>>;
    const other = store.nearestSnapshot(snaps[0]?.id as EventId) as NonNullable<ReturnType<Store["nearestSnapshot"]>>;
    const forged = [...target.pages];
    forged[0] = other.pages[0] ?? null;
    if (forged[0] === target.pages[0]) forged[0] = store.putBlob(Buffer.concat([Buffer.of(0x6a), Buffer.from("[]")]));
    store.putSnapshot(target.event, target.header, forged);
    const r = verifyStore(store);
    expect(r.ok).toBe(false);
    expect(r.findings.map((f) => f.code)).toContain("snapshot-mismatch");
  });

  it("a payload that is not a known event kind is reported", () => {
    const store = openStore(":memory:");
    const { journal, session } = Journal.create(store);
    store.append(session.id, "main", journal.head.id, [{ kind: "frobnicate@9", data: "{}" }]);
    const r = verifyStore(store);
    expect(r.findings[0]?.message).toMatch(/kind "frobnicate@9", which this strata does not know/);
  });
});

describe("EN-4 property: snapshot + tail == full replay == live, across forks and rewinds", () => {
  it("holds for random sessions", () => {
    const action = fc.oneof(
      fc.record({ k: fc.constant("step" as const), i: fc.nat(1000) }),
      fc.record({ k: fc.constant("set" as const), i: fc.nat() }),
      fc.record({ k: fc.constant("fork" as const), i: fc.nat() }),
      fc.record({ k: fc.constant("rewind" as const), i: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(action, { maxLength: 40 }), fc.integer({ min: 2, max: 9 }), (actions, every) => {
        const store = openStore(":memory:");
        const { journal: first, session } = Journal.create(store, {}, { snapshotEvery: every });
        let j = first;
        const live = new Map<EventId, string>([[j.head.id, toSnapshot(j.tree)]]);
        let forks = 0;
        for (const a of actions) {
          if (a.k === "step") step(j, a.i);
          else if (a.k === "set") {
            const turns = j.tree.childIds(3);
            if (turns.length > 0) j.commit({ ops: [["set", turns[a.i % turns.length] as never, "seen", String(a.i)]] });
          } else {
            const events = store.log(session.id, { branch: j.branch });
            const target = events[a.i % events.length]?.id as EventId;
            if (a.k === "fork") {
              const name = `f${forks++}`;
              store.fork(session.id, target, name);
              j = Journal.open(store, session.id, name, { snapshotEvery: every });
            } else {
              store.moveHead(session.id, j.branch, target);
              j = Journal.open(store, session.id, j.branch, { snapshotEvery: every });
            }
          }
          live.set(j.head.id, toSnapshot(j.tree));
        }
        for (const [id, snap] of live) {
          expect(toSnapshot(materialize(store, id))).toBe(snap);
          expect(toSnapshot(materialize(store, id, { fromGenesis: true }))).toBe(snap);
        }
        expect(verifyStore(store).ok).toBe(true);
      }),
      { numRuns: Number(process.env.STRATA_FC_RUNS ?? 150) },
    );
  });
});
