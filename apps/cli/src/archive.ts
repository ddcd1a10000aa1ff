/**
 * Archived sessions (CLI-48, decision 0040): a session is archived when its metadata holds
 * `archived` — the time it was archived (ms since the epoch); unarchiving sets it to null. Nothing
 * else changes: every branch, event and blob stays, and every command still takes the session by
 * its handle or id. Only the listings that choose a session for the user — `strata ls`, `@last`,
 * the picker — leave archived sessions out unless asked (`ls --archived`, `ls --all`).
 */
import type { Port } from "@strata/engine";
import type { SessionActivity, SessionInfo } from "@strata/store";

/** The metadata key of an archived session. */
export const ARCHIVED = "archived";

/** Which sessions a listing shows. */
export type ArchivedFilter = "hide" | "only" | "show";

/** When the session was archived, or null when it is not. */
export function archivedAt(session: SessionInfo): number | null {
  const v = (session.metadata as Record<string, unknown>)[ARCHIVED];
  return typeof v === "number" ? v : null;
}

export function shown(session: SessionInfo, filter: ArchivedFilter): boolean {
  if (filter === "show") return true;
  return (archivedAt(session) !== null) === (filter === "only");
}

/**
 * The `limit` most recently active sessions the filter shows: the store's ranking read in growing
 * pages (each one statement) until enough are shown or the store has no more, so archived sessions
 * cost nothing but the rows skipped.
 */
export async function recentShown(store: Port, limit: number, filter: ArchivedFilter): Promise<SessionActivity[]> {
  if (filter === "show") return await store.recentSessions(limit);
  for (let n = limit; ; n *= 4) {
    const page = await store.recentSessions(n);
    const kept = page.filter((r) => shown(r.session, filter));
    if (kept.length >= limit || page.length < n) return kept.slice(0, limit);
  }
}
