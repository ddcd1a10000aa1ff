/**
 * The properties the fuzz tests check, shared by properties.test.ts (random seeds) and
 * regressions.test.ts (pinned seeds).
 */
import fc from "fast-check";
import { expect } from "vitest";
import { applyPatch, diffToPatch, diffTrees, parseXml, toSnapshot, toXml, tryApplyPatch } from "../src/index.ts";
import { intent, modelOf, opsFrom, tree } from "./arbitraries.ts";
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
