/**
 * Conformance, ST-7/ST-10/ST-11 as a property: random appends, group commits, forks and head
 * moves, checked against a model that keeps every branch's chain as a plain list.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type EventId, type Store, StoreError } from "../../src/index.ts";
import type { Kit } from "./kit.ts";

type Step = { kind: "append" | "group" | "fork" | "move"; branch: number; at: number; n: number };
const step: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom("append", "append", "group", "fork", "move"),
  branch: fc.nat(),
  at: fc.nat(),
  n: fc.integer({ min: 1, max: 4 }),
});

export function chainsConformance(kit: Kit): void {
  describe("ST-7/10/11 chains, as a property", () => {
    it("every branch's log, chain, ancestry and depth lookups match the model", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
          const store = await kit.open();
          try {
            await check(store, steps);
          } finally {
            await store.close();
          }
        }),
        { numRuns: kit.runs(300) },
      );
    });
  });
}

async function check(store: Store, steps: readonly Step[]): Promise<void> {
  const { session, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
  const model = new Map<string, EventId[]>([["main", [genesis.id]]]);
  const all: EventId[] = [genesis.id];
  let forks = 0;
  for (const s of steps) {
    const names = [...model.keys()];
    const name = names[s.branch % names.length] as string;
    const chain = model.get(name) as EventId[];
    const head = chain[chain.length - 1] as EventId;
    if (s.kind === "append" || s.kind === "group") {
      const count = s.kind === "group" ? s.n : 1;
      const added = await store.append(
        session.id,
        name,
        head,
        Array.from({ length: count }, (_, i) => ({ kind: "patch@1", data: `${name}:${i}` })),
      );
      chain.push(...added.map((m) => m.id));
      all.push(...added.map((m) => m.id));
    } else if (s.kind === "fork") {
      const at = chain[s.at % chain.length] as EventId;
      const fname = `f${forks++}`;
      await store.fork(session.id, at, fname);
      model.set(fname, chain.slice(0, chain.indexOf(at) + 1));
    } else {
      const target = all[s.at % all.length] as EventId;
      const targetChain = [...model.values()].find((c) => c.includes(target)) as EventId[];
      let moved: Awaited<ReturnType<Store["moveHead"]>>;
      try {
        moved = await store.moveHead(session.id, name, target);
      } catch (e) {
        // The default name of the kept head (rewound/<branch>/<head>) can be taken by a branch
        // that has moved on since (ST-11: "exists"); keep it under another name then.
        if (!(e instanceof StoreError) || e.code !== "exists") throw e;
        moved = await store.moveHead(session.id, name, target, { keepAs: `kept${forks++}` });
      }
      const { kept } = moved;
      if (kept !== null && !model.has(kept.name)) model.set(kept.name, [...chain]);
      model.set(name, targetChain.slice(0, targetChain.indexOf(target) + 1));
    }
  }
  for (const [name, chain] of model) {
    expect(
      (await store.log(session.id, { branch: name })).map((m) => m.id),
      name,
    ).toEqual(chain);
    expect((await store.branch(session.id, name))?.head).toBe(chain[chain.length - 1]);
    const head = chain[chain.length - 1] as EventId;
    expect((await store.chain(head)).map((e) => e.id)).toEqual(chain);
    expect(await store.chainData(head)).toEqual((await store.chain(head)).map((e) => e.data)); // ST-7: the narrow payload read
    for (let d = 1; d <= chain.length; d++) expect((await store.atDepth(head, d))?.id).toBe(chain[d - 1]);
    const outside = all.find((id) => !chain.includes(id));
    if (outside !== undefined) expect(await store.isAncestor(outside, head)).toBe(false);
    expect(await store.isAncestor(chain[0] as EventId, head)).toBe(true);
  }
  expect((await store.verify()).ok).toBe(true);
}
