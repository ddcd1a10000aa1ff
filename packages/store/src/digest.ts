/**
 * Event digests (ST-21, decision 0014): every event row stores
 * `digest = sha256(encoding(prior's digest, kind, label, by, ts, data))`, so each event's digest
 * covers its own content and, through its prior's, the whole chain before it. Ids (event, session,
 * segment) and depths are not covered: a chain copied into another database — a bundle, a replica
 * — has the same digests. The encoding is length-prefixed and unambiguous:
 *
 *   0x01                                   format version
 *   0x00 | 0x01 ‖ prior digest (32 bytes)  no prior (genesis) | the prior event's digest
 *   u64 length ‖ kind                      UTF-8
 *   0x00 | 0x01 ‖ u64 length ‖ label       null | UTF-8
 *   0x00 | 0x01 ‖ u64 length ‖ by          null | UTF-8
 *   u64 ts                                 milliseconds since the epoch
 *   u64 length ‖ data                      UTF-8 (the payload as the store returns it, blob or inline)
 *
 * All integers are unsigned 64-bit big-endian. Strings are encoded as UTF-8 the way the store
 * writes them (a lone UTF-16 surrogate becomes U+FFFD, as it does in the file).
 */
import { isTimestamp, show } from "./checks.ts";
import { StoreError } from "./errors.ts";
import { isHash } from "./hash.ts";
import { nodeCrypto } from "./node-crypto.ts";

const VERSION = 0x01;
/** Payloads up to this many bytes are encoded in one reused buffer and hashed in one call (the append path). */
const SCRATCH_MAX = 64 * 1024;
type OneShot = (algorithm: string, data: Buffer, encoding: "buffer") => Buffer;
/** `crypto.hash` (Node ≥ 20.12): one call, no hash object — a third of the cost on small inputs (null: absent). */
let oneShotFn: OneShot | null | undefined;
const oneShot = (): OneShot | null => (oneShotFn ??= (nodeCrypto() as { hash?: OneShot }).hash ?? null);
let scratch = Buffer.allocUnsafe(8 * 1024);

function u64(b: Buffer, off: number, n: number): number {
  b.writeUInt32BE(Math.floor(n / 0x1_0000_0000), off);
  b.writeUInt32BE(n >>> 0, off + 4);
  return off + 8;
}

/** Writes u64 length ‖ UTF-8 of `s` at `off` (the buffer has room: see the size bound below). */
function text(b: Buffer, off: number, s: string): number {
  const len = b.write(s, off + 8, "utf8");
  u64(b, off, len);
  return off + 8 + len;
}

/** Writes a nullable string: 0x00, or 0x01 ‖ u64 length ‖ UTF-8. */
function optional(b: Buffer, off: number, s: string | null): number {
  if (s === null) {
    b[off] = 0;
    return off + 1;
  }
  b[off] = 1;
  return text(b, off + 1, s);
}

/** Writes the encoding up to the payload's length (everything but the payload bytes); returns the offset. */
function head(b: Buffer, prior: Buffer | null, kind: string, label: string | null, by: string | null, ts: number, dataLen: number): number {
  b[0] = VERSION;
  let off = 1;
  if (prior === null) b[off++] = 0;
  else {
    if (prior.length !== 32)
      throw new StoreError(
        "corrupt",
        `a prior digest of ${prior.length} bytes (not 32) was met: the database is damaged; run \`strata verify\``,
      );
    b[off++] = 1;
    off += prior.copy(b, off, 0, 32);
  }
  off = text(b, off, kind);
  off = optional(b, off, label);
  off = optional(b, off, by);
  off = u64(b, off, ts);
  return u64(b, off, dataLen);
}

/**
 * The digest of an event as bytes (the store's internal form; callers check the arguments). On
 * the append path (payloads up to 64 KiB) the encoding is written into one reused buffer and
 * hashed in one call; larger payloads are streamed into a hash after the short fields.
 */
export function digestBytes(prior: Buffer | null, kind: string, label: string | null, by: string | null, ts: number, data: string): Buffer {
  const dataLen = Buffer.byteLength(data);
  // Room for the fixed fields (76 bytes) and the short strings (at most 3 UTF-8 bytes per UTF-16 unit).
  const room = 80 + 3 * (kind.length + (label?.length ?? 0) + (by?.length ?? 0));
  const hash = oneShot();
  if (hash !== null && dataLen <= SCRATCH_MAX && room + dataLen <= 4 * SCRATCH_MAX) {
    if (scratch.length < room + dataLen) scratch = Buffer.allocUnsafe(2 * (room + dataLen));
    const off = head(scratch, prior, kind, label, by, ts, dataLen);
    const end = off + scratch.write(data, off, "utf8");
    return hash("sha256", scratch.subarray(0, end), "buffer");
  }
  const b = Buffer.allocUnsafe(room);
  return nodeCrypto()
    .createHash("sha256")
    .update(b.subarray(0, head(b, prior, kind, label, by, ts, dataLen)))
    .update(data, "utf8")
    .digest();
}

/**
 * The digest of an event whose prior has digest `prior` (null for a genesis event), as 64
 * lowercase hex characters: what the store writes on append and what `EventMeta.digest` reports.
 * Bundles and replicas call it to prove a chain without trusting the database that sent it.
 */
export function eventDigest(
  prior: string | null,
  e: { readonly kind: string; readonly label: string | null; readonly by: string | null; readonly ts: number; readonly data: string },
): string {
  if (prior !== null && !isHash(prior))
    throw new StoreError("bad-input", `eventDigest: the prior digest must be null or 64 lowercase hex characters, got ${show(prior)}`);
  if (typeof e !== "object" || e === null)
    throw new StoreError("bad-input", `eventDigest takes {kind, label, by, ts, data}, got ${show(e)}`);
  if (typeof e.kind !== "string" || e.kind === "")
    throw new StoreError("bad-input", `eventDigest: kind must be a non-empty string, got ${show(e.kind)}`);
  for (const [name, v] of [
    ["label", e.label],
    ["by", e.by],
  ] as const)
    if (v !== null && typeof v !== "string")
      throw new StoreError("bad-input", `eventDigest: ${name} must be a string or null, got ${show(v)}`);
  if (!isTimestamp(e.ts))
    throw new StoreError("bad-input", `eventDigest: ts must be whole milliseconds between 1970 and 9999, got ${show(e.ts)}`);
  if (typeof e.data !== "string") throw new StoreError("bad-input", `eventDigest: data must be a string, got ${show(e.data)}`);
  return digestBytes(prior === null ? null : Buffer.from(prior, "hex"), e.kind, e.label, e.by, e.ts, e.data).toString("hex");
}
