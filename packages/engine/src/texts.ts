/**
 * Long texts are stored once (EN-10, decision 0006). A text an event introduced (an `ins` node's
 * text, a `text` op, `append` chunks) is already in the log, so a snapshot page stores a reference
 * to it instead of a copy; only texts with no single source are stored as content-addressed blobs.
 *
 * `TextIndex` remembers where the current text of each element came from. It is a runtime cache
 * (L1: it holds no state of its own — a wrong or missing entry only means a text is stored as a
 * blob instead of a reference), filled as events are folded and as pages are loaded.
 */
import type { NodeSpec, Op, Tree } from "@strata/dom";
import type { EventId, Store } from "@strata/store";
import { EngineError } from "./errors.ts";

/** Texts shorter than this stay inline in pages. */
export const TEXT_REF_MIN = 128;
/** A text assembled from more parts than this is stored as one blob instead. */
const MAX_PARTS = 64;

/**
 * Where a text is stored: `["e", event, op, node]` — the text of pre-order node `node` of op `op`'s
 * spec (`node` = -1: the op's own text argument); `["b", sha256]` — a blob; `["c", parts]` — the
 * concatenation of parts (references or short inline strings).
 */
export type TextRef = readonly ["e", number, number, number] | readonly ["b", string] | readonly ["c", readonly (TextRef | string)[]];

interface Entry {
  readonly text: string;
  readonly ref: TextRef;
}

export class TextIndex {
  readonly #entries = new Map<number, Entry>();
  #pruneAt = 65_536;

  /** How many elements have a known source (for tests and diagnostics). */
  get size(): number {
    return this.#entries.size;
  }

  /** Records where the texts set by `ops` (event `event`, applied to `before`) live in the log. */
  recordPatch(event: EventId, before: Tree, ops: readonly Op[]): void {
    let hwm = before.hwm;
    const created = new Map<number, string>();
    for (let k = 0; k < ops.length; k++) {
      const op = ops[k] as Op;
      switch (op[0]) {
        case "ins": {
          // Pre-order, as the tree mints ids (DOM-2).
          const stack: NodeSpec[] = [op[3]];
          let i = 0;
          while (stack.length > 0) {
            const s = stack.pop() as NodeSpec;
            const id = s.id ?? hwm + 1 + i;
            const text = s.text ?? "";
            if (text.length >= TEXT_REF_MIN) this.#entries.set(id, { text, ref: ["e", event, k, i] });
            else {
              this.#entries.delete(id);
              created.set(id, text);
            }
            i++;
            const kids = s.children;
            if (kids !== undefined) for (let c = kids.length - 1; c >= 0; c--) stack.push(kids[c] as NodeSpec);
          }
          if (op[3].id === undefined) hwm += i;
          break;
        }
        case "text":
          this.#entries.delete(op[1]);
          if (op[2].length >= TEXT_REF_MIN) this.#entries.set(op[1], { text: op[2], ref: ["e", event, k, -1] });
          else created.set(op[1], op[2]);
          break;
        case "append": {
          const prevEntry = this.#entries.get(op[1]);
          const old = prevEntry?.text ?? created.get(op[1]) ?? before.rec(op[1])?.text;
          this.#entries.delete(op[1]);
          if (old === undefined) break;
          const text = old + op[2];
          // The new text is the old one's source followed by this chunk (or the short old text inline).
          let parts: (TextRef | string)[] | undefined;
          if (prevEntry !== undefined) parts = prevEntry.ref[0] === "c" ? [...prevEntry.ref[1]] : [prevEntry.ref];
          else if (old.length < TEXT_REF_MIN) parts = old === "" ? [] : [old];
          if (parts !== undefined && op[2] !== "") parts.push(["e", event, k, -1]);
          if (parts !== undefined && parts.length <= MAX_PARTS && text.length >= TEXT_REF_MIN)
            this.#entries.set(op[1], { text, ref: parts.length === 1 ? (parts[0] as TextRef) : ["c", parts] });
          else created.set(op[1], text);
          break;
        }
        case "rm":
          this.#entries.delete(op[1]);
          break;
        case "set":
          if (op[1] === 0) hwm = Math.max(hwm, Number(op[3]));
          break;
        case "mv":
          break;
      }
    }
  }

  /** Records the source of a text read from a stored page. */
  recordLoaded(id: number, text: string, ref: TextRef): void {
    this.#entries.set(id, { text, ref });
  }

