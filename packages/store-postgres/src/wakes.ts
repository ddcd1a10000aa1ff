/**
 * Waking the followers of a store's writes (follow.ts; decision 0049). Each committed write of a
 * session is told on the store's channel by `pg_notify`, a statement of its own on another
 * connection, sent without waiting: a NOTIFY inside the writing transaction would take
 * PostgreSQL's notification lock through the commit's flush and serialize every writer's commit.
 *
 * The first write after a quiet spell is told at once; the writes after it are told together, at
 * most one notification per session every WAKE_MS (a writer committing a step a millisecond sends
 * one, not one an event: on a busy server the notifications were as many statements as the
 * appends). A notification says only "look" — a follower reads from its cursor — so one covers
 * every write before it. `close` sends what waits; one lost to a crash is made up by the
 * follower's poll.
 */
import type { SessionId } from "@strata/store";

/** The least time between two notifications of one session's writes, ms. */
export const WAKE_MS = 10;

/** A session whose followers are being woken. */
interface Waking {
  /** Writes committed since the last notification was sent, told when its WAKE_MS are over. */
  again: boolean;
  inFlight: Promise<void> | undefined;
  /** The end of the last notification's WAKE_MS. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Ends the wait now, sending what it held (`close`). */
  now: () => void;
}

export class Wakes {
  /** Sessions with a notification in flight, or within WAKE_MS of the last one. */
  readonly #waking = new Map<SessionId, Waking>();
  /** `close` is sending what waits. */
  #closing = false;
  #closed = false;

  /** `notify` sends one notification of `session`'s writes. */
  constructor(private readonly notify: (session: SessionId) => Promise<unknown>) {}

  /** Tells the followers of `session` of a write that has committed. */
  wake(session: SessionId): void {
    const state = this.#waking.get(session);
    if (state !== undefined) {
      state.again = true;
      return;
    }
    const entry: Waking = { again: false, inFlight: undefined, timer: undefined, now: () => {} };
    this.#waking.set(session, entry);
    // After each notification the entry stays WAKE_MS: writes in that time are told when it ends.
    const settle = (): void => {
      entry.timer = undefined;
      if (entry.again) {
        entry.again = false;
        send();
      } else this.#waking.delete(session);
    };
    const send = (): void => {
      if (this.#closed) {
        this.#waking.delete(session);
        return;
      }
      const started = performance.now();
      entry.inFlight = this.notify(session).then(
        () => {
          entry.inFlight = undefined;
          const wait = WAKE_MS - (performance.now() - started);
          if (wait <= 0 || this.#closing) settle();
          else {
            entry.timer = setTimeout(settle, wait);
            entry.timer.unref();
          }
        },
        () => {
          entry.inFlight = undefined;
          this.#waking.delete(session);
        },
      );
    };
    entry.now = () => {
      if (entry.timer === undefined) return;
      clearTimeout(entry.timer);
      settle();
    };
    send();
  }

  /** Sends every notification waiting out its interval now and waits for those in flight; then sends none. */
  async close(): Promise<void> {
    this.#closing = true;
    for (let round = 0; this.#waking.size > 0 && round < 8; round++) {
      const waits = [...this.#waking.values()];
      for (const w of waits) w.now();
      await Promise.allSettled(waits.map((w) => w.inFlight));
    }
    this.#closed = true;
  }
}
