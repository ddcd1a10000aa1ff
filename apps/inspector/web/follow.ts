/**
 * Following a branch live (IN-13, IN-18): the page's `EventSource` on the stream endpoint. New
 * events and resets are handed over one after another (a reset's fetches finish before the events
 * after it count); the stream's last frames (`gone@1`, `error@1`) stop it for good.
 */
import { url } from "./client.ts";

export type LiveState = "connecting" | "live" | "off";

export interface FollowHandlers {
  /** The connection's state changed. */
  state(s: LiveState): void;
  /** A new event `id` on the branch. */
  patch(id: number): void | Promise<void>;
  /** The branch moved to another line; its head is now event `at`. */
  reset(at: number): void | Promise<void>;
  /** The stream ended (`gone@1`, `error@1`) with this message; it is not reopened. */
  ended(message: string): void;
  /** A handler failed. */
  failed(message: string): void;
}

/** Follows `branch` of `session` from the event after `from`. Returns the function that stops it. */
export function follow(session: string, branch: string, from: number, h: FollowHandlers): () => void {
  h.state("connecting");
  const src = new EventSource(url("stream", { session }, { branch, from }));
  src.addEventListener("open", () => h.state("live"));
  src.addEventListener("error", () => h.state(src.readyState === EventSource.CLOSED ? "off" : "connecting"));
  let queue: Promise<void> = Promise.resolve();
  const inOrder = (handle: (e: MessageEvent) => void | Promise<void>) => (e: Event) => {
    queue = queue.then(() => handle(e as MessageEvent)).catch((err: Error) => h.failed(err.message));
  };
  src.addEventListener(
    "patch@1",
    inOrder((e) => h.patch(Number(e.lastEventId))),
  );
  // A reset carries the new line's full snapshot (for replicas); the page fetches its own windowed views.
  src.addEventListener(
    "reset@1",
    inOrder((e) => h.reset(Number(e.lastEventId))),
  );
  // The stream's last frame (IN-18): the branch is gone, or the server cannot go on. Stop here
  // rather than reconnect into the same answer; the message says what happened.
  const ended = (e: Event): void => {
    let message = "the live stream ended";
    try {
      message = String((JSON.parse((e as MessageEvent).data) as { message?: unknown }).message ?? message);
    } catch {
      // keep the generic message
    }
    src.close();
    h.state("off");
    h.ended(message);
  };
  src.addEventListener("gone@1", ended);
  src.addEventListener("error@1", ended);
  return () => src.close();
}
