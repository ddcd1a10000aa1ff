/**
 * The page's addresses (IN-10): `#/` is the session list, `#/s/SESSION?branch=B&at=EVENT&tab=T` a
 * session's view at an event, with a tab open. The page's own query (`?token=`) is kept on every link.
 */

export interface Route {
  readonly session?: string;
  readonly branch?: string;
  readonly at?: number;
  /** The session view's open tab (kept across branch switches). */
  readonly tab?: string;
}

/** The route the location's hash names. */
export function currentRoute(): Route {
  const m = /^#\/s\/([^/?]+)(?:\?(.*))?$/.exec(location.hash);
  if (m === null) return {};
  const q = new URLSearchParams(m[2] ?? "");
  const at = q.get("at");
  const tab = q.get("tab");
  return {
    session: decodeURIComponent(m[1] as string),
    branch: q.get("branch") ?? "main",
    ...(at !== null ? { at: Number(at) } : {}),
    ...(tab !== null ? { tab } : {}),
  };
}

/** The session list's link. */
export function listHref(): string {
  return `#/${location.search}`;
}

/** A link to a session from the list (its main branch, at its head). */
export function sessionLink(session: string): string {
  return `#/s/${encodeURIComponent(session)}${location.search}`;
}

/** The hash of `session` on `branch`, at event `at` and with tab `tab` open when given. */
export function sessionHash(session: string, branch: string, at?: number, tab?: string): string {
  return `#/s/${encodeURIComponent(session)}?branch=${encodeURIComponent(branch)}${at === undefined ? "" : `&at=${at}`}${tab === undefined ? "" : `&tab=${encodeURIComponent(tab)}`}`;
}
