/**
 * IN-27 in a real browser (Debian's chromium through playwright-core): a call that ran on a branch
 * of its own — an imported sub-agent run carries `branch="agent-…"` (IM-24) — links to that
 * branch's conversation, and the link opens it there.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bodyOf, Session } from "@strata/engine";
import { openStore, type Store } from "@strata/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InspectorPage, openInspector } from "./browser-kit.ts";

let dir: string;
let store: Store;
let session: Session;
let ui: InspectorPage;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "strata-branch-link-"));
  store = openStore(join(dir, "s.db"));
  session = Session.create(store, { title: "a session with a sub-agent" });
  const base = session.head.id;
  session.commit((d) => {
    const q = d.appendChild(bodyOf(d.tree).id, { tag: "turn", attrs: { role: "user" } });
    d.appendChild(q, { tag: "text", text: "Count the lines of every note." });
    const a = d.appendChild(bodyOf(d.tree).id, { tag: "turn", attrs: { role: "assistant", status: "complete" } });
    const c = d.appendChild(a, { tag: "call", attrs: { id: "toolu_a1", tool: "Agent", status: "executed", branch: "agent-a7c1e09" } });
    d.appendChild(c, { tag: "args", text: '{"prompt":"Count lines in notes/"}' });
    d.appendChild(c, { tag: "result", text: "7 lines in total." });
    const b = d.appendChild(a, { tag: "call", attrs: { id: "toolu_b2", tool: "Bash", status: "executed" } });
    d.appendChild(b, { tag: "args", text: "{}" });
  });
  const side = session.fork(base, { name: "agent-a7c1e09" });
  side.commit((d) => {
    const q = d.appendChild(bodyOf(d.tree).id, { tag: "turn", attrs: { role: "user" } });
    d.appendChild(q, { tag: "text", text: "Count lines in notes/" });
  });
  side.close();
  ui = await openInspector(store);
}, 90_000);

afterAll(async () => {
  await ui?.close();
  session?.close();
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("IN-27 a call's branch", () => {
  it("a call that names a branch links to its conversation; a call that names none has no link", async () => {
    const { page, srv } = ui;
    await page.goto(`${srv.url}#/s/${session.id}?tab=conversation`);
    const conv = page.locator('[data-test="conversation"]');
    await conv.waitFor();
    const link = page.locator('[data-test="call"][data-tool="Agent"] [data-test="call-branch"]');
    expect(await link.textContent()).toBe("↳ agent-a7c1e09");
    expect(await page.locator('[data-test="call"][data-tool="Bash"] [data-test="call-branch"]').count()).toBe(0);
    await link.click();
    await page.waitForURL(/branch=agent-a7c1e09/);
    await page.locator('[data-test="conversation"] [data-test="turn"][data-role="user"]').first().waitFor();
    expect(await page.locator('[data-test="conversation"] [data-test="message"]').allTextContents()).toEqual(["Count lines in notes/"]);
    // On the branch itself no call links to it.
    expect(await page.locator('[data-test="call-branch"]').count()).toBe(0);
    expect(ui.pageErrors).toEqual([]);
  });
});
