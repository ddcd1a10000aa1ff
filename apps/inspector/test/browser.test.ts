/**
 * IN-10 … IN-16 in a real browser: Debian's chromium driven by playwright-core (never a
 * downloaded browser). Open a recorded session, scrub back and see the old tree, diff two events,
 * follow a run live, and check hostile tool output renders as text. Screenshots of each step go to
 * apps/inspector/test-results/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { runAgent, Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, CHROMIUM_FLAGS, chromiumPath, needsBuild, type Running, STATIC_DIR, startServer } from "../src/index.ts";
import { type Fixture, recordedSession, registry, Scripted } from "./fixture.ts";

const CHROMIUM = chromiumPath();
const SHOTS = join(import.meta.dirname, "..", "test-results");

let fx: Fixture;
let srv: Running;
let browser: Browser;
let page: Page;
const dialogs: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  if (CHROMIUM === undefined)
    throw new Error("no chromium found: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH");
  mkdirSync(SHOTS, { recursive: true });
  fx = await recordedSession();
  if (needsBuild()) await buildApp();
  srv = await startServer({ store: fx.store, port: 0, staticDir: STATIC_DIR, pollMs: 30 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS], headless: true });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on("pageerror", (e) => pageErrors.push(e.message));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
  fx?.cleanup();
});

describe("IN-10 … IN-16 the inspector in Chromium", () => {
  it("opens a recorded session from the list", async () => {
    await page.goto(srv.url);
    await page.locator(`a[data-session="${fx.session.id}"]`).click();
    await page.locator('[data-test="tree"]').waitFor();
    await expect
      .poll(() => page.locator('[data-test="position"]').textContent())
      .toBe(`${fx.session.head.depth} / ${fx.session.head.depth}`);
    expect(await page.locator('[data-test="tree"]').textContent()).toContain("submitted");
    expect(await page.locator('[data-test="graph"] text').allTextContents()).toEqual(expect.arrayContaining(["main", "alt"]));
    await shot("1-session");
  });

  it("scrubbing back shows the tree as it was at that event", async () => {
    const user = fx.session.log().find((e) => e.label === "turn.user");
    const early = user?.depth as number;
    await page.locator('[data-test="events"]').focus();
    await page.keyboard.press("Home");
    for (let i = 1; i < early; i++) await page.keyboard.press("ArrowDown");
    await expect.poll(() => page.locator('[data-test="position"]').textContent()).toBe(`${early} / ${fx.session.head.depth}`);
    await page.locator(`[data-test="tree"][data-at="${user?.id}"]`).waitFor();
    const tree = (await page.locator('[data-test="tree"]').textContent()) ?? "";
    expect(tree).not.toContain("submitted");
    expect(tree).not.toContain("Looking it up");
    expect(await page.locator('[data-test="live"]').textContent()).toContain("paused");
    await shot("2-scrubbed");
    // the range input scrubs too
    await page.locator('[data-test="scrubber"]').fill("2");
    await expect.poll(() => page.locator('[data-test="position"]').textContent()).toBe(`3 / ${fx.session.head.depth}`);
  });

  it("selector search highlights matches", async () => {
    await page.keyboard.press("End");
    await page.locator('[data-test="events"]').focus();
    await page.keyboard.press("End");
    await page.locator('[data-test="select"]').fill("call[status=executed]");
    await page.locator('[data-test="select"]').press("Enter");
    await expect.poll(() => page.locator('[data-test="hits"]').textContent()).toBe("3 matches");
    expect(await page.locator(".tree .hit").count()).toBe(3);
    await shot("3-search");
  });

  it("two selected events give their diff", async () => {
    const rows = page.locator('[data-test="events"] .row');
    const turnUser = fx.session.log().find((e) => e.label === "turn.user")?.depth as number;
    await page.locator(`[data-test="events"] .row[data-row="${turnUser - 1}"]`).click({ modifiers: ["Shift"] });
    await page.locator('[data-test="events"]').focus();
    await page.keyboard.press("End");
    await page.locator('[data-tab="diff"]').click();
    await expect.poll(async () => (await page.locator('[data-test="diff"]').textContent()) ?? "").toContain("+ #");
    const diff = (await page.locator('[data-test="diff"]').textContent()) ?? "";
    expect(diff).toContain("<turn");
    expect(await rows.count()).toBeGreaterThan(0);
    await shot("4-diff");
  });

  it("hostile tool output is shown as text, never as HTML", async () => {
    await page.locator('[data-tab="tree"]').click();
    await expect.poll(async () => (await page.locator('[data-test="tree"]').textContent()) ?? "").toContain("<img src=x onerror=alert(1)>");
    expect(await page.locator('[data-test="tree"] img').count()).toBe(0);
    expect(await page.locator('[data-test="tree"] script').count()).toBe(0);
    expect((await page.locator('[data-test="tree"]').textContent()) ?? "").toContain("␛[31mred␛[0m");
    await page.locator('[data-tab="prompt"]').click();
    await expect.poll(async () => (await page.locator('[data-test="prompt"]').textContent()) ?? "").toContain("<script>alert(2)</script>");
    expect(await page.locator('[data-test="prompt"] img, [data-test="prompt"] script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot("5-hostile-as-text");
    await page.locator('[data-tab="tree"]').click();
  });

  it("follows a run live: new events appear and the tree updates without reload", async () => {
    await page.locator('[data-test="events"]').focus();
    await page.keyboard.press("End");
    await expect.poll(() => page.locator('[data-test="live"]').textContent()).toContain("live, following");
    const before = fx.session.head.depth;
    // a second writer on the same file: a new run on this session
    const writer = Session.open(openStore(fx.path), fx.session.id).session;
    const run = runAgent(writer, {
      model: new Scripted(
        [
          { text: "again" },
          { text: "one more", tool: "todo_add", args: { text: "LIVE-MARKER" } },
          { text: "done", tool: "submit", args: {} },
        ],
        150,
      ),
      registry,
      task: "do it live",
    });
    await expect.poll(() => page.locator('[data-test="position"]').textContent(), { timeout: 15_000 }).not.toBe(`${before} / ${before}`);
    await run;
    const after = writer.head.depth;
    await expect.poll(() => page.locator('[data-test="position"]').textContent(), { timeout: 15_000 }).toBe(`${after} / ${after}`);
    await expect
      .poll(async () => (await page.locator('[data-test="tree"]').textContent()) ?? "", { timeout: 15_000 })
      .toContain("do it live");
    await shot("6-live");
    writer.commit([["ins", nodeId(2), null, { tag: "note", text: "late" }]], { label: "note.add" });
    await expect.poll(() => page.locator('[data-test="position"]').textContent(), { timeout: 10_000 }).toBe(`${after + 1} / ${after + 1}`);
    expect(pageErrors).toEqual([]);
  });
});
