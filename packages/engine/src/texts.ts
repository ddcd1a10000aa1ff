/**
 * Long texts are stored once (EN-10, decision 0006). A text an event introduced (an `ins` node's
 * text, a `text` op, `append` chunks) is already in the log, so a snapshot page stores a reference
 * to it instead of a copy; only texts with no single source are stored as content-addressed blobs.
 *
 * A streamed text is the concatenation of its chunks' references. Its parts are kept as a rope: every
 * 64 parts of one level become one group a level up, and a group is stored once, as a blob holding
 * its list (`["r", hash, level]`). A snapshot of a text streamed into for hours then stores at most
 * 63 parts per level plus the groups completed since the last snapshot: each snapshot costs the new
 * text's references, not the whole text again.
 *
 * `TextIndex` remembers where the current text of each element came from. It is a runtime cache
 * (L1: it holds no state of its own — a wrong or missing entry only means a text is stored as a
 * blob instead of a reference), filled as events are folded and as pages are loaded.
 */
import { eachInserted, LazyPage, type Op, PAGE_SIZE, type PatchEffect, type Tree } from "@strata/dom";
import { type AsyncStore, drive, type EventId, isAsyncStore, type Store, value } from "@strata/store";
import { EngineError } from "./errors.ts";
import { NotLoaded } from "./loading.ts";

/** Texts shorter than this stay inline in pages. */
export const TEXT_REF_MIN = 128;
/** Parts of one level that make a group one level up (and the most a stored list holds per level). */
const GROUP = 64;

/**
 * Where a text is stored: `["e", event, op, node]` — the text of pre-order node `node` of op `op`'s
 * spec (`node` = -1: the op's own text argument); `["b", sha256]` — a blob; `["c", parts]` — the
 * concatenation of parts (references or short inline strings); `["r", sha256, level]` — a group of
 * parts stored as a blob holding `["c", parts]` (parts of `level - 1`; level 1 holds plain parts).
 */
export type TextRef =
  | readonly ["e", number, number, number]
  | readonly ["b", string]
  | readonly ["c", readonly (TextRef | string)[]]
  | readonly ["r", string, number];

/** A text with no source in the log, stored as a blob at the next snapshot that needs it. */
interface Unsourced {
  readonly kind: "blob";
  readonly text: string;
  stored?: TextRef;
}

/** 64 parts of one level, stored (once) as an `["r", …]` blob. */
interface Group {
  readonly kind: "group";
  readonly level: number;
  readonly parts: readonly Part[];
  stored?: TextRef;
}

/** One part of a text: inline text, a stored reference, or a group or blob not stored yet. */
type Part = string | TextRef | Unsourced | Group;

interface Entry {
  readonly text: string;
  /** The text is the concatenation of these (levels never increase from left to right). */
  readonly parts: readonly Part[];
}

function levelOf(p: Part): number {
  if (typeof p === "string") return 0;
  if (Array.isArray(p)) return p[0] === "r" ? (p[2] as number) : 0;
  return (p as Unsourced | Group).kind === "group" ? (p as Group).level : 0;
}

/** `parts` with `part` added at the end, 64 trailing parts of one level folded into a group. */
function pushPart(parts: readonly Part[], part: Part): Part[] {
  const out = [...parts, part];
  for (;;) {
    const n = out.length;
    if (n < GROUP) return out;
    const level = levelOf(out[n - 1] as Part);
    for (let k = 2; k <= GROUP; k++) if (levelOf(out[n - k] as Part) !== level) return out;
    out.push({ kind: "group", level: level + 1, parts: out.splice(n - GROUP, GROUP) });
  }
}

/** The parts a stored reference stands for (a concatenation is its list). */
function partsOf(ref: TextRef): Part[] {
  if (ref[0] !== "c") return [ref];
  // Flat, whatever a page held: a concatenation inside a concatenation (which strata never writes)
  // is spliced in, iteratively, so a stored list never nests deeper than its parts.
  const out: Part[] = [];
  const stack: (TextRef | string)[] = [...ref[1]].reverse();
  while (stack.length > 0) {
    const p = stack.pop() as TextRef | string;
    if (Array.isArray(p) && p[0] === "c" && Array.isArray(p[1])) for (let i = p[1].length - 1; i >= 0; i--) stack.push(p[1][i] as TextRef);
    else out.push(p);
  }
  return out;
}

/** Sources of texts read from pages kept at most (a cache: a missing one costs a blob, L1). */
const LOADED_MAX = 65_536;

