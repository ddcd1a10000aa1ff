/**
 * A from-scratch oracle for the op semantics (STYLE habit 10): plain mutable objects with child
 * arrays, none of the paging, linked lists or sharing of the real tree. Property tests apply the
 * same ops to both and compare canonical XML and error codes.
 */
import { type DomErrorCode, escapeAttr, escapeText, type NodeSpec, nameProblem, type Op } from "../src/index.ts";

interface MNode {
  id: number;
  tag: string;
  attrs: Map<string, string>;
  text: string;
  parent: number;
  children: number[];
}

export class ModelError extends Error {
  constructor(readonly code: DomErrorCode) {
    super(code);
  }
}

const INVALID_TEXT =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export class Model {
  nodes = new Map<number, MNode>();
  hwm = 0;
  root = 0;
  fixed = new Set<number>();

  static fromXmlTree(
    t: { hwm: number; rootId: number; fixed: readonly number[] },
    walk: Array<[number, string, Record<string, string>, string, number]>,
  ): Model {
    const m = new Model();
    m.hwm = t.hwm;
    m.root = t.rootId;
    m.fixed = new Set(t.fixed);
    for (const [id, tag, attrs, text, parent] of walk) {
      m.nodes.set(id, { id, tag, attrs: new Map(Object.entries(attrs)), text, parent, children: [] });
      if (parent !== 0) m.nodes.get(parent)?.children.push(id);
    }
    return m;
  }

  clone(): Model {
    const m = new Model();
    m.hwm = this.hwm;
    m.root = this.root;
    m.fixed = new Set(this.fixed);
    for (const [id, n] of this.nodes) m.nodes.set(id, { ...n, attrs: new Map(n.attrs), children: [...n.children] });
    return m;
  }

  /** Applies a patch all-or-nothing; returns the error code or undefined. */
  applyPatch(ops: readonly Op[], monotonic = false): DomErrorCode | undefined {
    const work = this.clone();
    try {
      for (const op of ops) work.apply(op, monotonic);
    } catch (e) {
      if (e instanceof ModelError) return e.code;
      throw e;
    }
    Object.assign(this, work);
    return undefined;
  }

  private need(id: unknown): MNode {
    const n = typeof id === "number" ? this.nodes.get(id) : undefined;
    if (n === undefined) throw new ModelError("unknown-node");
    return n;
  }

  private checkSpec(spec: NodeSpec): void {
    // Same pre-order as the real validator, so the first error found is the same one.
    const stack: NodeSpec[] = [spec];
    const withIds = spec.id !== undefined;
    while (stack.length > 0) {
      const s = stack.pop() as NodeSpec;
      if (nameProblem(s.tag, "tag")) throw new ModelError("bad-name");
      for (const [k, v] of Object.entries(s.attrs ?? {})) {
        if (nameProblem(k, "attribute")) throw new ModelError("bad-name");
        if (INVALID_TEXT.test(v)) throw new ModelError("bad-text");
      }
      if (s.text !== undefined && INVALID_TEXT.test(s.text)) throw new ModelError("bad-text");
      if ((s.id !== undefined) !== withIds) throw new ModelError("bad-op");
      if ((s.children?.length ?? 0) > 0 && (s.text ?? "") !== "") throw new ModelError("mixed-content");
      const kids = s.children ?? [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i] as NodeSpec);
    }
  }

  apply(op: Op, monotonic: boolean): void {
    switch (op[0]) {
      case "ins": {
        const [, parentId, after, spec] = op;
        this.checkSpec(spec);
        const parent = this.need(parentId);
        if (parent.text !== "") throw new ModelError("mixed-content");
        let pos = 0;
        if (after !== null) {
          pos = parent.children.indexOf(after) + 1;
          if (pos === 0) throw new ModelError("bad-anchor");
        }
        if (spec.id !== undefined && monotonic) throw new ModelError("bad-id");
        const created: MNode[] = [];
        const seen = new Set<number>();
        const stack: Array<[NodeSpec, number]> = [[spec, parentId]];
        let hwm = this.hwm;
        const order: Array<[NodeSpec, number, number]> = [];
        while (stack.length > 0) {
          const [s, p] = stack.pop() as [NodeSpec, number];
          let id: number;
          if (s.id !== undefined) {
            id = s.id;
            if (seen.has(id) || this.nodes.has(id)) throw new ModelError("bad-id");
            seen.add(id);
            hwm = Math.max(hwm, id);
          } else id = ++hwm;
          order.push([s, id, p]);
          const kids = s.children ?? [];
          for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i] as NodeSpec, id]);
        }
        for (const [s, id, p] of order) {
          const n: MNode = { id, tag: s.tag, attrs: new Map(Object.entries(s.attrs ?? {})), text: s.text ?? "", parent: p, children: [] };
          created.push(n);
          this.nodes.set(id, n);
          if (p !== parentId) this.need(p).children.push(id);
        }
        parent.children.splice(pos, 0, (created[0] as MNode).id);
        this.hwm = hwm;
        return;
      }
      case "rm": {
        const n = this.need(op[1]);
        if (this.fixed.has(n.id) || n.id === this.root) throw new ModelError("fixed-node");
        const p = this.need(n.parent);
        p.children.splice(p.children.indexOf(n.id), 1);
        const stack = [n.id];
        while (stack.length > 0) {
          const x = stack.pop() as number;
          stack.push(...this.need(x).children);
          this.nodes.delete(x);
        }
        return;
      }
      case "set": {
        const [, id, name, value] = op;
        if (id === 0) {
          const h = Number(value);
          if (h < this.hwm) {
            if (monotonic) throw new ModelError("bad-hwm");
            if (h < Math.max(0, ...this.nodes.keys())) throw new ModelError("bad-hwm");
          }
          this.hwm = h;
          return;
        }
        if (nameProblem(name, "attribute")) throw new ModelError("bad-name");
        if (value !== null && INVALID_TEXT.test(value)) throw new ModelError("bad-text");
        const n = this.need(id);
        if (value === null) n.attrs.delete(name);
        else n.attrs.set(name, value);
        return;
      }
      case "mv": {
        const [, id, parentId, after] = op;
        const n = this.need(id);
        if (this.fixed.has(n.id) || n.id === this.root) throw new ModelError("fixed-node");
        const parent = this.need(parentId);
        if (parent.text !== "") throw new ModelError("mixed-content");
        for (let p = parentId as number; p !== 0; p = this.need(p).parent) if (p === id) throw new ModelError("cycle");
        if (after === id) throw new ModelError("bad-anchor");
        if (after !== null && !parent.children.includes(after)) throw new ModelError("bad-anchor");
        const old = this.need(n.parent);
        old.children.splice(old.children.indexOf(id), 1);
        const pos = after === null ? 0 : parent.children.indexOf(after) + 1;
        parent.children.splice(pos, 0, id);
        n.parent = parentId;
        return;
      }
      case "text":
      case "append": {
        const [kind, id, value] = op;
        if (INVALID_TEXT.test(value)) throw new ModelError("bad-text");
        const n = this.need(id);
        if (n.children.length > 0) throw new ModelError("mixed-content");
        n.text = kind === "append" ? n.text + value : value;
        return;
      }
      default: {
        const never: never = op;
        throw new Error(`the oracle has no model of op ${JSON.stringify(never)}`);
      }
    }
  }

  /** Canonical XML, written independently of the real serializer. */
  toXml(): string {
    const out: string[] = [`<?strata hwm="${this.hwm}" fixed="${[...this.fixed].sort((a, b) => a - b).join(" ")}"?>`];
    const write = (id: number): void => {
      const n = this.need(id);
      const attrs = [...n.attrs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      out.push(`<${n.tag} _id="${id}"${attrs.map(([k, v]) => ` ${k}="${escapeAttr(v)}"`).join("")}`);
      if (n.children.length > 0) {
        out.push(">");
        for (const c of n.children) write(c);
        out.push(`</${n.tag}>`);
      } else if (n.text !== "") out.push(`>${escapeText(n.text)}</${n.tag}>`);
      else out.push("/>");
    };
    write(this.root);
    return out.join("");
  }

  liveIds(): number[] {
    return [...this.nodes.keys()];
  }
}
