/**
 * EN-13: `commitMany` validates every patch before anything is written, appends them all in one
 * store call (one transaction), chained, and makes the last tree live; `commitMany([])` does
 * nothing and returns `[]`.
 */
import { nodeId, type Op, toSnapshot } from "@strata/dom";
import { type EventId, openStore, type Store } from "@strata/store";
import { describe, expect, it } from "vitest";
import { materialize, Session } from "../src/index.ts";

const BODY = nodeId(3);

/** `real`, recording how many events each `append` call carried. */
function recordingStore(real: Store): { store: Store; appends: number[] } {
  const appends: number[] = [];
  const store = new Proxy(
    {},
    {
      get(_, k) {
        const v = (real as unknown as Record<string | symbol, unknown>)[k];
        if (k === "append")
          return (...args: Parameters<Store["append"]>) => {
            appends.push(args[3].length);
            return real.append(...args);
          };
        return typeof v === "function" ? v.bind(real) : v;
      },
    },
  ) as Store;
  return { store, appends };
}

describe("EN-13 group commits", () => {
  it("appends every patch in one store call, chained by prior, and makes the last tree live", () => {
    const real = openStore(":memory:");
    const { store, appends } = recordingStore(real);
    const s = Session.create(store);
    const before = s.head.id;
    appends.length = 0;
    const metas = s.commitMany(
      ["a", "b", "c"].map((tag, i) => ({ change: [["ins", BODY, null, { tag, text: String(i) }]] as Op[], label: `step.${tag}` })),
    );
    expect(appends).toEqual([3]);
    expect(metas.map((m) => m.label)).toEqual(["step.a", "step.b", "step.c"]);
    expect(metas.map((m) => m.prior)).toEqual([before, metas[0]?.id, metas[1]?.id]);
    expect(s.head.id).toBe(metas[2]?.id);
    expect(s.select("body > *").map((e) => e.tag)).toEqual(["c", "b", "a"]); // each inserted first
    // each event holds its own patch: the state after the first is the first element alone
    expect(materialize(real, metas[0]?.id as EventId).childIds(3)).toHaveLength(1);
    expect(toSnapshot(materialize(real, s.head.id))).toBe(toSnapshot(s.durableTree));
  });

  it("a patch that does not apply, anywhere in the group, writes none of them", () => {
    const real = openStore(":memory:");
    const { store, appends } = recordingStore(real);
    const s = Session.create(store);
    const head = s.head.id;
    const tree = toSnapshot(s.durableTree);
    appends.length = 0;
    expect(() =>
      s.commitMany([
        { change: [["ins", BODY, null, { tag: "a" }]] },
        { change: [["ins", BODY, null, { tag: "b" }]] },
        { change: [["rm", nodeId(99_999)]] },
      ]),
    ).toThrow(/rm target 99999 does not exist/);
    expect(appends).toEqual([]);
    expect(s.head.id).toBe(head);
    expect(real.log(s.id)).toHaveLength(1);
    expect(toSnapshot(s.durableTree)).toBe(tree);
  });

  it("commitMany([]) writes nothing and returns []", () => {
    const real = openStore(":memory:");
    const { store, appends } = recordingStore(real);
    const s = Session.create(store);
    appends.length = 0;
    expect(s.commitMany([])).toEqual([]);
    expect(appends).toEqual([]);
    expect(real.log(s.id)).toHaveLength(1);
  });
});
