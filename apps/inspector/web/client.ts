/**
 * The page's side of the protocol (IN-20): URLs built from `ENDPOINTS` and answers read as the
 * protocol's types, the same module the server's route table is checked against.
 */
import { ENDPOINTS, type Endpoint, type JsonEndpoint, type PathParams, pathOf, type QueryOf, type ResponseOf } from "../src/protocol.ts";

/** The token the page was opened with (`?token=`), passed on to every request. */
export const token = new URLSearchParams(location.search).get("token");

/** The URL of endpoint `e`: its path with `params`, then `query` (undefined values left out) and the token. */
export function url<E extends Endpoint>(e: E, params: PathParams<E>, query?: QueryOf<E>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.set(k, String(v));
  if (token !== null) q.set("token", token);
  const s = q.toString();
  return `${pathOf(e, params)}${s === "" ? "" : `?${s}`}`;
}

/** GETs endpoint `e`'s JSON answer; throws an Error with the server's message (IN-6) when it fails. */
export async function get<E extends JsonEndpoint>(e: E, params: PathParams<E>, query?: QueryOf<E>): Promise<ResponseOf<E>> {
  const res = await fetch(url(e, params, query), { method: ENDPOINTS[e].method, headers: { accept: "application/json" } });
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`);
  return body as ResponseOf<E>;
}
