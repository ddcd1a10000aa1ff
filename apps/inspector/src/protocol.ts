/**
 * The inspector's protocol (IN-2 … IN-6, IN-20): every endpoint — its method, path, query and
 * answer — in one module that both sides import. The server's route table (`routes.ts`) must have
 * one handler per endpoint answering exactly its response type; the page (`web/client.ts`) builds
 * its URLs with `pathOf` and reads the answers as these types. A change to an endpoint is a change
 * here, and the compiler shows both sides what it breaks.
 *
 * The page imports this module, so it must run in a browser: the packages' types come by
 * `import type` (erased: the page bundle takes no code from the packages), and the only runtime
 * values are `ENDPOINTS` and `pathOf`.
 */
import type { ModelRequest } from "@strata/agent/model";
import type { Attrs, NodeId, NodeSpec, Op, TreeDiff } from "@strata/dom";
import type { BranchInfo, EventId, EventMeta, SessionId, SessionInfo } from "@strata/store";

// ── the answers ───────────────────────────────────────────────────────────────────────────────

/** One row of `GET /api/sessions`: a session and its main branch at a glance. */
export interface SessionRow extends Pick<SessionInfo, "id" | "title" | "created"> {
  /** How many branches the session has. */
  readonly branches: number;
  /** Events on the main branch (its head's depth). */
  readonly events: number;
  /** The main head's time (the session's creation time when it has none). */
  readonly lastActivity: number;
  readonly lastLabel: string | null;
}

export interface SessionsResponse {
  readonly sessions: readonly SessionRow[];
}

/** A branch as the page draws it (IN-2, IN-11): from its fork point (event and depth) to its head. */
export interface BranchRow extends Pick<BranchInfo, "name" | "head" | "origin" | "originEvent" | "created"> {
  /** Events on the branch (its head's depth). */
  readonly events: number;
  /** The depth of `originEvent` (null for the genesis branch, or when that event is gone). */
  readonly originDepth: number | null;
}

/** `GET /api/sessions/:session`: the session and every branch. */
export interface SessionResponse extends SessionInfo {
  readonly branches: readonly BranchRow[];
}

/** What the index knows of one event, without its payload or digest (IN-3). */
export type EventRow = Pick<EventMeta, "id" | "prior" | "depth" | "ts" | "kind" | "label" | "by">;

/** `GET …/events`: `total` events on the branch; these start at depth `offset + 1`. */
export interface EventsResponse {
  readonly branch: string;
  readonly head: EventId;
  readonly total: number;
  readonly offset: number;
  readonly events: readonly EventRow[];
}

/** `GET …/event/:event`: the event and its payload — a patch's ops, or the genesis skeleton. */
export type EventDetail = EventRow & ({ readonly ops: readonly Op[] } | { readonly skeleton: NodeSpec });

/**
 * A skipped run of children (IN-15): fetch it from `…/children` (`after` absent: from the first
 * child; `before` 0: to the end).
 */
export interface Elided {
  readonly elided: { readonly after?: NodeId; readonly before: NodeId | 0 };
}

/**
 * An element and its windowed subtree (IN-4, IN-15). Not read-only: the page splices the runs it
 * fetches into `children` and completes a cut `text` in place.
 */
export interface NodeJson {
  id: NodeId;
  tag: string;
  attrs: Attrs;
  /** Absent when empty; cut to the window's length when `textLength` is given. */
  text?: string;
  /** Present when `text` was cut: the full length (`…/text` has it all). */
  textLength?: number;
  /** Absent for a leaf; skipped runs are `Elided`. */
  children?: (NodeJson | Elided)[];
}

/** `GET …/tree`: the tree at `event`, windowed. */
export interface TreeResponse {
  readonly event: EventId;
  readonly hwm: number;
  readonly size: number;
  readonly root: NodeJson;
}

/** `GET …/tree?select=CSS`: the ids of the matching elements, in document order. */
export interface MatchesResponse {
  readonly event: EventId;
  readonly matches: readonly NodeId[];
}