export class TextIndex {
  readonly #entries = new Map<number, Entry>();
  /**
   * Sources of texts read from stored pages, by element, with the text's length (not the text:
   * holding every text a reader reads is what DOM-43 avoids). Used only when a text read from a
   * page is appended to; bounded by {@link LOADED_MAX}.
   */
  readonly #loaded = new Map<number, { readonly length: number; readonly ref: TextRef }>();
  #pruneAt = 65_536;

  /** An index with the same entries, for another line that starts from the same tree (a fork, EN-47). */
  clone(): TextIndex {
    const copy = new TextIndex();
    for (const [k, v] of this.#entries) copy.#entries.set(k, v);
    for (const [k, v] of this.#loaded) copy.#loaded.set(k, v);
    return copy;
  }

  /** How many elements have a known source (for tests and diagnostics). */
  get size(): number {
    return this.#entries.size + this.#loaded.size;
  }

  /**
   * Records where the texts set by event `event` live in the log, from what its patch did
   * (`effect`, reported by the dom as the patch was applied). With `after` (the tree the patch
   * made), entries keep the very string the tree holds (comparing them is free).
   */
  recordPatch(event: EventId, effect: PatchEffect, after?: Tree): void {
    this.#record([event], [0], effect, after);
  }

  /**
   * Like {@link recordPatch} for consecutive events folded as one patch (their ops concatenated,
   * in order): `effect` is that patch's, and each event's ops say which of its ops are whose.
   */
  recordEvents(events: readonly { readonly id: EventId; readonly ops: readonly Op[] }[], effect: PatchEffect, after?: Tree): void {
    const ids: EventId[] = [];
    const starts: number[] = [];
    let start = 0;
    for (const e of events) {
      ids.push(e.id);
      starts.push(start);
      start += e.ops.length;
    }
    this.#record(ids, starts, effect, after);
  }

  /**
   * Records the changes of `effect`, whose ops are those of events `events` (event `j`'s first op
   * is op `starts[j]` of the patch). `created` holds texts without a source set earlier in the batch.
   */
  #record(events: readonly EventId[], starts: readonly number[], effect: PatchEffect, after: Tree | undefined): void {
    const created = new Map<number, string>();
    const touched: number[] = [];
    let j = 0;
    for (const c of effect.changes) {
      while (j + 1 < starts.length && c.op >= (starts[j + 1] as number)) j++;
      const event = events[j] as EventId;
      const k = c.op - (starts[j] as number);
      switch (c.type) {
        case "insert":
          // Node `i` of the spec of op `k` (pre-order, as the tree mints ids: DOM-2).
          eachInserted(c, (id, node, i) => {
            const text = node.text ?? "";
            if (text.length >= TEXT_REF_MIN) this.#entries.set(id, { text, parts: [["e", event, k, i]] });
            else {
              this.#entries.delete(id);
              created.set(id, text);
            }
          });
          break;
        case "text":
          if (c.mode === "set") this.#set(c.id, c.after, event, k, created, touched);
          else this.#append(c.id, c.before, c.after, event, k, created, touched);
          break;
        case "remove":
          for (const id of c.ids) {
            this.#entries.delete(id);
            this.#loaded.delete(id);
            created.delete(id);
          }
          break;
        case "attr":
        case "move":
          break;
        default: {
          const never: never = c;
          throw new Error(`unknown change ${(never as { type: string }).type}`);
        }
      }
    }
    if (after !== undefined)
      for (const id of touched) {
        const e = this.#entries.get(id);
        const t = after.rec(id)?.text;
        // Same length: the same text (comparing contents would flatten both strings, O(text)).
        if (e !== undefined && t !== undefined && t.length === e.text.length) this.#entries.set(id, { text: t, parts: e.parts });
      }
  }

  /** A `text` op of op `k` of `event` set the text of `id` to `text`. */
  #set(id: number, text: string, event: EventId, k: number, created: Map<number, string>, touched: number[]): void {
    this.#entries.delete(id);
    this.#loaded.delete(id);
    if (text.length >= TEXT_REF_MIN) {
      this.#entries.set(id, { text, parts: [["e", event, k, -1]] });
      touched.push(id);
    } else created.set(id, text);
  }

