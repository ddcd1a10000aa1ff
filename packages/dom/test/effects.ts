/**
 * Oracles for what a patch did (DOM-39) and for re-authoring ops under an id shift (DOM-40), called
 * by the shared law helper (laws.ts) for every op test and every random patch.
 *
 * - `checkEffect`: the effect `applyPatch` reports, replayed change by change on a plain model of
 *   the tree before (each change's `before` values checked against the model), gives the tree after;
 *   and the net of its changes equals what `diffTrees(before, after)` finds.
 * - `checkIdMapping`: `shiftMinted` re-authors a monotonic patch on a floor `delta` ids higher, and
 *   applying it there gives the same tree with every minted id `delta` higher, and the same effect.
 */
import { expect } from "vitest";
import {
  type ApplyOptions,
  applyWithEffect,
  type Change,
  type DiffPosition,
  diffTrees,
  eachInserted,
  MAX_NODE_ID,
  type NodeId,
  type NodeSpec,
  type Op,
  type PatchEffect,
  shiftMinted,
  type Tree,
  tryApplyPatch,
  walkTree,
} from "../src/index.ts";

/** One element of the plain model: what a tree holds, with the child order as an array. */
interface Node {
  tag: string;
  attrs: Record<string, string>;
  text: string;
  parent: number;
  children: number[];
}

type Model = Map<number, Node>;

function modelOf(tree: Tree): Model {
  const m: Model = new Map();
  walkTree(tree, tree.rootId, (r) => {
    m.set(r.id, { tag: r.tag, attrs: { ...r.attrs }, text: r.text, parent: r.parent, children: tree.childIds(r.id) });
  });
  return m;
}

/** The model as plain sorted data, for equality. */
function plain(m: Model): unknown[] {
  return [...m.entries()].sort(([a], [b]) => a - b);
}

function positionIn(m: Model, id: number): DiffPosition {
  const n = m.get(id) as Node;
  const siblings = (m.get(n.parent) as Node).children;
  const i = siblings.indexOf(id);
  return { parent: n.parent as NodeId, after: i === 0 ? null : (siblings[i - 1] as NodeId) };
}

function place(m: Model, id: number, at: DiffPosition, what: string): void {
  const parent = m.get(at.parent);
  expect(parent, `${what}: the parent ${at.parent} is in the model`).toBeDefined();
  const kids = (parent as Node).children;
  const i = at.after === null ? 0 : kids.indexOf(at.after) + 1;
  expect(i > 0 || at.after === null, `${what}: the anchor ${at.after} is a child of ${at.parent}`).toBe(true);
  kids.splice(i, 0, id);
  (m.get(id) as Node).parent = at.parent;
}

function detach(m: Model, id: number): void {
  const kids = (m.get((m.get(id) as Node).parent) as Node).children;
  kids.splice(kids.indexOf(id), 1);
}

function subtreeIds(m: Model, root: number): number[] {
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const id = stack.pop() as number;
    out.push(id);
    const kids = (m.get(id) as Node).children;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i] as number);
  }
  return out;
}

/** Replays `effect` on the model of `before`; every change's `before` side must match the model. */
function replay(before: Tree, effect: PatchEffect): Model {
  const m = modelOf(before);
  for (const c of effect.changes) {
    const what = `change ${JSON.stringify(c).slice(0, 120)}`;
    switch (c.type) {
      case "insert": {
        const idOf = new Map<NodeSpec, number>();
        let n = 0;
        eachInserted(c, (id, node, index) => {
          expect(index, what).toBe(n++);
          expect(m.has(id), `${what}: ${id} is new`).toBe(false);
          if (c.minted) expect(id, what).toBe(c.root + index);
          idOf.set(node, id);
        });
        expect(n, `${what}: count`).toBe(c.count);
        expect(idOf.get(c.spec), `${what}: root`).toBe(c.root);
        for (const [node, id] of idOf) {
          const kids = (node.children ?? []).map((k) => idOf.get(k) as number);
          m.set(id, { tag: node.tag, attrs: { ...node.attrs }, text: kids.length > 0 ? "" : (node.text ?? ""), parent: 0, children: kids });
        }
        for (const id of idOf.values()) for (const k of (m.get(id) as Node).children) (m.get(k) as Node).parent = id;
        place(m, c.root, c.at, what);
        break;
      }
      case "remove":
        expect(positionIn(m, c.root), what).toEqual(c.at);
        expect([...c.ids], `${what}: every removed id, in pre-order`).toEqual(subtreeIds(m, c.root));
        detach(m, c.root);
        for (const id of c.ids) m.delete(id);
        break;
      case "attr": {
        const n = m.get(c.id) as Node;
        expect(n, what).toBeDefined();
        expect(Object.hasOwn(n.attrs, c.name) ? n.attrs[c.name] : null, what).toBe(c.before);
        if (c.after === null) delete n.attrs[c.name];
        else n.attrs[c.name] = c.after;
        break;
      }
      case "text": {
        const n = m.get(c.id) as Node;
        expect(n.text, what).toBe(c.before);
        expect(n.children, what).toEqual([]);
        if (c.mode === "append") expect(c.after.startsWith(c.before), what).toBe(true);
        n.text = c.after;
        break;
      }
      case "move":
        expect(positionIn(m, c.id), what).toEqual(c.from);
        detach(m, c.id);
        place(m, c.id, c.to, what);
        break;
      default: {
        const never: never = c;
        throw new Error(`unknown change ${JSON.stringify(never)}`);
      }
    }
  }
  return m;
}

