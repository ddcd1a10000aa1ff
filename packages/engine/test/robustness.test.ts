/**
 * Regression tests for the second review of the engine: id ranges across lines of history (EN-17),
 * best-effort snapshots (EN-5, EN-12), streams into removed elements (EN-27), subscriptions that
 * lag across a reset or a stream (EN-24), streamed text storage (EN-10), verification that reports
 * instead of throwing (EN-16, EN-31), SSE keep-alives and line breaks (EN-25), and lifecycle
 * elements sharing a durable key (EN-21, EN-22).
 */
import { type NodeId, type NodeSpec, nodeId, type Op, select, toSnapshot } from "@strata/dom";
import { type EventId, openStore, type SqliteStore, type Store, StoreError } from "@strata/store";
import { describe, expect, it } from "vitest";
import {
  decodeSse,
  EngineError,
  encodeSse,
  type Frame,
  ID_BLOCK,
  Journal,
  materialize,
  Replica,
  replayVerify,
  Session,
  Subscription,
  scanLifecycle,
  verifyStore,
} from "../src/index.ts";

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

/** A store whose writes fail while `broken.on` (a full disk). */
function flakyStore(real: Store, methods: readonly string[]): { store: Store; broken: { on: boolean } } {
  const broken = { on: false };
  const store = new Proxy(
    {},
    {
      get(_, k) {
        if (broken.on && methods.includes(String(k)))
          return () => {
            throw new StoreError("disk-full", "simulated: the disk is full");
          };
        const v = (real as unknown as Record<string | symbol, unknown>)[k];
        return typeof v === "function" ? v.bind(real) : v;
      },
    },
  ) as Store;
  return { store, broken };
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

  it("group commits longer than K snapshot inside, so any state needs at most K folds (EN-5)", () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { snapshotEvery: 4 });
    const metas = s.commitMany(
      Array.from({ length: 13 }, (_, i) => ({ change: [["ins", BODY, null, { tag: "m", text: `${i}` }]] as Op[] })),
    );
    for (const m of metas) {
      const snap = store.nearestSnapshot(m.id);
      expect(m.depth - (snap?.depth ?? 0)).toBeLessThanOrEqual(4);
    }
    expect(toSnapshot(materialize(store, s.head.id))).toBe(toSnapshot(s.durableTree));
  });
});

describe("EN-12 a durable commit succeeds even if its snapshot cannot be written", () => {
  it("reports the failure, keeps committing, and writes the snapshot once the store recovers", () => {
    const real = openStore(":memory:");
    const { store, broken } = flakyStore(real, ["putBlob", "putSnapshot"]);
    const errors: unknown[] = [];
    const s = Session.create(store, { snapshotEvery: 3, onSnapshotError: (e) => errors.push(e) });
    s.commit([["ins", BODY, null, { tag: "a" }]]);
    broken.on = true;
    const before = real.snapshots(s.id).length;
    for (let i = 0; i < 6; i++) s.commit([["ins", BODY, null, { tag: "c" }]], { label: `important${i}` });
    expect(real.log(s.id).at(-1)?.label).toBe("important5");
    expect(s.head.id).toBe(real.log(s.id).at(-1)?.id);
    expect(errors.length).toBeGreaterThan(0);
    expect((errors[0] as StoreError).code).toBe("disk-full");
    expect(real.snapshots(s.id).length).toBe(before);
    expect(() => s.snapshot()).toThrow(/disk is full/);
    broken.on = false;
    for (let i = 0; i < 4; i++) s.commit([["ins", BODY, null, { tag: "d" }]]);
    expect(real.snapshots(s.id).length).toBeGreaterThan(before);
    expect(s.snapshotError).toBeUndefined();
    expect(toSnapshot(Session.open(real, s.id).session.durableTree)).toBe(toSnapshot(s.durableTree));
    expect(replayVerify(real, s.id).ok).toBe(true);
  });
});

