/**
 * The Session on every storage port (decision 0036, ports.ts): the same test, awaiting every call,
 * on SQLite, on the asynchronous port over SQLite and on PostgreSQL. What the asynchronous port
 * adds — operations queued in call order, a creation whose `init` awaits, texts fetched before the
 * tree is handed out, what is not offered there yet — is tested where it applies.
 */
import { type NodeId, nodeId, toSnapshot, toXml } from "@strata/dom";
import { type EventId, isAsyncStore, LeaseLost, type Store } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { loadTree, materialize, replayVerify, Session, verifyPort, verifyStore } from "../src/index.ts";
import { type AnyPort, PORTS, type PortPlace } from "./ports.ts";

const n = nodeId;
const places: PortPlace[] = [];
afterEach(async () => {
  for (const p of places.splice(0)) await p.dispose();
});

/** A text long enough to be stored by reference (TEXT_REF_MIN is 128). */
const long = (tag: string, i: number) => `${tag} ${i} `.repeat(40);

async function turn(s: Session<AnyPort>, text: string): Promise<NodeId> {
  let id = 0 as NodeId;
  await s.commit(
    (d) => {
      id = d.appendChild(n(3), { tag: "turn" });
      d.appendChild(id, { tag: "user", text });
    },
    { label: "turn.start" },
  );
  return id;
}

const texts = (s: { select(q: string): { text: string }[] }) => s.select("user").map((e) => e.text);

