/**
 * Failures found by the fuzz tests, pinned: each as the concrete case (stable whatever the
 * generators become) and as the seed that found it (replayed against the current properties).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyPatch, diffToPatch, diffTrees, nodeId, skeletonTree, toSnapshot } from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";
import { checkLaws } from "./laws.ts";
import { branchDiffsAreExact, satisfiesLaws } from "./properties.ts";

const n = nodeId;

describe("pinned regressions", () => {
  it("seed 1913469334: branches that minted the same id for different elements diff into an exact patch", () => {
    const base = skeletonTree(SKELETON);
    const left = applyPatch(base, [["ins", n(2), null, { tag: "a" }]]);
    const right = applyPatch(base, [["ins", n(2), null, { tag: "turn" }]]);
    expect(toSnapshot(applyPatch(left, diffToPatch(left, diffTrees(left, right))))).toBe(toSnapshot(right));
    fc.assert(branchDiffsAreExact, { seed: 1913469334, numRuns: 5 });
    fc.assert(branchDiffsAreExact, { seed: -842913732, numRuns: 5 });
  });

  it("seed 458349979: a reorder under the root keeps the fixed skeleton in place and moves the other element", () => {
    const base = applyPatch(skeletonTree(SKELETON), [["ins", n(1), null, { tag: "a" }]]);
    const moved = checkLaws(base, [["mv", n(4), n(1), n(2)]]);
    expect(moved.childIds(1)).toEqual([2, 4, 3]);
    const d = diffTrees(base, moved);
    expect(d.moved.map((m) => m.id)).toEqual([4]);
    fc.assert(satisfiesLaws, { seed: 458349979, numRuns: 5 });
  });
});
