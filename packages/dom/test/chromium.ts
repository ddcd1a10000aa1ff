/**
 * The installed Chromium, driven through playwright-core, as an independent reference: its XML
 * parser (DOMParser) for the W3C conformance test and its selector engine (querySelectorAll) for
 * the selector differential. Never downloads a browser: it runs `CHROMIUM_PATH` or
 * `/usr/bin/chromium`, and fails loudly when neither exists.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Chromium {
  readonly page: Page;
  readonly version: string;
  close(): Promise<void>;
}

/** Starts Chromium with one blank page. */
export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}; install it or set CHROMIUM_PATH`);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  return { page, version: browser.version(), close: () => browser.close() };
}
