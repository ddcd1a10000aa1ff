/**
 * Dispatch by table (IN-20): a request path is matched against the protocol's endpoint paths
 * (`ENDPOINTS`), segment by segment; the route table (`routes.ts`) holds one handler per endpoint.
 * No endpoint's path is tried in code of its own.
 */
import { ENDPOINTS, type Endpoint, type ParamName } from "./protocol.ts";

/** A path split as the router reads it: empty segments dropped, each segment percent-decoded. */
export function segmentsOf(pathname: string): string[] {
  return pathname.split("/").filter(Boolean).map(decodeURIComponent);
}

/** The endpoint a path names and its parameters, decoded. */
export type Matched = { [E in Endpoint]: { readonly endpoint: E; readonly params: Readonly<Record<ParamName<E>, string>> } }[Endpoint];

const PATTERNS = (Object.keys(ENDPOINTS) as Endpoint[]).map((endpoint) => ({ endpoint, segments: segmentsOf(ENDPOINTS[endpoint].path) }));

/**
 * The endpoint whose path has as many segments as `segments` and equals it in each one that is
 * not a `:parameter`; undefined when none does. Endpoint paths never overlap, so at most one does.
 */
export function match(segments: readonly string[]): Matched | undefined {
  for (const { endpoint, segments: pattern } of PATTERNS) {
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < pattern.length && ok; i++) {
      const p = pattern[i] as string;
      const s = segments[i] as string;
      if (p.startsWith(":")) params[p.slice(1)] = s;
      else ok = p === s;
    }
    if (ok) return { endpoint, params } as Matched;
  }
  return undefined;
}
