/**
 * fast-check generators: op "intents" that are interpreted against the evolving tree, so shrinking
 * works on small numbers while every generated id is meaningful. `valid: true` keeps only ops the
 * oracle accepts; `valid: false` also produces unknown ids, bad anchors, cycles, fixed targets,
 * bad names, bad text and mixed content.
 */
import fc from "fast-check";
import { applyPatch, type NodeId, type NodeSpec, type Op, select, skeletonTree, type Tree } from "../src/index.ts";
import { Model } from "./model.ts";

export const TAGS = ["a", "b", "todo", "item", "call", "turn", "x-y", "n.s", "_u"] as const;
export const ATTRS = ["status", "id", "k", "data-x", "a.b"] as const;
const BAD_NAMES = ["1bad", "__proto__", "_id", "xmlns", "a b", "", "a:b"];
const BAD_TEXT = ["\u0001", "a\uD800b", "\uFFFF", "x\u001B[31m"];

/** Strings with everything that is hard to escape. */
export const text = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "",
      "x",
      "completed",
      "pending",
      "<&>\"'",
      "\r\n\t",
      "a]]>b",
      " lead ",
      "😀 astral 𝄞",
      "&amp;",
      "line1\nline2\r",
    ),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
);

export const spec: fc.Arbitrary<NodeSpec> = fc.letrec<{ node: NodeSpec }>((tie) => ({
  node: fc
    .record({
      tag: fc.constantFrom(...TAGS),
      attrs: fc.option(fc.dictionary(fc.constantFrom(...ATTRS), text, { maxKeys: 3 }), { nil: undefined }),
      body: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: text.map((t) => ({ text: t })) },
        { weight: 1, depthSize: "small", arbitrary: fc.array(tie("node"), { maxLength: 3 }).map((children) => ({ children })) },
      ),
    })
    .map(({ tag, attrs, body }) => {
      const s: { tag: string; attrs?: Record<string, string>; text?: string; children?: NodeSpec[] } = { tag };
      if (attrs !== undefined) s.attrs = attrs;
      if (body !== undefined) Object.assign(s, body);
      return s as NodeSpec;
    }),
})).node;

export interface Intent {
  readonly kind: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly s: string;
  readonly spec: NodeSpec;
  readonly bad: number;
}

export const intent: fc.Arbitrary<Intent> = fc.record({
  kind: fc.nat(5),
  a: fc.nat(),
  b: fc.nat(),
  c: fc.nat(),
  s: text,
  spec,
  bad: fc.nat(19),
});

const pick = <T>(xs: readonly T[], n: number): T => xs[n % xs.length] as T;

/** Turns intents into ops against `tree`. With `valid`, drops ops the oracle rejects. */
export function opsFrom(tree: Tree, intents: readonly Intent[], valid: boolean): Op[] {
  const model = modelOf(tree);
  const ops: Op[] = [];
  for (const it of intents) {
    const live = model.liveIds();
    const id = pick(live, it.a) as NodeId;
    const other = pick(live, it.b) as NodeId;
    const kids = model.nodes.get(other)?.children ?? [];
    const after = it.c % (kids.length + 1) === 0 ? null : (pick(kids, it.c) as NodeId);
    let op: Op;
    switch (it.kind) {
      case 0:
        op = ["ins", other, after, it.spec];
        break;
      case 1:
        op = ["rm", id];
        break;
      case 2:
        op = ["set", id, pick(ATTRS, it.b), it.c % 4 === 0 ? null : it.s];
        break;
      case 3:
        op = ["mv", id, other, after];
        break;
      case 4:
        op = ["text", id, it.c % 5 === 0 ? "" : it.s];
        break;
      default:
        op = ["append", id, it.s];
    }
    if (!valid && it.bad < 6) op = corrupt(op, it, model.hwm);
    if (valid) {
      if (model.applyPatch([op]) !== undefined) continue;
    } else model.applyPatch([op]);
    ops.push(op);
  }
  return ops;
}

/** Makes an op wrong in one of the ways a caller can get it wrong. */
function corrupt(op: Op, it: Intent, hwm: number): Op {
  const missing = (hwm + 1 + (it.c % 5)) as NodeId;
  switch (it.bad) {
    case 0:
      return (op[0] === "ins" ? ["ins", missing, op[2], op[3]] : [op[0], missing, ...op.slice(2)]) as unknown as Op;
    case 1:
      if (op[0] === "ins") return ["ins", op[1], missing, op[3]];
      if (op[0] === "mv") return ["mv", op[1], op[2], missing];
      return op;
    case 2:
      return ["set", 1 as NodeId, pick(BAD_NAMES, it.c), "v"];
    case 3:
      return ["text", 2 as NodeId, pick(BAD_TEXT, it.c)];
    case 4:
      return ["ins", 1 as NodeId, null, { tag: pick(BAD_NAMES, it.c) }];
    default:
      return ["mv", 1 as NodeId, 2 as NodeId, null];
  }
}

/** The oracle's view of a real tree. */
export function modelOf(tree: Tree): Model {
  return Model.fromXmlTree(
    tree,
    select(tree, "*").map((e) => [e.id, e.tag, { ...e.attrs }, e.text, e.parent?.id ?? 0]),
  );
}

export const SKELETON: NodeSpec = { tag: "session", children: [{ tag: "meta" }, { tag: "body" }] };

/** A random tree: the session skeleton plus a random valid patch. */
export const tree: fc.Arbitrary<Tree> = fc.array(intent, { maxLength: 25 }).map((intents) => {
  const base = skeletonTree(SKELETON);
  return applyPatch(base, opsFrom(base, intents, true));
});
