/**
 * Session ids: time-ordered, 26 characters of Crockford base32 (48 bits of ms, 80 random bits).
 * Within one process they are strictly increasing: an id made in the same millisecond as the one
 * before (or with a clock that went back) keeps that one's time and adds a random step of up to
 * 2^60 to its random part (a million ids a millisecond before the time moves on), so ids sort in
 * the order they were made while their tails — the handles people type — stay random.
 */
import { nodeCrypto } from "./node-crypto.ts";
import type { SessionId } from "./types.ts";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const RANDOM_BITS = 80n;
const STEP_BITS = 60n;

let last: { time: number; bits: bigint } | undefined;

const randomBits = (bytes: number): bigint => {
  let bits = 0n;
  for (const b of nodeCrypto().randomBytes(bytes)) bits = (bits << 8n) | BigInt(b);
  return bits;
};

export function newSessionId(now = Date.now()): SessionId {
  let time = now;
  let bits: bigint;
  if (last !== undefined && time <= last.time) {
    time = last.time;
    bits = last.bits + 1n + (randomBits(9) & ((1n << STEP_BITS) - 1n));
    if (bits >= 1n << RANDOM_BITS) {
      time += 1;
      bits = randomBits(10);
    }
  } else bits = randomBits(10);
  last = { time, bits };
  let head = "";
  let t = time;
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[t % 32] + head;
    t = Math.floor(t / 32);
  }
  let tail = "";
  for (let i = 0; i < 16; i++) {
    tail = ALPHABET[Number(bits & 31n)] + tail;
    bits >>= 5n;
  }
  return (head + tail) as SessionId;
}

/** Branch names: letters, digits, and `. _ / -`, starting with a letter or digit; no `@` or `~`. */
export const BRANCH_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
