/**
 * Streaming text into an element (EN-27): every chunk shows at once in the session's tree and
 * reaches subscribers as a `chunk` frame; chunks become durable `append` ops at a bounded rate
 * (every `intervalMs` or `maxBytes`, whichever comes first). A timed flush ends at a word boundary
 * (SE-3): the word being written waits for the next one. A crash loses at most the last unflushed
 * interval and that word; `close()` flushes.
 *
 * A stream ends when its element can no longer take text: a commit that removes the element or
 * gives it children ends it (everything appended before that commit was flushed first), and so
 * does a rewind, a branch switch or closing the session. After that `append` throws, saying why.
 * A flush that fails while the element can still take text (a head conflict, a full disk) keeps
 * the text pending for the next flush.
 */
import { type NodeId, sanitizeText } from "@strata/dom";

export interface StreamOptions {
  /** Flush at least this often while text is pending (default 50 ms; 500 ms over the asynchronous port). */
  readonly intervalMs?: number;
  /** Flush as soon as this much text is pending (default 64 KiB, in UTF-16 code units). */
  readonly maxBytes?: number;
  /** Label of the flush events (default "stream"). */
  readonly label?: string;
}

/** What a stream needs from its session. */
export interface StreamHost {
  /** Shows pending text (not durable yet) and tells subscribers. */
  showChunk(id: NodeId, text: string): void;
  /**
   * Makes `text` durable as one `append` op; throws if it does not apply. Answers true when the
   * flush is queued instead (the asynchronous port): the host then tells `stream` how it went
   * ({@link StreamWriter.flushed}, or ends it).
   */
  flushChunk(id: NodeId, text: string, label: string, stream: StreamWriter): boolean;
  /** Whether the element can still take text (exists, has no children). */
  accepts(id: NodeId): boolean;
  /** The stream ended (after its last flush). */
  ended(stream: StreamWriter): void;
}

/** Longest word a timed flush holds back to keep it whole (SE-3), in UTF-16 code units. */
const WORD_HOLD = 256;

const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;

/** Where the text's last word begins: just after its last character that is not part of a word (0 when none is). */
function lastBoundary(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    // Halves of a pair are never a boundary, so a cut never separates them.
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (!WORD_CHAR.test(text[i] as string)) return i + 1;
  }
  return 0;
}

export class StreamWriter {
  #pending = "";
  /** Text taken for flushes that have not answered yet (queued over the asynchronous port), oldest first. */
  #inflight = "";
  #carry = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Why the stream ended, if it did not end by `close()`. */
  #endedBy: unknown;
  /** The last flush failure that kept the text pending. */
  #lastError: unknown;
  readonly #interval: number;
  readonly #max: number;
  readonly #label: string;

  constructor(
    private readonly host: StreamHost,
    readonly element: NodeId,
    options: StreamOptions = {},
  ) {
    this.#interval = options.intervalMs ?? 50;
    this.#max = options.maxBytes ?? 64 * 1024;
    this.#label = options.label ?? "stream";
  }

