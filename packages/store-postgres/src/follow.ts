/**
 * Following a branch written on other machines (issue 15, part 3): LISTEN/NOTIFY wakes the
 * follower, a cursor read along the branch's chain catches it up — lossless and in order whatever
 * notifications were missed, because the notification only says "look" and the read starts at the
 * last event delivered. No broker: the store's writes notify on the store's channel (one per
 * schema, payload the session id) in the same statement or transaction as the write.
 *
 * LISTEN needs a connection of its own that stays open (a session-mode pool, not PgBouncer's
 * transaction mode); where notifications cannot arrive the poll (`pollMs`) still catches up.
 */
import type { AsyncStore, BranchInfo, EventId, EventMeta, SessionId } from "@strata/store";
import type pg from "pg";

/** What a follower is told, in order. */
export type FollowUpdate =
  /** New events on the branch, oldest first, each after the last one delivered. */
  | { readonly kind: "events"; readonly events: readonly EventMeta[] }
  /** The branch moved to `head`, which does not descend from the last event delivered (a rewind or reset). */
  | { readonly kind: "moved"; readonly head: BranchInfo };

export interface FollowOptions {
  /** Deliver what comes after this event of the branch (default: the head when following starts). */
  readonly after?: EventId;
  /** Catch up at least this often even without a notification, ms (default 1,000). */
  readonly pollMs?: number;
  /** Told when the listening connection fails (it reconnects by itself). */
  readonly onError?: (e: unknown) => void;
}

export interface Follower {
  /** Stops following and closes the listening connection. */
  close(): Promise<void>;
  /** Resolves once the listening connection is set up (updates may come before it, from the poll). */
  readonly ready: Promise<void>;
}

/** The notification channel of a store's schema. */
export function channelOf(schema: string): string {
  return `strata_${schema}`.slice(0, 63);
}

/** Follows `branch` of `session` in `store` (see the module's comment); `connect` makes the listening client. */
export function followBranch(
  store: AsyncStore,
  connect: () => pg.Client,
  channel: string,
  session: SessionId,
  branch: string,
  onUpdate: (update: FollowUpdate) => void,
  options: FollowOptions = {},
): Follower {
  let closed = false;
  let last: EventMeta | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let client: pg.Client | undefined;

  /** One catch-up read at a time; a wake-up during one runs another after it. */
  const catchUp = (): Promise<void> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await readOnce().catch((e: unknown) => options.onError?.(e));
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const readOnce = async (): Promise<void> => {
    if (closed) return;
    const b = await store.branch(session, branch);
    if (b === undefined || closed) return;
    if (last === undefined) {
      last =
        options.after === undefined
          ? ((await store.eventMeta(b.head)) as EventMeta)
          : ((await store.eventMeta(options.after)) ?? (await store.eventMeta(b.head)));
      if (last === undefined) return;
    }
    if (b.head === last.id) return;
    if (!(await store.isAncestor(last.id, b.head))) {
      last = (await store.eventMeta(b.head)) as EventMeta;
      if (!closed) onUpdate({ kind: "moved", head: b });
      return;
    }
    // Pages of the chain after the last delivered event, up to the head read above.
    for (;;) {
      const events = await store.chainMeta(b.head, last.depth, 1000);
      if (events.length === 0 || closed) return;
      last = events[events.length - 1] as EventMeta;
      onUpdate({ kind: "events", events });
      if (last.id === b.head) return;
    }
  };

  const listen = async (): Promise<void> => {
    while (!closed) {
      const c = connect();
      client = c;
      try {
        let failed: (e: unknown) => void = () => {};
        const lost = new Promise<void>((resolve) => {
          failed = (e) => {
            options.onError?.(e);
            resolve();
          };
        });
        c.on("error", failed);
        c.on("end", () => {
          if (!closed) failed(new Error("the listening connection ended"));
        });
        c.on("notification", (n) => {
          if (n.channel === channel && n.payload === session) void catchUp();
        });
        await c.connect();
        await c.query(`LISTEN "${channel}"`);
        // Whatever was written while not listening.
        await catchUp();
        resolveReady();
        await lost;
      } catch (e) {
        resolveReady();
        options.onError?.(e);
      }
      await c.end().catch(() => {});
      if (!closed) await new Promise((r) => setTimeout(r, 500));
    }
  };

  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    resolveReady = r;
  });
  const timer = setInterval(() => void catchUp(), options.pollMs ?? 1000);
  timer.unref?.();
  void listen();

  return {
    ready,
    async close() {
      closed = true;
      clearInterval(timer);
      await client?.end().catch(() => {});
      await running;
    },
  };
}
