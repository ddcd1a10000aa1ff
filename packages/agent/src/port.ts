/**
 * The agent on either storage port (issue 15, decision 0038). The loop's phases are written once:
 * every commit is awaited (over SQLite `await` of an event is one microtask; over the asynchronous
 * port it is the write), and the loop's blobs — request parts, inputs, long observations, rerun
 * overrides — go through {@link AgentBlobs}, which over the asynchronous port addresses them here
 * (sha256, as every store does) and writes them before the commit that names them, so an event
 * never references a blob the store does not have (what `verify` checks).
 */
import type { Change, CommitOptions, Port, Session } from "@strata/engine";
import { EngineError } from "@strata/engine";
import { type AsyncStore, drive, type EventMeta, isAsyncStore, type Store, sha256, value } from "@strata/store";

/** A session on either port: what the agent's phases take. */
export type AnySession = Session<Port>;

/** Texts kept per asynchronous store before the cache starts again (blobs are immutable; the loop rereads few). */
const CACHE_LIMIT = 1024;

/**
 * The loop's blobs on one store. Over a synchronous store `put` and `text` are the store's
 * `putBlob` and `getBlob` (through a small cache); over the asynchronous port `put` addresses the
 * bytes now and `flush` writes them, and `text` reads what `fetch` brought (or `put` gave).
 */
export class AgentBlobs {
  static readonly #byStore = new WeakMap<object, AgentBlobs>();
  readonly #pending = new Map<string, string>();
  readonly #texts = new Map<string, string>();

  private constructor(readonly store: Port) {}

  /** The blobs of `store` (one per store, so a part put once per process is put once). */
  static of(store: Port): AgentBlobs {
    let b = AgentBlobs.#byStore.get(store);
    if (b === undefined) AgentBlobs.#byStore.set(store, (b = new AgentBlobs(store)));
    return b;
  }

  /**
   * Stores `text` (over the asynchronous port: at the next `flush`) and answers its address. It is
   * written again even when it was before: a flush inside a transaction that rolled back wrote
   * nothing, and the blob table ignores bytes it has.
   */
  put(text: string): string {
    if (!isAsyncStore(this.store)) return (this.store as Store).putBlob(text);
    const hash = sha256(text).toString("hex");
    this.#pending.set(hash, text);
    this.#remember(hash, text);
    return hash;
  }

  /** The text of blob `hash`. Over the asynchronous port it must have been fetched (`fetch`) or put. */
  text(hash: string): string {
    const hit = this.#texts.get(hash);
    if (hit !== undefined) return hit;
    if (isAsyncStore(this.store))
      throw new EngineError("not-loaded", `blob ${hash} was not fetched from ${this.store.path} before it was read`);
    const bytes = (this.store as Store).getBlob(hash);
    if (bytes === undefined) throw missingBlob(hash, this.store.path);
    const text = bytes.toString("utf8");
    this.#remember(hash, text);
    return text;
  }

  /** Fetches the blobs of `hashes` not read yet, in one call (over a synchronous store: nothing to do). */
  *fetchSteps(hashes: Iterable<string>): Generator<unknown, void, unknown> {
    if (!isAsyncStore(this.store)) return;
    const all = [...new Set(hashes)].filter((h) => h !== "");
    let wanted = all.filter((h) => !this.#texts.has(h));
    if (wanted.length === 0) return;
    if (this.#texts.size + wanted.length > CACHE_LIMIT) {
      // Starting again: what this read needs is fetched whole (and what waits to be written is kept).
      this.#texts.clear();
      for (const [h, text] of this.#pending) this.#texts.set(h, text);
      wanted = all.filter((h) => !this.#texts.has(h));
    }
    const got = yield* value((this.store as AsyncStore).getBlobs(wanted));
    for (const h of wanted) {
      const bytes = got.get(h);
      if (bytes === undefined) throw missingBlob(h, this.store.path);
      this.#texts.set(h, bytes.toString("utf8"));
    }
  }

  /** Writes the blobs put since the last flush (over a synchronous store they are written already). */
  *flushSteps(): Generator<unknown, void, unknown> {
    for (const [hash, text] of this.#pending) {
      const stored = yield* value((this.store as AsyncStore).putBlob(text));
      if (stored !== hash)
        throw new EngineError("corrupt", `the store addressed a blob ${stored}, not its sha256 ${hash}: blobs must be content-addressed`);
      this.#pending.delete(hash);
    }
  }

  #remember(hash: string, text: string): void {
    if (this.#texts.size >= CACHE_LIMIT) this.#texts.delete(this.#texts.keys().next().value as string);
    this.#texts.set(hash, text);
  }
}

/** The error for blob `hash` that the tree names and the store at `path` lacks: damage. */
export function missingBlob(hash: string, path: string): EngineError {
  return new EngineError("corrupt", `blob ${hash} referenced by the session tree is missing from ${path}; run \`strata verify\``);
}

/** Blobs fetched ahead of a synchronous read: their bytes, and their texts (one the store lacks is {@link missingBlob}). */
export interface FetchedBlobs {
  readonly bytes: ReadonlyMap<string, Buffer>;
  text(hash: string): string;
}

/** Fetches the blobs of `hashes` on either port, 500 to a call, for a read that cannot wait for each. */
export async function fetchBlobs(store: Port, hashes: Iterable<string>): Promise<FetchedBlobs> {
  const all = [...new Set(hashes)].filter((h) => h !== "");
  const bytes = new Map<string, Buffer>();
  for (let i = 0; i < all.length; i += 500) for (const [h, v] of await store.getBlobs(all.slice(i, i + 500))) bytes.set(h, v);
  return {
    bytes,
    text(hash) {
      const v = bytes.get(hash);
      if (v === undefined) throw missingBlob(hash, store.path);
      return v.toString("utf8");
    },
  };
}

/** Writes the blobs put so far, then commits `change`: what every phase of the loop commits through. */
export async function commit(session: AnySession, change: Change, options: CommitOptions = {}): Promise<EventMeta> {
  await drive(AgentBlobs.of(session.store).flushSteps());
  return await session.commit(change, options);
}
