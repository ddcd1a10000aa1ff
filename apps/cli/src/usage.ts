/**
 * The tokens a session's events record (CLI-45), read off the events' ops — no tree is
 * materialized. A model turn's usage is a `<usage input output [cache-read cache-write reasoning
 * cost]>` element under its `<turn model>` (the agent's vocabulary.ts; an import writes the
 * source's figures, IM-3): an event's usage is what the `<usage>` elements it inserts record, less what the ones it
 * removes recorded (an import replaces a response's usage, repeated on each of its lines, by the
 * last one: counted once). So the usage of a chain is the sum of the `<usage>` elements its last
 * tree holds, and each event's share is a function of its own ops and the ids minted before it.
 *
 * Ids: the dom says which ids each op mints and where the mark ends (`mintedIds`, DOM-44); the
 * genesis event starts it. Ids are never reused within a session (L5), so one table of turns and
 * usage records serves every branch.
 */
import { ATTR, TAG } from "@strata/agent";
import { mintedIds, type NodeSpec, type Op, specSize } from "@strata/dom";
import { decodeEvent } from "@strata/engine";
import type { StoredEvent } from "@strata/store";

/** Token counts (and what the source said they cost) of some model turns. */
export interface Figures {
  /** Input tokens not read from a cache. */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Reasoning tokens a source counts apart from output (OpenCode). */
  reasoning: number;
  /** The usage records counted (model turns). */
  turns: number;
  /** USD the source recorded for the turns that record one, and how many did. */
  recordedCost: number;
  costed: number;
}

/** Figures per model (`""`: the turn names none). */
export type ByModel = Map<string, Figures>;

export function zero(): Figures {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, turns: 0, recordedCost: 0, costed: 0 };
}

const KEYS = ["input", "output", "cacheRead", "cacheWrite", "reasoning", "turns", "recordedCost", "costed"] as const;

/** Adds `b` (times `sign`) into `a`. */
export function addInto(a: Figures, b: Figures, sign = 1): void {
  for (const k of KEYS) a[k] += sign * b[k];
}

/** Adds every model of `b` (times `sign`) into `a`. */
export function addModels(a: ByModel, b: ReadonlyMap<string, Figures>, sign = 1): void {
  for (const [model, f] of b) {
    let into = a.get(model);
    if (into === undefined) a.set(model, (into = zero()));
    addInto(into, f, sign);
  }
}

export function copyModels(m: ReadonlyMap<string, Figures>): ByModel {
  const out: ByModel = new Map();
  addModels(out, m);
  return out;
}

/** The sum over models. */
export function summed(m: ReadonlyMap<string, Figures>): Figures {
  const out = zero();
  for (const f of m.values()) addInto(out, f);
  return out;
}

/** The attributes an import writes beside the agent's `input` and `output` (IM-3). */
const CACHE_READ = "cache-read";
const CACHE_WRITE = "cache-write";
const REASONING = "reasoning";
const COST = "cost";
/** `<meta><import from>`: the source format (IM-3), whose counting rules the figures follow. */
const IMPORT = "import";

