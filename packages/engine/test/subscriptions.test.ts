/**
 * Subscriptions and replicas under pressure: a queue that overflows never loses a reset, the first
 * snapshot or streamed text (EN-24); a replica folds what it received when it is read and names an
 * event that does not apply (EN-26).
 */
import { type NodeId, nodeId, toSnapshot } from "@strata/dom";
import { type EventId, openStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { type Frame, Replica, Session, Subscription } from "../src/index.ts";

const n = nodeId;
const BODY = n(3);

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
