/** Session ids: time-ordered, 26 characters of Crockford base32 (48 bits of ms, 80 random bits). */
import { nodeCrypto } from "./node-crypto.ts";
import type { SessionId } from "./types.ts";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export function newSessionId(now = Date.now()): SessionId {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const rand = nodeCrypto().randomBytes(10);
  let bits = 0n;
  for (const b of rand) bits = (bits << 8n) | BigInt(b);
  let tail = "";
  for (let i = 0; i < 16; i++) {
    tail = ALPHABET[Number(bits & 31n)] + tail;
    bits >>= 5n;
  }
  return (time + tail) as SessionId;
}

/** Branch names: letters, digits, and `. _ / -`, starting with a letter or digit; no `@` or `~`. */
export const BRANCH_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
