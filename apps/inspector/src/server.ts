/**
 * `strata serve`: the inspector's HTTP server (IN-1 … IN-9, IN-17 … IN-19). Read-only JSON over
 * the store, the live patch stream as Server-Sent Events in the article's framing (`live.ts`),
 * and the built web app. Every request passes `guard.ts` first (Host, origin, token); whatever
 * one request meets ends in its own JSON error (`failure.ts`) and the server goes on serving.
 *
 * The server is a view (L8): it reads the same SQLite file the writers append to and follows a
 * branch by watching its head, so a `strata run` in another process streams to any open page or
 * `curl`. It never writes: no endpoint changes a session.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, resolve, sep } from "node:path";
import { diffTrees, select, type Tree, toXml } from "@strata/dom";
import { blobReader, decodeEvent, materialize, projectRequest } from "@strata/engine";
import type { BranchInfo, EventId, EventMeta, SessionId, Store } from "@strata/store";
import { errorBody, HttpError } from "./failure.ts";
import { hostRefusal, LOOPBACK, originRefusal } from "./guard.ts";
import { type LiveOptions, openLive } from "./live.ts";
import { FULL, FULL_MAX_ELEMENTS, treeJson, WINDOW } from "./tree-json.ts";

export interface ServeOptions extends LiveOptions {
  readonly store: Store;
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

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/** A small cache of materialized trees (scrubbing asks for the same events again and again). */
class Trees {
  readonly #cache = new Map<number, Tree>();
  constructor(private readonly store: Store) {}
  at(event: EventId): Tree {
    const hit = this.#cache.get(event);
    if (hit !== undefined) {
      this.#cache.delete(event);
      this.#cache.set(event, hit);
      return hit;
    }
    const tree = materialize(this.store, event);
    this.#cache.set(event, tree);
    if (this.#cache.size > 24) this.#cache.delete(this.#cache.keys().next().value as number);
    return tree;
  }
}

export async function startServer(options: ServeOptions): Promise<Running> {
  const { store } = options;
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? (LOOPBACK.has(host) ? undefined : randomBytes(18).toString("base64url"));
  const trees = new Trees(store);
  const streams = new Set<() => void>();
  const staticDir = resolve(options.staticDir);

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
    try {
      handle(req, res);
    } catch (e) {
      fail(res, e);
    }
  });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://localhost");
    } catch {
      throw new HttpError(400, `the request target ${JSON.stringify(req.url)} is not a path`);
    }
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
    if (url.pathname.startsWith("/api/")) api(req, res, url);
    else serveStatic(res, url.pathname, req.method === "HEAD");
  }

  function fail(res: ServerResponse, e: unknown): void {
    try {
      if (res.headersSent) return void res.end();
      json(res, errorBody(e).status, { error: errorBody(e) });
    } catch {
      res.destroy(); // the error itself could not be sent: drop this connection only
    }
  }

  function json(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  }

  function sessionOf(id: string): SessionId {
    const s = store.getSession(id as SessionId);
    if (s === undefined) throw new HttpError(404, `no session ${id}`);
    return s.id;
  }

  function branchOf(session: SessionId, name: string | null): BranchInfo {
    const b = store.branch(session, name ?? "main");
    if (b === undefined) throw new HttpError(404, `session ${session} has no branch ${JSON.stringify(name)}`);
    return b;
  }

  function eventOf(session: SessionId, text: string | null, fallback?: EventId): EventId {
    if (text === null || text === "") {
      if (fallback !== undefined) return fallback;
      throw new HttpError(400, "an event id is required (?at=EVENT)");
    }
    if (!/^[0-9]{1,15}$/.test(text)) throw new HttpError(400, `${JSON.stringify(text.slice(0, 40))} is not an event id`);
    const meta = store.eventMeta(Number(text) as EventId);
    if (meta === undefined || meta.session !== session) throw new HttpError(404, `event ${text} is not an event of session ${session}`);
    return meta.id;
  }

  function api(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const parts = url.pathname.split("/").filter(Boolean).slice(1).map(decodeURIComponent);
    const q = url.searchParams;
    if (parts.length === 1 && parts[0] === "sessions") {
      const sessions = store.listSessions().map((s) => {
        const branches = store.branches(s.id);
        const main = branches.find((b) => b.name === "main") ?? branches[0];
        const head = main === undefined ? undefined : store.eventMeta(main.head);
        return {
          id: s.id,
          title: s.title,
          created: s.created,
          branches: branches.length,
          events: main?.headDepth ?? 0,
          lastActivity: head?.ts ?? s.created,
          lastLabel: head?.label ?? null,
        };
      });
      json(res, 200, { sessions });
      return;
    }
    if (parts[0] !== "sessions" || parts[1] === undefined) throw new HttpError(404, `no endpoint ${url.pathname}`);
    const session = sessionOf(parts[1]);
    const what = parts[2];
    if (what === undefined) {
      const info = store.getSession(session);
      const branches = store.branches(session).map((b) => ({
        name: b.name,
        head: b.head,
        events: b.headDepth,
        origin: b.origin,
        originEvent: b.originEvent,
        originDepth: b.originEvent === null ? null : (store.eventMeta(b.originEvent)?.depth ?? null),
        created: b.created,
      }));
      json(res, 200, { ...info, branches });
      return;
    }
    if (what === "events") {
      const b = branchOf(session, q.get("branch"));
      const offset = Math.max(0, Number(q.get("offset") ?? 0) | 0);
      const limit = Math.min(5000, Math.max(1, Number(q.get("limit") ?? 500) | 0));
      const events = store.chainMeta(b.head, offset, limit).map(metaJson);
      json(res, 200, { branch: b.name, head: b.head, total: b.headDepth, offset, events });
      return;
    }
    if (what === "event") {
      const id = eventOf(session, parts[3] ?? null);
      const e = store.event(id);
      if (e === undefined) throw new HttpError(404, `no event ${id}`);
      const d = decodeEvent(e);
      json(res, 200, { ...metaJson(e), ...(d.kind === "patch" ? { ops: d.ops } : { skeleton: d.skeleton }) });
      return;
    }
    const b = branchOf(session, q.get("branch"));
    if (what === "tree") {
      const at = eventOf(session, q.get("at"), b.head);
      const tree = trees.at(at);
      const css = q.get("select");
      if (css !== null && css !== "") {
        json(res, 200, { event: at, matches: select(tree, css).map((e) => e.id) });
        return;
      }
      if (q.get("format") === "xml") {
        const xml = toXml(tree);
        res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "application/xml; charset=utf-8", "cache-control": "no-store" });
        return void res.end(xml);
      }
      const full = q.get("full") === "1";
      if (full && tree.size > FULL_MAX_ELEMENTS)
        throw new HttpError(
          413,
          `the tree at event ${at} has ${tree.size} elements; ?full=1 serves at most ${FULL_MAX_ELEMENTS} (use the windowed view, /children and /text, or format=xml)`,
        );
      json(res, 200, { event: at, hwm: tree.hwm, size: tree.size, root: treeJson(tree.root, full ? FULL : WINDOW) });
      return;
    }
    if (what === "children" || what === "text") {
      const at = eventOf(session, q.get("at"), b.head);
      const el = trees.at(at).get(Number(q.get("id")));
      if (el === undefined) throw new HttpError(404, `no element ${q.get("id")} at event ${at}`);
      if (what === "text") {
        json(res, 200, { event: at, id: el.id, text: el.text });
        return;
      }
      // children after sibling `after` (default: from the first), at most `limit`, stopping at `before`
      const limit = Math.min(2000, Math.max(1, Number(q.get("limit") ?? 200) | 0));
      const afterId = q.get("after");
      const before = Number(q.get("before") ?? 0);
      let c = afterId === null ? el.firstChild : (trees.at(at).get(Number(afterId))?.nextSibling ?? null);
      if (afterId !== null && trees.at(at).get(Number(afterId))?.parent?.id !== el.id)
        throw new HttpError(400, `element ${afterId} is not a child of ${el.id}`);
      const children: unknown[] = [];
      const budget = { left: WINDOW.maxElements };
      while (c !== null && c.id !== before && children.length < limit && budget.left > 0) {
        children.push(treeJson(c, WINDOW, budget));
        c = c.nextSibling;
      }
      json(res, 200, { event: at, id: el.id, children, more: c !== null && c.id !== before });
      return;
    }
    if (what === "diff") {
      const from = eventOf(session, q.get("from"));
      const to = eventOf(session, q.get("to"), b.head);
      json(res, 200, { from, to, diff: diffTrees(trees.at(from), trees.at(to)) });
      return;
    }
    if (what === "prompt") {
      const at = eventOf(session, q.get("at"), b.head);
      json(res, 200, { event: at, request: projectRequest(trees.at(at), blobReader(store)) });
      return;
    }
    if (what === "stream") {
      stream(req, res, session, b, q);
      return;
    }
    throw new HttpError(404, `no endpoint ${url.pathname}`);
  }

  function metaJson(e: EventMeta): Record<string, unknown> {
    return { id: e.id, prior: e.prior, depth: e.depth, ts: e.ts, kind: e.kind, label: e.label, by: e.by };
  }

  /** IN-5, IN-18: the live stream from `Last-Event-ID` (a reconnect), `?from=` or the head. */
  function stream(req: IncomingMessage, res: ServerResponse, session: SessionId, branch: BranchInfo, q: URLSearchParams): void {
    if (req.method === "HEAD") {
      res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
      return void res.end();
    }
    const last = req.headers["last-event-id"];
    const resumed = typeof last === "string" && last !== "";
    const fromText = resumed ? last : q.get("from");
    const cursor = fromText === null ? branch.head : eventOf(session, fromText);
    openLive(
      req,
      res,
      {
        store,
        treeAt: (e) => trees.at(e),
        session,
        branch,
        cursor,
        resumed,
        snapshot: q.get("snapshot") === "1",
        options,
        track: (stop) => {
          streams.add(stop);
          return () => streams.delete(stop);
        },
      },
      SECURITY_HEADERS,
    );
  }

  function serveStatic(res: ServerResponse, pathname: string, head: boolean): void {
    if (!existsSync(join(staticDir, "index.html")))
      throw new HttpError(503, `the web app is not built (${staticDir}); run \`pnpm --filter @strata/inspector build\``);
    let rel = normalize(decodeURIComponent(pathname)).replace(/^[/\\]+/, "");
    if (rel === "" || rel.endsWith(sep)) rel = "index.html";
    let file = resolve(staticDir, rel);
    if (file !== staticDir && !file.startsWith(staticDir + sep)) throw new HttpError(404, "not found");
    if (!existsSync(file) || !statSync(file).isFile()) {
      if (extname(rel) !== "") throw new HttpError(404, `no file ${pathname}`);
      file = join(staticDir, "index.html"); // client-side routes
    }
    const body = readFileSync(file);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": body.length,
      "cache-control": file.includes(`${sep}assets${sep}`) ? "public, max-age=31536000, immutable" : "no-cache",
    });
    res.end(head ? undefined : body);
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
