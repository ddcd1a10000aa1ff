/**
 * Node identity (DOM-1). Ids are positive safe integers minted by the tree; `0` never names an
 * element (css-select walks parents with truthiness checks, and `0` is the "none" pointer in
 * records). The document itself is addressed as {@link DOCUMENT} in the one op that changes the
 * allocator (`["set", 0, "hwm", n]`).
 */
declare const nodeIdBrand: unique symbol;

/** The id of one element of a tree. Branded so it cannot be confused with event or session ids. */
export type NodeId = number & { readonly [nodeIdBrand]: true };

/** The pseudo-id of the document (the tree as a whole), used only by `["set", 0, "hwm", n]`. */
export const DOCUMENT = 0;
export type DocumentId = typeof DOCUMENT;

/**
 * Largest id a tree will mint or accept: 2^31 - 1, so page arithmetic stays in 32-bit integers.
 * Two billion elements per session is far beyond any session's size.
 */
export const MAX_NODE_ID = 2 ** 31 - 1;

/** True when `n` can be a node id. */
export function isNodeId(n: unknown): n is NodeId {
  return typeof n === "number" && Number.isInteger(n) && n > 0 && n <= MAX_NODE_ID;
}

/**
 * Brands a number as a {@link NodeId}. Throws a `TypeError` for anything that cannot be one, so a
 * wrong literal fails at the call site rather than deep inside a patch.
 */
export function nodeId(n: number): NodeId {
  if (!isNodeId(n)) throw new TypeError(`not a node id: ${String(n)} (ids are integers from 1 to 2^31 - 1)`);
  return n;
}
