/**
 * Blobs (ST-14): bytes stored once under their sha256, shared by every branch and session —
 * snapshot pages, directory chunks, and event payloads over the inline limit, which are stored
 * as a blob and read back transparently. The table is `blobs (hash, size, data)`; the API speaks
 * lowercase hex, the file stores the 32 bytes.
 */
import { StoreError } from "../errors.ts";
import { sha256 } from "../hash.ts";
import { fromSqlite } from "./errors.ts";
import type { Statements } from "./statements.ts";

export class BlobTable {
  constructor(
    private readonly st: Statements,
    /** Largest event payload kept inline, in bytes; larger ones become blobs. */
    private readonly inlineLimit: number,
  ) {}

  /** Stores `data` under its sha256 and returns the hash (hex); storing the same bytes again writes nothing. */
  put(data: Uint8Array | string): string {
    const hash = sha256(data);
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    try {
      this.st.insertBlob.run(hash, bytes.byteLength, bytes);
    } catch (e) {
      throw fromSqlite(e, "storing a blob");
    }
    return hash.toString("hex");
  }

  get(hash: string): Buffer | undefined {
    return this.st.blob.get(Buffer.from(hash, "hex")) ?? undefined;
  }

  /** Many blobs at once, keyed by hash; missing ones are left out. */
  getMany(hashes: readonly string[]): Map<string, Buffer> {
    const out = new Map<string, Buffer>();
    for (const r of this.st.blobsIn(hashes)) out.set(r.hash.toString("hex"), r.data);
    return out;
  }

  has(hash: string): boolean {
    return this.st.hasBlob.get(Buffer.from(hash, "hex")) !== undefined;
  }

  /** The text of the blob-backed payload of `event`; a missing blob is damage (`corrupt`). */
  text(hash: Buffer, event: number): string {
    const bytes = this.get(hash.toString("hex"));
    if (bytes === undefined) throw new StoreError("corrupt", `event ${event} refers to missing blob ${hash.toString("hex")}`);
    return bytes.toString("utf8");
  }

  /** How a payload is stored: inline (`[null, data]`), or over the inline limit as a blob (`[hash, ""]`). */
  payload(data: string): [Buffer | null, string] {
    if (data.length * 3 <= this.inlineLimit || Buffer.byteLength(data) <= this.inlineLimit) return [null, data];
    return [Buffer.from(this.put(data), "hex"), ""];
  }
}