  /** An `append` op (op `k` of `event`) made the text of `id` `text` from `old`. */
  #append(id: number, old: string, text: string, event: EventId, k: number, created: Map<number, string>, touched: number[]): void {
    const prev = created.has(id) ? undefined : (this.#entries.get(id) ?? this.#fromLoaded(id, old));
    this.#entries.delete(id);
    this.#loaded.delete(id);
    if (text.length < TEXT_REF_MIN) {
      created.set(id, text);
      return;
    }
    // The new text is the old one's parts followed by this chunk's reference.
    let parts: readonly Part[];
    if (prev !== undefined && prev.text.length === old.length) parts = prev.parts;
    else if (old === "") parts = [];
    else if (old.length < TEXT_REF_MIN) parts = [old];
    else parts = [{ kind: "blob", text: old }];
    if (text.length > old.length) parts = pushPart(parts, ["e", event, k, -1]);
    this.#entries.set(id, { text, parts });
    created.delete(id);
    touched.push(id);
  }

  /** Records the source of a text read from a stored page (its length and reference only). */
  recordLoaded(id: number, text: string, ref: TextRef): void {
    if (this.#loaded.size >= LOADED_MAX) this.#loaded.clear();
    this.#loaded.set(id, { length: text.length, ref });
  }

  /** The entry for `old`, the text of `id` read from a page, if its source is still known. */
  #fromLoaded(id: number, old: string): Entry | undefined {
    const l = this.#loaded.get(id);
    return l !== undefined && l.length === old.length ? { text: old, parts: partsOf(l.ref) } : undefined;
  }

  /**
   * Forgets the sources of the texts of page `index` (EN-46): the live writer let go of that page,
   * and the page read back carries its stored texts itself (DOM-43).
   */
  forgetPage(index: number): void {
    const first = index * PAGE_SIZE;
    for (let id = first; id < first + PAGE_SIZE; id++) this.#entries.delete(id);
  }

  /** The stored form of element `id`'s `text`: inline, a known source, or (storing it) a blob. */
  encode(text: string, id: number, store: BlobSink): string | TextRef {
    if (text.length < TEXT_REF_MIN) return text;
    const e = this.#entries.get(id) ?? this.#fromLoaded(id, text);
    if (e !== undefined && e.text === text) {
      if (e.parts.length === 1) {
        const only = storedPart(e.parts[0] as Part, store);
        if (typeof only !== "string") return only;
      } else return ["c", e.parts.map((p) => storedPart(p, store))];
    }
    const ref: TextRef = ["b", store.putBlob(text)];
    this.#entries.set(id, { text, parts: [ref] });
    return ref;
  }

  /**
   * Drops entries of elements `tree` no longer has, when the index has doubled since the last time.
   * A page that was never loaded is not loaded for this (its entries stay: it may hold them).
   */
  maybePrune(tree: Tree): void {
    if (this.#entries.size <= this.#pruneAt) return;
    for (const id of this.#entries.keys()) {
      const slot = tree.slotAt(Math.floor(id / PAGE_SIZE));
      if (slot instanceof LazyPage && !slot.loaded) continue;
      if (slot === undefined || !tree.has(id)) this.#entries.delete(id);
    }
    this.#pruneAt = Math.max(65_536, this.#entries.size * 2);
  }
}

/** Where a snapshot's new blobs go: the store, or a buffer written to the asynchronous port after (snapshots.ts). */
export type BlobSink = Pick<Store, "putBlob">;

/** How a part is written into a page, storing its group or blob the first time. */
function storedPart(p: Part, store: BlobSink): TextRef | string {
  if (typeof p === "string" || Array.isArray(p)) return p as TextRef | string;
  const o = p as Unsourced | Group;
  if (o.stored === undefined) {
    if (o.kind === "blob") o.stored = ["b", store.putBlob(o.text)];
    else {
      const list = JSON.stringify(["c", o.parts.map((q) => storedPart(q, store))]);
      o.stored = ["r", store.putBlob(list), o.level];
    }
  }
  return o.stored;
}

/** Levels a stored group may have: enough for 64^40 parts; a deeper claim is damage. */
const MAX_LEVEL = 40;
/** References one text may expand to (a damaged or hostile store could make a small list expand forever). */
const MAX_PARTS = 1 << 24;
/** Characters one text may have (V8 cannot hold a longer string). */
const MAX_CHARS = (1 << 29) - 24;

/**
 * Reads texts back from their references, fetching events and blobs in batches. References are
 * walked with an explicit stack, never recursion (a stored reference is data from disk or from a
 * bundle, of any depth); a group may only hold parts of a lower level, so a walk always ends.
 */
export class TextResolver {
  readonly #ops = new Map<number, unknown[]>();
  readonly #blobs = new Map<string, string>();
  /** Parsed `["r", …]` lists by blob hash. */
  readonly #groups = new Map<string, unknown>();

