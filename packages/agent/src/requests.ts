/**
 * What was sent (PR-15 … PR-17, decision 0017): every model turn records a digest of the request
 * the loop passed to `model.stream`, as the first child of its assistant turn:
 *
 *   <request hash="…" system="…" tools="…" settings="…" count="12" chain="…" base="10" prev="812">h10 h11</request>
 *
 * `system`, `tools` and `settings` are the sha256 addresses of blobs holding the exact system text
 * and the canonical JSON of the tool set and of the settings (content-addressed: a part that does
 * not change costs nothing more); `count` messages were sent, `chain` folds their hashes in order
 * (`c₀ = ""`, `cₖ = sha256(cₖ₋₁ ‖ hₖ)`), and the text lists the hashes of the messages after the
 * first `base`, which are those of record `prev` (the previous turn's request: a request repeats
 * the one before it and adds the last reply and its observations). `hash` folds the parts:
 * sha256("strata-request@1" ‖ system ‖ tools ‖ settings ‖ chain ‖ count), one line each. Each turn
 * stores only what is new; `verifyRequests` (fidelity.ts) re-renders and compares.
 */
import { createHash } from "node:crypto";
import type { NodeId, NodeSpec, Tree } from "@strata/dom";
import { bodyOf, EngineError } from "@strata/engine";
import type { ChatMessage, ModelRequest } from "./model.ts";
import type { AgentBlobs } from "./port.ts";
import { ATTR, ROLE, TAG } from "./vocabulary.ts";

/** The digest of one request: the hash of each part, the message hashes and their chain. */
export interface RequestDigest {
  /** The whole request (see the module comment for how the parts are folded). */
  readonly hash: string;
  /** sha256 of the system text's UTF-8 bytes (its blob address). */
  readonly system: string;
  /** sha256 of the tool set's canonical JSON. */
  readonly tools: string;
  /** sha256 of the settings' canonical JSON. */
  readonly settings: string;
  /** sha256 of each message's canonical JSON, in order. */
  readonly messages: readonly string[];
  /** The messages' hashes folded in order. */
  readonly chain: string;
}

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * Canonical JSON: keys sorted by code unit, no white space, `undefined` members left out (as
 * `JSON.stringify` does). Walks with an explicit stack: a schema or argument nested any depth
 * cannot overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or a literal piece of punctuation.
  const stack: ({ v: unknown } | string)[] = [{ v: value }];
  while (stack.length > 0) {
    const item = stack.pop() as { v: unknown } | string;
    if (typeof item === "string") {
      out.push(item);
      continue;
    }
    const v = item.v;
    if (Array.isArray(v)) {
      stack.push("]");
      for (let i = v.length - 1; i >= 0; i--) {
        const x = v[i];
        stack.push({ v: x === undefined || typeof x === "function" || typeof x === "symbol" ? null : x });
        if (i > 0) stack.push(",");
      }
      out.push("[");
    } else if (v !== null && typeof v === "object") {
      const keys = Object.keys(v)
        .filter((k) => {
          const x = (v as Record<string, unknown>)[k];
          return x !== undefined && typeof x !== "function" && typeof x !== "symbol";
        })
        .sort();
      stack.push("}");
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ v: (v as Record<string, unknown>)[k] });
        stack.push(`${i > 0 ? "," : ""}${JSON.stringify(k)}:`);
      }
      out.push("{");
    } else out.push(JSON.stringify(v) ?? "null");
  }
  return out.join("");
}

/** Canonical JSON of tool sets, kept with the arrays (a projection memo hands out the same array while the roster is unchanged). */
const toolSets = new WeakMap<object, string>();

function toolsJsonOf(tools: ModelRequest["tools"]): string {
  let json = toolSets.get(tools);
  if (json === undefined) {
    json = canonicalJson(tools);
    toolSets.set(tools, json);
  }
  return json;
}

/** Message hashes, kept with the message objects (a projection memo hands out the same objects). */
const messageHashes = new WeakMap<ChatMessage, string>();

/** sha256 of a message's canonical JSON. */
export function messageHash(m: ChatMessage): string {
  let h = messageHashes.get(m);
  if (h === undefined) {
    h = sha256(canonicalJson(m));
    messageHashes.set(m, h);
  }
  return h;
}

/** The chain step: `cₖ = sha256(cₖ₋₁ ‖ hₖ)`. */
export function chainStep(previous: string, hash: string): string {
  return sha256(previous + hash);
}

/** Folds the parts into the request hash. */
export function foldRequest(parts: Omit<RequestDigest, "hash" | "messages">, count: number): string {
  return sha256(["strata-request@1", parts.system, parts.tools, parts.settings, parts.chain, String(count)].join("\n"));
}

/**
 * Computes request digests, reusing what the previous one computed: message hashes already
 * known and the chain up to the first message that differs. Feed it successive requests of one
 * line (the loop's turns, or a verification walking them) to pay for what is new.
 */
export class RequestDigester {
  #hashes: string[] = [];
  #chains: string[] = [""];
  #last: { system: string; tools: unknown; settings: unknown; hashes: [string, string, string] } | undefined;

