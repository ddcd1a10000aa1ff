/** @strata/inspector — the read-only inspector server and its web app. */
export { APP_ROOT, buildApp, needsBuild, STATIC_DIR } from "./build.ts";
export { CHROMIUM_FLAGS, chromiumPath } from "./chromium.ts";
export type { LiveOptions } from "./live.ts";
export { type Running, type ServeOptions, startServer } from "./server.ts";
export { type Elided, FULL, type TreeWindow, treeJson, WINDOW } from "./tree-json.ts";