describe("EN-27 streams end when their element cannot take text", () => {
  it("a commit that removes a streamed element flushes it first and ends the stream; unrelated commits never fail", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    s.commit([["ins", BODY, null, { tag: "out" }]]);
    const out = n(s.durableTree.hwm);
    const w = s.stream(out, { intervalMs: 1e9 });
    w.append("abc");
    const removal = s.commit([["rm", out]]);
    // What was streamed before the removal is durable (in the event before it).
    expect(s.at(removal.prior as EventId).get(out)?.text).toBe("abc");
    expect(w.closed).toBe(true);
    expect(() => w.append("late")).toThrow(/ended: event \d+ removed the element/);
    s.commit([["ins", BODY, null, { tag: "unrelated" }]], { label: "user.commit" });
    expect(s.select("unrelated")).toHaveLength(1);
  });

  it("a commit that gives the element children ends the stream too", () => {
    const s = Session.create(openStore(":memory:"));
    s.commit([["ins", BODY, null, { tag: "out" }]]);
    const out = n(s.durableTree.hwm);
    const w = s.stream(out, { intervalMs: 1e9 });
    w.append("x");
    s.commit([
      ["text", out, ""],
      ["ins", out, null, { tag: "child" }],
    ]);
    expect(() => w.append("y")).toThrow(/gave it child elements/);
    s.commit([["ins", BODY, null, { tag: "next" }]]);
  });

  it("a flush that fails while the element can take text keeps the text pending for the next flush", () => {
    const real = openStore(":memory:");
    const { store, broken } = flakyStore(real, ["append"]);
    const s = Session.create(store);
    s.commit([["ins", BODY, null, { tag: "out" }]]);
    const out = n(s.durableTree.hwm);
    const w = s.stream(out, { intervalMs: 1e9 });
    w.append("kept ");
    broken.on = true;
    expect(() => w.flush()).toThrow(/disk is full/);
    expect(w.pending).toBe("kept ");
    expect(() => s.commit([["ins", BODY, null, { tag: "x" }]])).toThrow(/disk is full/);
    broken.on = false;
    w.append("and more");
    w.close();
    expect(s.durableTree.get(out)?.text).toBe("kept and more");
    expect(materialize(real, s.head.id).get(out)?.text).toBe("kept and more");
  });

  it("rewinding ends the streams of the line left behind", () => {
    const s = Session.create(openStore(":memory:"));
    const start = s.head.id;
    s.commit([["ins", BODY, null, { tag: "out" }]]);
    const w = s.stream(n(s.durableTree.hwm), { intervalMs: 1e9 });
    w.append("before the rewind");
    s.rewind(start);
    expect(() => w.append("x")).toThrow(/moved to another line/);
    const kept = s.branches().find((b) => b.origin === "rewind")?.head as EventId;
    expect(select(s.at(kept), "out")[0]?.text).toBe("before the rewind");
  });
});

describe("EN-24 subscriptions never lose a reset or streamed text", () => {
  const pump = async (sub: Subscription, replica: Replica, until: () => boolean): Promise<string[]> => {
    const got: string[] = [];
    for (let i = 0; i < 50 && !until(); i++) {
      const r = await Promise.race([sub.next(), new Promise<"blocked">((res) => setTimeout(() => res("blocked"), 50))]);
      if (r === "blocked" || r.done) {
        got.push("(blocked)");
        break;
      }
      got.push(r.value.type);
      replica.apply(r.value);
    }
    return got;
  };

  it("a reset waiting in a queue that overflows is kept; the subscriber catches up from it", async () => {
    const s = Session.create(openStore(":memory:"));
    const early = s.commit([["ins", BODY, null, { tag: "a" }]]);
    for (let i = 0; i < 5; i++) s.commit([["ins", BODY, null, { tag: "b" }]]);
    const sub = s.subscribe({ buffer: 3 });
    const replica = new Replica();
    replica.apply((await sub.next()).value as Frame);
    s.rewind(early.id);
    for (let i = 0; i < 4; i++) s.commit([["ins", BODY, null, { tag: "c" }]]);
    const got = await pump(sub, replica, () => replica.event === s.head.id);
    expect(got.slice(0, 2)).toEqual(["reset", "lagged"]);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.durableTree));
  });

  it("the first snapshot frame survives an overflow before it is read", async () => {
    const s = Session.create(openStore(":memory:"));
    const sub = s.subscribe({ buffer: 2 });
    for (let i = 0; i < 5; i++) s.commit([["ins", BODY, null, { tag: "b" }]]);
    const replica = new Replica();
    const got = await pump(sub, replica, () => replica.event === s.head.id);
    expect(got.slice(0, 2)).toEqual(["snapshot", "lagged"]);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.durableTree));
  });

  it("a subscriber whose cursor is no longer on the line gets a fresh reset instead of a wrong catch-up", async () => {
    const tree = "{}";
    const source = {
      eventsAfter: () => undefined,
      headId: () => 9 as EventId,
      resetFrame: (): Frame => ({ type: "reset", event: 9 as EventId, branch: "main", tree }),
      pendingText: () => [],
      detach: () => undefined,
    };
    const sub = new Subscription(source, { type: "snapshot", event: 5 as EventId, branch: "main", tree }, 5 as EventId, 10);
    expect((await sub.next()).value).toMatchObject({ type: "snapshot" });
    expect((await sub.next()).value).toMatchObject({ type: "reset", event: 9 });
    expect(sub.cursor).toBe(9);
  });

  it("after a lag, the text streams hold is sent again: the replica's view has no hole", async () => {
    const s = Session.create(openStore(":memory:"));
    s.commit([
      ["ins", BODY, null, { tag: "out" }],
      ["ins", BODY, null, { tag: "other" }],
    ]);
    const out = s.select("out")[0]?.id as NodeId;
    const sub = s.subscribe({ buffer: 2 });
    const replica = new Replica();
    replica.apply((await sub.next()).value as Frame);
    const w = s.stream(out, { intervalMs: 1e9 });
    for (const c of ["A", "B", "C"]) w.append(c); // the third chunk overflows the queue
    await pump(sub, replica, () => replica.view.get(out)?.text === "ABC");
    w.append("D");
    replica.apply((await sub.next()).value as Frame);
    expect(replica.view.get(out)?.text).toBe(s.tree.get(out)?.text);
    expect(s.tree.get(out)?.text).toBe("ABCD");
    // A subscriber that starts while text is pending sees it too.
    const late = s.subscribe();
    const r2 = new Replica();
    r2.apply((await late.next()).value as Frame);
    r2.apply((await late.next()).value as Frame);
    expect(r2.view.get(out)?.text).toBe("ABCD");
  });
});

