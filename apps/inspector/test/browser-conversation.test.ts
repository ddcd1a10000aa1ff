/**
 * IN-26, IN-27 the conversation tab in a real browser (Debian's chromium through playwright-core):
 * a session recorded by the real loop shown as messages, calls with their arguments, streamed
 * output and results, each call's file diff, marks for calls not executed, failed, interrupted
 * and a cancelled run; selecting another event or branch shows the conversation there; a run
 * followed live appears as it runs; elements without a renderer of their own are shown by the
 * generic one; hostile text stays text. Screenshots go to /tmp/conversation-*.png.
 */
import { join } from "node:path";
import { LABEL, runAgent } from "@strata/agent";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore } from "@strata/store";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../src/index.ts";
import { openInspector, SHOTS } from "./browser-kit.ts";
import { type ConversationFixture, conversationSession, HOSTILE_OUTPUT, Play, tools } from "./conversation-fixture.ts";

let fx: ConversationFixture;
let srv: Running;
let browser: Browser;
let page: Page;
let dialogs: string[] = [];
let pageErrors: string[] = [];

const CONV = '[data-test="conversation"]';
const text = async (selector: string): Promise<string> => (await page.locator(selector).first().textContent()) ?? "";
const call = (tool: string, status?: string) =>
  page.locator(`${CONV} [data-test="call"][data-tool="${tool}"]${status === undefined ? "" : `[data-status="${status}"]`}`);

/** A screenshot of the whole conversation: the viewport made as tall as the pane's content for it. */
async function shot(name: string): Promise<void> {
  const height = await page.locator('[data-test="pane"]').evaluate((p) => p.scrollHeight + 160);
  await page.setViewportSize({ width: 1400, height: Math.min(Math.max(900, height), 6000) });
  await page.screenshot({ path: join(SHOTS, `conversation-${name}.png`) });
  await page.setViewportSize({ width: 1400, height: 900 });
}

beforeAll(async () => {
  fx = await conversationSession();
  ({ srv, browser, page, dialogs, pageErrors } = await openInspector(fx.store));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
  fx?.cleanup();
});

