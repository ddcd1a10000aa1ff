/**
 * Event kinds and their payloads (DESIGN §3, EN-1 … EN-3). The log stores resulting ops, never
 * commands (L3): replaying an event needs no business logic, only `foldEvent`.
 */
import {
  applyPatch,
  attrsWritten,
  checkOp,
  checkSpec,
  DomError,
  decodePatch,
  isNodeId,
  type NodeSpec,
  type Op,
  type PatchEffect,
  patchText,
  skeletonTree,
  type Tree,
} from "@strata/dom";
import { registerSearchText, type StoredEvent } from "@strata/store";
import { EngineError } from "./errors.ts";

/** The first event of every session: the fixed skeleton. */
export const GENESIS_KIND = "genesis@1";
/** Every other event: a patch. */
export const PATCH_KIND = "patch@1";

/** The default skeleton (DESIGN §2). */
export const DEFAULT_SKELETON: NodeSpec = Object.freeze({ tag: "session", children: [{ tag: "meta" }, { tag: "body" }] }) as NodeSpec;

/**
 * Ids up to this are kept for the skeleton, so page 0 of a session holds only the skeleton (it is
 * rewritten by every snapshot, since `<body>` gains children all the time).
 */
export const SKELETON_IDS = 255;

export type DecodedEvent =
  | { readonly kind: "genesis"; readonly skeleton: NodeSpec; readonly hwm?: number }
  | { readonly kind: "patch"; readonly ops: readonly Op[]; readonly checked?: boolean };

export function encodeGenesis(skeleton: NodeSpec = DEFAULT_SKELETON, hwm = SKELETON_IDS): string {
  checkSpec(skeleton);
  return JSON.stringify({ skeleton, hwm });
}

/**
 * Patches known to be well-formed: decoded from the log or the wire (`decodePatch`) or validated by
 * a commit's fold. Folding them again skips the shape checks (`foldEvent`'s `checked`), so a
 * replica does not validate what its host already did. Kept by identity, invisible in the data.
 */
const CHECKED = new WeakSet<readonly Op[]>();

/** Marks `ops` as validated (see {@link isChecked}) and returns it. */
export function markChecked<T extends readonly Op[]>(ops: T): T {
  CHECKED.add(ops);
  return ops;
}

/** True for ops that came out of `decodePatch` or a commit's validation in this process. */
export function isChecked(ops: readonly Op[]): boolean {
  return CHECKED.has(ops);
}

/** The payload of a patch event, exactly the article's `data: {"ops":[…]}`. */
export function encodePatch(ops: readonly Op[]): string {
  return JSON.stringify({ ops });
}

/** Attributes whose values search indexes beside the texts (SE-2): the tool a call names, the path of a file. */
export const SEARCH_ATTRS: ReadonlySet<string> = new Set(["tool", "path"]);

/** Most characters of one event's text the search index keeps (SE-2): the rest is not searchable. */
export const MAX_SEARCH_CHARS = 100_000;

/**
 * What search indexes of a patch (SE-1, SE-2): the values of {@link SEARCH_ATTRS} it writes, then the
 * texts its ops write, one per line, at most
 * {@link MAX_SEARCH_CHARS} characters (cut before a lone surrogate); undefined when there are none.
 */
export function searchTextOf(ops: readonly Op[]): string | undefined {
  // The names a search finds an element by come first: a call's tool, a file's path (SE-2).
  const named: string[] = [];
  for (const op of ops)
    attrsWritten(op, (_spec, name, value) => {
      if (SEARCH_ATTRS.has(name) && value !== "") named.push(value);
    });
  const texts = patchText(ops);
  let text = named.length === 0 ? texts : texts === "" ? named.join("\n") : `${named.join("\n")}\n${texts}`;
  if (text.length > MAX_SEARCH_CHARS) {
    const cut = text.charCodeAt(MAX_SEARCH_CHARS - 1);
    text = text.slice(0, cut >= 0xd800 && cut <= 0xdbff ? MAX_SEARCH_CHARS - 1 : MAX_SEARCH_CHARS);
  }
  return /\S/.test(text) ? text : undefined;
}