  /** Text shown but not yet durable (over the asynchronous port, also what queued flushes hold). */
  get pending(): string {
    return this.#inflight + this.#pending;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Why the stream ended without `close()` (its element was removed, the session moved or closed), or undefined. */
  get endedBy(): unknown {
    return this.#endedBy;
  }

  /** The last flush failure that kept text pending (it is tried again at the next flush), or undefined. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /**
   * Adds a chunk. Characters XML cannot carry are made visible (sanitizeText); a surrogate pair
   * split across chunks is held back until its second half arrives.
   */
  append(chunk: string): void {
    this.#check();
    let text = this.#carry + chunk;
    this.#carry = "";
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    text = sanitizeText(text);
    if (text === "") return;
    this.#pending += text;
    this.host.showChunk(this.element, text);
    if (this.#pending.length >= this.#max) this.flush();
    else if (this.#timer === undefined) {
      this.#schedule();
    }
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushWords();
    }, this.#interval);
    this.#timer.unref?.();
  }

  /**
   * The timer's flush: the pending text up to its last word boundary, so a durable chunk never
   * ends inside a word and every word is searchable in the event that holds it (SE-3). The word
   * being written waits for the next flush; one longer than {@link WORD_HOLD} characters, a flush
   * asked for (`flush`, `close`, a commit of the session) or a full buffer flush everything.
   */
  #flushWords(): void {
    const text = this.#pending;
    if (text === "" || this.#closed) return;
    const cut = lastBoundary(text);
    if (cut === text.length || text.length - cut > WORD_HOLD) {
      this.flushQuietly();
      return;
    }
    if (cut === 0) {
      this.#schedule();
      return;
    }
    this.#pending = text.slice(0, cut);
    this.flushQuietly();
    if (this.#closed) return;
    this.#pending += text.slice(cut);
    if (this.#timer === undefined) this.#schedule();
  }

  /**
   * Makes pending text durable now. Throws if that fails: if the element can no longer take text
   * the stream has ended (the text is dropped); otherwise the text stays pending. Over the
   * asynchronous port the host queues the flush after the session's operations before it and
   * returns: a queued flush that fails ends the stream with its error (decision 0037).
   */
  flush(): void {
    const text = this.take();
    if (text === "") return;
    let queued: boolean;
    try {
      queued = this.host.flushChunk(this.element, text, this.#label, this);
    } catch (e) {
      this.failed(text, e);
      throw e;
    }
    if (!queued) this.flushed(text);
  }

  /** Label of the flush events. */
  get label(): string {
    return this.#label;
  }

  /** How often pending text is flushed at least (ms). */
  get intervalMs(): number {
    return this.#interval;
  }

  /** @internal the pending text, taken for a flush (the timer cleared); "" when there is none or the stream is closed. */
  take(): string {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending === "" || this.#closed) return "";
    const text = this.#pending;
    this.#pending = "";
    this.#inflight += text;
    return text;
  }

  /** @internal the flush of `text` (taken with {@link take}, the oldest not answered) is durable. */
  flushed(text: string): void {
    this.#inflight = this.#inflight.slice(text.length);
    this.#lastError = undefined;
  }

  /**
   * @internal the flush of `text` (taken with {@link take}) failed with `e`: if the element can
   * still take text the text is pending again, before what came since; otherwise the stream ends.
   */
  failed(text: string, e: unknown): void {
    this.#inflight = this.#inflight.slice(text.length);
    if (this.host.accepts(this.element)) {
      this.#pending = text + this.#pending;
      this.#lastError = e;
    } else this.abort(e);
  }

  /** Like {@link flush}, never throwing (a session's own commits use it). */
  flushQuietly(): void {
    try {
      this.flush();
    } catch {
      // kept pending (see lastError) or ended (see endedBy)
    }
  }

  /**
   * Flushes (including a held-back half pair, made visible) and ends the stream. If the flush
   * fails while the element can still take text, the stream stays open with its text pending
   * (call `close()` again); if it cannot, the stream has ended and the error is thrown.
   */
  close(): void {
    if (this.#closed) return;
    if (this.#carry !== "") {
      const carry = sanitizeText(this.#carry);
      this.#carry = "";
      this.#pending += carry;
      this.host.showChunk(this.element, carry);
    }
    this.flush();
    this.#closed = true;
    this.host.ended(this);
  }

  /** Ends the stream now with `reason` (what `append` will throw); pending text is dropped. */
  abort(reason: unknown): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = "";
    this.#inflight = "";
    this.#carry = "";
    this.#closed = true;
    this.#endedBy = reason;
    this.host.ended(this);
  }

  #check(): void {
    if (this.#endedBy !== undefined) throw this.#endedBy;
    if (this.#closed) throw new Error(`the stream into element ${this.element} is closed`);
  }
}
