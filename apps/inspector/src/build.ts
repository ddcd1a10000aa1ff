/**
 * The web app's build (IN-8): `strata serve` builds it on first use (and again when a source file
 * is newer than the build), so a fresh clone needs no separate step.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const APP_ROOT = join(import.meta.dirname, "..");
export const STATIC_DIR = join(APP_ROOT, "dist");

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** True when dist/ is missing or older than web/ or the Vite config. */
export function needsBuild(): boolean {
  const index = join(STATIC_DIR, "index.html");
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return newest(join(APP_ROOT, "web")) > built || statSync(join(APP_ROOT, "vite.config.ts")).mtimeMs > built;
}

/** Builds the web app with Vite into dist/. */
export async function buildApp(): Promise<void> {
  const vite = await import("vite");
  await vite.build({ configFile: join(APP_ROOT, "vite.config.ts"), logLevel: "error" });
}
