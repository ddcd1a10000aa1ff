/**
 * The properties the fuzz tests check, shared by properties.test.ts (random seeds) and
 * regressions.test.ts (pinned seeds).
 */
import fc from "fast-check";
import { expect } from "vitest";
import { applyPatch, diffToPatch, diffTrees, invertPatch, parseXml, toSnapshot, toXml, tryApplyPatch } from "../src/index.ts";
import { intent, modelOf, opsFrom, tree } from "./arbitraries.ts";
import { checkEffect, checkIdMapping } from "./effects.ts";
import { checkLaws } from "./laws.ts";

/** DOM-7…13: the tree and the oracle agree on every patch; failures leave the input untouched. */
export const agreesWithOracle = fc.property(tree, fc.array(intent, { maxLength: 12 }), (base, intents) => {
  const ops = opsFrom(base, intents, false);
  const before = toSnapshot(base);
  const model = modelOf(base);
  const expectedCode = model.applyPatch(ops);
  const result = tryApplyPatch(base, ops);
  expect(toSnapshot(base)).toBe(before);
  if (expectedCode === undefined) {
    expect(result.ok, result.ok ? "" : result.error.message).toBe(true);
    if (result.ok) expect(toXml(result.value)).toBe(model.toXml());
  } else {
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code, result.error.message).toBe(expectedCode);
  }
});

/** DOM-14…30: every valid random patch satisfies all laws. */
export const satisfiesLaws = fc.property(tree, fc.array(intent, { maxLength: 15 }), (base, intents) => {
  checkLaws(base, opsFrom(base, intents, true));
});

/** DOM-28…30: diffs between diverged branches and between unshared copies give exact patches. */
export const branchDiffsAreExact = fc.property(
  tree,
  fc.array(intent, { maxLength: 10 }),
  fc.array(intent, { maxLength: 10 }),
  (base, i1, i2) => {
    const left = applyPatch(base, opsFrom(base, i1, true));
    const right = applyPatch(base, opsFrom(base, i2, true));
    for (const [a, b] of [
      [left, right],
      [parseXml(toXml(left)), right],
    ] as const) {
      const patch = diffToPatch(a, diffTrees(a, b));
      expect(toSnapshot(applyPatch(a, patch))).toBe(toSnapshot(b));
    }
  },
);

/** L5/DOM-14: monotonic application never lowers the high-water mark and mints above it. */
export const monotonicMintsAbove = fc.property(tree, fc.array(intent, { maxLength: 12 }), (base, intents) => {
  const ops = opsFrom(base, intents, true);
  const r = tryApplyPatch(base, ops, { monotonic: true });
  expect(r.ok).toBe(true);
  if (!r.ok) return;
  expect(r.value.hwm).toBeGreaterThanOrEqual(base.hwm);
  for (const el of r.value.root.children) expect(base.has(el.id) || el.id > base.hwm).toBe(true);
});

/**
 * DOM-39: over several patches in a row, the effect of each replays to its result and nets to the
 * diff, and so does the effect of its inverse (restore forms).
 */
export const effectsMatchDiff = fc.property(tree, fc.array(fc.array(intent, { maxLength: 10 }), { maxLength: 3 }), (base, patches) => {
  let t = base;
  for (const intents of patches) {
    const ops = opsFrom(t, intents, true);
    const next = checkEffect(t, ops).tree;
    checkEffect(next, invertPatch(t, ops));
    t = next;
  }
});

/** DOM-40: a monotonic patch re-authored on any higher floor builds the same tree, ids shifted. */
export const reauthoredOnAFloor = fc.property(
  tree,
  fc.array(intent, { maxLength: 12 }),
  fc.integer({ min: 1, max: 2 ** 20 }),
  (base, intents, delta) => {
    checkIdMapping(base, opsFrom(base, intents, true), [delta]);
  },
);
