/**
 * One subscriber of a session's patch stream (EN-24): lossless and ordered, never blocking the
 * writer. Live frames wait in a bounded queue; when it overflows the subscriber is marked lagged,
 * the queue is dropped, and on its next read it gets a `lagged` frame and then every missed event
 * read back from the store from its cursor — then live frames again.
 */
import type { Op } from "@strata/dom";
import type { EventId, EventMeta } from "@strata/store";
import type { Frame } from "./sse.ts";

export interface SubscriptionSource {
  /** The durable events after `cursor` on the current line, oldest first, at most `limit`. */
  eventsAfter(cursor: EventId, limit: number): { meta: EventMeta; ops: readonly Op[] }[];
  /** The head now. */
  headId(): EventId;
  /** Stop sending frames to this subscriber. */
  detach(sub: Subscription): void;
}

const CATCH_UP_BATCH = 2000;

export class Subscription implements AsyncIterableIterator<Frame> {
  readonly #queue: Frame[] = [];
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
      this.#queue.length = 0;
      this.#lagged = false;
      this.#catchingUp = false;
      this.#deliver(frame);
      return;
    }
    if (this.#lagged || this.#catchingUp) {
      if (frame.type === "event") this.#missed++;
      return; // read back from the store later; chunks are transient
    }
    if (this.#queue.length >= this.capacity) {
      this.#lagged = true;
      this.#missed = this.#queue.filter((f) => f.type === "event").length + (frame.type === "event" ? 1 : 0);
      this.#queue.length = 0;
      return;
    }
    this.#deliver(frame);
  }

  #deliver(frame: Frame): void {
    const w = this.#waiter;
    if (w !== undefined && this.#queue.length === 0) {
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

  next(): Promise<IteratorResult<Frame>> {
    if (this.#queue.length > 0) return Promise.resolve({ value: this.#handOut(this.#queue.shift() as Frame), done: false });
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    if (this.#lagged) {
      this.#lagged = false;
      this.#catchingUp = true;
      const missed = this.#missed;
      this.#missed = 0;
      return Promise.resolve({ value: { type: "lagged", missed }, done: false });
    }
    if (this.#catchingUp) {
      const batch = this.source.eventsAfter(this.#cursor, CATCH_UP_BATCH);
      if (batch.length < CATCH_UP_BATCH) this.#catchingUp = false;
      for (const { meta, ops } of batch) this.#queue.push({ type: "event", id: meta.id, label: meta.label, by: meta.by, ops });
      this.#missed = 0;
      return this.next();
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
    this.#queue.length = 0;
    this.source.detach(this);
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
