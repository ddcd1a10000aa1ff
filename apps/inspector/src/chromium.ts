/**
 * The browser the inspector's tests and benchmark drive: Debian's chromium, never a downloaded
 * one, with the flags this machine needs to run it headless as root.
 */
import { existsSync } from "node:fs";

export const CHROMIUM_FLAGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** `CHROMIUM_PATH`, or the first Debian chromium binary present. */
export function chromiumPath(): string | undefined {
  return process.env.CHROMIUM_PATH ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
}
