/**
 * `@strata/agent/internal`: what the tests reach for beyond the public surface — request digests
 * and records as the loop computes them (PR-15), and the local workspace's confinement primitives
 * (TL-19). No compatibility promise: these change with the code they belong to.
 */
export { type RequestDigest, type RequestRecord, readRecord, requestDigest } from "./requests.ts";
export { confine, readConfined } from "./tools/confine.ts";
