/**
 * What a request names, looked up in the store (IN-6): a session, a branch, an event. Each
 * lookup answers the thing or throws the `HttpError` the request gets — 404 for what does not
 * exist, 400 for text that is not an id. On either storage port (a promise of it).
 */
import type { AsyncStore, BranchInfo, EventId, SessionId, SessionInfo, Store } from "@strata/store";
import { HttpError } from "./failure.ts";

/** The session `id`, or 404 `no session ID`. */
export async function sessionOf(store: Store | AsyncStore, id: string): Promise<SessionInfo> {
  const s = await store.getSession(id as SessionId);
  if (s === undefined) throw new HttpError(404, `no session ${id}`);
  return s;
}

/** The branch `name` of `session` (`main` when null), or 404. */
export async function branchOf(store: Store | AsyncStore, session: SessionId, name: string | null): Promise<BranchInfo> {
  const b = await store.branch(session, name ?? "main");
  if (b === undefined) throw new HttpError(404, `session ${session} has no branch ${JSON.stringify(name)}`);
  return b;
}

/**
 * The event `text` names, which must be an event of `session`: 400 when it is not an event id,
 * 404 when no such event is in the session. Empty or absent: `fallback`, or 400 when there is none.
 */
export async function eventOf(store: Store | AsyncStore, session: SessionId, text: string | null, fallback?: EventId): Promise<EventId> {
  if (text === null || text === "") {
    if (fallback !== undefined) return fallback;
    throw new HttpError(400, "an event id is required (?at=EVENT)");
  }
  if (!/^[0-9]{1,15}$/.test(text)) throw new HttpError(400, `${JSON.stringify(text.slice(0, 40))} is not an event id`);
  const meta = await store.eventMeta(Number(text) as EventId);
  if (meta === undefined || meta.session !== session) throw new HttpError(404, `event ${text} is not an event of session ${session}`);
  return meta.id;
}
