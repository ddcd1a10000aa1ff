/**
 * The web app's build (IN-8): `strata serve` builds it on first use (and again when a source file
 * is newer than the build), so a fresh clone needs no separate step.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The inspector package's directory, found through its own name (not this file's place: the
 * `strata` command bundles this module into its own files, and still serves this package's page).
 */
export const APP_ROOT = dirname(fileURLToPath(import.meta.resolve("@strata/inspector/package.json")));
/** The built page: app/ in the package (built from web/ in a checkout, shipped built in the published package). */
export const STATIC_DIR = join(APP_ROOT, "app");

/**
 * What the page bundle is built from, relative to the app's root: the web app, the Vite config,
 * and the protocol module the page shares with the server (IN-20; its `ENDPOINTS` are code).
 */
export const PAGE_SOURCES: readonly string[] = ["web", "vite.config.ts", "src/protocol.ts"];

/** The newest modification time of a file, or of any file under a directory. */
function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let t = 0;
  for (const e of readdirSync(path)) t = Math.max(t, newest(join(path, e)));
  return t;
}

/**
 * True when `root`'s app/ is missing or older than one of its `PAGE_SOURCES`. An installed
 * package has no web/ sources: its app/ is the one it shipped with.
 */
export function needsBuild(root: string = APP_ROOT): boolean {
  const index = join(root, "app", "index.html");
  if (!existsSync(index)) return true;
  if (!existsSync(join(root, "web"))) return false;
  const built = statSync(index).mtimeMs;
  return PAGE_SOURCES.some((source) => existsSync(join(root, source)) && newest(join(root, source)) > built);
}

/** Builds the web app with Vite into app/. */
export async function buildApp(): Promise<void> {
  const vite = await import("vite");
  await vite.build({ configFile: join(APP_ROOT, "vite.config.ts"), logLevel: "error" });
}
