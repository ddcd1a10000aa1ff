/**
 * EN-21, EN-22: lifecycle elements that share a durable key are separate entries of the work list;
 * `session.live` is a read-only view of one version.
 */
import { type NodeId, nodeId } from "@strata/dom";
import { openStore } from "@strata/store";
import { describe, expect, it } from "vitest";
import { Session } from "../src/index.ts";

const n = nodeId;
const BODY = n(3);

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
