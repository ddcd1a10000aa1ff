/** DOM-32: drafts record the ops that produce what they show. */
import { describe, expect, it } from "vitest";
import {
  applyPatch,
  DomError,
  draft,
  draftWithEffect,
  nodeId,
  type PatchEffect,
  skeletonTree,
  TreeDraft,
  toSnapshot,
  toXml,
} from "../src/index.ts";
import { SKELETON } from "./arbitraries.ts";
import { checkLaws } from "./laws.ts";

const n = nodeId;

describe("DOM-32 draft", () => {
  it("records ops that reproduce the drafted tree exactly, and reads its own writes", () => {
    const base = skeletonTree(SKELETON);
    const { tree, ops } = draft(base, (d) => {
      const todo = d.appendChild(n(2), { tag: "todo" });
      const a = d.appendChild(todo, { tag: "item", attrs: { status: "pending" }, text: "a" });
      d.appendChild(todo, { tag: "item", attrs: { status: "pending" }, text: "b" });
      expect(d.select("item[status=pending]")).toHaveLength(2);
      d.set(a, "status", "completed");
      expect(d.select("item[status!=completed]").map((e) => e.text)).toEqual(["b"]);
      d.move(a, todo);
      d.appendText(a, "!");
      const turn = d.insert(n(3), null, { tag: "turn" });
      d.text(turn, "x");
      d.remove(turn);
    });
    expect(toSnapshot(applyPatch(base, ops))).toBe(toSnapshot(tree));
    expect(toXml(tree, { ids: false })).toBe(
      '<session><meta><todo><item status="pending">b</item><item status="completed">a!</item></todo></meta><body/></session>',
    );
    checkLaws(base, ops);
  });

  it("draftWithEffect: the drafted ops' effect is the one applyPatch reports for them as one patch", () => {
    const base = skeletonTree(SKELETON);
    const drafted = draftWithEffect(
      base,
      (d) => {
        const todo = d.appendChild(n(2), { tag: "todo" });
        const a = d.appendChild(todo, { tag: "item", attrs: { status: "pending" }, text: "a" });
        d.applyAll([
          ["set", a, "status", "completed"],
          ["append", a, "!"],
        ]);
        const turn = d.insert(n(3), null, { tag: "turn", children: [{ tag: "text", text: "x" }] });
        d.move(a, n(3));
        d.text(a, "b");
        d.remove(turn);
      },
      { monotonic: true },
    );
    let effect: PatchEffect | undefined;
    const applied = applyPatch(base, drafted.ops, { monotonic: true, onEffect: (e) => (effect = e) });
    expect(toSnapshot(drafted.tree)).toBe(toSnapshot(applied));
    expect(drafted.effect).toEqual(effect);
    // every op's changes, numbered by the op's place in the patch (not in its own apply)
    expect(new Set(drafted.effect.changes.map((c) => c.op))).toEqual(new Set(drafted.ops.map((_, i) => i)));
  });

  it("fails at the wrong call and records nothing for it", () => {
    const d = new TreeDraft(skeletonTree(SKELETON));
    d.appendChild(n(3), { tag: "turn" });
    expect(() => d.remove(n(3))).toThrow(DomError);
    expect(() => d.appendChild(n(99), { tag: "x" })).toThrow(/does not exist/);
    expect(d.ops).toHaveLength(1);
    expect(d.tree.childIds(3)).toEqual([4]);
  });

  it("move without an anchor puts the element last, and is a no-op when it already is", () => {
    const { tree, ops } = draft(skeletonTree(SKELETON), (d) => {
      const a = d.appendChild(n(3), { tag: "a" });
      d.appendChild(n(3), { tag: "b" });
      d.move(a, n(3));
      d.move(a, n(3));
    });
    expect(tree.childIds(3)).toEqual([5, 4]);
    expect(ops[2]).toEqual(["mv", 4, 3, 5]);
    expect(ops).toHaveLength(4);
  });

  it("monotonic drafts refuse restore forms", () => {
    const d = new TreeDraft(skeletonTree(SKELETON), { monotonic: true });
    expect(() => d.insert(n(3), null, { tag: "x", id: n(50) })).toThrow(/restore form/);
  });
});