/** `GET …/children`: children of `id` (each windowed); `more` when the run goes on past them. */
export interface ChildrenResponse {
  readonly event: EventId;
  readonly id: NodeId;
  readonly children: readonly NodeJson[];
  readonly more: boolean;
}

/** `GET …/text`: one element's whole text. */
export interface TextResponse {
  readonly event: EventId;
  readonly id: NodeId;
  readonly text: string;
}

/** `GET …/diff`: what changed from one event's tree to another's. */
export interface DiffResponse {
  readonly from: EventId;
  readonly to: EventId;
  readonly diff: TreeDiff;
}

/** `GET …/prompt`: the request the model would be sent at `event` (the projection of PR-7). */
export interface PromptResponse {
  readonly event: EventId;
  readonly request: ModelRequest;
}

/** One tracked file of the workspace (IN-22): as its `<file>` element records it. */
export interface FileRow {
  /** POSIX, relative to the workspace root. */
  readonly path: string;
  /** `644`, `755` (owner-executable) or `link` (a symlink: its bytes are the target). */
  readonly mode: "644" | "755" | "link";
  /** Bytes. */
  readonly size: number;
  /** sha256 (hex) of the bytes: the blob that holds them. */
  readonly hash: string;
}

/**
 * `GET …/files`: the workspace at `event` (IN-22), files sorted by path; `total` of them, these
 * from index `offset`. Before the baseline the tree records no workspace: `tracked` is false.
 */
export interface FilesResponse {
  readonly event: EventId;
  readonly tracked: boolean;
  /** `<workspace dir>`: the branch's working directory, when recorded. */
  readonly dir: string | null;
  readonly total: number;
  /** Bytes of every tracked file together. */
  readonly bytes: number;
  readonly offset: number;
  readonly files: readonly FileRow[];
}

/**
 * A file's bytes as the page shows them (IN-23): UTF-8 text without NUL is text; a symlink's
 * bytes are its target; anything else is binary, and its bytes are not sent.
 */
export type FileContent =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "link"; readonly target: string }
  | { readonly kind: "binary" };

/** `GET …/file?path=`: one file at `event` and its content. */
export interface FileResponse {
  readonly event: EventId;
  readonly file: FileRow;
  readonly content: FileContent;
}

/**
 * What the file diff shows of one changed file's content (IN-24): a unified diff when both sides
 * are text (a missing side is empty), else why not — a binary side (compare sizes and hashes), the
 * same bytes (only the mode changed), a side over the per-file bound, this response's budget spent
 * (ask again with `?path=`), bytes the store does not have.
 */
export type FileDelta =
  | { readonly kind: "text"; readonly unified: string; readonly added: number; readonly removed: number; readonly coarse: boolean }
  | { readonly kind: "binary" }
  | { readonly kind: "same" }
  | { readonly kind: "too-large"; readonly limit: number }
  | { readonly kind: "omitted"; readonly budget: number }
  | { readonly kind: "missing"; readonly hashes: readonly string[] };

/** One changed file: its record before (absent when added) and after (absent when deleted). */
export interface FileDiffRow {
  readonly path: string;
  readonly change: "added" | "modified" | "deleted";
  readonly before: FileRow | null;
  readonly after: FileRow | null;
  readonly delta: FileDelta;
}

/** `GET …/filediff`: the files that differ from `from`'s workspace to `to`'s, sorted by path; `total` of them, these from `offset`. */
export interface FileDiffResponse {
  readonly from: EventId;
  readonly to: EventId;
  readonly total: number;
  readonly offset: number;
  readonly changes: readonly FileDiffRow[];
}

/**
 * What the log says of one call in a conversation answer (IN-27): the event that settled it
 * (`call.outcome`, `call.interrupted`), and, when that event changed workspace files, the two
 * ends of its file diff (`…/filediff?from&to`: the event before it and the event itself).
 */
export interface CallEffects {
  readonly settled: { readonly id: EventId; readonly depth: number; readonly label: string | null };
  readonly files?: { readonly from: EventId; readonly to: EventId };
}

