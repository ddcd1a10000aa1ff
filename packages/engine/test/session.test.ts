/** EN-18 … EN-31: the Session — commits, reads, fork, rewind, resume, streams, subscriptions. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LazyPage, type NodeId, nodeId, type Op, toSnapshot, toXml } from "@strata/dom";
import { type EventId, HeadConflict, openStore, type Store } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { decodeSse, encodeSse, type Frame, materialize, Replica, replayVerify, Session, verifyStore } from "../src/index.ts";
import { ID_BLOCK } from "../src/internal.ts";

const n = nodeId;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fileStore(): { store: Store; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "strata-session-"));
  dirs.push(dir);
  const path = join(dir, "s.db");
  return { store: openStore(path), path };
}

/** Appends a turn with a user message; returns the turn's id. */
function turn(s: Session, text: string): NodeId {
  let id = 0 as NodeId;
  s.commit(
    (d) => {
      id = d.appendChild(n(3), { tag: "turn" });
      d.appendChild(id, { tag: "user", text });
    },
    { label: "turn.start" },
  );
  return id;
}

describe("EN-18 create, commit, read", () => {
  it("creates the fixed skeleton on main and commits ops or drafts", () => {
    const s = Session.create(openStore(":memory:"), { title: "t" });
    expect(toXml(s.tree, { ids: false })).toBe("<session><meta/><body/></session>");
    expect(s.branch).toBe("main");
    const e1 = s.commit([["ins", n(2), null, { tag: "todo", children: [{ tag: "item", attrs: { status: "pending" }, text: "a" }] }]], {
      label: "todo.write",
      by: "user",
    });
    expect(e1).toMatchObject({ label: "todo.write", by: "user", depth: 2 });
    const item = s.selectOne("todo item") as { id: NodeId };
    s.commit((d) => d.set(item.id, "status", "completed"), { label: "todo.done" });
    expect(s.count("todo item[status!=completed]")).toBe(0);
    expect(s.log().map((e) => e.label)).toEqual(["session.start", "todo.write", "todo.done"]);
    expect(toXml(s.at(e1.id), { ids: false })).toContain('status="pending"');
    expect(() => s.at(99999 as EventId)).toThrow(/not an event of session/);
  });

  it("L2: a commit whose patch is invalid leaves the log, heads and live tree byte-identical", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const t = turn(s, "hello");
    const state = () => JSON.stringify({ tree: toSnapshot(s.tree), head: s.head, log: s.log(), branches: s.branches() });
    const before = state();
    const bad: Op[][] = [
      [["rm", n(3)]], // fixed root
      [["set", n(9999), "a", "b"]], // unknown id
      [["mv", t, t, null]], // cycle
      [["ins", n(3), null, { tag: "bad name" }]], // bad name
      [
        ["set", t, "ok", "1"],
        ["text", t, "x"],
      ], // mixed content in the second op
      [["set", 0, "hwm", "1"]], // lowering the mark
    ];
    for (const ops of bad) {
      expect(() => s.commit(ops)).toThrow();
      expect(() => s.commitMany([{ change: [["set", t, "k", "v"]] }, { change: ops }])).toThrow();
      expect(state()).toBe(before);
    }
  });

  it("single writer: two sessions on one branch — the second writer gets a clear conflict; readers never block", () => {
    const { store, path } = fileStore();
    const a = Session.create(store);
    turn(a, "first");
    const other = openStore(path);
    const { session: b } = Session.open(other, a.id);
    turn(a, "a moves on");
    expect(() => turn(b, "b is behind")).toThrow(HeadConflict);
    expect(() => turn(b, "b is behind")).toThrow(/another writer moved it/);
    const reader = openStore(path, { readonly: true });
    expect(reader.log(a.id)).toHaveLength(3);
    turn(a, "a keeps writing while a reader is open");
    expect(reader.log(a.id)).toHaveLength(4);
  });
});

