/**
 * Node specs: the subtree an `ins` op carries (DOM-9), how it is checked, copied, counted and
 * walked, and how a subtree of a tree is read back as one (DOM-3). Everything here is iterative:
 * specs can be as deep as a tree (DOM-34).
 */
import { MAX_DEPTH, tooDeep } from "./depth.ts";
import { DomError } from "./errors.ts";
import { isNodeId, type NodeId } from "./ids.ts";
import { checkName, checkText, describe, invalidCharIndex } from "./names.ts";
import type { Rec } from "./tree.ts";

/** A subtree to insert. `id` is present on every node of a restore-form subtree, or on none. */
export interface NodeSpec {
  readonly tag: string;
  readonly attrs?: Readonly<Record<string, string>>;
  readonly text?: string;
  readonly children?: readonly NodeSpec[];
  readonly id?: NodeId;
}

/** Largest number of nodes one op may insert, a guard against runaway input. */
export const MAX_SPEC_NODES = 1_000_000;

const SPEC_KEYS = new Set(["tag", "attrs", "text", "children", "id"]);

/** Where a node sits in the spec being checked; the path string is only built for an error. */
interface SpecFrame {
  readonly node: unknown;
  readonly parent: SpecFrame | undefined;
  readonly index: number;
  readonly depth: number;
}

function pathOf(frame: SpecFrame): string {
  const parts: string[] = [];
  for (let f: SpecFrame | undefined = frame; f?.parent !== undefined; f = f.parent) parts.push(`.children[${f.index}]`);
  return `node${parts.reverse().join("")}`;
}

/**
 * Validates a node spec (iteratively: specs can be deep). Enforces DOM-4 (text or children, not
 * both), the all-or-none rule for explicit ids, at most {@link MAX_SPEC_NODES} nodes and at most
 * {@link MAX_DEPTH} levels (DOM-34), failing before looking any deeper.
 */
export function checkSpec(spec: unknown): NodeSpec {
  let withIds: boolean | undefined;
  let count = 0;
  const stack: SpecFrame[] = [{ node: spec, parent: undefined, index: 0, depth: 1 }];
  while (stack.length > 0) {
    const frame = stack.pop() as SpecFrame;
    const node = frame.node;
    if (++count > MAX_SPEC_NODES) throw new DomError("too-large", `an ins op may insert at most ${MAX_SPEC_NODES} nodes`);
    if (frame.depth > MAX_DEPTH) throw tooDeep("a node of the inserted spec", frame.depth);
    if (typeof node !== "object" || node === null || Array.isArray(node))
      throw new DomError("bad-op", `${pathOf(frame)} must be an object like {"tag": "todo"}, got ${describe(node)}`);
    for (const key of Object.keys(node))
      if (!SPEC_KEYS.has(key))
        throw new DomError("bad-op", `${pathOf(frame)} has unknown key ${JSON.stringify(key)}; allowed: tag, attrs, text, children, id`);
    const n = node as Record<string, unknown>;
    checkName(n.tag, "tag");
    if (n.attrs !== undefined) {
      const attrs = n.attrs;
      if (typeof attrs !== "object" || attrs === null || Array.isArray(attrs))
        throw new DomError("bad-op", `${pathOf(frame)}.attrs must be an object of strings, got ${describe(attrs)}`);
      for (const [k, v] of Object.entries(attrs)) {
        checkName(k, "attribute");
        // The path is only spelled out when the check fails.
        if (typeof v !== "string" || invalidCharIndex(v) >= 0) checkText(v, `${pathOf(frame)}.attrs.${k}`);
      }
    }
    if (n.text !== undefined && (typeof n.text !== "string" || invalidCharIndex(n.text) >= 0)) checkText(n.text, `${pathOf(frame)}.text`);
    const hasId = n.id !== undefined;
    if (hasId && !isNodeId(n.id)) throw new DomError("bad-op", `${pathOf(frame)}.id must be a node id, got ${describe(n.id)}`);
    if (withIds === undefined) withIds = hasId;
    else if (withIds !== hasId)
      throw new DomError("bad-op", `${pathOf(frame)}: either every node of an inserted subtree carries an id (restore form) or none does`);
    if (n.children !== undefined) {
      if (!Array.isArray(n.children))
        throw new DomError("bad-op", `${pathOf(frame)}.children must be an array, got ${describe(n.children)}`);
      if (n.children.length > 0 && typeof n.text === "string" && n.text !== "")
        throw new DomError("mixed-content", `${pathOf(frame)} has both text and children; an element holds one or the other`);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push({ node: n.children[i], parent: frame, index: i, depth: frame.depth + 1 });
    }
  }
  return spec as NodeSpec;
}