describe("EN-26 a replica folds what it received when it is read", () => {
  it("folds many events as one patch, and names an event that does not apply, staying before it", () => {
    const s = Session.create(openStore(":memory:"));
    const r = new Replica();
    r.apply({ type: "snapshot", event: s.head.id, branch: "main", tree: toSnapshot(s.durableTree) });
    const frames: Frame[] = [];
    for (let i = 0; i < 50; i++) {
      const m = s.commit([["ins", BODY, null, { tag: "m", text: `${i}` }]]);
      frames.push({ type: "event", id: m.id, label: null, by: null, ops: [["ins", BODY, null, { tag: "m", text: `${i}` }]] });
    }
    for (const f of frames) r.apply(f);
    expect(r.event).toBe(s.head.id);
    expect(toSnapshot(r.tree)).toBe(toSnapshot(s.durableTree));
    const good = s.commit([["ins", BODY, null, { tag: "ok" }]]);
    r.apply({ type: "event", id: good.id, label: null, by: null, ops: [["ins", BODY, null, { tag: "ok" }]] });
    r.apply({ type: "event", id: (good.id + 1) as EventId, label: null, by: null, ops: [["rm", n(99_999)]] });
    r.apply({ type: "event", id: (good.id + 2) as EventId, label: null, by: null, ops: [["ins", BODY, null, { tag: "after" }]] });
    expect(() => r.tree).toThrow(new RegExp(`event ${good.id + 1} does not apply`));
    expect(r.event).toBe(good.id);
    expect(toSnapshot(r.tree)).toBe(toSnapshot(s.durableTree));
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

describe("EN-16 / EN-31 verification reports, never throws", () => {
  it("a deleted payload blob is a finding, not an exception", () => {
    const store = openStore(":memory:", { inlineLimit: 100 }) as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 3 });
    for (let i = 0; i < 8; i++) s.commit([["ins", BODY, null, { tag: "m", text: `${"t".repeat(200)}${i}` }]]);
    const db = store.database;
    const ev = db.prepare("SELECT id, blob FROM events WHERE blob IS NOT NULL LIMIT 1").get() as { id: number; blob: Buffer };
    db.prepare("DELETE FROM blobs WHERE hash = ?").run(ev.blob);
    const r = verifyStore(store);
    expect(r.ok).toBe(false);
    expect(r.findings.map((f) => f.code)).toContain("missing-blob");
    const replay = replayVerify(store, s.id);
    expect(replay.ok).toBe(false);
    expect(replay.mismatch?.event).toBe(ev.id);
  });

  it("replayVerify reports an event that does not apply as the first mismatch", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 4 });
    for (let i = 0; i < 10; i++) s.commit([["ins", BODY, null, { tag: "m", text: `t${i}` }]]);
    const target = s.log()[6]?.id as EventId;
    store.database.prepare(`UPDATE events SET data = '{"ops":[["rm",99999]]}' WHERE id = ?`).run(target);
    const r = replayVerify(store, s.id);
    expect(r.ok).toBe(false);
    expect(r.mismatch?.event).toBe(target);
    expect(r.mismatch?.reason).toMatch(/does not apply/);
  });

  it("a snapshot header whose lifecycle set disagrees with its tree is reported", () => {
    const store = openStore(":memory:") as SqliteStore;
    const s = Session.create(store, { snapshotEvery: 2 });
    s.commit([["ins", BODY, null, { tag: "call", attrs: { status: "running" } }]]);
    s.commit([["ins", BODY, null, { tag: "m" }]]);
    const db = store.database;
    const row = db.prepare("SELECT event, header FROM snapshots ORDER BY event DESC LIMIT 1").get() as { event: number; header: string };
    const header = JSON.parse(row.header) as { live: number[] };
    expect(header.live).toHaveLength(1);
    header.live = [];
    db.prepare("UPDATE snapshots SET header = ? WHERE event = ?").run(JSON.stringify(header), row.event);
    const v = verifyStore(store);
    expect(v.ok).toBe(false);
    expect(v.findings.map((f) => f.message).join()).toMatch(/lifecycle set/);
    const r = replayVerify(store, s.id);
    expect(r.ok).toBe(false);
    expect(r.mismatch?.reason).toMatch(/lifecycle set/);
    expect(scanLifecycle(Session.open(store, s.id).session.durableTree).size).toBe(1);
  });
});