describe("L5/L7 rewind, fork, resume", () => {
  it("rewind keeps the abandoned head as a listable, materializable branch; new ids never reuse the abandoned ones", () => {
    const s = Session.create(openStore(":memory:"));
    turn(s, "one");
    const mid = s.head.id;
    const abandoned = [turn(s, "two"), turn(s, "three")];
    const abandonedIds = new Set(s.select("*").map((e) => e.id as number));
    const oldHead = s.head.id;
    s.rewind(mid);
    expect(s.head.id).toBe(mid);
    const kept = s.branches().find((b) => b.origin === "rewind");
    expect(kept).toMatchObject({ name: `rewound/main/${oldHead}`, head: oldHead });
    expect(toXml(s.at(oldHead), { ids: false })).toContain("three");
    const fresh = [turn(s, "two, again"), turn(s, "three, again")];
    for (const id of [...fresh, ...s.select("user").map((e) => e.id)]) if (!s.at(mid).has(id)) expect(abandonedIds.has(id)).toBe(false);
    expect(fresh[0]).toBeGreaterThan(Math.max(...abandoned));
    expect(s.log()[2]?.prior).toBe(mid);
    expect(s.log({ branch: kept?.name }).map((e) => e.id)).toContain(oldHead);
  });

  it("L5: two branches written at the same time, by two processes' stores, never mint the same id", () => {
    const { store, path } = fileStore();
    const a = Session.create(store);
    turn(a, "base");
    const forkPoint = a.head.id;
    a.fork(forkPoint, { name: "side" });
    const b = Session.open(openStore(path), a.id, { branch: "side" }).session;
    for (let i = 0; i < 30; i++) {
      turn(a, `a ${i}`);
      turn(b, `b ${i}`);
    }
    const common = new Set(
      a
        .at(forkPoint)
        .childIds(3)
        .flatMap((t) => [t as number, ...a.at(forkPoint).childIds(t)]),
    );
    const idsOf = (s: Session) =>
      s
        .select("turn, turn *")
        .map((e) => e.id as number)
        .filter((id) => !common.has(id));
    const onA = new Set(idsOf(a));
    const onB = idsOf(b);
    expect(onB.length).toBe(60);
    expect(onB.filter((id) => onA.has(id))).toEqual([]);
    expect(Math.min(...onB)).toBeGreaterThan(ID_BLOCK);
  });

  it("L7: lifecycle work is exact across rewind, fork and reopen, keyed by durable identity (provider ids repeat)", () => {
    const { store, path } = fileStore();
    const s = Session.create(store);
    const t = turn(s, "go");
    // Two calls with the same provider id, told apart by their keys.
    s.commit((d) => {
      d.appendChild(t, { tag: "call", attrs: { id: "call_0", key: "k1", tool: "read", status: "running" } });
    });
    const afterFirst = s.head.id;
    s.commit((d) => {
      d.appendChild(t, { tag: "call", attrs: { id: "call_0", key: "k2", tool: "run", status: "running" } });
      const jobs = d.appendChild(n(2), { tag: "jobs" });
      d.appendChild(jobs, { tag: "job", attrs: { id: "dev-server", status: "running" } });
    });
    const k1 = s.selectOne("call[key=k1]") as { id: NodeId };
    s.commit([["set", k1.id, "status", "executed"]]);
    expect([...s.live].length).toBe(2);

    const reopened = Session.open(openStore(path), s.id);
    expect(reopened.work.spawn.map((e) => e.key).sort()).toEqual(["call:key=k2", "job:id=dev-server"]);
    expect(reopened.work.terminate).toEqual([]);

    const fork = s.fork(afterFirst, { name: "alt" });
    expect(fork.work.terminate.map((e) => e.key).sort()).toEqual(["call:key=k2", "job:id=dev-server"]);
    expect(fork.work.spawn.map((e) => e.key)).toEqual(["call:key=k1"]);

    const work = s.rewind(afterFirst);
    expect(work.terminate.map((e) => e.key).sort()).toEqual(["call:key=k2", "job:id=dev-server"]);
    expect(work.spawn.map((e) => e.key)).toEqual(["call:key=k1"]);
    expect(work.retained).toEqual([]);

    // A job kept across a rewrite of its element is retained, not restarted.
    s.commit((d) => {
      const jobs = d.appendChild(n(2), { tag: "jobs" });
      d.appendChild(jobs, { tag: "job", attrs: { id: "dev-server", status: "running" } });
    });
    const withJob = s.head.id;
    s.commit((d) => {
      const old = d.selectOne("job") as { id: NodeId };
      d.remove(old.id);
      const jobs = d.selectOne("jobs") as { id: NodeId };
      d.appendChild(jobs.id, { tag: "job", attrs: { id: "dev-server", status: "running", restarts: "0" } });
    });
    const w2 = s.rewind(withJob);
    expect(w2.retained.map((r) => r.key).sort()).toEqual(["call:key=k1", "job:id=dev-server"]);
    const job = w2.retained.find((r) => r.key === "job:id=dev-server");
    expect(job?.before.id).not.toBe(job?.after.id); // a different element, the same job
    expect(w2.terminate).toEqual([]);
    expect(w2.spawn).toEqual([]);
  });

  it("L7 holds with lifecycle sets restored from snapshot headers (reopened from disk past the snapshot cadence)", () => {
    const { store, path } = fileStore();
    const every = 4;
    const s = Session.create(store, { snapshotEvery: every });
    // Fillers in pages of their own, so that a scan of the tree would have to load them.
    for (let k = 0; k < 3; k++)
      s.commit((d) => {
        const f = d.appendChild(n(3), { tag: "filler" });
        for (let i = 0; i < 300; i++) d.appendChild(f, { tag: "x", text: `filler ${k}.${i}` });
      });
    const t = turn(s, "go");
    s.commit((d) => {
      d.appendChild(t, { tag: "call", attrs: { id: "call_0", key: "k1", tool: "read", status: "running" } });
      d.appendChild(t, { tag: "call", attrs: { id: "call_0", key: "k2", tool: "run", status: "running" } });
      const jobs = d.appendChild(n(2), { tag: "jobs" });
      d.appendChild(jobs, { tag: "job", attrs: { id: "dev-server", status: "running" } });
    });
    // Up to the next snapshot: the version with all three open is stored (in its header).
    while (store.nearestSnapshot(s.head.id)?.event !== s.head.id) s.commit((d) => void d.set(t, "n", String(s.head.depth)));
    const allOpen = s.head.id;
    const k1 = s.selectOne("call[key=k1]") as { id: NodeId };
    s.commit([["set", k1.id, "status", "executed"]]);
    while (store.nearestSnapshot(s.head.id)?.event !== s.head.id) s.commit((d) => void d.set(t, "n", String(s.head.depth)));
    const header = JSON.parse(store.nearestSnapshot(s.head.id)?.header ?? "{}") as { live?: number[] };
    expect(header.live?.length).toBe(2);

    // Resume: the head comes from its snapshot; its lifecycle set from the header, not a scan.
    const reopened = Session.open(openStore(path), s.id, { snapshotEvery: every });
    expect(reopened.work.spawn.map((e) => e.key).sort()).toEqual(["call:key=k2", "job:id=dev-server"]);
    expect(reopened.work.terminate).toEqual([]);
    const unloaded = [...reopened.session.durableTree.slotEntries()].filter(([, p]) => p instanceof LazyPage && !p.loaded);
    expect(unloaded.length).toBeGreaterThanOrEqual(2); // EN-6: untouched pages stay unloaded (a scan would have loaded every page)
    expect([...reopened.session.live].sort()).toEqual([...s.live].sort());

    // Rewind (on the reopened session) to the stored version where all three were open.
    expect(store.nearestSnapshot(allOpen)?.event).toBe(allOpen);
    const back = reopened.session.rewind(allOpen);
    expect(back.spawn.map((e) => e.key)).toEqual(["call:key=k1"]);
    expect(back.retained.map((r) => r.key).sort()).toEqual(["call:key=k2", "job:id=dev-server"]);
    expect(back.terminate).toEqual([]);
    // And a fork of the old head (kept by the rewind) from a third handle on the kept branch: both
    // sides' sets come from headers.
    const kept = store.branches(s.id).find((b) => b.origin === "rewind")?.name;
    const third = Session.open(openStore(path), s.id, { branch: kept, snapshotEvery: every }).session;
    const fork = third.fork(s.head.id, { name: "same" });
    expect(fork.work.retained.map((r) => r.key).sort()).toEqual(["call:key=k2", "job:id=dev-server"]);
    expect(fork.work.spawn).toEqual([]);
    expect(fork.work.terminate).toEqual([]);
  });

  it("resume is the same operation from an empty tree", () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const t = turn(s, "x");
    s.commit((d) => d.appendChild(t, { tag: "call", attrs: { key: "c", status: "pending" } }));
    const { work } = Session.open(store, s.id);
    expect(work.spawn.map((e) => e.key)).toEqual(["call:key=c"]);
    expect(work.terminate).toEqual([]);
  });
});

