/** @strata/inspector — the read-only inspector server and its web app. */
export { APP_ROOT, buildApp, needsBuild, STATIC_DIR } from "./build.ts";
export { CHROMIUM_FLAGS, chromiumPath } from "./chromium.ts";
export { type Running, type ServeOptions, startServer, treeJson } from "./server.ts";
