/**
 * Property tests (fast-check) against the from-scratch oracle in model.ts. fast-check prints the
 * seed and path of any failure; pin it in regressions.test.ts. STRATA_FC_RUNS raises the run count
 * for longer local runs (30,000 runs were clean when this was written).
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import {
  agreesWithOracle,
  branchDiffsAreExact,
  effectsMatchDiff,
  monotonicMintsAbove,
  reauthoredOnAFloor,
  satisfiesLaws,
} from "./properties.ts";

const RUNS = Number(process.env.STRATA_FC_RUNS ?? 1500);

describe("random patches", () => {
  it("DOM-7…13: the tree and the oracle agree on every patch, valid or not, and failures leave the input untouched", () => {
    fc.assert(agreesWithOracle, { numRuns: RUNS });
  });

  it("DOM-14…30: every valid random patch satisfies all laws (invert, JSON, XML, snapshot, pages, diff)", () => {
    fc.assert(satisfiesLaws, { numRuns: RUNS });
  });

  it("DOM-28…30: diffs between diverged branches and between unshared copies turn into exact patches", () => {
    fc.assert(branchDiffsAreExact, { numRuns: Math.ceil(RUNS / 2) });
  });

  it("L5/DOM-14: monotonic application never lowers the high-water mark and mints above it", () => {
    fc.assert(monotonicMintsAbove, { numRuns: Math.ceil(RUNS / 3) });
  });

  it("DOM-39: the effect applyPatch reports replays to the result and nets to the diff, for patches in a row and their inverses", () => {
    fc.assert(effectsMatchDiff, { numRuns: Math.ceil(RUNS / 3) });
  });

  it("DOM-40: shiftMinted re-authors a monotonic patch on any higher floor: same tree and effect, minted ids shifted", () => {
    fc.assert(reauthoredOnAFloor, { numRuns: Math.ceil(RUNS / 3) });
  });
});