type MutableSpec = { -readonly [K in keyof NodeSpec]: NodeSpec[K] };

/**
 * Deep copy of a validated spec, preserving exactly the keys it had (JSON round-trip law). With
 * `mapId`, every node's `id` is passed through it (restore-form specs; see `mapIds`).
 */
export function copySpec(spec: NodeSpec, mapId?: (id: NodeId) => NodeId): NodeSpec {
  const shallow = (n: NodeSpec): MutableSpec => {
    const out: MutableSpec = { tag: n.tag };
    if (n.id !== undefined) out.id = mapId === undefined ? n.id : mapId(n.id);
    if (n.attrs !== undefined) out.attrs = { ...n.attrs };
    if (n.text !== undefined) out.text = n.text;
    return out;
  };
  const root = shallow(spec);
  // Iterative: specs may be deeper than the call stack.
  const stack: Array<[NodeSpec, MutableSpec]> = [[spec, root]];
  while (stack.length > 0) {
    const [src, dst] = stack.pop() as [NodeSpec, MutableSpec];
    if (src.children === undefined) continue;
    const kids: MutableSpec[] = [];
    for (const c of src.children) {
      const k = shallow(c);
      kids.push(k);
      stack.push([c, k]);
    }
    dst.children = kids;
  }
  return root;
}

/**
 * Calls `visit` for every node of `spec` in pre-order — the order `ins` mints ids in (DOM-2):
 * node `index` of a minted subtree gets id `root + index`.
 */
export function eachSpecNode(spec: NodeSpec, visit: (node: NodeSpec, index: number) => void): void {
  const stack: NodeSpec[] = [spec];
  let i = 0;
  while (stack.length > 0) {
    const s = stack.pop() as NodeSpec;
    visit(s, i++);
    const kids = s.children;
    if (kids !== undefined) for (let c = kids.length - 1; c >= 0; c--) stack.push(kids[c] as NodeSpec);
  }
}

/** Number of elements in a spec (the ids an `ins` of it mints). */
export function specSize(spec: NodeSpec): number {
  let n = 0;
  const stack: NodeSpec[] = [spec];
  while (stack.length > 0) {
    const s = stack.pop() as NodeSpec;
    n++;
    if (s.children !== undefined) for (const c of s.children) stack.push(c);
  }
  return n;
}

/**
 * The subtree rooted at `id` as a node spec (canonical: no empty `attrs`, `text` or `children`).
 * With `withIds`, every node carries its id: the restore form that brings the subtree back as it was.
 */
export function specOf(reader: { rec(id: number): Rec | undefined }, id: number, withIds = false): NodeSpec {
  const make = (r: Rec): MutableSpec => {
    const s: MutableSpec = { tag: r.tag };
    if (withIds) s.id = r.id;
    if (Object.keys(r.attrs).length > 0) s.attrs = { ...r.attrs };
    if (r.text !== "") s.text = r.text;
    return s;
  };
  const rootRec = reader.rec(id);
  if (rootRec === undefined) throw new DomError("unknown-node", `element ${id} does not exist in this tree`);
  const root = make(rootRec);
  const stack: Array<[Rec, MutableSpec]> = [[rootRec, root]];
  while (stack.length > 0) {
    const [r, s] = stack.pop() as [Rec, MutableSpec];
    if (r.first === 0) continue;
    const kids: MutableSpec[] = [];
    for (let c = r.first; c !== 0; ) {
      const cr = reader.rec(c) as Rec;
      const k = make(cr);
      kids.push(k);
      stack.push([cr, k]);
      c = cr.next;
    }
    s.children = kids;
  }
  return root;
}
