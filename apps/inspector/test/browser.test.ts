/**
 * IN-10 … IN-16 in a real browser: Debian's chromium driven by playwright-core (never a
 * downloaded browser). Open a recorded session, scrub back and see the old tree, diff two events,
 * follow a run live, and check hostile tool output renders as text. Screenshots of each step go to
 * apps/inspector/test-results/.
 */
import { createServer } from "node:http";
import { join } from "node:path";
import { runAgent } from "@strata/agent";
import { nodeId, toSnapshot } from "@strata/dom";
import { decodeSseMessage, materialize, Replica, Session } from "@strata/engine";
import { type EventId, openStore } from "@strata/store";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Running } from "../src/index.ts";
import { openInspector, SHOTS } from "./browser-kit.ts";
import { type Fixture, recordedSession, registry, Scripted } from "./fixture.ts";
import { CutProxy } from "./sse-clients.ts";

let fx: Fixture;
let srv: Running;
let browser: Browser;
let page: Page;
let dialogs: string[] = [];
let pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  fx = await recordedSession();
  ({ srv, browser, page, dialogs, pageErrors } = await openInspector(fx.store));
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
    // IN-26: the conversation shows the same output as text
    await page.locator('[data-tab="conversation"]').click();
    const result = page.locator('[data-test="conversation"] [data-test="call"][data-tool="fetch"] [data-test="result"]');
    await expect.poll(async () => ((await result.count()) > 0 ? await result.textContent() : "")).toContain("<img src=x onerror=alert(1)>");
    expect(await result.textContent()).toContain("<script>alert(2)</script>␛[31mred␛[0m");
    expect(await page.locator('[data-test="conversation"] img, [data-test="conversation"] script').count()).toBe(0);
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

  it("IN-18 Chromium's EventSource: a Replica fed what the page received equals the host across a rewind; the app follows it", async () => {
    if (!page.url().includes(`#/s/${fx.session.id}`)) {
      await page.goto(`${srv.url}#/s/${fx.session.id}`);
      await page.locator('[data-test="tree"]').waitFor();
    }
    const writer = Session.open(openStore(fx.path), fx.session.id).session;
    await page.evaluate((url) => {
      const w = globalThis as unknown as { __sse: { type: string; data: string; id: string }[] };
      w.__sse = [];
      const es = new EventSource(url);
      for (const kind of ["snapshot@1", "reset@1", "patch@1", "gone@1", "error@1"])
        es.addEventListener(kind, (e) =>
          w.__sse.push({ type: e.type, data: (e as MessageEvent).data, id: (e as MessageEvent).lastEventId }),
        );
    }, `/api/sessions/${fx.session.id}/stream?snapshot=1`);
    const received = async (): Promise<{ type: string; data: string; id: string }[]> =>
      page.evaluate(() => (globalThis as unknown as { __sse: { type: string; data: string; id: string }[] }).__sse);
    await expect.poll(async () => (await received()).length).toBeGreaterThan(0);
    const base = writer.head.id;
    writer.commit([["ins", nodeId(3), null, { tag: "note", text: "data: one\n\nevent: reset@1 é 😀" }]], { label: "note.add" });
    writer.commit([["ins", nodeId(3), null, { tag: "note", text: "two" }]], { label: "note.add" });
    await expect.poll(async () => (await received()).at(-1)?.id).toBe(String(writer.head.id));
    writer.rewind(base);
    writer.commit([["ins", nodeId(3), null, { tag: "note", text: "REWOUND-MARKER" }]], { label: "note.add" });
    const head = writer.head.id;
    await expect.poll(async () => (await received()).at(-1)?.id, { timeout: 10_000 }).toBe(String(head));
    const replica = new Replica();
    for (const m of await received()) replica.apply(decodeSseMessage({ event: m.type, data: m.data, id: m.id }));
    const types = (await received()).map((m) => m.type);
    expect(types[0]).toBe("snapshot@1");
    expect(types).toContain("reset@1");
    expect(toSnapshot(replica.tree)).toBe(toSnapshot(materialize(writer.store, head as EventId)));
    // The app took the reset: the timeline is the new line, the tree shows its last event.
    const depth = writer.head.depth;
    await expect.poll(() => page.locator('[data-test="position"]').textContent(), { timeout: 10_000 }).toBe(`${depth} / ${depth}`);
    await expect
      .poll(async () => (await page.locator('[data-test="tree"]').textContent()) ?? "", { timeout: 10_000 })
      .toContain("REWOUND-MARKER");
    expect((await page.locator('[data-test="tree"]').textContent()) ?? "").not.toContain("two");
    await shot("7-after-rewind");
    expect(pageErrors).toEqual([]);
  });

  it("IN-11 switching branch (a lane, the branch menu) shows that branch's timeline and tree, and follows it", async () => {
    await page.goto(`${srv.url}#/s/${fx.session.id}`);
    await page.locator('[data-test="tree"]').waitFor();
    const alt = fx.store.branch(fx.session.id, "alt");
    const main = fx.store.branch(fx.session.id, "main");
    await page.locator('[data-test="graph"] g.lane', { hasText: "alt" }).click();
    await expect.poll(() => page.locator('[data-test="position"]').textContent()).toBe(`${alt?.headDepth} / ${alt?.headDepth}`);
    await page.locator(`[data-test="tree"][data-at="${alt?.head}"]`).waitFor();
    expect(await page.locator('[data-test="events"] .row').count()).toBe(alt?.headDepth);
    // The view follows the branch it shows: a commit on alt extends its timeline.
    const writer = Session.open(openStore(fx.path), fx.session.id, { branch: "alt" }).session;
    writer.commit([["ins", nodeId(3), null, { tag: "note", text: "ALT-MARKER" }]], { label: "note.add" });
    const depth = (alt?.headDepth as number) + 1;
    await expect.poll(() => page.locator('[data-test="position"]').textContent(), { timeout: 10_000 }).toBe(`${depth} / ${depth}`);
    await expect.poll(async () => (await page.locator('[data-test="tree"]').textContent()) ?? "").toContain("ALT-MARKER");
    await page.locator('[data-test="branch"]').selectOption("main");
    await expect.poll(() => page.locator('[data-test="position"]').textContent()).toBe(`${main?.headDepth} / ${main?.headDepth}`);
    await page.locator(`[data-test="tree"][data-at="${main?.head}"]`).waitFor();
    expect((await page.locator('[data-test="tree"]').textContent()) ?? "").not.toContain("ALT-MARKER");
    expect(pageErrors).toEqual([]);
  });

  it("IN-17 a page on another origin can neither read the API nor open the stream", async () => {
    // A page the inspector did not serve (no CSP of ours), on another port of 127.0.0.1.
    const evil = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>elsewhere</title>");
    });
    await new Promise<void>((ok) => evil.listen(0, "127.0.0.1", ok));
    // The browser reaches the inspector through a pass-through proxy that records what the server answered.
    const tap = new CutProxy(Number(new URL(srv.url).port), 0, 0, () => 0);
    const inspector = await tap.listen();
    const other = await browser.newPage();
    try {
      await other.goto(`http://127.0.0.1:${(evil.address() as { port: number }).port}/`);
      const api = new URL("/api/sessions", inspector).href;
      const stream = new URL(`/api/sessions/${fx.session.id}/stream`, inspector).href;
      const outcome = await other.evaluate(
        async ([api, stream]) => {
          const read = await fetch(api as string).then(
            (r) => `read ${r.status}`,
            (e: Error) => `blocked: ${e.name}`,
          );
          await fetch(api as string, { mode: "no-cors" }).catch(() => undefined);
          const sse = await new Promise<string>((resolve) => {
            const es = new EventSource(stream as string);
            es.addEventListener("patch@1", () => resolve("got a frame"));
            es.addEventListener("error", () => {
              es.close();
              resolve(`error, readyState ${es.readyState}`);
            });
            setTimeout(() => resolve("timeout"), 5000);
          });
          return { read, sse };
        },
        [api, stream],
      );
      expect(outcome.read).toMatch(/^blocked/);
      expect(outcome.sse).toMatch(/^error/);
      // What the server answered: the browser blocks the reading anyway; the server must not even serve it.
      await expect.poll(() => tap.statuses.length).toBeGreaterThanOrEqual(3);
      expect(tap.statuses.every((s) => s === 403)).toBe(true);
    } finally {
      await other.close();
      await tap.close();
      evil.close();
    }
  });
});