  /** The stored form of element `id`'s `text`: inline, a known source, or (storing it) a blob. */
  encode(text: string, id: number, store: Store): string | TextRef {
    if (text.length < TEXT_REF_MIN) return text;
    const e = this.#entries.get(id);
    if (e !== undefined && e.text === text) return e.ref;
    const ref: TextRef = ["b", store.putBlob(text)];
    this.#entries.set(id, { text, ref });
    return ref;
  }

  /** Drops entries of elements `tree` no longer has, when the index has doubled since the last time. */
  maybePrune(tree: Tree): void {
    if (this.#entries.size <= this.#pruneAt) return;
    for (const id of this.#entries.keys()) if (!tree.has(id)) this.#entries.delete(id);
    this.#pruneAt = Math.max(65_536, this.#entries.size * 2);
  }
}

/** Reads texts back from their references, fetching events and blobs in batches. */
export class TextResolver {
  readonly #ops = new Map<number, unknown[]>();
  readonly #blobs = new Map<string, string>();

  constructor(private readonly store: Store) {}

  /** Fetches everything `values` refer to that is not cached yet, in two queries at most. */
  prefetch(values: readonly unknown[]): void {
    const events = new Set<number>();
    const blobs = new Set<string>();
    const visit = (v: unknown): void => {
      if (!Array.isArray(v)) return;
      if (v[0] === "e" && !this.#ops.has(v[1] as number)) events.add(v[1] as number);
      else if (v[0] === "b" && !this.#blobs.has(v[1] as string)) blobs.add(v[1] as string);
      else if (v[0] === "c" && Array.isArray(v[1])) for (const p of v[1]) visit(p);
    };
    for (const v of values) visit(v);
    if (this.#ops.size > 4096) this.#ops.clear();
    if (this.#blobs.size > 1024) this.#blobs.clear();
    if (events.size > 0)
      for (const e of this.store.events([...events] as EventId[])) {
        let ops: unknown;
        try {
          ops = (JSON.parse(e.data) as { ops?: unknown }).ops;
        } catch {
          ops = undefined;
        }
        this.#ops.set(e.id, Array.isArray(ops) ? ops : []);
      }
    if (blobs.size > 0) for (const [h, data] of this.store.getBlobs([...blobs])) this.#blobs.set(h, data.toString("utf8"));
  }

  /** The text `value` stands for (a string is itself). Throws `bad-snapshot` for a dangling reference. */
  text(value: unknown): string {
    if (typeof value === "string") return value;
    if (!Array.isArray(value)) throw bad(value);
    if (value[0] === "c" && Array.isArray(value[1])) return (value[1] as unknown[]).map((p) => this.text(p)).join("");
    if (value[0] === "b" && typeof value[1] === "string") {
      let t = this.#blobs.get(value[1]);
      if (t === undefined) {
        const b = this.store.getBlob(value[1]);
        if (b === undefined) throw new EngineError("bad-snapshot", `a snapshot page refers to missing blob ${value[1]}`);
        t = b.toString("utf8");
        this.#blobs.set(value[1], t);
      }
      return t;
    }
    if (value[0] === "e" && value.length === 4) {
      const [, event, k, node] = value as [string, number, number, number];
      if (!this.#ops.has(event)) this.prefetch([value]);
      const op = this.#ops.get(event)?.[k];
      if (!Array.isArray(op))
        throw new EngineError("bad-snapshot", `a snapshot page refers to op ${k} of event ${event}, which does not exist`);
      if (node === -1 && typeof op[2] === "string") return op[2];
      if (op[0] === "ins") {
        const found = nthNode(op[3], node);
        if (found !== undefined) return found;
      }
      throw new EngineError("bad-snapshot", `a snapshot page refers to node ${node} of op ${k} of event ${event}, which holds no text`);
    }
    throw bad(value);
  }
}

function bad(v: unknown): EngineError {
  return new EngineError("bad-snapshot", `a snapshot page holds a text reference it cannot read: ${JSON.stringify(v)?.slice(0, 80)}`);
}

/** The text of the `n`-th node of a spec in pre-order. */
function nthNode(spec: unknown, n: number): string | undefined {
  const stack: unknown[] = [spec];
  let i = 0;
  while (stack.length > 0) {
    const s = stack.pop() as { text?: unknown; children?: unknown[] } | null;
    if (s === null || typeof s !== "object") return undefined;
    if (i === n) return typeof s.text === "string" ? s.text : undefined;
    i++;
    const kids = s.children;
    if (Array.isArray(kids)) for (let c = kids.length - 1; c >= 0; c--) stack.push(kids[c]);
  }
  return undefined;
}
