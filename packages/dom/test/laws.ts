/**
 * The one shared law helper (STYLE habit 9): every op kind, every example patch and every random
 * patch goes through `checkLaws`, and every invalid patch through `checkRejected`. Rule numbers
 * refer to docs/spec/dom.md.
 */
import { expect } from "vitest";
import {
  applyPatch,
  type DomErrorCode,
  decodePatch,
  diffToPatch,
  diffTrees,
  fromSnapshot,
  invertPatch,
  mintedIds,
  type Op,
  parseXml,
  reverseDiff,
  type Tree,
  toPages,
  toSnapshot,
  toXml,
  treeFromPages,
  tryApplyPatch,
} from "../src/index.ts";
import { checkEffect, checkIdMapping } from "./effects.ts";

/**
 * Applies `ops` to `before` and checks every law; returns the result.
 * - DOM-7/8: the input is untouched; replaying on a copy gives the same bytes.
 * - DOM-14: the inverse restores `before` exactly (bytes, ids, high-water mark).
 * - DOM-15: the ops (and the inverse) survive a JSON round trip.
 * - DOM-16/21/23: both trees survive XML, snapshot and paged-snapshot round trips.
 * - DOM-30: the diff turned into a patch reproduces the result, and its reverse the input.
 * - DOM-39: the effect `applyPatch` reports, of the patch and of its inverse, replays to the result
 *   and nets to the diff (effects.ts).
 * - DOM-40: re-authored by `shiftMinted` on a higher floor, a monotonic patch builds the same tree
 *   and effect with the minted ids shifted.
 * - DOM-44: `mintedIds`, without a tree, gives the mark after the patch and names exactly the
 *   elements it added, with their tags and parents.
 */
export function checkLaws(before: Tree, ops: readonly Op[], expected?: { xml?: string; readable?: string }): Tree {
  const beforeSnap = toSnapshot(before);
  const after = applyPatch(before, ops);
  const afterSnap = toSnapshot(after);
  expect(toSnapshot(before), "DOM-8: applying must not change the input").toBe(beforeSnap);
  if (expected?.xml !== undefined) expect(toXml(after)).toBe(expected.xml);
  if (expected?.readable !== undefined) expect(toXml(after, { ids: false })).toBe(expected.readable);

  expect(toSnapshot(applyPatch(fromSnapshot(beforeSnap), ops)), "L1/DOM-7: replay on a copy gives the same bytes").toBe(afterSnap);

  const inverse = invertPatch(before, ops);
  expect(toSnapshot(applyPatch(after, inverse)), "DOM-14: the inverse restores the input exactly").toBe(beforeSnap);

  expect(toSnapshot(checkEffect(before, ops).tree), "DOM-39: asking for the effect changes nothing").toBe(afterSnap);
  checkEffect(after, inverse);
  checkIdMapping(before, ops);
  checkMinted(before, ops, after);

  expect(decodePatch(JSON.parse(JSON.stringify(ops))), "DOM-15: ops survive JSON").toEqual(ops);
  expect(decodePatch(JSON.parse(JSON.stringify(inverse))), "DOM-15: inverses survive JSON").toEqual(inverse);

  for (const [t, snap] of [
    [before, beforeSnap],
    [after, afterSnap],
  ] as const) {
    const xml = toXml(t);
    const reparsed = parseXml(xml);
    expect(toXml(reparsed), "DOM-16: XML is a fixed point").toBe(xml);
    expect(toSnapshot(reparsed), "DOM-16: XML carries the whole tree").toBe(snap);
    expect(toSnapshot(fromSnapshot(snap)), "DOM-21: snapshots round-trip").toBe(snap);
    const { header, pages } = toPages(t);
    const refs = pages.map((p, i) => (p === undefined ? undefined : `page-${i}`));
    const paged = treeFromPages(header, refs, (ref) => pages[Number(ref.slice(5))] as string);
    expect(toSnapshot(paged), "DOM-23: a tree loaded lazily from pages is the same tree").toBe(snap);
  }

  const d = diffTrees(before, after);
  expect(toSnapshot(applyPatch(before, diffToPatch(before, d))), "DOM-30: the diff's patch gives the result").toBe(afterSnap);
  expect(toSnapshot(applyPatch(after, diffToPatch(after, reverseDiff(d)))), "DOM-29: the reversed diff goes back").toBe(beforeSnap);
  return after;
}

/**
 * Checks that `ops` is rejected with `code` (DOM-7, DOM-20): the error names the failing op, the
 * input is untouched, and `invertPatch` refuses it the same way.
 */
export function checkRejected(before: Tree, ops: readonly unknown[], code: DomErrorCode, opIndex?: number): void {
  const beforeSnap = toSnapshot(before);
  const result = tryApplyPatch(before, ops as Op[]);
  expect(result.ok, `expected ${code}`).toBe(false);
  if (result.ok) return;
  expect(result.error.code, result.error.message).toBe(code);
  let reported = false;
  expect(() => applyPatch(before, ops as Op[], { onEffect: () => (reported = true) })).toThrow(result.error.message);
  expect(reported, "DOM-39: a failed patch reports no effect").toBe(false);
  if (opIndex !== undefined) {
    expect(result.error.opIndex).toBe(opIndex);
    expect(result.error.message).toMatch(new RegExp(`^op ${opIndex}: `));
  }
  expect(() => applyPatch(before, ops as Op[])).toThrow(result.error.message);
  expect(() => invertPatch(before, ops as Op[])).toThrow(result.error.message);
  expect(toSnapshot(before), "DOM-7: a failed patch leaves the input untouched").toBe(beforeSnap);
}

/** DOM-44: what `mintedIds` says a patch adds is what the tree says it added. */
function checkMinted(before: Tree, ops: readonly Op[], after: Tree): void {
  const seen: [number, string, number][] = [];
  const mark = mintedIds(ops, before.hwm, (id, spec, parent) => void seen.push([id, spec.tag, parent]));
  expect(mark, "DOM-44: mintedIds gives the mark after the patch").toBe(after.hwm);
  // The elements the patch added and that are still there (a later op of the patch may remove one).
  const added = seen.filter(([id]) => !before.has(id) && after.has(id));
  const fresh: [number, string, number][] = [];
  for (const [id] of added) {
    const e = after.get(id);
    if (e !== undefined) fresh.push([id, e.tag, e.parent?.id ?? 0]);
  }
  const moved = new Set(ops.filter((op) => op[0] === "mv").map((op) => op[1] as number));
  expect(
    added.filter(([id]) => !moved.has(id)),
    "DOM-44: mintedIds names each added element with its tag and parent",
  ).toEqual(fresh.filter(([id]) => !moved.has(id)));
  const all = new Set(seen.map(([id]) => id));
  for (const stack = [after.rootId as number]; stack.length > 0; ) {
    const id = stack.pop() as number;
    if (!before.has(id)) expect(all.has(id), `DOM-44: element ${id} was added but not named`).toBe(true);
    stack.push(...after.childIds(id));
  }
}
