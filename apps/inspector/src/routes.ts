/**
 * The route table (IN-2 … IN-5, IN-20): one entry per endpoint of the protocol — its method and
 * path (from `ENDPOINTS`) and the handler that answers it. A handler returns its endpoint's
 * response type (`ResponseOf<E>`), which the server sends as JSON, or `WRITTEN` when it wrote a
 * non-JSON answer itself (the XML tree, the stream). The table's type has exactly one entry per
 * endpoint, so an endpoint without a handler, or a handler answering another shape, does not compile.
 *
 * Lookups keep the order the answers depend on: the session first (404), then the branch, then
 * the endpoint's own parameters. The handlers are written once for both storage ports (SQLite, and
 * PostgreSQL behind the asynchronous port): each awaits what it reads.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type BlobText, blobReader, fetchBlobs, projectRequest } from "@strata/agent";
import { diffTrees, type NodeId, select, type Tree, toXml } from "@strata/dom";
import { decodeEvent, treeBlobRefs } from "@strata/engine";
import { type AsyncStore, type EventMeta, isAsyncStore, type SessionInfo, type Store } from "@strata/store";
import { conversation, Settles } from "./conversation.ts";
import { HttpError } from "./failure.ts";
import { fileDiff } from "./file-diff.ts";
import { fileAt, filesPage, pathParam } from "./files.ts";
import { type LiveOptions, openLive } from "./live.ts";
import { countParam } from "./params.ts";
import {
  type BranchRow,
  ENDPOINTS,
  type Endpoint,
  type EventRow,
  type NodeJson,
  type ParamName,
  type QueryOf,
  type ResponseOf,
  type SessionRow,
} from "./protocol.ts";
import { branchOf, eventOf, sessionOf } from "./resolve.ts";
import { SECURITY_HEADERS } from "./respond.ts";
import { FULL, FULL_MAX_ELEMENTS, treeJson, WINDOW } from "./tree-json.ts";
import type { Trees } from "./trees.ts";

/** A handler's answer when it wrote the response itself (not JSON). */
export const WRITTEN: unique symbol = Symbol("written");

/** The query parameters an endpoint reads, by the names its protocol entry declares. */
export interface QueryReader<Q> {
  get(name: keyof Q & string): string | null;
}

