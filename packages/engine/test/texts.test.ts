/**
 * EN-10: long texts are stored once, as references to the ops that introduced them, recorded from
 * what each patch did (the dom's effect, DOM-39) — also when materialize folds many events as one
 * patch, where each reference must still name its own event's op; a streamed text costs its new
 * text per snapshot, whatever its length or number of parts.
 */
import { nodeId, type Op, type Tree } from "@strata/dom";
import { openStore, type SqliteStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { materialize, replayVerify, Session, verifyStore } from "../src/index.ts";
import { Journal, loadSnapshot, TEXT_REF_MIN, TextIndex, TextResolver } from "../src/internal.ts";

const n = nodeId;
const BODY = n(3);
const long = (s: string) => s.repeat(Math.ceil((TEXT_REF_MIN + 20) / s.length));

/** Events of several ops each, the long texts never in op 0: inserts, replaced and streamed texts. */
function write(journal: Journal): void {
  for (let i = 0; i < 6; i++) {
    const t = journal.tree;
    const last = t.rec(3)?.last ?? 0;
    journal.commit({
      ops: [
        ["set", n(3), "turns", String(i)],
        ["ins", n(3), last === 0 ? null : n(last), { tag: "turn", children: [{ tag: "a", text: long(`insert ${i} `) }, { tag: "b" }] }],
      ],
    });
    const turn = journal.tree.rec(3)?.last as number;
    const a = journal.tree.rec(turn)?.first as number;
    const b = journal.tree.rec(a)?.next as number;
    journal.commit({
      ops: [
        ["set", n(turn), "k", "v"],
        ["text", n(b), long(`replaced ${i} `)],
        ["append", n(a), long(`chunk ${i} `)],
        ["append", n(b), "!"],
      ] as Op[],
    });
  }
}

function texts(t: Tree): string[] {
  const out: string[] = [];
  for (let id = 1; id <= t.hwm; id++) if (t.has(id)) out.push(t.get(id)?.text ?? "");
  return out;
}

describe("EN-10 text references from patch effects", () => {
  it("a journal reopened by folding its events in one batch writes a snapshot whose references name each event's own op", () => {
    const store = openStore(":memory:");
    const { journal, session } = Journal.create(store, {}, { snapshotEvery: 1_000_000 });
    // A snapshot first, so reopening folds the events after it as one batch.
    journal.snapshot();
    write(journal);
    const live = journal.tree;
    const reopened = Journal.open(store, session.id, "main", { snapshotEvery: 1_000_000 });
    expect(texts(reopened.tree)).toEqual(texts(live));
    reopened.snapshot();
    const record = store.nearestSnapshot(reopened.head.id);
    expect(record?.event).toBe(reopened.head.id);
    const back = loadSnapshot(store, record as NonNullable<typeof record>, new TextIndex());
    expect(texts(back)).toEqual(texts(live));
  });

  it("materialize folding a batch records, for every long text, references into the log that read back to it", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, {}, { snapshotEvery: 1_000_000 });
    journal.snapshot();
    write(journal);
    const index = new TextIndex();
    const t = materialize(store, journal.head.id, { texts: index });
    const resolver = new TextResolver(store);
    let checked = 0;
    for (let id = 1; id <= t.hwm; id++) {
      const text = t.get(id)?.text ?? "";
      if (text.length < TEXT_REF_MIN) continue;
      const ref = index.encode(text, id, store);
      // A reference to ops ("e"), or a concatenation of them ("c"): never a copy stored as a blob.
      expect(Array.isArray(ref) && (ref[0] === "e" || ref[0] === "c"), JSON.stringify(ref)).toBe(true);
      expect(resolver.text(JSON.parse(JSON.stringify(ref)))).toBe(text);
      checked++;
    }
    expect(checked).toBe(12);
  });
});

describe("EN-10 streamed texts cost their new text per snapshot", () => {
  it("a long streamed text is stored as references, not again per snapshot, and reads back", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 8 });
    s.commit([["ins", BODY, null, { tag: "output" }]]);
    const out = n(s.durableTree.hwm);
    const w = s.stream(out, { intervalMs: 1e9, maxBytes: 8 * 1024 });
    const chunk = "y".repeat(1000);
    let streamed = 0;
    for (let i = 0; i < 3000; i++) {
      w.append(`${i % 10}${chunk}`);
      streamed += 1001;
    }
    w.close();
    const db = store.database;
    const blobBytes = db.prepare("SELECT sum(size) FROM blobs").pluck().get() as number;
    expect(blobBytes).toBeLessThan(streamed * 0.3);
    expect(materialize(store, s.head.id).get(out)?.text).toBe(s.durableTree.get(out)?.text);
    expect(Session.open(store, s.id).session.durableTree.get(out)?.text.length).toBe(streamed);
    expect(replayVerify(store, s.id).ok).toBe(true);
    expect(verifyStore(store).ok).toBe(true);
  });

  it("thousands of small parts form groups of groups; a text with no source gets one blob, then references", () => {
    const store = openStore(":memory:");
    const { journal } = Journal.create(store, {}, { snapshotEvery: 50 });
    journal.commit({ ops: [["ins", BODY, null, { tag: "note", text: "start" }]] });
    const note = n(journal.tree.hwm);
    for (let i = 0; i < 4200; i++) journal.commit({ ops: [["append", note, `<${i}>`]] });
    journal.snapshot();
    const again = Journal.open(store, journal.session);
    expect(again.tree.get(note)?.text).toBe(journal.tree.get(note)?.text);
    for (let i = 0; i < 70; i++) again.commit({ ops: [["append", note, `+${i}`]] });
    again.snapshot();
    expect(materialize(store, again.head.id).get(note)?.text).toBe(again.tree.get(note)?.text);
    expect(verifyStore(store).ok).toBe(true);
  });
});
