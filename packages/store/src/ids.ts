/**
 * Session ids: time-ordered, 26 characters of Crockford base32 (48 bits of ms, 80 random bits).
 * Within one process they are strictly increasing: an id made in the same millisecond as the one
 * before it (or with a clock that went back) takes the millisecond after that one's, so ids sort
 * in the order they were made, and ids made together differ in their first ten characters too
 * (their prefixes stay short). Their 80 bits after the time are always random, so are their tails
 * (the handles people type). A burst of N ids runs at most N ms ahead of the clock.
 */
import { nodeCrypto } from "./node-crypto.ts";
import type { SessionId } from "./types.ts";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;

export function newSessionId(now = Date.now()): SessionId {
  const time = now > lastTime ? now : lastTime + 1;
  lastTime = time;
  let head = "";
  let t = time;
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[t % 32] + head;
    t = Math.floor(t / 32);
  }
  let bits = 0n;
  for (const b of nodeCrypto().randomBytes(10)) bits = (bits << 8n) | BigInt(b);
  let tail = "";
  for (let i = 0; i < 16; i++) {
    tail = ALPHABET[Number(bits & 31n)] + tail;
    bits >>= 5n;
  }
  return (head + tail) as SessionId;
}

/**
 * Branch names: letters, digits, and `. _ / -`, starting with a letter or digit; no `@` or `~`;
 * `/` separates parts, none of them empty, `.` or `..` (a branch's name is also the path of its
 * working directory under the database's, which it must never leave).
 */
export const BRANCH_NAME = /^(?!.*\/\.{1,2}(?:\/|$))(?!.*\/\/)(?!.*\/$)[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