describe("EN-24 subscriptions and replicas", () => {
  it("a snapshot frame, every event in order, live events, a reset after rewind; a Replica stays byte-identical", async () => {
    const s = Session.create(openStore(":memory:"));
    turn(s, "before subscribing");
    const from = s.head.id;
    turn(s, "between");
    const sub = s.subscribe({ from });
    const replica = new Replica();
    const frames: Frame[] = [];
    const pump = async (k: number) => {
      for (let i = 0; i < k; i++) {
        const r = await sub.next();
        if (r.done) break;
        frames.push(r.value);
        replica.apply(r.value);
      }
    };
    await pump(2);
    expect(frames.map((f) => f.type)).toEqual(["snapshot", "event"]);
    turn(s, "live");
    await pump(1);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.tree));
    s.rewind(from);
    await pump(1);
    expect(frames.at(-1)?.type).toBe("reset");
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.tree));
    turn(s, "after rewind");
    await pump(1);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.tree));
    sub.close();
    expect((await sub.next()).done).toBe(true);
  });

  it("a slow consumer never blocks the writer: it gets a lagged frame, then catches up losslessly from its cursor", async () => {
    const s = Session.create(openStore(":memory:"));
    const sub = s.subscribe({ buffer: 5 });
    const replica = new Replica();
    replica.apply((await sub.next()).value as Frame);
    for (let i = 0; i < 40; i++) turn(s, `t${i}`);
    const types: string[] = [];
    while (replica.event !== s.head.id) {
      const f = (await sub.next()).value as Frame;
      types.push(f.type);
      replica.apply(f);
    }
    expect(types[0]).toBe("lagged");
    expect(types.filter((t) => t === "event")).toHaveLength(40);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.tree));
  });

  it("SSE framing is exactly the article's, and decodes back to the same frames", () => {
    const frame: Frame = {
      type: "event",
      id: 1042 as EventId,
      label: "todo.done",
      by: "e41",
      ops: [
        ["set", n(412), "status", "completed"],
        ["set", n(415), "status", "in_progress"],
      ],
    };
    const text = encodeSse(frame);
    expect(text).toBe(
      ': todo.done\nevent: patch@1\nid: 1042\nby: e41\ndata: {"ops":[["set",412,"status","completed"],["set",415,"status","in_progress"]]}\n\n',
    );
    expect(decodeSse(text)).toEqual([frame]);
    const unlabeled: Frame = { type: "event", id: 7 as EventId, label: null, by: null, ops: [] };
    expect(encodeSse(unlabeled)).toBe('event: patch@1\nid: 7\ndata: {"ops":[]}\n\n');
    const s = Session.create(openStore(":memory:"));
    const snap: Frame = { type: "snapshot", event: s.head.id, branch: "main", tree: toSnapshot(s.tree) };
    expect(decodeSse(encodeSse(snap) + encodeSse(frame) + encodeSse({ type: "chunk", id: n(5), text: "a\nb" }))).toEqual([
      snap,
      frame,
      { type: "chunk", id: 5, text: "a\nb" },
    ]);
    expect(() => decodeSse("event: patch@1\nid: x\ndata: {}\n\n")).toThrow();
  });
});

