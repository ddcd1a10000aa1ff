/** @strata/inspector — the read-only inspector server, its protocol and its web app. */
export { APP_ROOT, buildApp, needsBuild, PAGE_SOURCES, STATIC_DIR } from "./build.ts";
export { CHROMIUM_FLAGS, chromiumPath } from "./chromium.ts";
export type { LiveOptions } from "./live.ts";
export {
  type BranchRow,
  type ChildrenQuery,
  type ChildrenResponse,
  type DiffQuery,
  type DiffResponse,
  type Elided,
  ENDPOINTS,
  type Endpoint,
  type ErrorBody,
  type ErrorResponse,
  type EventDetail,
  type EventRow,
  type EventsQuery,
  type EventsResponse,
  type JsonEndpoint,
  type MatchesResponse,
  type NodeJson,
  type ParamName,
  type PathParams,
  type PromptResponse,
  type Protocol,
  pathOf,
  type QueryOf,
  type ResponseOf,
  type SessionResponse,
  type SessionRow,
  type SessionsResponse,
  type StreamQuery,
  type TextQuery,
  type TextResponse,
  type TreeQuery,
  type TreeResponse,
} from "./protocol.ts";
export { type Running, type ServeOptions, startServer } from "./server.ts";
export { FULL, type TreeWindow, treeJson, WINDOW } from "./tree-json.ts";