describe("EN-25 SSE keep-alives and line breaks", () => {
  const frame: Frame = { type: "event", id: 9 as EventId, label: "x", by: null, ops: [] };

  it("skips blocks without data and ignores comment lines that are not directly above event:", () => {
    const wire = encodeSse(frame);
    expect(decodeSse(`: keep-alive\n\n${wire}:\n\n`)).toEqual([frame]);
    expect(decodeSse(`: ping\n${wire}`)).toEqual([frame]);
    const unlabeled: Frame = { type: "event", id: 8 as EventId, label: null, by: null, ops: [] };
    expect(decodeSse(encodeSse(unlabeled).replace("id:", ": ping\nid:"))).toEqual([unlabeled]);
    const leading: Frame = { type: "event", id: 7 as EventId, label: " leading", by: "", ops: [] };
    expect(decodeSse(encodeSse(leading))).toEqual([leading]);
  });

  it("a label or by with a line break is rejected at commit, and cannot be framed", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    expect(() => s.commit([["ins", BODY, null, { tag: "a" }]], { label: "tool.call\nsecond" })).toThrow(/one line of text/);
    expect(() => s.commit([["ins", BODY, null, { tag: "a" }]], { by: "e41\r" })).toThrow(/one line of text/);
    expect(() => Journal.open(store, s.id).commit({ ops: [], label: "a\nb" })).toThrow(/one line of text/);
    expect(s.log()).toHaveLength(1);
    expect(() => encodeSse({ ...frame, label: "a\nb" })).toThrow(/line break/);
  });
});

describe("EN-21 / EN-22 lifecycle elements sharing a durable key", () => {
  it("two running jobs with one id are two entries: both terminated, both spawned", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const g = s.head.id;
    const job = { tag: "job", attrs: { id: "build", status: "running" } };
    s.commit([["ins", n(2), null, { tag: "jobs", children: [job, job] }]]);
    expect(Session.open(store, s.id).work.spawn).toHaveLength(2);
    const both = s.head.id;
    const [first] = s.select("job");
    s.commit([["set", first?.id as NodeId, "status", "done"]]);
    const one = s.rewind(both);
    expect(one.spawn).toHaveLength(1);
    expect(one.retained).toHaveLength(1);
    expect(one.retained[0]?.before.id).toBe(one.retained[0]?.after.id);
    const work = s.rewind(g);
    expect(work.terminate.map((t) => t.element.id).sort()).toEqual(s.at(both).childIds(s.at(both).childIds(2)[0] as number));
    expect(work.terminate.every((t) => t.key === "job:id=build")).toBe(true);
  });

  it("session.live is a read-only view of one version", () => {
    const s = Session.create(openStore(":memory:"));
    s.commit([["ins", BODY, null, { tag: "call", attrs: { status: "running" } }]]);
    const live = s.live;
    s.commit([["ins", BODY, null, { tag: "call", attrs: { status: "running" } }]]);
    expect(live.size).toBe(1);
    expect(s.live.size).toBe(2);
    expect(() => (live as Set<number>).add(5)).toThrow(/read-only/);
  });
});
