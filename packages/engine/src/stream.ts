/**
 * Streaming text into an element (EN-27): every chunk shows at once in the session's tree and
 * reaches subscribers as a `chunk` frame; chunks become durable `append` ops at a bounded rate
 * (every `intervalMs` or `maxBytes`, whichever comes first). A crash loses at most the last
 * unflushed interval; `close()` flushes.
 */
import { type NodeId, sanitizeText } from "@strata/dom";

export interface StreamOptions {
  /** Flush at least this often while text is pending (default 50 ms). */
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
  /** Makes `text` durable as one `append` op; throws if it does not apply. */
  flushChunk(id: NodeId, text: string, label: string): void;
  /** The stream ended (after its last flush). */
  ended(stream: StreamWriter): void;
}

export class StreamWriter {
  #pending = "";
  #carry = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #error: unknown;
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

  /** Text shown but not yet durable. */
  get pending(): string {
    return this.#pending;
  }

  get closed(): boolean {
    return this.#closed;
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
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        try {
          this.flush();
        } catch (e) {
          this.#error = e;
        }
      }, this.#interval);
      this.#timer.unref?.();
    }
  }

  /** Makes pending text durable now. */
  flush(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending === "") return;
    const text = this.#pending;
    this.#pending = "";
    this.host.flushChunk(this.element, text, this.#label);
  }

  /** Flushes (including a held-back half pair, made visible) and ends the stream. */
  close(): void {
    if (this.#closed) return;
    const earlier = this.#error;
    this.#error = undefined;
    if (this.#carry !== "") {
      const carry = sanitizeText(this.#carry);
      this.#carry = "";
      this.#pending += carry;
      this.host.showChunk(this.element, carry);
    }
    try {
      this.flush();
    } finally {
      this.#closed = true;
      this.host.ended(this);
    }
    if (earlier !== undefined) throw earlier;
  }

  #check(): void {
    if (this.#error !== undefined) {
      const e = this.#error;
      this.#error = undefined;
      throw e;
    }
    if (this.#closed) throw new Error(`the stream into element ${this.element} is closed`);
  }
}
