/**
 * One subscriber of a session's patch stream (EN-24): lossless and ordered, never blocking the
 * writer. Live frames wait in a bounded queue; when it overflows the subscriber is marked lagged,
 * the queue is dropped — all but the last state frame (`snapshot` or `reset`) still waiting, which
 * is never dropped — and on its next read it gets a `lagged` frame and then every missed event
 * read back from the store from its cursor, then the text streams hold that is not durable yet
 * (as `chunk` frames), then live frames again. If the cursor is no longer on the session's line
 * (it moved while the subscriber lagged), the subscriber gets a fresh `reset` frame instead. If
 * the log cannot be read from the cursor (a damaged event), the subscription ends with an
 * `error` frame.
 */
import { DomError, type NodeId, type Op } from "@strata/dom";
import { type EventId, type EventMeta, StoreError } from "@strata/store";
import { EngineError } from "./errors.ts";
import type { Frame } from "./sse.ts";

export interface SubscriptionSource {
  /**
   * The durable events after `cursor` on the current line, oldest first, at most `limit`;
   * undefined when `cursor` is not on the current line.
   */
  eventsAfter(cursor: EventId, limit: number): { meta: EventMeta; ops: readonly Op[] }[] | undefined;
  /** The head now. */
  headId(): EventId;
  /** A `reset` frame with the current durable state. */
  resetFrame(): Frame;
  /** Text streamed into elements and not durable yet. */
  pendingText(): { id: NodeId; text: string }[];
  /** Stop sending frames to this subscriber. */
  detach(sub: Subscription): void;
}

const CATCH_UP_BATCH = 2000;

export class Subscription implements AsyncIterableIterator<Frame> {
  /** Frames waiting for the consumer: `#queue[#head …]`. */
  readonly #queue: Frame[] = [];
  #head = 0;
  #waiter: ((r: IteratorResult<Frame>) => void) | undefined;
  #cursor: EventId;
  #lagged = false;
  #missed = 0;
  #catchingUp: boolean;
  #closed = false;

  constructor(
    private readonly source: SubscriptionSource,
    first: Frame,
    cursor: EventId,
    private readonly capacity: number,
  ) {
    this.#queue.push(first);
    this.#cursor = cursor;
    // Everything after the cursor up to the head comes from the store first.
    this.#catchingUp = cursor !== source.headId();
    if (!this.#catchingUp) this.#queuePending();
  }

  /** The last durable event handed to the consumer. */
  get cursor(): EventId {
    return this.#cursor;
  }

  /** Called by the session for every frame; O(1), never blocks. */
  offer(frame: Frame): void {
    if (this.#closed) return;
    if (frame.type === "reset") {
      // A full state replaces whatever was pending.
      this.#clear();
      this.#lagged = false;
      this.#catchingUp = false;
      this.#missed = 0;
      this.#deliver(frame);
      return;
    }
    if (this.#lagged || this.#catchingUp) {
      if (frame.type === "event") this.#missed++;
      return; // read back from the store later; chunks are resent as pending text
    }
    if (this.#size >= this.capacity) {
      this.#lagged = true;
      // Keep the last state frame waiting: the events after it are read back from its event.
      let base = this.#head - 1;
      for (let i = this.#queue.length - 1; i >= this.#head && base < this.#head; i--) {
        const t = (this.#queue[i] as Frame).type;
        if (t === "reset" || t === "snapshot") base = i;
      }
      let missed = frame.type === "event" ? 1 : 0;
      for (let i = base + 1; i < this.#queue.length; i++) if ((this.#queue[i] as Frame).type === "event") missed++;
      this.#missed = missed;
      this.#queue.length = base + 1;
      return;
    }
    this.#deliver(frame);
  }

  #deliver(frame: Frame): void {
    const w = this.#waiter;
    if (w !== undefined && this.#size === 0) {
      this.#waiter = undefined;
      w({ value: this.#handOut(frame), done: false });
    } else this.#queue.push(frame);
  }

  /** Moves the cursor as a frame reaches the consumer (so dropped frames are re-read from it). */
  #handOut(frame: Frame): Frame {
    if (frame.type === "event") this.#cursor = frame.id;
    else if (frame.type === "reset" || frame.type === "snapshot") this.#cursor = frame.event;
    return frame;
  }

  get #size(): number {
    return this.#queue.length - this.#head;
  }

  #take(): Frame {
    const f = this.#queue[this.#head] as Frame;
    this.#queue[this.#head++] = undefined as unknown as Frame;
    if (this.#head === this.#queue.length) this.#clear();
    else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    return f;
  }

  #clear(): void {
    this.#queue.length = 0;
    this.#head = 0;
  }

  /** Queues the text streams hold that is not durable yet (after a catch-up, or at the start). */
  #queuePending(): void {
    for (const { id, text } of this.source.pendingText()) this.#queue.push({ type: "chunk", id, text });
  }

  next(): Promise<IteratorResult<Frame>> {
    for (;;) {
      if (this.#size > 0) return Promise.resolve({ value: this.#handOut(this.#take()), done: false });
      if (this.#closed) return Promise.resolve({ value: undefined, done: true });
      if (this.#lagged) {
        this.#lagged = false;
        this.#catchingUp = true;
        const missed = this.#missed;
        this.#missed = 0;
        return Promise.resolve({ value: { type: "lagged", missed }, done: false });
      }
      if (!this.#catchingUp) break;
      let batch: ReturnType<SubscriptionSource["eventsAfter"]>;
      try {
        batch = this.source.eventsAfter(this.#cursor, CATCH_UP_BATCH);
      } catch (e) {
        // The log cannot be read from the cursor (a damaged event): the last frame says so.
        const frame: Frame = {
          type: "error",
          code: e instanceof EngineError || e instanceof StoreError || e instanceof DomError ? "bad-event" : "internal",
          message: `the subscription cannot catch up from event ${this.#cursor}: ${(e as Error)?.message ?? String(e)}`,
          event: null,
        };
        this.close();
        return Promise.resolve({ value: frame, done: false });
      }
      this.#missed = 0;
      if (batch === undefined) {
        // The cursor's line is no longer the session's: start over from the current state.
        this.#catchingUp = false;
        this.#queue.push(this.source.resetFrame());
        this.#queuePending();
        continue;
      }
      for (const { meta, ops } of batch) this.#queue.push({ type: "event", id: meta.id, label: meta.label, by: meta.by, ops });
      if (batch.length < CATCH_UP_BATCH) {
        this.#catchingUp = false;
        this.#queuePending();
      }
    }
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  return(): Promise<IteratorResult<Frame>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Ends the subscription; a pending read resolves as done. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clear();
    this.source.detach(this);
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