  /** Over the asynchronous port: events and blobs fetched and not found (reading them is `bad-snapshot`). */
  readonly #absentEvents = new Set<number>();
  readonly #absentBlobs = new Set<string>();

  /**
   * `store` answers the reads. Over the asynchronous port (`AsyncStore`) nothing can be read in
   * the middle of a synchronous read: a text not fetched yet throws `NotLoaded` (loading.ts), whose
   * steps fetch it — {@link fetch} of the page's references, the first time a text of a page is
   * read — and the caches are kept whole.
   */
  constructor(private readonly store: Store | AsyncStore) {}

  /**
   * Fetches everything `values` refer to that is not cached yet: one query for events and one for
   * blobs per level of groups (a group's list is read before what it refers to). Over the
   * asynchronous port it throws `NotLoaded` with those steps when anything is missing.
   */
  prefetch(values: readonly unknown[]): void {
    if (!isAsyncStore(this.store)) drive(this.fetch(values));
    else if (this.#uncached(values)) throw new NotLoaded("a text of this tree", () => this.fetch(values));
  }

  /**
   * The events, blobs and groups `values` refer to that are neither cached nor known to be absent
   * (a known group's parts are walked in its place). Bounded like `text`: a hostile list of known
   * groups cannot make this walk endless.
   */
  #wanted(values: readonly unknown[]): { events: Set<number>; blobs: Set<string>; groups: Set<string> } {
    const events = new Set<number>();
    const blobs = new Set<string>();
    const groups = new Set<string>();
    const stack: unknown[] = [...values];
    for (let visited = 0; stack.length > 0 && visited < MAX_PARTS; visited++) {
      const v = stack.pop();
      if (!Array.isArray(v)) continue;
      if (v[0] === "e" && typeof v[1] === "number") {
        if (!this.#ops.has(v[1]) && !this.#absentEvents.has(v[1])) events.add(v[1]);
      } else if (v[0] === "b" && typeof v[1] === "string") {
        if (!this.#blobs.has(v[1]) && !this.#absentBlobs.has(v[1])) blobs.add(v[1]);
      } else if (v[0] === "r" && typeof v[1] === "string") {
        const known = this.#groups.get(v[1]);
        if (known !== undefined) stack.push(known);
        else if (!this.#absentBlobs.has(v[1])) groups.add(v[1]);
      } else if (v[0] === "c" && Array.isArray(v[1])) for (let i = v[1].length - 1; i >= 0; i--) stack.push(v[1][i]);
    }
    return { events, blobs, groups };
  }

  /** Whether `values` refer to an event or blob that is neither cached nor known to be absent. */
  #uncached(values: readonly unknown[]): boolean {
    const w = this.#wanted(values);
    return w.events.size + w.blobs.size + w.groups.size > 0;
  }

  /** {@link prefetch} as steps (steps.ts): over the asynchronous port, each read is awaited. */
  *fetch(values: readonly unknown[]): Generator<unknown, void, unknown> {
    const async = isAsyncStore(this.store);
    if (!async) {
      if (this.#ops.size > 4096) this.#ops.clear();
      if (this.#blobs.size > 1024) this.#blobs.clear();
      if (this.#groups.size > 4096) this.#groups.clear();
    }
    let pending: readonly unknown[] = values;
    for (let round = 0; pending.length > 0 && round <= MAX_LEVEL; round++) {
      const { events, blobs, groups } = this.#wanted(pending);
      if (events.size > 0) {
        // Payloads only (ST-28): one call, read by the store in id runs, not full rows per id.
        for (const [id, data] of yield* value(this.store.eventData([...events] as EventId[]))) {
          let ops: unknown;
          try {
            ops = (JSON.parse(data) as { ops?: unknown }).ops;
          } catch {
            ops = undefined;
          }
          this.#ops.set(id, Array.isArray(ops) ? ops : []);
        }
        if (async) for (const id of events) if (!this.#ops.has(id)) this.#absentEvents.add(id);
      }
      const wanted = [...blobs, ...groups];
      const next: unknown[] = [];
      if (wanted.length > 0) {
        for (const [h, data] of yield* value(this.store.getBlobs(wanted))) {
          if (groups.has(h)) {
            const list = parseGroup(data.toString("utf8"), h);
            this.#groups.set(h, list);
            next.push(list);
          }
          if (blobs.has(h)) this.#blobs.set(h, data.toString("utf8"));
        }
        if (async) for (const h of wanted) if (!this.#blobs.has(h) && !this.#groups.has(h)) this.#absentBlobs.add(h);
      }
      pending = next;
    }
  }

  /**
   * One blob (`kind` "b") or group list ("r") read on demand; over the asynchronous port one not
   * fetched yet throws `NotLoaded`, and one fetched and not found is missing.
   */
  #read(hash: string, kind: "b" | "r"): Buffer | undefined {
    if (!isAsyncStore(this.store)) return this.store.getBlob(hash);
    if (this.#absentBlobs.has(hash)) return undefined;
    throw new NotLoaded("a text of this tree", () => this.fetch([kind === "b" ? ["b", hash] : ["r", hash, 1]]));
  }

  /** The text `value` stands for (a string is itself). Throws `bad-snapshot` for a dangling or malformed reference. */
  text(value: unknown): string {
    if (typeof value === "string") return value;
    const out: string[] = [];
    let chars = 0;
    // [reference, the highest group level it may hold]: a group's parts are of lower levels.
    const stack: [unknown, number][] = [[value, MAX_LEVEL]];
    for (let parts = 0; stack.length > 0; parts++) {
      if (parts >= MAX_PARTS)
        throw new EngineError("bad-snapshot", `a snapshot page refers to a text of more than ${MAX_PARTS} parts: the store is damaged`);
      const [v, level] = stack.pop() as [unknown, number];
      let piece: string;
      if (typeof v === "string") piece = v;
      else if (!Array.isArray(v)) throw bad(v);
      else if (v[0] === "c" && Array.isArray(v[1]) && v.length === 2) {
        const list = v[1] as unknown[];
        for (let i = list.length - 1; i >= 0; i--) stack.push([list[i], level]);
        continue;
      } else if (v[0] === "r" && typeof v[1] === "string" && Number.isInteger(v[2]) && v.length === 3) {
        const at = v[2] as number;
        if (at < 1 || at > level)
          throw new EngineError("bad-snapshot", `a snapshot page refers to text group ${v[1]} at level ${at}, which cannot be there`);
        stack.push([this.#group(v[1]), at - 1]);
        continue;
      } else if (v[0] === "b" && typeof v[1] === "string" && v.length === 2) piece = this.#blob(v[1]);
      else if (v[0] === "e" && v.length === 4) piece = this.#eventText(v as unknown[]);
      else throw bad(v);
      chars += piece.length;
      if (chars > MAX_CHARS)
        throw new EngineError(
          "bad-snapshot",
          `a snapshot page refers to a text of more than ${MAX_CHARS} characters: the store is damaged`,
        );
      out.push(piece);
    }
    return out.length === 1 ? (out[0] as string) : out.join("");
  }

  /** The list a group reference stands for (`["c", parts]`). */
  #group(hash: string): unknown {
    let list = this.#groups.get(hash);
    if (list === undefined) {
      const b = this.#read(hash, "r");
      if (b === undefined) throw new EngineError("bad-snapshot", `a snapshot page refers to missing text group ${hash}`);
      list = parseGroup(b.toString("utf8"), hash);
      this.#groups.set(hash, list);
    }
    return list;
  }

  #blob(hash: string): string {
    let t = this.#blobs.get(hash);
    if (t === undefined) {
      const b = this.#read(hash, "b");
      if (b === undefined) throw new EngineError("bad-snapshot", `a snapshot page refers to missing blob ${hash}`);
      t = b.toString("utf8");
      this.#blobs.set(hash, t);
    }
    return t;
  }

  /** The text an `["e", event, op, node]` reference points at. */
  #eventText(value: unknown[]): string {
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
}

function parseGroup(json: string, hash: string): unknown {
  let list: unknown;
  try {
    list = JSON.parse(json);
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list) || list[0] !== "c" || !Array.isArray(list[1]))
    throw new EngineError("bad-snapshot", `text group ${hash} is not a stored list of parts`);
  return list;
}

function bad(v: unknown): EngineError {
  return new EngineError("bad-snapshot", `a snapshot page holds a text reference it cannot read: ${shallow(v)}`);
}

/** A reference shown one level deep (it may nest any depth: JSON.stringify would recurse). */
function shallow(v: unknown): string {
  if (!Array.isArray(v)) return (JSON.stringify(v) ?? String(v)).slice(0, 80);
  const items = v.slice(0, 4).map((x) => (Array.isArray(x) ? `[…${x.length}]` : (JSON.stringify(x) ?? String(x)).slice(0, 40)));
  return `[${items.join(",")}${v.length > 4 ? ",…" : ""}]`;
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