/**
 * `GET …/conversation`: a window of `<body>`'s children at `event` (IN-26, IN-27), in document
 * order, each windowed as the tree is (IN-15) — the same elements the tree answers, not another
 * model of the session. `earlier` when the body has children before the first (ask again with
 * `before=` its id); `calls` by call element id.
 */
export interface ConversationResponse {
  readonly event: EventId;
  readonly body: NodeId;
  readonly items: readonly NodeJson[];
  readonly earlier: boolean;
  readonly calls: Readonly<Record<string, CallEffects>>;
}

/** The body of every failed request (IN-6, IN-19). */
export interface ErrorResponse {
  readonly error: ErrorBody;
}

export interface ErrorBody {
  readonly status: number;
  readonly message: string;
  /**
   * `template-error` for a recorded template that fails to render (with where); `workspace-error`
   * for a `<workspace>` record that cannot be read (`reason`: the workspace error's code).
   */
  readonly code?: string;
  readonly template?: string;
  readonly line?: number;
  readonly column?: number;
  /** The template's or workspace's error kind (`syntax`, `render`, `limit`, `bad-entry` …) and, for a bound, which one. */
  readonly reason?: string;
  readonly limit?: string;
}

// ── the requests ──────────────────────────────────────────────────────────────────────────────

/** A query parameter's value as the page passes it (sent as text; `undefined` is left out). */
type Value = string | number | undefined;

/** Every session-scoped read but the session and event ones names a branch (default `main`). */
interface OnBranch {
  readonly branch?: string;
}
/** …and an event on it (default: the branch's head). */
interface AtEvent extends OnBranch {
  readonly at?: EventId | number;
}

export interface EventsQuery extends OnBranch {
  /** Depth index of the first event (default 0). */
  readonly offset?: number;
  /** At most this many (1 … 5000, default 500). */
  readonly limit?: number;
}
export interface TreeQuery extends AtEvent {
  /** A CSS selector: the answer is `MatchesResponse`. */
  readonly select?: string;
  /** `xml`: the canonical XML (`application/xml`), not JSON. */
  readonly format?: "xml";
  /** `1`: the whole tree unwindowed, when it has at most 200,000 elements (413 beyond). */
  readonly full?: 1 | "1";
}
export interface ChildrenQuery extends AtEvent {
  readonly id: NodeId | number;
  /** Start after this child (default: from the first). */
  readonly after?: NodeId | number;
  /** Stop at this child (default 0: the end). */
  readonly before?: NodeId | number;
  /** At most this many (1 … 2000, default 200). */
  readonly limit?: number;
}
export interface TextQuery extends AtEvent {
  readonly id: NodeId | number;
}
export interface DiffQuery extends OnBranch {
  readonly from: EventId | number;
  /** Default: the branch's head. */
  readonly to?: EventId | number;
}
export interface FilesQuery extends AtEvent {
  /** Index of the first file, in path order (default 0). */
  readonly offset?: number;
  /** At most this many (1 … 5000, default 1000). */
  readonly limit?: number;
}
export interface FileQuery extends AtEvent {
  /** The file's path in the workspace. */
  readonly path: string;
}
export interface FileDiffQuery extends OnBranch {
  readonly from: EventId | number;
  /** Default: the branch's head. */
  readonly to?: EventId | number;
  /** Index of the first changed file, in path order (default 0). */
  readonly offset?: number;
  /** At most this many (1 … 1000, default 200). */
  readonly limit?: number;
  /** Only this path's change (none when it did not change). */
  readonly path?: string;
}
export interface ConversationQuery extends AtEvent {
  /** Only the children before this child of `<body>` (default: to the end). */
  readonly before?: NodeId | number;
  /** At most this many, the last ones before `before` (1 … 500, default 40). */
  readonly limit?: number;
}
export interface StreamQuery extends OnBranch {
  /** Send the events after this one (default: the head); `Last-Event-ID` wins over it. */
  readonly from?: EventId | number;
  /** `1`: start with the state at the cursor (`snapshot@1`). */
  readonly snapshot?: 1 | "1";
}

