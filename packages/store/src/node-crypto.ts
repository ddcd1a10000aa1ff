/**
 * `node:crypto`, loaded on first use rather than when the store's modules load: a command that
 * only reads (`strata ls`, `strata --help`) never hashes or draws random bytes, and loading the
 * module costs a few milliseconds of every start (issue 16's start-up budget).
 */
import { createRequire } from "node:module";

type NodeCrypto = typeof import("node:crypto");

let loaded: NodeCrypto | undefined;

/** The `node:crypto` module (loaded now if it was not yet). */
export function nodeCrypto(): NodeCrypto {
  loaded ??= createRequire(import.meta.url)("node:crypto") as NodeCrypto;
  return loaded;
}