/** {@link searchTextOf} of a stored payload (a bundle's, an older file's); undefined for a genesis or a payload that does not decode. */
export function searchTextOfPayload(kind: string, data: string): string | undefined {
  if (kind !== PATCH_KIND) return undefined;
  try {
    return searchTextOf(decodePatch((JSON.parse(data) as { ops: unknown }).ops));
  } catch {
    return undefined;
  }
}

// SE-8: a store may index a patch's text without keeping a copy of it, and derive it from the payload again for a snippet.
registerSearchText(PATCH_KIND, (data) => searchTextOfPayload(PATCH_KIND, data));

/** Decodes and validates a stored event's payload; throws `EngineError` saying which event and why. */
export function decodeEvent(e: Pick<StoredEvent, "id" | "kind" | "data">): DecodedEvent {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch (err) {
    throw new EngineError("bad-event", `event ${e.id}: payload is not JSON (${(err as Error).message})`);
  }
  try {
    if (e.kind === PATCH_KIND) {
      if (typeof data !== "object" || data === null || !Array.isArray((data as { ops?: unknown }).ops))
        throw new EngineError("bad-event", `event ${e.id}: a patch@1 payload is {"ops":[…]}`);
      return { kind: "patch", ops: markChecked(checkParsedPatch((data as { ops: unknown }).ops)), checked: true };
    }
    if (e.kind === GENESIS_KIND) {
      const { skeleton, hwm } = (data ?? {}) as { skeleton?: unknown; hwm?: unknown };
      checkSpec(skeleton);
      if (hwm !== undefined && !isNodeId(hwm)) throw new EngineError("bad-event", `event ${e.id}: genesis hwm must be a positive integer`);
      return hwm === undefined
        ? { kind: "genesis", skeleton: skeleton as NodeSpec }
        : { kind: "genesis", skeleton: skeleton as NodeSpec, hwm: hwm as number };
    }
  } catch (err) {
    if (err instanceof DomError) throw new EngineError("bad-event", `event ${e.id}: ${err.message}`, { cause: err });
    throw err;
  }
  throw new EngineError(
    "unknown-kind",
    `event ${e.id} has kind "${e.kind}", which this strata does not know (it knows ${GENESIS_KIND}, ${PATCH_KIND}); it may have been written by a newer version of strata: upgrade strata to read it`,
  );
}

/**
 * `decodePatch`'s checks on ops just parsed from JSON, without its deep copy: nothing else holds
 * these objects, so they need no copy. Errors carry the failing op's index.
 */
function checkParsedPatch(data: unknown): Op[] {
  if (!Array.isArray(data)) return decodePatch(data); // throws the usual error
  for (let i = 0; i < data.length; i++)
    try {
      checkOp(data[i]);
    } catch (e) {
      if (e instanceof DomError) throw new DomError(e.code, `op ${i}: ${e.message}`, { opIndex: i });
      throw e;
    }
  return data as Op[];
}

/**
 * The one fold (L2): the live session and every replay turn an event into the next tree with this
 * function. Patches are applied monotonically, so journaled ops never reuse an id (L5). A patch
 * event that applies calls `onEffect` with what it did (the dom's `PatchEffect`, DOM-39).
 */
export function foldEvent(tree: Tree | undefined, e: DecodedEvent, id: number, onEffect?: (effect: PatchEffect) => void): Tree {
  if (e.kind === "genesis") {
    if (tree !== undefined) throw new EngineError("bad-event", `event ${id}: a genesis event can only start a session`);
    const skeleton = skeletonTree(e.skeleton);
    if (e.hwm === undefined || e.hwm <= skeleton.hwm) return skeleton;
    return applyPatch(skeleton, [["set", 0, "hwm", String(e.hwm)]]);
  }
  if (tree === undefined) throw new EngineError("bad-event", `event ${id}: a patch cannot come before the genesis event`);
  try {
    // Ops decoded from the log were checked by decodePatch; ops from callers are checked here.
    return applyPatch(tree, e.ops, { monotonic: true, trusted: e.checked === true, onEffect });
  } catch (err) {
    if (err instanceof DomError) throw new EngineError("bad-event", `event ${id} does not apply: ${err.message}`, { cause: err });
    throw err;
  }
}