export interface RouteRequest<E extends Endpoint> {
  /** The path parameters, percent-decoded. */
  readonly params: Readonly<Record<ParamName<E>, string>>;
  readonly query: QueryReader<QueryOf<E>>;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

export interface Route<E extends Endpoint> {
  readonly method: (typeof ENDPOINTS)[E]["method"];
  readonly path: (typeof ENDPOINTS)[E]["path"];
  readonly handle: (r: RouteRequest<E>) => Promise<ResponseOf<E> | typeof WRITTEN>;
}

export type RouteTable = { readonly [E in Endpoint]: Route<E> };

/** What the handlers read and where the streams register. */
export interface RouteDeps {
  readonly store: Store | AsyncStore;
  readonly trees: Trees;
  readonly live: LiveOptions;
  /** Registers a stream's stop function with the server (closing the server ends it). */
  readonly track: (stop: () => void) => () => void;
}

function route<E extends Endpoint>(e: E, handle: Route<E>["handle"]): Route<E> {
  return { method: ENDPOINTS[e].method, path: ENDPOINTS[e].path, handle };
}

function eventRow(e: EventMeta): EventRow {
  return { id: e.id, prior: e.prior, depth: e.depth, ts: e.ts, kind: e.kind, label: e.label, by: e.by };
}

/** Sessions whose lookups the listing runs at once (the PostgreSQL store's pool holds 10 connections). */
const LOOKUPS_AT_ONCE = 8;

/** The table: every endpoint of the protocol, answered from `deps.store`. */
export function routeTable(deps: RouteDeps): RouteTable {
  const { store, trees } = deps;
  const settles = new Settles(store);
  return {
    sessions: route("sessions", async () => {
      const row = async (s: SessionInfo): Promise<SessionRow> => {
        const branches = await store.branches(s.id);
        const main = branches.find((b) => b.name === "main") ?? branches[0];
        const head = main === undefined ? undefined : await store.eventMeta(main.head);
        return {
          id: s.id,
          title: s.title,
          created: s.created,
          branches: branches.length,
          events: main?.headDepth ?? 0,
          lastActivity: head?.ts ?? s.created,
          lastLabel: head?.label ?? null,
        };
      };
      // Over the network a session's two lookups are round trips: LOOKUPS_AT_ONCE sessions at a time, in order.
      const all = await store.listSessions();
      const sessions: SessionRow[] = [];
      for (let i = 0; i < all.length; i += LOOKUPS_AT_ONCE)
        sessions.push(...(await Promise.all(all.slice(i, i + LOOKUPS_AT_ONCE).map(row))));
      return { sessions };
    }),

    session: route("session", async ({ params }) => {
      const info = await sessionOf(store, params.session);
      const branches: BranchRow[] = [];
      for (const b of await store.branches(info.id))
        branches.push({
          name: b.name,
          head: b.head,
          events: b.headDepth,
          origin: b.origin,
          originEvent: b.originEvent,
          originDepth: b.originEvent === null ? null : ((await store.eventMeta(b.originEvent))?.depth ?? null),
          created: b.created,
        });
      return { ...info, branches };
    }),

    events: route("events", async ({ params, query }) => {
      const b = await branchOf(store, (await sessionOf(store, params.session)).id, query.get("branch"));
      const offset = Math.max(0, Number(query.get("offset") ?? 0) | 0);
      const limit = Math.min(5000, Math.max(1, Number(query.get("limit") ?? 500) | 0));
      const events = (await store.chainMeta(b.head, offset, limit)).map(eventRow);
      return { branch: b.name, head: b.head, total: b.headDepth, offset, events };
    }),

    event: route("event", async ({ params }) => {
      const id = await eventOf(store, (await sessionOf(store, params.session)).id, params.event);
      const e = await store.event(id);
      if (e === undefined) throw new HttpError(404, `no event ${id}`);
      const d = decodeEvent(e);
      return { ...eventRow(e), ...(d.kind === "patch" ? { ops: d.ops } : { skeleton: d.skeleton }) };
    }),

    tree: route("tree", async ({ params, query, res }) => {
      const session = (await sessionOf(store, params.session)).id;
      const b = await branchOf(store, session, query.get("branch"));
      const at = await eventOf(store, session, query.get("at"), b.head);
      const tree = await trees.at(session, at);
      const css = query.get("select");
      if (css !== null && css !== "") return { event: at, matches: select(tree, css).map((e) => e.id) };
      if (query.get("format") === "xml") {
        const xml = toXml(tree);
        res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "application/xml; charset=utf-8", "cache-control": "no-store" });
        res.end(xml);
        return WRITTEN;
      }
      const full = query.get("full") === "1";
      if (full && tree.size > FULL_MAX_ELEMENTS)
        throw new HttpError(
          413,
          `the tree at event ${at} has ${tree.size} elements; ?full=1 serves at most ${FULL_MAX_ELEMENTS} (use the windowed view, /children and /text, or format=xml)`,
        );
      return { event: at, hwm: tree.hwm, size: tree.size, root: treeJson(tree.root, full ? FULL : WINDOW) };
    }),

    children: route("children", async ({ params, query }) => {
      const { at, tree } = await treeOf(deps, params.session, query);
      const el = tree.get(Number(query.get("id")));
      if (el === undefined) throw new HttpError(404, `no element ${query.get("id")} at event ${at}`);
      // children after sibling `after` (default: from the first), at most `limit`, stopping at `before`
      const limit = Math.min(2000, Math.max(1, Number(query.get("limit") ?? 200) | 0));
      const afterId = query.get("after");
      const before = Number(query.get("before") ?? 0);
      let c = afterId === null ? el.firstChild : (tree.get(Number(afterId))?.nextSibling ?? null);
      if (afterId !== null && tree.get(Number(afterId))?.parent?.id !== el.id)
        throw new HttpError(400, `element ${afterId} is not a child of ${el.id}`);
      const children: NodeJson[] = [];
      const budget = { left: WINDOW.maxElements };
      while (c !== null && c.id !== before && children.length < limit && budget.left > 0) {
        children.push(treeJson(c, WINDOW, budget));
        c = c.nextSibling;
      }
      return { event: at, id: el.id, children, more: c !== null && c.id !== before };
    }),

    text: route("text", async ({ params, query }) => {
      const { at, tree } = await treeOf(deps, params.session, query);
      const el = tree.get(Number(query.get("id")));
      if (el === undefined) throw new HttpError(404, `no element ${query.get("id")} at event ${at}`);
      return { event: at, id: el.id, text: el.text };
    }),

    diff: route("diff", async ({ params, query }) => {
      const session = (await sessionOf(store, params.session)).id;
      const b = await branchOf(store, session, query.get("branch"));
      const from = await eventOf(store, session, query.get("from"));
      const to = await eventOf(store, session, query.get("to"), b.head);
      return { from, to, diff: diffTrees(await trees.at(session, from), await trees.at(session, to)) };
    }),

    prompt: route("prompt", async ({ params, query }) => {
      const { at, tree } = await treeOf(deps, params.session, query);
      return { event: at, request: projectRequest(tree, await readerFor(store, tree)) };
    }),

