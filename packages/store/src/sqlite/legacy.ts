/**
 * Digests of a file written before schema 3 (ST-4, ST-21), opened read-only as it is: its rows
 * have no digest, so an event's digest is computed from its chain — the events before it, read
 * once per line of history and remembered for the life of the store. Only such opens pay this;
 * a migrated file stores every digest.
 */
import { StoreError } from "../errors.ts";
import type { EventId } from "../types.ts";
import { rowDigest } from "./schema.ts";
import type { Segments } from "./segments.ts";
import type { Statements } from "./statements.ts";

export class LegacyDigests {
  readonly #known = new Map<number, Buffer>();

  constructor(
    private readonly st: Statements,
    private readonly segments: Segments,
    /** The text of a blob-backed payload. */
    private readonly blobText: (hash: Buffer, event: number) => string,
  ) {}

  /** The digest of event `id` at (`segment`, `depth`). */
  of(id: EventId, segment: number, depth: number): Buffer {
    const known = this.#known.get(id);
    if (known !== undefined) return known;
    let prior: Buffer | null = null;
    for (const span of this.segments.spans(segment, depth, 0).reverse()) {
      // A span whose last event is known was read before: start after it.
      const last = this.st.atDepth.get(span.segment, span.to);
      const lastKnown = last === undefined ? undefined : this.#known.get(last);
      if (lastKnown !== undefined) {
        prior = lastKnown;
        continue;
      }
      for (const [id, , , kind, label, by, ts, , blob, payload] of this.st.chainDepths.all(
        span.segment,
        span.from,
        span.to,
        Number.MAX_SAFE_INTEGER,
      )) {
        const data = blob === null ? payload : this.blobText(blob, id);
        prior = this.#known.get(id) ?? rowDigest(prior, kind, label ?? null, by ?? null, ts, data);
        this.#known.set(id, prior);
      }
    }
    const found = this.#known.get(id);
    if (found === undefined)
      throw new StoreError("corrupt", `event ${id} is not on its own chain; run \`strata verify\` to list the damage`);
    return found;
  }
}