/** The net of the changes, as a diff would state it (built from the changes alone). */
function netOf(before: Tree, effect: PatchEffect) {
  const present = new Set<number>();
  walkTree(before, before.rootId, (r) => void present.add(r.id));
  const tagOf = new Map<number, string>();
  const unstable = new Set<number>(); // inserted or removed by the patch
  const attrs = new Map<string, { id: number; name: string; before: string | null; after: string | null }>();
  const texts = new Map<number, { before: string; after: string }>();
  const parents = new Map<number, { from: number; to: number }>();
  for (const c of effect.changes)
    switch (c.type) {
      case "insert":
        eachInserted(c, (id, node) => {
          present.add(id);
          unstable.add(id);
          tagOf.set(id, node.tag);
        });
        break;
      case "remove":
        for (const id of c.ids) {
          present.delete(id);
          unstable.add(id);
        }
        break;
      case "attr": {
        const key = `${c.id} ${c.name}`;
        const was = attrs.get(key);
        attrs.set(key, { id: c.id, name: c.name, before: was === undefined ? c.before : was.before, after: c.after });
        break;
      }
      case "text":
        texts.set(c.id, { before: texts.get(c.id)?.before ?? c.before, after: c.after });
        break;
      case "move":
        parents.set(c.id, { from: parents.get(c.id)?.from ?? c.from.parent, to: c.to.parent });
        break;
    }
  const added = new Set<number>();
  const removed = new Set<number>();
  for (const id of present) if (!before.has(id) || (unstable.has(id) && tagOf.get(id) !== before.get(id)?.tag)) added.add(id);
  walkTree(before, before.rootId, (r) => {
    if (!present.has(r.id) || added.has(r.id)) removed.add(r.id);
  });
  const stable = (id: number) => !unstable.has(id) && present.has(id);
  return {
    added: [...added].sort((a, b) => a - b),
    removed: [...removed].sort((a, b) => a - b),
    attrs: [...attrs.values()].filter((a) => stable(a.id) && a.before !== a.after).map((a) => `${a.id} ${a.name} ${a.before} ${a.after}`),
    text: [...texts.entries()].filter(([id, t]) => stable(id) && t.before !== t.after).map(([id, t]) => `${id} ${t.before} ${t.after}`),
    reparented: [...parents.entries()].filter(([id, p]) => stable(id) && p.from !== p.to).map(([id]) => id),
    unstable,
  };
}

function specIds(spec: NodeSpec, out: number[]): void {
  const stack = [spec];
  for (let s = stack.pop(); s !== undefined; s = stack.pop()) {
    out.push(s.id as number);
    for (const c of s.children ?? []) stack.push(c);
  }
}

/**
 * DOM-39: applies `ops` with its effect and checks the effect against the trees before and after.
 * Returns the tree and the effect.
 */
