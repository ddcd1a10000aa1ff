/**
 * IN-25 the files tab in a real browser (Debian's chromium through playwright-core): the
 * workspace at the selected event, a file's content as it was there, and the file diff against a
 * shift-clicked event. Screenshots go to apps/inspector/test-results/.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../src/index.ts";
import { openInspector, SHOTS } from "./browser-kit.ts";
import { PNG, sha256, type WorkspaceFixture, workspaceSession } from "./workspace-fixture.ts";

let fx: WorkspaceFixture;
let srv: Running;
let browser: Browser;
let page: Page;
let dialogs: string[] = [];
let pageErrors: string[] = [];

const text = async (selector: string): Promise<string> => (await page.locator(selector).textContent()) ?? "";
const row = (event: { depth: number }) => page.locator(`[data-test="events"] .row[data-row="${event.depth - 1}"]`);

beforeAll(async () => {
  fx = workspaceSession();
  ({ srv, browser, page, dialogs, pageErrors } = await openInspector(fx.store));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
  fx?.cleanup();
});

describe("IN-25 the files tab in Chromium", () => {
  it("shows the workspace at the selected event, and follows the selection", async () => {
    await page.goto(`${srv.url}#/s/${fx.session.id}`);
    await page.locator('[data-test="tree"]').waitFor();
    await page.locator('[data-tab="files"]').click();
    await page.locator(`[data-test="files"][data-at="${fx.more.id}"]`).waitFor();
    expect(await text('[data-test="files-summary"]')).toContain(`workspace at event ${fx.more.id}: 6 files`);
    const paths = () => page.locator('[data-test="files"] tr.file td.path').allTextContents();
    expect(await paths()).toEqual(["NEW.md", "assets/logo.png", "bin/run.sh", "hostile.txt", "link", "src/main.ts"]);
    expect(await page.locator('[data-test="files"] tr.file[data-path="bin/run.sh"] td.mode').textContent()).toBe("755");
    // the baseline: the file the last event deleted is there, the one the edit added is not
    await row(fx.baseline).click();
    await page.locator(`[data-test="files"][data-at="${fx.baseline.id}"]`).waitFor();
    expect(await paths()).toEqual(["assets/logo.png", "bin/run.sh", "docs/a file é.md", "hostile.txt", "link", "src/main.ts"]);
    // no comparison base yet: the hint says how to get one
    expect(await text('[data-test="file-diff-hint"]')).toContain("Shift-click an event");
    await page.screenshot({ path: join(SHOTS, "files-1-baseline.png"), fullPage: true });
    // before the baseline there is no workspace
    await row(fx.genesis).click();
    await page.locator(`[data-test="files"][data-at="${fx.genesis.id}"]`).waitFor();
    expect(await text('[data-test="files"]')).toContain(`No workspace is recorded at event ${fx.genesis.id}`);
    expect(pageErrors).toEqual([]);
  });

  it("a clicked file shows its content as it was at the selected event, and stays open across events", async () => {
    await row(fx.baseline).click();
    await page.locator(`[data-test="files"][data-at="${fx.baseline.id}"]`).waitFor();
    await page.locator('[data-test="files"] tr.file[data-path="src/main.ts"]').click();
    await expect.poll(() => text('[data-test="file"]')).toContain("console.log('one');");
    await row(fx.more).click();
    await page.locator(`[data-test="files"][data-at="${fx.more.id}"]`).waitFor();
    await expect.poll(() => text('[data-test="file"]')).toContain("console.log('two');");
    expect(await text('[data-test="file"]')).not.toContain("'one'");
    // a binary file: its size and hash, never its bytes
    await page.locator('[data-test="files"] tr.file[data-path="assets/logo.png"]').click();
    await expect
      .poll(() => text('[data-test="file"]'))
      .toBe(`binary file: ${PNG.length + 3} bytes, sha256 ${sha256(Uint8Array.from([...PNG, 1, 2, 3]))}`);
    // a symlink: its target
    await page.locator('[data-test="files"] tr.file[data-path="link"]').click();
    await expect.poll(() => text('[data-test="file"]')).toBe("symbolic link → src/main.ts");
    // hostile content is text: no element from it, escapes shown as symbols
    await page.locator('[data-test="files"] tr.file[data-path="hostile.txt"]').click();
    await expect.poll(() => text('[data-test="file"]')).toContain("<img src=x onerror=alert(1)>");
    expect(await text('[data-test="file"]')).toContain("␛[31mred␛[0m");
    expect(await page.locator('[data-test="files"] img, [data-test="files"] script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await page.screenshot({ path: join(SHOTS, "files-2-content.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });

  it("with a shift-clicked base, the file diff: added, modified, deleted, a unified diff for text, sizes and hashes for binary", async () => {
    await row(fx.baseline).click({ modifiers: ["Shift"] });
    // the tab stays on the files (the tree diff is one click away)
    await page.locator(`[data-test="file-diff"][data-from="${fx.baseline.id}"][data-to="${fx.more.id}"]`).waitFor();
    expect(await page.locator('[data-tab="files"]').getAttribute("class")).toBe("on");
    expect(await text('[data-test="file-diff"]')).toContain(`5 files changed from event ${fx.baseline.id} to event ${fx.more.id}`);
    const changes = await page
      .locator('[data-test="file-diff"] .fchange')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute("data-change")} ${e.getAttribute("data-path")}`));
    expect(changes).toEqual([
      "added NEW.md",
      "modified assets/logo.png",
      "deleted docs/a file é.md",
      "modified hostile.txt",
      "modified src/main.ts",
    ]);
    const main = page.locator('[data-test="file-diff"] .fchange[data-path="src/main.ts"]');
    expect(await main.locator("pre.udiff .del").allTextContents()).toEqual(["-  console.log('one');\n", "-  return 1;\n"]);
    expect(await main.locator("pre.udiff .add").allTextContents()).toEqual(["+  console.log('two');\n", "+  return 2;\n"]);
    expect(await main.locator("pre.udiff .hunk").allTextContents()).toEqual(["@@ -1,4 +1,4 @@\n"]);
    const logo = page.locator('[data-test="file-diff"] .fchange[data-path="assets/logo.png"] [data-test="binary"]');
    expect(await logo.textContent()).toBe(
      `binary: ${PNG.length} → ${PNG.length + 3} bytes, sha256 ${sha256(PNG)} → ${sha256(Uint8Array.from([...PNG, 1, 2, 3]))}`,
    );
    expect(await text('[data-test="file-diff"] .fchange[data-path="hostile.txt"]')).toContain("same bytes; mode 644 → 755");
    await page.screenshot({ path: join(SHOTS, "files-3-diff.png"), fullPage: true });
    // another selected event: the diff from the same base to it
    await row(fx.edit).click();
    await page.locator(`[data-test="file-diff"][data-from="${fx.baseline.id}"][data-to="${fx.edit.id}"]`).waitFor();
    const now = await page.locator('[data-test="file-diff"] .fchange').evaluateAll((els) => els.map((e) => e.getAttribute("data-path")));
    expect(now).toEqual(["NEW.md", "src/main.ts"]);
    // the tree diff tab still answers for the same base
    await page.locator('[data-tab="diff"]').click();
    await expect.poll(() => text('[data-test="diff"]')).toContain(`from event ${fx.baseline.id} to event ${fx.edit.id}`);
    expect(pageErrors).toEqual([]);
  });
});
