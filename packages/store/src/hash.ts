/** Content addresses: sha256, 32 bytes on disk, lowercase hex in the API. */
import { nodeCrypto } from "./node-crypto.ts";

export function sha256(data: Uint8Array | string): Buffer {
  return nodeCrypto().createHash("sha256").update(data).digest();
}

export const isHash = (s: unknown): s is string => typeof s === "string" && /^[0-9a-f]{64}$/.test(s);