export function checkEffect(before: Tree, ops: readonly Op[], options: ApplyOptions = {}): { tree: Tree; effect: PatchEffect } {
  const { tree: after, effect } = applyWithEffect(before, ops, options);
  expect(effect.hwm, "DOM-39: the high-water mark before and after").toEqual({ before: before.hwm, after: after.hwm });
  let last = 0;
  for (const c of effect.changes) {
    expect(c.op >= last && c.op < ops.length, "DOM-39: changes are in op order").toBe(true);
    last = c.op;
  }
  expect(plain(replay(before, effect)), "DOM-39: the tree before plus the changes is the tree after").toEqual(plain(modelOf(after)));

  const net = netOf(before, effect);
  const d = diffTrees(before, after);
  const ids = (subtrees: readonly { node: NodeSpec }[]) => {
    const out: number[] = [];
    for (const s of subtrees) specIds(s.node, out);
    return out.sort((a, b) => a - b);
  };
  expect(net.added, "DOM-39: the ids added, as the diff finds them").toEqual(ids(d.added));
  expect(net.removed, "DOM-39: the ids removed, as the diff finds them").toEqual(ids(d.removed));
  const stable = (id: number) => !net.unstable.has(id);
  expect(net.attrs.sort(), "DOM-39: the net attribute changes, as the diff finds them").toEqual(
    d.attrs
      .filter((a) => stable(a.id))
      .map((a) => `${a.id} ${a.name} ${a.before} ${a.after}`)
      .sort(),
  );
  expect(net.text.sort(), "DOM-39: the net text changes, as the diff finds them").toEqual(
    d.text
      .filter((t) => stable(t.id))
      .map((t) => `${t.id} ${t.before} ${t.after}`)
      .sort(),
  );
  expect(
    net.reparented.sort((a, b) => a - b),
    "DOM-39: the elements that changed parent, as the diff finds them",
  ).toEqual(
    d.moved
      .filter((m) => stable(m.id) && m.from.parent !== m.to.parent)
      .map((m) => m.id as number)
      .sort((a, b) => a - b),
  );
  return { tree: after, effect };
}

/** `c` with its ids passed through `map` and its op index moved by `shift`. */
function mapChange(c: Change, map: (id: number) => number, shift: number): Change {
  const at = (p: DiffPosition): DiffPosition => ({
    parent: map(p.parent) as NodeId,
    after: p.after === null ? null : (map(p.after) as NodeId),
  });
  const op = c.op + shift;
  switch (c.type) {
    case "insert":
      return { ...c, op, root: map(c.root) as NodeId, at: at(c.at) };
    case "remove":
      return { ...c, op, root: map(c.root) as NodeId, at: at(c.at), ids: c.ids.map((id) => map(id) as NodeId) };
    case "attr":
    case "text":
      return { ...c, op, id: map(c.id) as NodeId };
    case "move":
      return { ...c, op, id: map(c.id) as NodeId, from: at(c.from), to: at(c.to) };
    default: {
      const never: never = c;
      throw new Error(`unknown change ${JSON.stringify(never)}`);
    }
  }
}

/** The tree as plain data with its ids passed through `map`. */
function relabelled(tree: Tree, map: (id: number) => number): unknown[] {
  const out: unknown[] = [];
  walkTree(tree, tree.rootId, (r) => {
    out.push([map(r.id), r.tag, { ...r.attrs }, r.text, r.parent === 0 ? 0 : map(r.parent), tree.childIds(r.id).map(map)]);
  });
  return out.sort((a, b) => (a as [number])[0] - (b as [number])[0]);
}

/**
 * DOM-40: when `ops` applies to `before` monotonically, re-authoring it with `shiftMinted` on a
 * floor `delta` above the mark gives the same tree and the same effect, minted ids `delta` higher.
 */
export function checkIdMapping(before: Tree, ops: readonly Op[], deltas: readonly number[] = [1, 300, 4096]): void {
  if (!tryApplyPatch(before, ops, { monotonic: true }).ok) return;
  const { tree: t1, effect: e1 } = applyWithEffect(before, ops, { monotonic: true });
  for (const delta of deltas) {
    if (t1.hwm + delta > MAX_NODE_ID) continue; // no room above: the engine reserves ranges below the limit
    const map = (id: number) => (id > before.hwm ? id + delta : id);
    const moved: Op[] = [["set", 0, "hwm", String(before.hwm + delta)], ...shiftMinted(ops, before.hwm, delta)];
    const { tree: t2, effect: e2 } = applyWithEffect(before, moved, { monotonic: true });
    expect(t2.hwm, "DOM-40: the mark is delta higher").toBe(t1.hwm + delta);
    expect(
      relabelled(t2, (id) => id),
      "DOM-40: the same tree, every minted id delta higher",
    ).toEqual(relabelled(t1, map));
    expect(e2.changes, "DOM-40: the same effect, every minted id delta higher").toEqual(e1.changes.map((c) => mapChange(c, map, 1)));
  }
}
