/**
 * The live stream (IN-5, IN-18): `GET /api/sessions/:id/stream` as Server-Sent Events in the
 * article's framing, following one branch by watching its head in the store (so writers in other
 * processes stream too). Every frame it writes is one `decodeSse` reads and a `Replica` applies
 * (decision 0015):
 *
 * - `snapshot@1` (with `?snapshot=1`) and `reset@1` carry the canonical snapshot (`toSnapshot`)
 *   of the state at their `id:`; a reset is sent when the head moves to another line (rewind,
 *   or the branch moved onto another branch's line).
 * - `patch@1` for every event after the cursor, in order.
 * - `gone@1` when the branch or its session disappears; `error@1` when an event or state on the
 *   line cannot be read (a damaged store) or is too large to send. Both end the stream; an error
 *   first asks the client to wait 30 s before reconnecting, and a reconnect that meets the same
 *   problem at once gets a JSON error instead of a stream (an `EventSource` then stops).
 *
 * The cursor is `Last-Event-ID` (a reconnect: nothing is sent twice, and no snapshot — the client
 * has the state at its id), else `?from=`, else the head. Memory is bounded per client: at most
 * ~1 MiB of events per tick, nothing while more than `maxBufferBytes` wait for a slow reader, and
 * a reader that takes nothing for `stallMs` is disconnected (it reconnects from its cursor).
 *
 * On either storage port. Over PostgreSQL a store that can follow (`follow`, LISTEN/NOTIFY) wakes
 * the stream when a writer on any machine commits, and the poll only backs it up (every second).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { DomError, type Tree, toSnapshot } from "@strata/dom";
import { decodeEvent, EngineError, encodeSse, type Frame, type StreamErrorCode } from "@strata/engine";
import type { AsyncStore, BranchInfo, EventId, SessionId, Store } from "@strata/store";
import { StoreError } from "@strata/store";
import { HttpError } from "./failure.ts";

export interface LiveOptions {
  /** How often the branch head is checked, in ms (default 100). */
  readonly pollMs?: number;
  /** Bytes waiting for a slow reader above which nothing more is queued (default 8 MiB). */
  readonly maxBufferBytes?: number;
  /** A reader that drains nothing for this long is disconnected, in ms (default 60,000). */
  readonly stallMs?: number;
  /** Keep-alive comment interval, in ms (default 15,000). */
  readonly keepAliveMs?: number;
}

export interface LiveContext {
  readonly store: Store | AsyncStore;
  /** The materialized tree at an event (cached by the server). */
  readonly treeAt: (event: EventId) => Promise<Tree>;
  readonly session: SessionId;
  readonly branch: BranchInfo;
  /** The cursor the client asked for, already checked to be an event of the session. */
  readonly cursor: EventId;
  /** The client reconnected (`Last-Event-ID`): it holds the state at the cursor. */
  readonly resumed: boolean;
  readonly snapshot: boolean;
  readonly options: LiveOptions;
  /** Registers the stream's stop function with the server (closing the server ends it). */
  readonly track: (stop: () => void) => () => void;
}

/** Bytes of event frames one tick writes at most (a client far behind catches up over ticks). */
const TICK_BYTES = 1024 * 1024;
const BATCH = 256;
/** Reconnection delay asked for after an `error@1` frame. */
const ERROR_RETRY_MS = 30_000;

/** A failure while producing frames, with the event to blame when there is one. */
class StreamFailure extends Error {
  constructor(
    readonly code: StreamErrorCode,
    message: string,
    readonly event: EventId | null,
  ) {
    super(message);
  }
}

function failureOf(e: unknown, event: EventId | null): StreamFailure {
  if (e instanceof StreamFailure) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof RangeError)
    return new StreamFailure("too-large", `the state at event ${event} is too large to send in one frame: ${message}`, event);
  if ((e instanceof DomError || e instanceof EngineError) && e.code === "bad-snapshot")
    return new StreamFailure("bad-snapshot", message, event);
  if (e instanceof EngineError || e instanceof StoreError || e instanceof DomError)
    return new StreamFailure("bad-event", `${message} (run \`strata verify\` on this database)`, event);
  return new StreamFailure("internal", `internal error: ${message}`, event);
}

/**
 * Produces the stream's frames: `next()` returns the text of every frame due now (bounded), and
 * whether the stream is over. Throws {@link StreamFailure}.
 */
class Producer {
  cursor: EventId;
  constructor(private readonly ctx: LiveContext) {
    this.cursor = ctx.cursor;
  }

  async state(type: "snapshot" | "reset", event: EventId): Promise<string> {
    let tree: string;
    try {
      tree = toSnapshot(await this.ctx.treeAt(event));
    } catch (e) {
      throw failureOf(e, event);
    }
    this.cursor = event;
    return encodeSse({ type, event, branch: this.ctx.branch.name, tree } satisfies Frame);
  }