    // IN-22: the workspace at an event, a page of its files in path order.
    files: route("files", async ({ params, query }) => {
      const session = (await sessionOf(store, params.session)).id;
      const at = await eventOf(store, session, query.get("at"), (await branchOf(store, session, query.get("branch"))).head);
      const offset = countParam("offset", query.get("offset"), { min: 0, max: Number.MAX_SAFE_INTEGER, default: 0 });
      const limit = countParam("limit", query.get("limit"), { min: 1, max: 5000, default: 1000 });
      return filesPage(await trees.at(session, at), at, offset, limit);
    }),

    // IN-23: one file's content at an event.
    file: route("file", async ({ params, query }) => {
      const { at, tree } = await treeOf(deps, params.session, query);
      return fileAt(store, tree, at, pathParam(query.get("path")));
    }),

    // IN-24: the files that changed from one event to another, with unified diffs for text.
    filediff: route("filediff", async ({ params, query }) => {
      const session = (await sessionOf(store, params.session)).id;
      const b = await branchOf(store, session, query.get("branch"));
      const from = await eventOf(store, session, query.get("from"));
      const to = await eventOf(store, session, query.get("to"), b.head);
      const offset = countParam("offset", query.get("offset"), { min: 0, max: Number.MAX_SAFE_INTEGER, default: 0 });
      const limit = countParam("limit", query.get("limit"), { min: 1, max: 1000, default: 200 });
      const path = query.get("path");
      return fileDiff(
        store,
        { event: from, tree: await trees.at(session, from) },
        { event: to, tree: await trees.at(session, to) },
        {
          offset,
          limit,
          ...(path === null ? {} : { path: pathParam(path) }),
        },
      );
    }),

    // IN-26, IN-27: a window of the body's children at an event, with what the log says of their calls.
    conversation: route("conversation", async ({ params, query }) => {
      const { at, tree } = await treeOf(deps, params.session, query);
      const before = countParam("before", query.get("before"), { min: 1, max: 2 ** 31 - 1, default: 0 });
      const limit = countParam("limit", query.get("limit"), { min: 1, max: 500, default: 40 });
      const meta = await store.eventMeta(at);
      if (meta === undefined) throw new HttpError(404, `no event ${at}`);
      return conversation(settles, tree, meta, before === 0 ? undefined : (before as NodeId), limit);
    }),

    // IN-5, IN-18: the live stream from `Last-Event-ID` (a reconnect), `?from=` or the head.
    stream: route("stream", async ({ params, query, req, res }) => {
      const session = (await sessionOf(store, params.session)).id;
      const branch = await branchOf(store, session, query.get("branch"));
      if (req.method === "HEAD") {
        res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store" });
        res.end();
        return WRITTEN;
      }
      const last = req.headers["last-event-id"];
      const resumed = typeof last === "string" && last !== "";
      const fromText = resumed ? last : query.get("from");
      const cursor = fromText === null ? branch.head : await eventOf(store, session, fromText);
      await openLive(
        req,
        res,
        {
          store,
          treeAt: (e) => trees.at(session, e),
          session,
          branch,
          cursor,
          resumed,
          snapshot: query.get("snapshot") === "1",
          options: deps.live,
          track: deps.track,
        },
        SECURITY_HEADERS,
      );
      return WRITTEN;
    }),
  };
}

/**
 * The answer for an `/api/…` path no endpoint has (IN-20): a path under a session names the
 * session first, then the branch (`?branch=`), as the endpoints do — so an unknown session is
 * `no session …` whatever follows it — and is otherwise `no endpoint PATH`. Always throws.
 */
export async function unmatched(
  store: Store | AsyncStore,
  segments: readonly string[],
  branch: string | null,
  pathname: string,
): Promise<never> {
  const [api, sessions, session] = segments;
  if (api === "api" && sessions === "sessions" && session !== undefined)
    await branchOf(store, (await sessionOf(store, session)).id, branch);
  throw new HttpError(404, `no endpoint ${pathname}`);
}

/** The session's tree at `?at=` (default: the head of `?branch=`), in the lookup order of the module's comment. */
async function treeOf(
  deps: RouteDeps,
  id: string,
  query: { get(name: "at" | "branch"): string | null },
): Promise<{ at: EventMeta["id"]; tree: Tree }> {
  const { store, trees } = deps;
  const session = (await sessionOf(store, id)).id;
  const at = await eventOf(store, session, query.get("at"), (await branchOf(store, session, query.get("branch"))).head);
  return { at, tree: await trees.at(session, at) };
}

/**
 * A blob reader for projecting `tree`: the store's over SQLite; over the asynchronous port the
 * blobs the tree names fetched first, in one call.
 */
async function readerFor(store: Store | AsyncStore, tree: Tree): Promise<BlobText> {
  if (!isAsyncStore(store)) return blobReader(store);
  const blobs = await fetchBlobs(store, treeBlobRefs(tree));
  return (hash) => blobs.text(hash);
}