describe("IN-26, IN-27 the conversation tab in Chromium", () => {
  it("shows the messages, the calls with their arguments, output and results, file diffs and marks", async () => {
    await page.goto(`${srv.url}#/s/${fx.session.id}`);
    await page.locator('[data-test="tree"]').waitFor();
    await page.locator('[data-tab="conversation"]').click();
    await page.locator(`${CONV}[data-at="${fx.session.head.id}"]`).waitFor();
    expect(await page.locator(`${CONV} [data-test="turn"]`).count()).toBe(8);
    expect(await page.locator(`${CONV} [data-test="turn"][data-role="user"] [data-test="message"]`).allTextContents()).toEqual([
      "Fix the typo in the greeting (src/greet.ts) and note it in CHANGES.md.",
      "Run the slow tests.",
    ]);
    const replies = await page.locator(`${CONV} [data-test="turn"][data-role="assistant"] [data-test="message"]`).allTextContents();
    expect(replies[0]).toBe("Let me look at the greeting first.");
    expect(replies).toContain("Checking that it still builds.");
    expect(await text(`${CONV} [data-test="reasoning"]`)).toContain("The user wants a typo fixed.");
    // arguments, pretty-printed; the result the tool returned
    expect(await call("edit_file").locator('[data-test="args"]').textContent()).toBe(
      JSON.stringify({ path: "src/greet.ts", old: "Helo", new: "Hello" }, null, 2),
    );
    expect(await call("read_file", "executed").locator('[data-test="result"]').textContent()).toContain('return "Helo, " + name + "!";');
    // the shell command's streamed output and its result
    expect(await call("run", "executed").locator('[data-test="output"]').textContent()).toBe("compiling src/greet.ts\nbuilt 1 file\n");
    expect(await call("run", "executed").locator('[data-test="result"]').textContent()).toContain("exit code 0");
    // the file changes of the calls that made them, as unified diffs
    const edit = call("edit_file").locator('[data-test="call-files"]');
    await edit.waitFor();
    expect(await edit.locator(".fchange").getAttribute("data-path")).toBe("src/greet.ts");
    expect(await edit.locator("pre.udiff .del").allTextContents()).toEqual(['-  return "Helo, " + name + "!";\n']);
    expect(await edit.locator("pre.udiff .add").allTextContents()).toEqual(['+  return "Hello, " + name + "!";\n']);
    const write = call("write_file").locator('[data-test="call-files"]');
    await write.waitFor();
    expect(await write.locator(".fchange").getAttribute("data-change")).toBe("added");
    expect(await write.locator("pre.udiff .add").allTextContents()).toEqual(["+# Changes\n", "+\n", "+- greet: fixed the 'Helo' typo\n"]);
    // calls that changed no file have no file diff
    expect(await call("read_file", "executed").locator("strata-call-files").count()).toBe(0);
    expect(await call("run", "executed").locator('[data-test="call-files"]').count()).toBe(0);
    // marks: not executed (an unknown tool, invalid arguments), failed, interrupted, a cancelled run
    expect(await call("deploy").locator('[data-test="mark"]').allTextContents()).toEqual(["not executed"]);
    expect(await call("deploy").locator('[data-test="reason"]').textContent()).toContain('there is no tool named "deploy"');
    expect(await call("deploy").locator('[data-test="synthetic"]').count()).toBe(1);
    expect(await call("read_file", "not_executed").locator('[data-test="mark"]').allTextContents()).toEqual(["not executed"]);
    expect(await call("lint").locator('[data-test="mark"]').allTextContents()).toEqual(["failed: TypeError"]);
    expect(await call("run", "interrupted").locator('[data-test="mark"]').allTextContents()).toEqual(["interrupted"]);
    expect(await call("run", "interrupted").locator('[data-test="output"]').textContent()).toBe("started\n");
    expect(await call("submit").locator('[data-test="mark"]').allTextContents()).toEqual(["executed"]);
    const stops = page.locator(`${CONV} [data-test="stop"]`);
    expect(await stops.evaluateAll((els) => els.map((e) => e.getAttribute("data-reason")))).toEqual(["completed-by-tool", "cancelled"]);
    expect(await stops.nth(1).locator('[data-test="mark"]').textContent()).toBe("cancelled");
    // the view opened at its end (the newest items)
    const end = await page.locator('[data-test="pane"]').evaluate((p) => p.scrollHeight - p.scrollTop - p.clientHeight);
    expect(end).toBeLessThan(50);
    await shot("1-session");
    expect(pageErrors).toEqual([]);
  });

  it("hostile text from the model and from a tool is shown as text, never as HTML", async () => {
    const reply = page.locator(`${CONV} [data-test="message"]`, { hasText: "The docs page says" });
    expect(await reply.textContent()).toBe("The docs page says: <script>alert('model')</script><img src=x onerror=alert(9)> ␛[1mbold␛[0m");
    expect(await call("fetch_page").locator('[data-test="result"]').textContent()).toBe(HOSTILE_OUTPUT);
    expect(await page.locator(`${CONV} script, ${CONV} img`).count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it("selecting another event shows the conversation as it was there; event links and element links lead to the timeline and the tree", async () => {
    const firstEnd = fx.session.log().find((e) => e.label === LABEL.turnEnd);
    await page.locator(`[data-test="events"] .row[data-row="${(firstEnd?.depth as number) - 1}"]`).click();
    await page.locator(`${CONV}[data-at="${firstEnd?.id}"]`).waitFor();
    expect(await page.locator(`${CONV} [data-test="turn"]`).count()).toBe(2);
    expect(await call("read_file").locator('[data-test="mark"]').allTextContents()).toEqual(["pending"]);
    expect(await page.locator(`${CONV} [data-test="stop"]`).count()).toBe(0);
    expect(await text(CONV)).not.toContain("Helo'. Fixing");
    expect(await page.locator('[data-test="live"]').textContent()).toContain("paused");
    // back to the head, then a call's "settled at event N" selects that event
    await page.locator('[data-test="follow"]').click();
    await page.locator(`${CONV}[data-at="${fx.session.head.id}"]`).waitFor();
    const settled = call("edit_file").locator('[data-test="event-link"]');
    const id = Number(((await settled.textContent()) ?? "").replace("event ", ""));
    await settled.click();
    await page.locator(`${CONV}[data-at="${id}"]`).waitFor();
    expect(await call("edit_file").locator('[data-test="mark"]').allTextContents()).toEqual(["executed"]);
    expect(await call("write_file").locator('[data-test="mark"]').allTextContents()).toEqual(["pending"]);
    // an element's id opens the tree at the same event with the element highlighted
    const callId = await call("edit_file").getAttribute("data-id");
    await call("edit_file").locator("button.c-ref").last().click();
    await page.locator(`[data-test="tree"][data-at="${id}"] .node.hit[data-id="${callId}"]`).waitFor();
    expect(await page.locator('[data-tab="tree"]').getAttribute("class")).toBe("on");
    expect(pageErrors).toEqual([]);
  });

  it("switching branch shows that branch's conversation, in the same tab", async () => {
    await page.locator('[data-tab="conversation"]').click();
    await page.locator('[data-test="branch"]').selectOption("alt");
    const alt = fx.store.branch(fx.session.id, "alt");
    await page.locator(`${CONV}[data-at="${alt?.head}"]`).waitFor();
    expect(await page.locator('[data-tab="conversation"]').getAttribute("class")).toBe("on");
    const shown = await text(CONV);
    expect(shown).toContain("ALT-BRANCH: nothing else to do.");
    expect(shown).not.toContain("Run the slow tests.");
    expect(await page.locator(`${CONV} [data-test="stop"]`).evaluateAll((els) => els.map((e) => e.getAttribute("data-reason")))).toEqual([
      "completed-by-tool",
      "end-turn",
    ]);
    await page.locator('[data-test="branch"]').selectOption("main");
    await page.locator(`${CONV}[data-at="${fx.store.branch(fx.session.id, "main")?.head}"]`).waitFor();
    expect(await text(CONV)).not.toContain("ALT-BRANCH");
    expect(pageErrors).toEqual([]);
  });

  it("follows a run live: its turns, streamed output and stop appear as it runs", async () => {
    await expect.poll(() => page.locator('[data-test="live"]').textContent()).toContain("live, following");
    const writer = Session.open(openStore(fx.path), fx.session.id).session;
    let done = false;
    const run = runAgent(writer, {
      model: new Play(
        [
          {
            text: "Running the checks, one at a time, and reporting as they go.",
            calls: [{ name: "run", args: { command: "for i in 1 2 3 4; do echo tick $i; sleep 0.5; done" } }],
          },
          { text: "LIVE-MARKER: all four checks passed." },
        ],
        40,
        6,
      ),
      registry: tools(fx.root),
      task: "Run the checks live.",
    }).finally(() => {
      done = true;
    });
    // the task and the streaming reply appear before the run is over
    await expect.poll(() => text(CONV), { timeout: 15_000 }).toContain("Run the checks live.");
    const out = call("run", "running").locator('[data-test="output"]');
    await expect
      .poll(async () => ((await out.count()) > 0 ? ((await out.textContent()) ?? "") : ""), { timeout: 15_000 })
      .toContain("tick 1");
    expect(done).toBe(false);
    await shot("2-live-running");
    await run;
    await expect.poll(() => text(CONV), { timeout: 15_000 }).toContain("LIVE-MARKER: all four checks passed.");
    expect(await page.locator(`${CONV} [data-test="stop"]`).last().getAttribute("data-reason")).toBe("end-turn");
    const last = page.locator(`${CONV} [data-test="call"][data-tool="run"]`).last();
    expect(await last.locator('[data-test="output"]').textContent()).toBe("tick 1\ntick 2\ntick 3\ntick 4\n");
    // following kept the view at its end
    const end = await page.locator('[data-test="pane"]').evaluate((p) => p.scrollHeight - p.scrollTop - p.clientHeight);
    expect(end).toBeLessThan(50);
    expect(pageErrors).toEqual([]);
  });

  it("an element without a renderer of its own is shown whole by the generic one, its tag as text", async () => {
    const writer = Session.open(openStore(fx.path), fx.session.id).session;
    writer.commit(
      [
        [
          "ins",
          nodeId(3),
          writer.tree.get(3)?.lastChild?.id ?? null,
          {
            tag: "script",
            attrs: { onload: "alert(5)" },
            children: [{ tag: "img", attrs: { src: "x", onerror: "alert(6)" }, text: "GENERIC-MARKER" }],
          },
        ],
      ],
      { label: "note.add" },
    );
    const generic = page.locator(`${CONV} [data-test="generic"][data-tag="script"]`);
    await generic.waitFor({ timeout: 10_000 });
    expect(await generic.locator('[data-test="generic"][data-tag="img"]').textContent()).toContain("GENERIC-MARKER");
    expect(await generic.locator(".c-head").first().textContent()).toContain('<script onload="alert(5)">');
    expect(await page.locator(`${CONV} script, ${CONV} img`).count()).toBe(0);
    expect(dialogs).toEqual([]);
    await shot("3-generic");
    expect(pageErrors).toEqual([]);
  });
});
