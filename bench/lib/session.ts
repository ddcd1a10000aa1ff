/**
 * Session-shaped trees for benchmarks, built the way the engine builds them: a fixed skeleton
 * `<session><meta/><body/></session>`, then `ins` ops appending `<turn>` subtrees to the body through
 * `applyPatch`. Deterministic for a given seed.
 *
 * A turn holds a user message, 1–4 tool calls (attributes `tool`, `path`, sometimes `status`, with
 * their output as text), every third turn a `<todo>` list of `<item status>` entries, and a reply.
 */
import { applyPatch, type NodeId, type NodeSpec, type Op, skeletonTree, specSize, type Tree } from "@strata/dom";
import { pick, rng } from "./stats.ts";

export const SESSION_ID = 1;
export const META_ID = 2;
export const BODY_ID = 3;

const TOOLS = ["read", "read", "read", "write", "bash", "grep", "edit"] as const;
const DIRS = ["/src", "/src/dom", "/src/engine", "/test", "/docs", "/scripts"] as const;
const FILES = ["index.ts", "tree.ts", "apply.ts", "select.ts", "README.md", "run.sh", "a & b.txt"] as const;
const STATUSES = ["ok", "ok", "ok", "ok", "ok", "error", "env_error"] as const;
const TODO = ["pending", "in_progress", "completed", "completed"] as const;
const WORDS = [
  "the",
  "tree",
  "select",
  "patch",
  "apply",
  "version",
  "node",
  "<call>",
  "x & y",
  "turn",
  "result",
  '"quoted"',
  "error:",
  "ok",
  "42",
  "const",
  "return",
  "=>",
];

export interface SessionOptions {
  /** Seed of the generator (default 1). */
  readonly seed?: number;
  /** Multiplies text lengths (default 1: short messages and tool outputs). */
  readonly textScale?: number;
}

function sentence(r: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(pick(r, WORDS));
  return out.join(" ");
}

/** One `<turn>` subtree. */
export function turnSpec(r: () => number, n: number, textScale = 1): NodeSpec {
  const children: NodeSpec[] = [{ tag: "msg", attrs: { role: "user" }, text: sentence(r, Math.ceil((4 + r() * 12) * textScale)) }];
  const calls = 1 + Math.floor(r() * 4);
  for (let c = 0; c < calls; c++) {
    const attrs: Record<string, string> = { tool: pick(r, TOOLS), path: `${pick(r, DIRS)}/${pick(r, FILES)}` };
    if (r() < 0.75) attrs.status = pick(r, STATUSES);
    children.push({ tag: "call", attrs, text: sentence(r, Math.ceil((2 + r() * 20) * textScale)) });
  }
  if (n % 3 === 0) {
    const items: NodeSpec[] = [];
    const k = 2 + Math.floor(r() * 3);
    for (let i = 0; i < k; i++) items.push({ tag: "item", attrs: { status: pick(r, TODO) }, text: sentence(r, 3) });
    children.push({ tag: "todo", children: items });
  }
  children.push({ tag: "reply", text: sentence(r, Math.ceil((3 + r() * 10) * textScale)) });
  return { tag: "turn", attrs: { n: String(n), model: "m1" }, children };
}

/** Truncates a turn spec to exactly `size` elements (at least 1). */
function truncate(spec: NodeSpec, size: number): NodeSpec {
  const kids: NodeSpec[] = [];
  let left = size - 1;
  for (const c of spec.children ?? []) {
    if (left <= 0) break;
    const s = specSize(c);
    if (s <= left) {
      kids.push(c);
      left -= s;
    }
  }
  while (left > 0) {
    kids.push({ tag: "reply", text: "pad" });
    left--;
  }
  return kids.length === 0 ? { tag: "turn", attrs: spec.attrs ?? {} } : { ...spec, children: kids };
}

/** The fixed skeleton of every session tree. */
export function skeleton(): Tree {
  return skeletonTree({
    tag: "session",
    attrs: { id: "bench", format: "1" },
    children: [{ tag: "meta" }, { tag: "body" }],
  });
}

/**
 * A session tree of exactly `elements` elements (skeleton included), built by applying `ins`
 * patches of up to 256 turns each.
 */
export function sessionTree(elements: number, options: SessionOptions = {}): Tree {
  const r = rng(options.seed ?? 1);
  const textScale = options.textScale ?? 1;
  let tree = skeleton();
  // A few meta entries, as a real session carries.
  tree = applyPatch(tree, [
    ["ins", META_ID as NodeId, null, { tag: "model", attrs: { name: "m1", provider: "p" }, text: "model m1" }],
    ["ins", META_ID as NodeId, (tree.hwm + 1) as NodeId, { tag: "cwd", text: "/work/project" }],
  ]);
  let n = 0;
  while (tree.size < elements) {
    const ops: Op[] = [];
    let size = tree.size;
    let after: number = tree.get(BODY_ID)?.lastChild?.id ?? 0;
    let nextId = tree.hwm + 1;
    while (ops.length < 256 && size < elements) {
      let spec = turnSpec(r, n++, textScale);
      let s = specSize(spec);
      if (size + s > elements) {
        spec = truncate(spec, elements - size);
        s = specSize(spec);
      }
      ops.push(["ins", BODY_ID as NodeId, after === 0 ? null : (after as NodeId), spec]);
      after = nextId;
      nextId += s;
      size += s;
    }
    tree = applyPatch(tree, ops);
  }
  return tree;
}

/** Ids of the elements of `tree`, split by role, for picking op targets. */
export interface Targets {
  /** Every element. */
  readonly all: number[];
  /** Elements without children that can be removed or moved (not part of the skeleton). */
  readonly leaves: number[];
  /** The turns (children of the body), in order. */
  readonly turns: number[];
}

export function targets(tree: Tree): Targets {
  const all: number[] = [];
  const leaves: number[] = [];
  for (let id = 1; id <= tree.hwm; id++) {
    const e = tree.get(id);
    if (e === undefined) continue;
    all.push(id);
    const parent = e.parent?.id ?? 0;
    if (e.firstChild === null && !tree.isFixed(id) && parent !== BODY_ID && parent !== META_ID) leaves.push(id);
  }
  return { all, leaves, turns: tree.childIds(BODY_ID) };
}
