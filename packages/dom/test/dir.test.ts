/**
 * DOM-23: the page directory built from a snapshot's page list in one pass (`dirFromSlots`) is the
 * directory the transient writer builds slot by slot — the same nodes, lengths and height — so
 * versions made from either compare by shared subtries alike (`dirDiff`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DirWriter, dirDiff, dirEntries, dirFromSlots, dirGet, EMPTY_DIR } from "../src/dir.ts";
import type { Slot } from "../src/tree.ts";

/** The directory `DirWriter` builds from the same list, slot by slot. */
function written(slots: readonly Slot[]): ReturnType<typeof dirFromSlots> {
  const w = new DirWriter(EMPTY_DIR);
  for (let i = 0; i < slots.length; i++) if (slots[i] !== undefined) w.set(i, slots[i]);
  return w.finish();
}

/** A node's entries with holes and undefined alike (the writer leaves holes, slices hold undefined). */
const shape = (node: unknown, level: number): unknown =>
  node === undefined
    ? null
    : level === 1
      ? Array.from(node as unknown[], (x) => x ?? null)
      : Array.from(node as unknown[], (x) => shape(x, level - 1));

const page = (i: number) => ({ page: i }) as unknown as Slot;

describe("DOM-23 dirFromSlots", () => {
  it("gives the writer's directory for any sparse page list (sizes across 1, 2 and 3 levels)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 9000 }), { maxLength: 6 }),
        (n, density, lone) => {
          const slots: Slot[] = Array.from({ length: n }, (_, i) => (((i * 2654435761) % 1000) / 1000 < density ? page(i) : undefined));
          for (const i of lone) slots[i] = page(i);
          const a = dirFromSlots(slots);
          const b = written(slots);
          expect(a.height).toBe(b.height);
          expect(shape(a.root, a.height)).toEqual(shape(b.root, b.height));
          expect([...dirEntries(a)]).toEqual([...dirEntries(b)]);
          for (const i of [0, 63, 64, 4095, 4096, n - 1, n, ...lone]) expect(dirGet(a, i)).toBe(dirGet(b, i));
          let differ = 0;
          dirDiff(a, b, () => differ++);
          expect(differ).toBe(0);
          expect(Object.isFrozen(a) && (a.root === undefined || Object.isFrozen(a.root))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("an empty list, or one of absent pages only, is the empty directory", () => {
    expect(dirFromSlots([])).toBe(EMPTY_DIR);
    expect(dirFromSlots([undefined, undefined])).toBe(EMPTY_DIR);
    const one = dirFromSlots([undefined, page(1)]);
    expect(one.height).toBe(1);
    expect(dirGet(one, 1)).toEqual(page(1));
    const high = dirFromSlots(Object.assign([], { 4096: page(4096) }) as Slot[]);
    expect(high.height).toBe(3);
    expect([...dirEntries(high)].map(([i]) => i)).toEqual([4096]);
  });
});