describe("EN-27 streams", () => {
  it("chunks show at once and reach subscribers; they become durable coalesced appends; close flushes", async () => {
    const store = openStore(":memory:");
    const s = Session.create(store);
    const t = turn(s, "q");
    let out = 0 as NodeId;
    s.commit((d) => {
      out = d.appendChild(t, { tag: "output" });
    });
    const sub = s.subscribe();
    const replica = new Replica();
    replica.apply((await sub.next()).value as Frame);
    const w = s.stream(out, { intervalMs: 10_000, maxBytes: 1_000 });
    const before = s.log().length;
    for (let i = 0; i < 10; i++) w.append(`line ${i}\n`);
    expect(s.tree.get(out)?.text).toContain("line 9");
    expect(s.durableTree.get(out)?.text).toBe("");
    expect(s.log().length).toBe(before);
    for (let i = 0; i < 10; i++) replica.apply((await sub.next()).value as Frame);
    expect(replica.view.get(out)?.text).toBe(s.tree.get(out)?.text);
    w.append("x".repeat(1_000)); // over maxBytes: flushes now, as one event
    expect(s.log().length).toBe(before + 1);
    w.append("tail 😀");
    w.close();
    expect(s.log().length).toBe(before + 2);
    expect(s.durableTree.get(out)?.text.endsWith("tail 😀")).toBe(true);
    for (let i = 0; i < 4; i++) replica.apply((await sub.next()).value as Frame);
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(s.durableTree));
    expect(toSnapshot(materialize(store, s.head.id))).toBe(toSnapshot(s.durableTree));
  });

  it("flushes on its interval, holds back half a surrogate pair, and makes control characters visible", async () => {
    const s = Session.create(openStore(":memory:"));
    const t = turn(s, "q");
    expect(t).toBeGreaterThan(0);
    const w = s.stream((s.selectOne("user") as { id: NodeId }).id, { intervalMs: 5 });
    w.append("a\u001b[31m\uD83D");
    w.append("\uDE00b");
    await new Promise((r) => setTimeout(r, 30));
    const durable = () => s.durableTree.get((s.selectOne("user") as { id: NodeId }).id)?.text;
    // SE-3: the timed flush ends at the last word boundary; the word being written waits.
    expect(durable()).toBe("qa␛[");
    w.append(" next");
    await new Promise((r) => setTimeout(r, 30));
    expect(durable()).toBe("qa␛[31m😀b ");
    w.close();
    expect(durable()).toBe("qa␛[31m😀b next");
    expect(() => w.append("more")).toThrow(/closed/);
  });

  it("SE-3: a timed flush never ends inside a word, and a word longer than it holds is flushed whole", async () => {
    const s = Session.create(openStore(":memory:"));
    turn(s, "q");
    const user = (s.selectOne("user") as { id: NodeId }).id;
    const w = s.stream(user, { intervalMs: 5 });
    const chunks = ["The meet", "ing no", "tes, ", "déci", "sions", " and ", "x".repeat(300)];
    for (const c of chunks) {
      w.append(c);
      await new Promise((r) => setTimeout(r, 15));
    }
    w.close();
    const appended = s.log().flatMap((m) => {
      const e = s.store.event(m.id);
      return e === undefined || e.kind !== "patch@1"
        ? []
        : (JSON.parse(e.data).ops as unknown[][]).filter((o) => o[0] === "append").map((o) => o[2] as string);
    });
    expect(appended.join("")).toBe(chunks.join(""));
    // Every durable chunk but the last ends at a boundary, or is the over-long word flushed whole.
    for (const c of appended.slice(0, -1)) expect(/[^\p{L}\p{N}_]$/u.test(c) || c.endsWith("x".repeat(256))).toBe(true);
    expect(appended.some((c) => c.includes("meeting"))).toBe(true);
    expect(appended.some((c) => c.includes("décisions"))).toBe(true);
  });

  it("a crash loses at most the unflushed interval", () => {
    const { store, path } = fileStore();
    const s = Session.create(store);
    const t = turn(s, "q");
    const user = (s.selectOne("user") as { id: NodeId }).id;
    const w = s.stream(user, { intervalMs: 60_000, maxBytes: 10 });
    w.append("0123456789"); // flushed (maxBytes)
    w.append("lost"); // pending when the process dies
    const reopened = Session.open(openStore(path), s.id).session;
    expect(reopened.tree.get(user)?.text).toBe("q0123456789");
    expect(t).toBeGreaterThan(0);
  });
});

describe("EN-31 replay proof and verify", () => {
  it("replayVerify proves replay from genesis equals every snapshot and the reopened head", () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { snapshotEvery: 3 });
    for (let i = 0; i < 20; i++) turn(s, `turn ${i} `.repeat(20));
    const r = replayVerify(store, s.id);
    expect(r).toMatchObject({ ok: true, events: 21 });
    expect(r.snapshots).toBeGreaterThanOrEqual(5);
    expect(verifyStore(store).ok).toBe(true);
  });

  it("replayVerify reports the first event where a stored snapshot differs", () => {
    const store = openStore(":memory:");
    const s = Session.create(store, { snapshotEvery: 4 });
    for (let i = 0; i < 12; i++) turn(s, `turn ${i}`);
    const snaps = store.snapshots(s.id);
    const second = store.nearestSnapshot(snaps[1]?.id as EventId);
    const first = store.nearestSnapshot(snaps[0]?.id as EventId);
    if (second === undefined || first === undefined) throw new Error("no snapshots");
    store.putSnapshot(second.event, first.header, first.pages);
    const r = replayVerify(store, s.id);
    expect(r.ok).toBe(false);
    expect(r.mismatch?.event).toBe(second.event);
  });
});