/** A count as recorded; anything that is not a whole number of tokens counts as none. */
function tokens(v: string | undefined): number {
  const n = Number(v);
  return v !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

interface UsageRecord {
  readonly turn: number;
  attrs: Record<string, string>;
  removed: boolean;
}

/** The usage of a session's events, one event at a time, each in an order where its prior came first. */
export class UsageFold {
  /** The model each `<turn>` names. */
  readonly #turnModel = new Map<number, string>();
  readonly #records = new Map<number, UsageRecord>();
  readonly #byTurn = new Map<number, number[]>();
  /** The source format of an imported session (`codex` counts cached tokens within input). */
  #format: string | undefined;

  /**
   * Folds event `e`, whose prior's high-water mark was `hwm` (undefined for a genesis event), and
   * returns its own high-water mark and the usage it added (undefined when none). Throws the
   * engine's `bad-event` error for a payload that does not decode.
   */
  event(e: Pick<StoredEvent, "id" | "kind" | "data">, hwm: number | undefined): { hwm: number; delta: ByModel | undefined } {
    const decoded = decodeEvent(e);
    if (decoded.kind === "genesis") return { hwm: Math.max(specSize(decoded.skeleton), decoded.hwm ?? 0), delta: undefined };
    let mark = hwm ?? 0;
    let delta: ByModel | undefined;
    const add = (record: UsageRecord, sign: number): void => {
      delta ??= new Map();
      addModels(delta, new Map([[this.#turnModel.get(record.turn) ?? "", this.#figures(record.attrs)]]), sign);
    };
    for (const op of decoded.ops) mark = this.#op(op, mark, add);
    return { hwm: mark, delta };
  }

  #op(op: Op, hwm: number, add: (r: UsageRecord, sign: number) => void): number {
    switch (op[0]) {
      case "ins":
        // The ids the tree mints for it (DOM-44), without a tree.
        return mintedIds([op], hwm, (id, spec, parent) => this.#inserted(id, parent, spec, add));
      case "rm": {
        const id = op[1] as number;
        const record = this.#records.get(id);
        if (record !== undefined) this.#remove(record, add);
        // No writer removes a turn; if one did, its usage leaves with it.
        else
          for (const u of this.#byTurn.get(id) ?? []) {
            const r = this.#records.get(u) as UsageRecord;
            if (!r.removed) this.#remove(r, add);
          }
        return hwm;
      }
      case "set": {
        const [, id, name, value] = op;
        if ((id as number) === 0) return mintedIds([op], hwm);
        const record = this.#records.get(id as number);
        if (record !== undefined && !record.removed) {
          add(record, -1);
          const attrs = { ...record.attrs };
          if (value === null) delete attrs[name];
          else attrs[name] = value;
          record.attrs = attrs;
          add(record, 1);
        } else if (name === ATTR.model && this.#turnModel.has(id as number) && value !== null) this.#turnModel.set(id as number, value);
        return hwm;
      }
      case "mv":
      case "text":
      case "append":
        return hwm;
      default:
        op satisfies never;
        return hwm;
    }
  }

  #inserted(id: number, parent: number, spec: NodeSpec, add: (r: UsageRecord, sign: number) => void): void {
    const attrs = spec.attrs ?? {};
    if (spec.tag === TAG.turn) this.#turnModel.set(id, attrs[ATTR.model] ?? "");
    else if (spec.tag === TAG.usage) {
      const record: UsageRecord = { turn: parent, attrs: { ...attrs }, removed: false };
      this.#records.set(id, record);
      const list = this.#byTurn.get(parent);
      if (list === undefined) this.#byTurn.set(parent, [id]);
      else list.push(id);
      add(record, 1);
    } else if (spec.tag === IMPORT && attrs.from !== undefined) this.#format = attrs.from;
  }

  #remove(record: UsageRecord, add: (r: UsageRecord, sign: number) => void): void {
    // A removal subtracts on its own chain; the record stays for other branches that hold it.
    add(record, -1);
    record.removed = true;
  }

  /** One record's figures, in strata's terms: input without the cached tokens. */
  #figures(attrs: Readonly<Record<string, string>>): Figures {
    const cacheRead = tokens(attrs[CACHE_READ]);
    let input = tokens(attrs[ATTR.input]);
    // Codex's `input_tokens` include its `cached_input_tokens` (IM-15); the others count them apart.
    if (this.#format === "codex") input = Math.max(0, input - cacheRead);
    const cost = Number(attrs[COST]);
    const costed = attrs[COST] !== undefined && Number.isFinite(cost) && cost >= 0;
    return {
      input,
      output: tokens(attrs[ATTR.output]),
      cacheRead,
      cacheWrite: tokens(attrs[CACHE_WRITE]),
      reasoning: tokens(attrs[REASONING]),
      turns: 1,
      recordedCost: costed ? cost : 0,
      costed: costed ? 1 : 0,
    };
  }
}
