/**
 * The built web app (IN-7): files of the build directory with their content types; an unknown
 * path without an extension is a client-side route and gets the app's page; no path leaves the
 * build directory.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";
import { HttpError } from "./failure.ts";
import { SECURITY_HEADERS } from "./respond.ts";

const TYPES: Readonly<Record<string, string>> = {
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

/**
 * Answers `pathname` (already checked to be valid percent-encoding) from `staticDir`, an absolute
 * path. Throws `HttpError` 503 when the app is not built, 404 for a missing file with an extension.
 */
export function serveStatic(staticDir: string, res: ServerResponse, pathname: string, head: boolean): void {
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
