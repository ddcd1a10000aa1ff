/**
 * Event kinds and their payloads (DESIGN §3, EN-1 … EN-3). The log stores resulting ops, never
 * commands (L3): replaying an event needs no business logic, only `foldEvent`.
 */
import { applyPatch, checkSpec, DomError, decodePatch, isNodeId, type NodeSpec, type Op, skeletonTree, type Tree } from "@strata/dom";
import type { StoredEvent } from "@strata/store";
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

/** The payload of a patch event, exactly the article's `data: {"ops":[…]}`. */
export function encodePatch(ops: readonly Op[]): string {
  return JSON.stringify({ ops });
}

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
      return { kind: "patch", ops: decodePatch((data as { ops: unknown }).ops), checked: true };
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
    `event ${e.id} has kind "${e.kind}", which this strata does not know (it knows ${GENESIS_KIND}, ${PATCH_KIND}); it may have been written by a newer version`,
  );
}

/**
 * The one fold (L2): the live session and every replay turn an event into the next tree with this
 * function. Patches are applied monotonically, so journaled ops never reuse an id (L5).
 */
export function foldEvent(tree: Tree | undefined, e: DecodedEvent, id: number): Tree {
  if (e.kind === "genesis") {
    if (tree !== undefined) throw new EngineError("bad-event", `event ${id}: a genesis event can only start a session`);
    const skeleton = skeletonTree(e.skeleton);
    if (e.hwm === undefined || e.hwm <= skeleton.hwm) return skeleton;
    return applyPatch(skeleton, [["set", 0, "hwm", String(e.hwm)]]);
  }
  if (tree === undefined) throw new EngineError("bad-event", `event ${id}: a patch cannot come before the genesis event`);
  try {
    // Ops decoded from the log were checked by decodePatch; ops from callers are checked here.
    return applyPatch(tree, e.ops, { monotonic: true, trusted: e.checked === true });
  } catch (err) {
    if (err instanceof DomError) throw new EngineError("bad-event", `event ${id} does not apply: ${err.message}`, { cause: err });
    throw err;
  }
}