/**
 * What each endpoint takes and answers. `query` names every query parameter the endpoint reads;
 * `response` is its JSON answer (200). Two answers are not JSON: `tree?format=xml` is XML, and
 * `stream` is Server-Sent Events — the engine's frames (`patch@1`, `reset@1`, …, EN-25, IN-18),
 * which `decodeSseMessage` and a `Replica` read — so its `response` is `never`.
 */
export interface Protocol {
  sessions: { query: Record<never, Value>; response: SessionsResponse };
  session: { query: Record<never, Value>; response: SessionResponse };
  events: { query: EventsQuery; response: EventsResponse };
  event: { query: Record<never, Value>; response: EventDetail };
  tree: { query: TreeQuery; response: TreeResponse | MatchesResponse };
  children: { query: ChildrenQuery; response: ChildrenResponse };
  text: { query: TextQuery; response: TextResponse };
  diff: { query: DiffQuery; response: DiffResponse };
  prompt: { query: AtEvent; response: PromptResponse };
  files: { query: FilesQuery; response: FilesResponse };
  file: { query: FileQuery; response: FileResponse };
  filediff: { query: FileDiffQuery; response: FileDiffResponse };
  conversation: { query: ConversationQuery; response: ConversationResponse };
  stream: { query: StreamQuery; response: never };
}

export type Endpoint = keyof Protocol;
export type QueryOf<E extends Endpoint> = Protocol[E]["query"];
export type ResponseOf<E extends Endpoint> = Protocol[E]["response"];
/** The endpoints that answer JSON (all but the stream). */
export type JsonEndpoint = { [E in Endpoint]: [ResponseOf<E>] extends [never] ? never : E }[Endpoint];

// ── where they are ────────────────────────────────────────────────────────────────────────────

/**
 * Every endpoint's method and path. A `:name` segment is a path parameter (one segment, sent
 * percent-encoded). Every endpoint is GET — HEAD is answered as GET — since the inspector never
 * writes (IN-1): a `method` other than "GET" does not compile.
 */
export const ENDPOINTS = {
  sessions: { method: "GET", path: "/api/sessions" },
  session: { method: "GET", path: "/api/sessions/:session" },
  events: { method: "GET", path: "/api/sessions/:session/events" },
  event: { method: "GET", path: "/api/sessions/:session/event/:event" },
  tree: { method: "GET", path: "/api/sessions/:session/tree" },
  children: { method: "GET", path: "/api/sessions/:session/children" },
  text: { method: "GET", path: "/api/sessions/:session/text" },
  diff: { method: "GET", path: "/api/sessions/:session/diff" },
  prompt: { method: "GET", path: "/api/sessions/:session/prompt" },
  files: { method: "GET", path: "/api/sessions/:session/files" },
  file: { method: "GET", path: "/api/sessions/:session/file" },
  filediff: { method: "GET", path: "/api/sessions/:session/filediff" },
  conversation: { method: "GET", path: "/api/sessions/:session/conversation" },
  stream: { method: "GET", path: "/api/sessions/:session/stream" },
} as const satisfies { readonly [E in Endpoint]: { readonly method: "GET"; readonly path: `/api/${string}` } };

type ParamNames<P extends string> = P extends `${string}/:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}/:${infer Name}`
    ? Name
    : never;

/** The path parameters of endpoint `E`, by name (`session`, `event`). */
export type ParamName<E extends Endpoint> = ParamNames<(typeof ENDPOINTS)[E]["path"]>;
export type PathParams<E extends Endpoint> = { readonly [K in ParamName<E>]: SessionId | EventId | string | number };

/** The path of endpoint `e` with `params` filled in, each percent-encoded (`/api/sessions/S/event/7`). */
export function pathOf<E extends Endpoint>(e: E, params: PathParams<E>): string {
  const values = params as Readonly<Record<string, string | number>>;
  return ENDPOINTS[e].path.replace(/:([a-z]+)/g, (_, name: string) => encodeURIComponent(String(values[name])));
}
