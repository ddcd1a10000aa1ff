/**
 * `strata serve`: the inspector's HTTP server (IN-1 … IN-9, IN-17 … IN-20). Read-only JSON over
 * the store, the live patch stream as Server-Sent Events in the article's framing (`live.ts`),
 * and the built web app (`static.ts`). Every request passes `guard.ts` first (Host, origin,
 * token); an `/api/` path is then dispatched by the route table (`router.ts`, `routes.ts`) of the
 * protocol (`protocol.ts`). Whatever one request meets ends in its own JSON error (`failure.ts`)
 * and the server goes on serving.
 *
 * The server is a view (L8): it reads the same store the writers append to — a SQLite file, or a
 * PostgreSQL schema that writers on other machines append to — and follows a branch by watching
 * its head, so a `strata run` in another process streams to any open page or `curl`. It never
 * writes: no endpoint changes a session.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import type { AsyncStore, Store } from "@strata/store";
import { errorBody, HttpError } from "./failure.ts";
import { hostRefusal, LOOPBACK, originRefusal } from "./guard.ts";
import type { LiveOptions } from "./live.ts";
import type { Endpoint } from "./protocol.ts";
import { sendJson } from "./respond.ts";
import { match, segmentsOf } from "./router.ts";
import { type Route, type RouteRequest, routeTable, unmatched, WRITTEN } from "./routes.ts";
import { serveStatic } from "./static.ts";
import { Trees } from "./trees.ts";

export interface ServeOptions extends LiveOptions {
  /** SQLite (`openStore`) or PostgreSQL (`openPgStore`): the handlers are written for both ports. */
  readonly store: Store | AsyncStore;
  /** Default 7357; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. Any other address needs a token. */
  readonly host?: string;
  /** Required (generated when absent) unless the host is a loopback address. */
  readonly token?: string;
  /** The built web app (index.html and assets). */
  readonly staticDir: string;
}

export interface Running {
  readonly url: string;
  readonly token: string | undefined;
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<Running> {
  const { store } = options;
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? (LOOPBACK.has(host) ? undefined : randomBytes(18).toString("base64url"));
  const streams = new Set<() => void>();
  const staticDir = resolve(options.staticDir);
  const routes = routeTable({
    store,
    trees: new Trees(store),
    live: options,
    track: (stop) => {
      streams.add(stop);
      return () => streams.delete(stop);
    },
  });

  const matches = (given: string | undefined): boolean => {
    if (token === undefined || given === undefined) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  /** The token from the query, the Authorization header, or the cookie set when the page was opened. */
  const authorized = (req: IncomingMessage, url: URL): "query" | "other" | false => {
    if (token === undefined) return "other";
    if (matches(url.searchParams.get("token") ?? undefined)) return "query";
    if (matches(/^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1])) return "other";
    const cookie = /(?:^|;\s*)strata_token=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
    let given: string | undefined;
    try {
      given = cookie === undefined ? undefined : decodeURIComponent(cookie);
    } catch {
      given = undefined; // a cookie that is not percent-encoding is no token
    }
    return matches(given) ? "other" : false;
  };
  const server: Server = createServer((req, res) => {
    // IN-19: whatever one request meets is that request's answer; the server goes on serving.
    handle(req, res).catch((e: unknown) => fail(res, e));
  });

  /** The checks every request passes, in this order (IN-1, IN-17), then the API or the app. */
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      throw new HttpError(400, `the request target ${JSON.stringify(req.url)} is not a path`);
    }
    // IN-1: every endpoint is GET (ENDPOINTS says so); HEAD is answered as GET.
    if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "the inspector is read-only: only GET and HEAD");
    const refusal = hostRefusal(req, token !== undefined) ?? originRefusal(req, url.pathname);
    if (refusal !== undefined) throw new HttpError(403, refusal);
    const auth = authorized(req, url);
    if (auth === false) throw new HttpError(401, "missing or wrong token: open the URL `strata serve` printed (it carries ?token=…)");
    // The page's own assets and requests then carry the token as a cookie.
    if (auth === "query")
      res.setHeader("set-cookie", `strata_token=${encodeURIComponent(token as string)}; HttpOnly; SameSite=Strict; Path=/`);
    try {
      decodeURIComponent(url.pathname);
    } catch {
      throw new HttpError(400, `the path ${url.pathname} is not valid percent-encoding`);
    }
    if (url.pathname.startsWith("/api/")) await api(req, res, url);
    else serveStatic(staticDir, res, url.pathname, req.method === "HEAD");
  }

  /** IN-20: the route table's entry for the path answers; a JSON answer is sent with status 200. */
  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const segments = segmentsOf(url.pathname);
    const found = match(segments);
    if (found === undefined) return unmatched(store, segments, url.searchParams.get("branch"), url.pathname);
    // One entry per endpoint: the entry found answers for its own endpoint's parameters.
    const entry = routes[found.endpoint] as Route<Endpoint>;
    const answer = await entry.handle({ params: found.params, query: url.searchParams, req, res } as RouteRequest<Endpoint>);
    if (answer !== WRITTEN) sendJson(res, 200, answer);
  }

  function fail(res: ServerResponse, e: unknown): void {
    try {
      if (res.headersSent) return void res.end();
      const body = errorBody(e);
      sendJson(res, body.status, { error: body });
    } catch {
      res.destroy(); // the error itself could not be sent: drop this connection only
    }
  }

  await new Promise<void>((ok, ko) => {
    server.once("error", ko);
    server.listen(options.port ?? 7357, host, () => ok());
  });
  server.removeAllListeners("error");
  // Once listening, a failed accept (out of file descriptors …) costs that connection only.
  server.on("error", () => undefined);
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/`,
    token,
    close: () =>
      new Promise<void>((ok) => {
        for (const stop of [...streams]) stop();
        server.close(() => ok());
        server.closeAllConnections?.();
      }),
  };
}
