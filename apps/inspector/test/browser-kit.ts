/**
 * The browser tests' common set-up: the built page served for a store on a free port, opened in
 * Debian's chromium through playwright-core (never a downloaded browser), with the page's dialogs
 * and uncaught errors collected for the tests to assert on. Screenshots go to test-results/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Store } from "@strata/store";
import { type Browser, chromium, type Page } from "playwright-core";
import { buildApp, CHROMIUM_FLAGS, chromiumPath, needsBuild, type Running, STATIC_DIR, startServer } from "../src/index.ts";

export const SHOTS = join(import.meta.dirname, "..", "test-results");

export interface InspectorPage {
  readonly srv: Running;
  readonly browser: Browser;
  readonly page: Page;
  /** Messages of every dialog the page opened (each dismissed). */
  readonly dialogs: string[];
  /** Messages of every uncaught error in the page. */
  readonly pageErrors: string[];
  close(): Promise<void>;
}

/** Serves `store` and opens a 1400×900 page on it; throws, saying what to install, without chromium. */
export async function openInspector(store: Store): Promise<InspectorPage> {
  const executablePath = chromiumPath();
  if (executablePath === undefined)
    throw new Error("no chromium found: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH");
  mkdirSync(SHOTS, { recursive: true });
  if (needsBuild()) await buildApp();
  const srv = await startServer({ store, port: 0, staticDir: STATIC_DIR, pollMs: 30 });
  const browser = await chromium.launch({ executablePath, args: [...CHROMIUM_FLAGS], headless: true });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  return {
    srv,
    browser,
    page,
    dialogs,
    pageErrors,
    close: async () => {
      await browser.close();
      await srv.close();
    },
  };
}
