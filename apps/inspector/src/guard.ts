/**
 * Who may talk to the inspector (IN-1, IN-17): the checks every request passes before any
 * endpoint runs. The server reads session content — prompts, tool output, files — so a web page
 * the user happens to have open elsewhere must not be able to read it or even make the server
 * work for it: requests must be addressed to a loopback name (no DNS rebinding) unless a token
 * guards the server, and must not come from another origin.
 */
import type { IncomingMessage } from "node:http";

export const LOOPBACK: ReadonlySet<string> = new Set(["127.0.0.1", "::1", "localhost"]);

/** The request's `Host` as URL host (`127.0.0.1:7357`, `[::1]:7357`), lower case, default port dropped; undefined if unusable. */
function ownHost(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  if (host === undefined || host === "") return undefined;
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return undefined;
  }
}

/**
 * IN-1: without a token the server answers only requests addressed to a loopback name, so a page
 * elsewhere cannot reach it through DNS rebinding. Returns why a request is refused, or undefined.
 */
export function hostRefusal(req: IncomingMessage, guarded: boolean): string | undefined {
  if (guarded) return undefined;
  const host = (req.headers.host ?? "")
    .replace(/:\d+$/, "")
    .replace(/^\[|\]$/g, "")
    .toLowerCase();
  if (LOOPBACK.has(host)) return undefined;
  return `the inspector answers only requests to 127.0.0.1, localhost or [::1] (got Host: ${req.headers.host ?? "none"})`;
}

/**
 * IN-17: a request from another origin is refused on every endpoint, the stream included:
 * an `Origin` header that is not the server's own (`http://` or `https://` and the request's
 * `Host`; `null` included), or `Sec-Fetch-Site` `cross-site` or `same-site` — except a top-level
 * navigation to the app's page (a link the user follows: the page then talks to its own origin
 * only). Clients that send neither header (curl, SSE libraries) are not browsers' pages.
 */
export function originRefusal(req: IncomingMessage, pathname: string): string | undefined {
  const own = ownHost(req);
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let ok = false;
    try {
      const u = new URL(origin);
      ok = (u.protocol === "http:" || u.protocol === "https:") && own !== undefined && u.host === own && u.origin === origin.toLowerCase();
    } catch {
      ok = false;
    }
    if (!ok)
      return `cross-origin requests are refused: Origin ${JSON.stringify(origin)} is not this server's (http://${own ?? "?"}); open the inspector's own page instead`;
  }
  const site = req.headers["sec-fetch-site"];
  if (site === "cross-site" || site === "same-site") {
    const navigation = req.headers["sec-fetch-mode"] === "navigate" && req.headers["sec-fetch-dest"] === "document";
    if (!navigation || pathname.startsWith("/api/"))
      return `cross-origin requests are refused (Sec-Fetch-Site: ${site}); open the inspector's own page instead`;
  }
  return undefined;
}
