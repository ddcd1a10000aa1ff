/**
 * EN-27: a stream ends when its element can no longer take text — removed, given children, or left
 * behind by a rewind — and a flush that fails keeps its text pending.
 */
import { nodeId, select } from "@strata/dom";
import { type EventId, openStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { materialize, Session } from "../src/index.ts";
import { flakyStore } from "./flaky-store.ts";

const n = nodeId;
const BODY = n(3);

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