  async next(): Promise<{ text: string; done: boolean }> {
    const { store, session, branch } = this.ctx;
    if ((await store.getSession(session)) === undefined)
      return {
        text: encodeSse({ type: "gone", session, branch: branch.name, message: `session ${session} no longer exists` }),
        done: true,
      };
    const b = await store.branch(session, branch.name);
    if (b === undefined)
      return {
        text: encodeSse({
          type: "gone",
          session,
          branch: branch.name,
          message: `branch ${JSON.stringify(branch.name)} of session ${session} no longer exists`,
        }),
        done: true,
      };
    if (b.head === this.cursor) return { text: "", done: false };
    const at = await store.eventMeta(this.cursor);
    if (at === undefined || !(await store.isAncestor(this.cursor, b.head))) return { text: await this.state("reset", b.head), done: false };
    let text = "";
    for (let depth = at.depth; depth < b.headDepth && text.length < TICK_BYTES; ) {
      const batch = await store.chain(b.head, depth, BATCH);
      if (batch.length === 0) break;
      for (const e of batch) {
        let frame: Frame;
        try {
          const d = decodeEvent(e);
          if (d.kind !== "patch")
            throw new EngineError("bad-event", `event ${e.id} at depth ${e.depth} is a ${e.kind} event inside the line`);
          frame = { type: "event", id: e.id, label: e.label, by: e.by, ops: d.ops };
        } catch (err) {
          // What came before the damaged event is still sent; the stream ends at it.
          if (text !== "") return { text, done: false };
          throw failureOf(err, e.id);
        }
        text += encodeSse(frame);
        this.cursor = e.id;
        depth = e.depth;
        if (text.length >= TICK_BYTES) break;
      }
    }
    return { text, done: false };
  }
}

/**
 * Opens the stream on `res`. The first frames are produced before the response starts, so a
 * stream that cannot start (a damaged event at the cursor) is a JSON error, not a stream: the
 * caller's error handler answers it.
 */
export async function openLive(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: LiveContext,
  headers: Record<string, string>,
): Promise<void> {
  const o = ctx.options;
  const producer = new Producer(ctx);
  let first: string;
  let start: { text: string; done: boolean };
  try {
    first = ctx.snapshot && !ctx.resumed ? await producer.state("snapshot", ctx.cursor) : "";
    start = await producer.next();
    first += start.text;
  } catch (e) {
    const f = failureOf(e, null);
    throw new HttpError(500, `the stream cannot start: ${f.message}`);
  }
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.write(`retry: 1000\n\n${first}`);
  let closed = false;
  let stalledSince: number | undefined;
  const stop = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    clearInterval(keepAlive);
    untrack();
    void follower?.close().catch(() => undefined);
    res.end();
  };
  // One tick at a time (over the network a tick awaits its reads); a wake-up during one runs another after it.
  let ticking = false;
  let again = false;
  const tick = (): void => {
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    void step().finally(() => {
      ticking = false;
      if (again && !closed) {
        again = false;
        tick();
      }
    });
  };
  const step = async (): Promise<void> => {
    if (closed) return;
    const max = o.maxBufferBytes ?? 8 * 1024 * 1024;
    if (res.writableLength > max) {
      // A slow reader: queue nothing more; one that takes nothing at all is let go.
      stalledSince ??= Date.now();
      if (Date.now() - stalledSince > (o.stallMs ?? 60_000)) {
        closed = true;
        clearInterval(timer);
        clearInterval(keepAlive);
        untrack();
        void follower?.close().catch(() => undefined);
        res.destroy();
      }
      return;
    }
    stalledSince = undefined;
    try {
      const out = await producer.next();
      if (closed) return;
      if (out.text !== "") res.write(out.text);
      if (out.done) stop();
    } catch (e) {
      if (closed) return;
      const f = failureOf(e, null);
      res.write(`retry: ${ERROR_RETRY_MS}\n\n${encodeSse({ type: "error", code: f.code, message: f.message, event: f.event })}`);
      stop();
    }
  };
  // A store that follows across machines wakes the stream; the poll then only backs it up.
  const follower = followerOf(ctx, tick);
  const timer = setInterval(tick, o.pollMs ?? (follower === undefined ? 100 : 1000));
  const keepAlive = setInterval(() => {
    if (!closed && res.writableLength === 0) res.write(": keep-alive\n\n");
  }, o.keepAliveMs ?? 15_000);
  const untrack = ctx.track(stop);
  req.on("close", stop);
  res.on("close", stop);
  res.on("error", stop);
  if (start.done) stop();
}

/** What a store that follows branches across machines offers (`@strata/store-postgres`'s `follow`). */
interface Following {
  follow(session: SessionId, branch: string, onUpdate: () => void, options?: { pollMs?: number }): { close(): Promise<void> };
}

/** A follower of the stream's branch that calls `wake` on every update, when the store can follow. */
function followerOf(ctx: LiveContext, wake: () => void): { close(): Promise<void> } | undefined {
  const store = ctx.store as Partial<Following>;
  if (typeof store.follow !== "function") return undefined;
  // Its own catch-up reads are only a wake-up here: the stream reads from its own cursor.
  return store.follow(ctx.session, ctx.branch.name, wake, { pollMs: 60_000 });
}