describe.each(PORTS)("Session on $name", (port) => {
  const place = () => {
    const p = port.place();
    places.push(p);
    return p;
  };

  it("EN-18: creates, commits ops and recipes, reads the log and any event", async () => {
    const p = place();
    const store = await p.open();
    const s = await Session.create(store, { title: "t" });
    expect(toXml(s.tree, { ids: false })).toBe("<session><meta/><body/></session>");
    const e1 = await s.commit(
      [["ins", n(2), null, { tag: "todo", children: [{ tag: "item", attrs: { status: "pending" }, text: "a" }] }]],
      {
        label: "todo.write",
        by: "user",
      },
    );
    expect(e1).toMatchObject({ label: "todo.write", by: "user", depth: 2 });
    const item = s.selectOne("todo item") as { id: NodeId };
    await s.commit((d) => d.set(item.id, "status", "completed"), { label: "todo.done" });
    expect(s.count("todo item[status!=completed]")).toBe(0);
    expect((await s.log()).map((e) => e.label)).toEqual(["session.start", "todo.write", "todo.done"]);
    expect(toXml(await s.at(e1.id), { ids: false })).toContain('status="pending"');
    await expect(Promise.resolve().then(() => s.at(99999 as EventId))).rejects.toThrow(/not an event of session/);
  });

  it("L2: a commit that does not apply changes nothing, and the next one goes on", async () => {
    const s = await Session.create(await place().open());
    await turn(s, "hello");
    const state = async () => JSON.stringify({ tree: toSnapshot(s.tree), head: s.head, log: await s.log(), branches: await s.branches() });
    const before = await state();
    await expect(Promise.resolve().then(() => s.commit([["rm", n(9999)]]))).rejects.toThrow(/does not apply|9999/);
    expect(await state()).toBe(before);
    await turn(s, "again");
    expect(texts(s)).toEqual(["hello", "again"]);
  });

  it("EN-10: long texts stored by reference come back whole after snapshots, from another handle, at any event", async () => {
    const p = place();
    const s = await Session.create(await p.open(), { snapshotEvery: 4 });
    const want: string[] = [];
    const mids: EventId[] = [];
    for (let i = 0; i < 30; i++) {
      want.push(long("turn", i));
      await turn(s, want[i] as string);
      mids.push(s.head.id);
    }
    // Text appended in many pieces (a concatenation of references, grouped when long).
    const last = s.select("user").at(-1) as { id: NodeId };
    for (let k = 0; k < 80; k++) await s.commit([["append", last.id, long("piece", k)]]);
    want[29] += Array.from({ length: 80 }, (_, k) => long("piece", k)).join("");
    await s.snapshot();
    expect(texts(s)).toEqual(want);
    const other = await p.open();
    const { session: reopened } = await Session.open(other, s.id, { snapshotEvery: 4 });
    // Over the asynchronous port a resume fetches only the head's last pages (decision 0037): a
    // text it did not fetch is refused, saying how to load it, until the tree is loaded.
    if (port.async) expect(() => texts(reopened)).toThrow(/not loaded.*await session\.load\(\)/);
    expect(toSnapshot(await reopened.load())).toBe(toSnapshot(s.tree));
    expect(texts(reopened)).toEqual(want);
    const mid = mids[14] as EventId;
    const at = await loadTree(await reopened.at(mid));
    expect(toSnapshot(at)).toBe(toSnapshot(await loadTree(await materialize(other, mid, { fromGenesis: true }))));
    // The reopened line writes on, and a third handle sees it.
    await turn(reopened, "more");
    const third = (await Session.open(await p.open(), s.id)).session;
    await third.load();
    expect(texts(third)).toEqual([...want, "more"]);
    const report = isAsyncStore(other) ? await other.verify() : verifyStore(other as Store);
    expect(report.findings).toEqual([]);
  });

  it("L7: fork, rewind and switch on the port, each with its lifecycle work", async () => {
    const p = place();
    const s = await Session.create(await p.open());
    await turn(s, "one");
    const at1 = s.head.id;
    const call = await s.commit((d) => void d.appendChild(n(3), { tag: "call", attrs: { status: "running" } }));
    await turn(s, "two");
    const f = await s.fork(at1, { name: "side" });
    expect(f.branch).toBe("side");
    expect(texts(f)).toEqual(["one"]);
    // The running call is live here and not at the fork point: the fork's work stops it.
    expect(f.work.terminate.length).toBe(1);
    await turn(f, "side one");
    expect(texts(s)).toEqual(["one", "two"]);
    const old = s.head.id;
    const work = await s.rewind(call.id);
    expect(texts(s)).toEqual(["one"]);
    expect(work.retained.length).toBe(1);
    expect((await s.branches()).map((b) => b.name).sort()).toEqual(["main", `rewound/main/${old}`, "side"]);
    await s.switchTo("side");
    expect(texts(s)).toEqual(["one", "side one"]);
    // A fork needs a free name: the default one is taken the second time.
    const g = await s.fork(at1);
    const h = await s.fork(at1);
    expect([g.branch, h.branch]).toEqual([`fork-${at1}`, `fork-${at1}-2`]);
    expect(await s.freeBranchName(`fork-${at1}`)).toBe(`fork-${at1}-3`);
    const reopened = (await Session.open(await p.open(), s.id, { branch: "side" })).session;
    expect(toSnapshot(reopened.tree)).toBe(toSnapshot(s.tree));
  });

  it("EN-23: a fork's default name is one lookup while it is free: the session's branches are not listed", async () => {
    const p = place();
    const store = await p.open();
    const s = await Session.create(store);
    await turn(s, "one");
    const at = s.head.id;
    await turn(s, "two");
    for (let i = 0; i < 20; i++) await s.fork(at, { name: `other-${i}` });
    const listed: string[] = [];
    const counting = new Proxy(store, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if (key === "branches")
          return (...args: unknown[]) => {
            listed.push("branches");
            return (v as (...a: unknown[]) => unknown).apply(target, args);
          };
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as typeof store;
    const again = (await Session.open(counting, s.id)).session;
    const f = await again.fork(at);
    expect(f.branch).toBe(`fork-${at}`);
    expect(listed).toEqual([]);
    // Taken: the branches are listed once, for the first free suffix.
    const g = await again.fork(at);
    expect(g.branch).toBe(`fork-${at}-2`);
    expect(listed).toEqual(["branches"]);
    expect(texts(g)).toEqual(["one"]);
  });

  it("EN-27: streamed text is durable in order, before the commits after it, whole after a reopen", async () => {
    const p = place();
    const s = await Session.create(await p.open());
    const id = await turn(s, "");
    const user = s.durableTree.rec(id)?.first as NodeId;
    const other = await turn(s, "");
    const into = s.durableTree.rec(other)?.first as NodeId;
    // Text is flushed every 50 ms by default, every 500 ms over the network (each flush costs statements).
    const probe = s.stream(user, { label: "probe" });
    expect(probe.intervalMs).toBe(port.async ? 500 : 50);
    probe.close();
    // Flushed every 40 characters (over the asynchronous port each flush is queued in call order).
    const w = s.stream(user, { maxBytes: 40, intervalMs: 60_000, label: "reply" });
    const v = s.stream(into, { maxBytes: 1_000_000, intervalMs: 60_000, label: "other" });
    const chunks = Array.from({ length: 30 }, (_, i) => `chunk ${i} `.repeat(3));
    for (const c of chunks) w.append(c);
    v.append("held until the commit");
    expect(s.tree.rec(user)?.text).toBe(chunks.join("")); // shown at once, durable or not
    // A commit makes what is pending durable first: it lands after every chunk.
    await s.commit((d) => void d.appendChild(n(3), { tag: "turn", attrs: { after: "stream" } }), { label: "after" });
    w.close();
    await s.flush();
    const log = await s.log();
    const labels = log.map((e) => e.label);
    // Every flush of the stream, then what the commit flushed of the other one, then the commit.
    expect(labels.filter((l) => l === "reply").length).toBeGreaterThan(5);
    expect(labels.lastIndexOf("reply")).toBeLessThan(labels.indexOf("other"));
    expect(labels.slice(-2)).toEqual(["other", "after"]);
    const reopened = (await Session.open(await p.open(), s.id)).session;
    await reopened.load();
    expect(reopened.durableTree.rec(user)?.text).toBe(chunks.join(""));
    expect(reopened.durableTree.rec(into)?.text).toBe("held until the commit");
    // A commit that removes a streamed element ends its stream; the writer says why.
    await s.commit([["rm", other]]);
    expect(() => v.append("more")).toThrow(/ended/);
  });

  it("EN-16: verify finds the same on every port — clean, then a snapshot that is not its chain's replay and a payload that does not decode", async () => {
    const p = place();
    const store = await p.open();
    const s = await Session.create(store, { snapshotEvery: 4 });
    for (let i = 0; i < 12; i++) await turn(s, long("turn", i));
    const clean = await verifyPort(store);
    expect(clean.findings).toEqual([]);
    expect(clean.ok).toBe(true);
    // A snapshot written at a later event with an earlier event's state, and an event that is not JSON.
    const log = await s.log();
    const early = (await store.nearestSnapshot((log[5] as { id: EventId }).id)) as { header: string; pages: readonly (string | null)[] };
    const late = log[10] as { id: EventId; depth: number };
    expect((await store.nearestSnapshot(late.id))?.event).not.toBe(late.id);
    await store.putSnapshot(late.id, early.header, early.pages);
    const [broken] = await store.append(s.id, "main", s.head.id, [{ kind: "patch@1", label: "broken", data: "{not json" }]);
    const report = await verifyPort(store);
    expect(report.ok).toBe(false);
    const found = report.findings.map((f) => [f.code, f.event]);
    expect(found).toContainEqual(["snapshot-mismatch", late.id]);
    expect(found).toContainEqual(["bad-event", broken?.id]);
    expect(report.findings.find((f) => f.code === "snapshot-mismatch")?.message).toMatch(/differs from the replay/);
  });

  it("close records the transition, and a closed session refuses to write", async () => {
    const p = place();
    const s = await Session.create(await p.open());
    await turn(s, "x");
    await s.close({ reason: "exit" });
    await expect(Promise.resolve().then(() => s.commit([["set", n(1), "a", "b"]]))).rejects.toThrow(/was closed/);
    const again = (await Session.open(await p.open(), s.id)).session;
    expect(again.count("transition[kind=exit]")).toBe(1);
  });

  it("EN-34: what init commits is stored with the genesis event, or nothing is", async () => {
    const p = place();
    const store = await p.open();
    const s = await Session.create(store, {
      title: "with init",
      init: (x) => {
        void x.commit((d) => void d.appendChild(n(3), { tag: "user", text: "first" }));
      },
    });
    expect(texts(s)).toEqual(["first"]);
    expect(texts((await Session.open(await p.open(), s.id)).session)).toEqual(["first"]);
    const count = async () => (await store.listSessions()).length;
    const before = await count();
    await expect(
      Promise.resolve().then(() =>
        Session.create(store, {
          init: (x) => {
            void x.commit((d) => void d.appendChild(n(3), { tag: "user", text: "lost" }));
            throw new Error("init failed");
          },
        }),
      ),
    ).rejects.toThrow("init failed");
    expect(await count()).toBe(before);
  });
});

describe.each(PORTS.filter((p) => p.async))("what the asynchronous port adds, on $name", (port) => {
  const place = () => {
    const p = port.place();
    places.push(p);
    return p;
  };

  it("operations called without awaiting run one at a time, in call order", async () => {
    const s = await Session.create(await place().open());
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 25; i++) calls.push(turn(s, `t${i}`));
    calls.push(Promise.resolve(s.log()));
    await Promise.all(calls);
    expect(texts(s)).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`));
    expect((await s.log()).slice(1).every((e, i, all) => i === 0 || e.id > (all[i - 1] as { id: number }).id)).toBe(true);
  });

  it("a failing operation in the queue does not stop the ones after it", async () => {
    const s = await Session.create(await place().open());
    const bad = s.commit([["rm", n(4242)]]);
    const good = turn(s, "after");
    await expect(bad).rejects.toThrow();
    await good;
    expect(texts(s)).toEqual(["after"]);
  });

  it("ST-23: a session opened with a lease token is fenced: after a takeover its commit is refused and nothing is written", async () => {
    const p = place();
    const store = (await p.open()) as Exclude<AnyPort, Store>;
    const s0 = await Session.create(store);
    const got = await store.acquireLease(s0.id, "main", "worker-a");
    if (!got.ok) throw new Error("lease");
    const { session: a } = await Session.open(store, s0.id, { lease: got.lease.token });
    await turn(a, "by a");
    const other = (await p.open()) as Exclude<AnyPort, Store>;
    const taken = await other.acquireLease(s0.id, "main", "worker-b", () => true);
    expect(taken.ok).toBe(true);
    const head = a.head.id;
    await expect(turn(a, "stale")).rejects.toBeInstanceOf(LeaseLost);
    expect(a.head.id).toBe(head);
    expect(texts((await Session.open(other, s0.id)).session)).toEqual(["by a"]);
  });

  it("decision 0037: a resume fetches only the head's last pages; commits, recipes and forks fetch what they reach; load() the rest in a few calls", async () => {
    const p = port.place();
    places.push(p);
    const s = await Session.create(await p.open(), { snapshotEvery: 8 });
    // 300 turns of long texts: 600 ids, 3 pages of 256.
    const marks: EventId[] = [];
    for (let g = 0; g < 6; g++) {
      await s.commitMany(
        Array.from({ length: 50 }, (_, i) => ({
          change: (d: Parameters<Exclude<Parameters<typeof s.commit>[0], readonly unknown[]>>[0]) => {
            const t = d.appendChild(n(3), { tag: "turn" });
            d.appendChild(t, { tag: "user", text: long("turn", g * 50 + i) });
          },
        })),
      );
      marks.push(s.head.id);
    }
    await s.snapshot();
    await turn(s, "tail");
    const calls = { getBlobs: 0, eventData: 0 };
    const counted = <T extends object>(store: T): T =>
      new Proxy(store, {
        get(target, key, receiver) {
          const v = Reflect.get(target, key, receiver);
          if (typeof v !== "function") return v;
          return (...args: unknown[]) => {
            if (key === "getBlobs" || key === "eventData") calls[key]++;
            return v.apply(target, args);
          };
        },
      });
    const other = counted(await p.open());
    const { session: r } = await Session.open(other, s.id, { snapshotEvery: 8 });
    expect(calls).toEqual({ getBlobs: 1, eventData: 0 }); // the last two pages; no text
    // A recipe under the first turn (page 0, not fetched), and an append to the first text.
    const first = s.select("user")[0] as { id: NodeId };
    const firstTurn = s.select("turn")[0] as { id: NodeId };
    await r.commit((d) => void d.appendChild(firstTurn.id, { tag: "note", text: "under the first turn" }));
    await r.commit([["append", first.id, " and more"]]);
    const f = await r.fork(marks[1] as EventId, { name: "early" });
    await turn(f, "on the fork");
    const before = { ...calls };
    const tree = await r.load();
    expect(calls.getBlobs + calls.eventData - before.getBlobs - before.eventData).toBeLessThanOrEqual(6);
    const u = texts(r);
    expect(u.length).toBe(301);
    expect(u[0]).toBe(`${long("turn", 0)} and more`);
    expect(u[299]).toBe(long("turn", 299));
    // The same as a handle that reads everything from the log.
    const fresh = (await Session.open(await p.open(), s.id)).session;
    expect(toSnapshot(await fresh.load())).toBe(toSnapshot(tree));
    expect(toSnapshot(await f.load())).toBe(
      toSnapshot(await loadTree(await materialize(await p.open(), f.head.id, { fromGenesis: true }))),
    );
    expect(texts(f).at(-1)).toBe("on the fork");
  });

  it("EN-27: a queued flush is shown once, before and after it lands (a snapshot between included), and in call order", async () => {
    const s = await Session.create(await place().open(), { snapshotEvery: 2 });
    const t = await turn(s, "");
    const user = s.durableTree.rec(t)?.first as NodeId;
    const w = s.stream(user, { intervalMs: 60_000, maxBytes: 1_000_000, label: "reply" });
    const t2 = await turn(s, "");
    const other = s.stream(s.durableTree.rec(t2)?.first as NodeId, { intervalMs: 60_000, maxBytes: 1_000_000, label: "other" });
    let want = "";
    for (let k = 0; k < 6; k++) {
      w.append(`c${k};`);
      want += `c${k};`;
      w.flush();
      // Every turn until the flush and the snapshot it calls for have landed, the view made anew
      // each time (another stream shows a chunk): the text is shown once.
      for (let tick = 0; tick < 40; tick++) {
        other.append(".");
        expect(s.tree.rec(user)?.text).toBe(want);
        await new Promise((r) => setImmediate(r));
      }
    }
    other.close();
    // Text appended before a commit is called lands before that commit, even while an earlier one waits.
    const c0 = s.commit((d) => void d.appendChild(n(3), { tag: "turn", attrs: { k: "0" } }), { label: "c0" });
    w.append("between;");
    const c1 = s.commit((d) => void d.appendChild(n(3), { tag: "turn", attrs: { k: "1" } }), { label: "c1" });
    await Promise.all([c0, c1]);
    const labels = (await s.log()).map((e) => e.label);
    expect(labels.slice(-4)).toEqual(["other", "c0", "reply", "c1"]);
    // A closed stream's text stays shown until its last flush lands.
    w.append("last;");
    w.close();
    expect(s.tree.rec(user)?.text).toBe(`${want}between;last;`);
    await s.flush();
    expect(s.durableTree.rec(user)?.text).toBe(`${want}between;last;`);
  });

  it("EN-27: a queued flush that fails ends its stream, and the flushes queued after it do not land", async () => {
    const inner = await place().open();
    let failNext = false;
    const store = new Proxy(inner, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver);
        if (key !== "append" || typeof v !== "function") return typeof v === "function" ? v.bind(target) : v;
        return (...args: unknown[]) => {
          if (failNext) {
            failNext = false;
            return Promise.reject(new Error("the network went away"));
          }
          return v.apply(target, args);
        };
      },
    });
    const s = await Session.create(store);
    const t = await turn(s, "");
    const user = s.durableTree.rec(t)?.first as NodeId;
    const w = s.stream(user, { intervalMs: 60_000, maxBytes: 1_000_000, label: "reply" });
    w.append("A;");
    failNext = true;
    w.flush();
    w.append("B;");
    w.flush();
    await s.flush();
    expect(s.durableTree.rec(user)?.text).toBe("");
    expect(() => w.append("C;")).toThrow(/network went away/);
    expect(s.tree.rec(user)?.text).toBe("");
    // The session goes on.
    await turn(s, "after");
    expect((await s.log()).map((e) => e.label).filter((l) => l === "reply")).toEqual([]);
  });

  it("EN-31: the replay proof over this port — from genesis, every snapshot on the chain and the reopened head (decision 0038)", async () => {
    const p = place();
    const s = await Session.create(await p.open(), { snapshotEvery: 64 });
    for (let i = 0; i < 200; i++) await turn(s, i % 7 === 0 ? long("replayed", i) : `turn ${i}`);
    await s.close();
    const store = await p.open();
    const r = await replayVerify(store, s.id);
    expect(r).toMatchObject({ ok: true, branch: "main", events: 201 });
    expect(r.snapshots).toBeGreaterThanOrEqual(3);
    expect(r.mismatch).toBeUndefined();
  });

  it("says what it does not offer yet: subscriptions from before the head", async () => {
    const s = await Session.create(await place().open());
    await turn(s, "x");
    const first = s.head.id;
    await turn(s, "y");
    expect(() => s.subscribe({ from: first })).toThrow(/starts at the head/);
    const sub = s.subscribe();
    await turn(s, "z");
    const frames = [(await sub.next()).value, (await sub.next()).value];
    expect(frames.map((f) => f?.type)).toEqual(["snapshot", "event"]);
    sub.close();
  });
});