  /** The digest of `request`, and the canonical texts of the parts (what records store as blobs). */
  digest(request: ModelRequest): { digest: RequestDigest; toolsJson: string; settingsJson: string } {
    const hashes = request.messages.map(messageHash);
    let same = 0;
    while (same < hashes.length && same < this.#hashes.length && hashes[same] === this.#hashes[same]) same++;
    const chains = this.#chains.slice(0, same + 1);
    for (let i = same; i < hashes.length; i++) chains.push(chainStep(chains[i] as string, hashes[i] as string));
    this.#hashes = hashes;
    this.#chains = chains;
    const toolsJson = toolsJsonOf(request.tools);
    const settingsJson = canonicalJson(request.settings);
    const last = this.#last;
    const system = last !== undefined && last.system === request.system ? last.hashes[0] : sha256(request.system);
    const tools = last !== undefined && last.tools === toolsJson ? last.hashes[1] : sha256(toolsJson);
    const settings = last !== undefined && last.settings === settingsJson ? last.hashes[2] : sha256(settingsJson);
    this.#last = { system: request.system, tools: toolsJson, settings: settingsJson, hashes: [system, tools, settings] };
    const chain = chains[hashes.length] as string;
    const parts = { system, tools, settings, chain };
    return { digest: { hash: foldRequest(parts, hashes.length), ...parts, messages: hashes }, toolsJson, settingsJson };
  }

  /** The chain over the first `n` messages of the last request digested. */
  chainAt(n: number): string | undefined {
    return this.#chains[n];
  }
}

/** The digest of one request, from scratch (what a record's attributes hold). */
export function requestDigest(request: ModelRequest): RequestDigest {
  return new RequestDigester().digest(request).digest;
}

/** A `<request>` record as read from the tree. */
export interface RequestRecord {
  readonly element: NodeId;
  readonly hash: string;
  readonly system: string;
  readonly tools: string;
  readonly settings: string;
  readonly count: number;
  readonly chain: string;
  readonly base: number;
  readonly prev: NodeId | undefined;
  /** Hashes of messages `base` … `count - 1`. */
  readonly tail: readonly string[];
}

/** The record of an assistant turn (its `<request>` child), if it has one that reads. */
export function readRecord(tree: Tree, turn: number): RequestRecord | undefined {
  const first = tree.rec(turn)?.first ?? 0;
  const r = first === 0 ? undefined : tree.rec(first);
  if (r === undefined || r.tag !== TAG.request) return undefined;
  const a = r.attrs;
  const count = Number(a.count);
  const base = Number(a.base ?? 0);
  const prev = a.prev === undefined ? undefined : Number(a.prev);
  if (!Number.isSafeInteger(count) || !Number.isSafeInteger(base) || base < 0 || base > count) return undefined;
  if (prev !== undefined && !Number.isSafeInteger(prev)) return undefined;
  return {
    element: r.id,
    hash: a.hash ?? "",
    system: a.system ?? "",
    tools: a.tools ?? "",
    settings: a.settings ?? "",
    count,
    chain: a.chain ?? "",
    base,
    prev: prev as NodeId | undefined,
    tail: r.text === "" ? [] : r.text.split(" "),
  };
}

/**
 * The loop's side (PR-15): turns each request into its `<request>` record, storing the part blobs.
 * Knows the previous record of the line (found once, in the last few elements of `<body>`), so a
 * record lists only the messages its request adds.
 */
export class RequestRecorder {
  readonly #digester = new RequestDigester();
  #previous: { element: NodeId; count: number; chain: string } | undefined;
  #stored = new Set<string>();

  constructor(
    private readonly blobs: AgentBlobs,
    tree: Tree,
  ) {
    // The previous record is that of the last assistant turn; past a few elements, start afresh.
    let id = tree.rec(bodyOf(tree).id)?.last ?? 0;
    for (let seen = 0; id !== 0 && seen < 64; seen++) {
      const r = tree.rec(id);
      if (r === undefined) break;
      if (r.tag === TAG.turn && r.attrs[ATTR.role] === ROLE.assistant) {
        const rec = readRecord(tree, id);
        if (rec !== undefined) this.#previous = { element: rec.element, count: rec.count, chain: rec.chain };
        break;
      }
      id = r.prev;
    }
  }

  /** The record of `request` (blobs stored now); `recorded(id)` once the commit holding it is durable. */
  record(request: ModelRequest): NodeSpec {
    const { digest, toolsJson, settingsJson } = this.#digester.digest(request);
    this.#put(digest.system, request.system);
    this.#put(digest.tools, toolsJson);
    this.#put(digest.settings, settingsJson);
    const p = this.#previous;
    const extends_ = p !== undefined && p.count <= digest.messages.length && this.#digester.chainAt(p.count) === p.chain;
    const base = extends_ ? (p as { count: number }).count : 0;
    const attrs: Record<string, string> = {
      hash: digest.hash,
      system: digest.system,
      tools: digest.tools,
      settings: digest.settings,
      count: String(digest.messages.length),
      chain: digest.chain,
      base: String(base),
    };
    if (extends_) attrs.prev = String((p as { element: NodeId }).element);
    this.#pending = { count: digest.messages.length, chain: digest.chain };
    return { tag: TAG.request, attrs, text: digest.messages.slice(base).join(" ") };
  }

  #pending: { count: number; chain: string } | undefined;

  /** The record made by the last `record` is durable as element `element`: later records extend it. */
  recorded(element: NodeId): void {
    if (this.#pending !== undefined) this.#previous = { element, ...this.#pending };
    this.#pending = undefined;
  }

  /** Stores a part's bytes once per process and address (the blob table ignores repeats anyway). */
  #put(hash: string, text: string): void {
    if (this.#stored.has(hash)) return;
    const stored = this.blobs.put(text);
    if (stored !== hash)
      throw new EngineError("corrupt", `the blob store addressed a request part as ${stored}, not as its sha256 ${hash}`);
    if (this.#stored.size > 64) this.#stored.clear();
    this.#stored.add(hash);
  }
}
