/**
 * What a 100,000-event session costs to open in the inspector (issue 8): the three requests the
 * session page makes (session, the first page of events, the windowed tree at the head), their
 * sizes, and — when Debian's chromium is installed — the time from navigation to the tree shown,
 * and to the tree of the first event after scrubbing to it. The baseline is the store's own read
 * of the same head (materialize) in the same process.
 *
 * Run: npx tsx bench/run.ts inspector
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { materialize } from "@strata/engine";
import { buildApp, CHROMIUM_FLAGS, chromiumPath, needsBuild, STATIC_DIR, startServer } from "@strata/inspector";
import { openStore } from "@strata/store";
import { chromium } from "playwright-core";
import { buildSession } from "../lib/agent.ts";
import { type Aggregate, type BenchModule, byteValue, cell, isMain, progress, type RunResult, runAsScript } from "../lib/harness.ts";
import { type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "inspector";
const STEPS = Number(process.env.BENCH_STEPS ?? 33_334); // 3 events a step: 100,000 events
const CHROMIUM = chromiumPath();

const mod: BenchModule = {
  title: "Inspector: opening a 100,000-event session",
  async measure(): Promise<RunResult> {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-inspector-"));
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      progress(NAME, `building a session of ${STEPS * 3} events`);
      const store = openStore(join(dir, "s.db"));
      const { session, head } = buildSession(store, STEPS);
      if (needsBuild()) await buildApp();
      const srv = await startServer({ store, port: 0, staticDir: STATIC_DIR });
      const get = async (path: string): Promise<{ ms: number; bytes: number }> => {
        const t0 = performance.now();
        const body = await (await fetch(new URL(path, srv.url))).arrayBuffer();
        return { ms: performance.now() - t0, bytes: body.byteLength };
      };
      const first: Record<string, number[]> = { session: [], events: [], tree: [], materialize: [] };
      progress(NAME, "API requests");
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        materialize(store, head);
        first.materialize?.push(performance.now() - t0);
        first.session?.push((await get(`/api/sessions/${session}`)).ms);
        first.events?.push((await get(`/api/sessions/${session}/events?offset=0&limit=500`)).ms);
        const tree = await get(`/api/sessions/${session}/tree?at=${head - i}`); // a different event each time: not cached
        first.tree?.push(tree.ms);
        values.treeBytes = tree.bytes;
      }
      values.lastPageMs = (await get(`/api/sessions/${session}/events?offset=${STEPS * 3 - 500}&limit=500`)).ms;
      for (const [k, v] of Object.entries(first)) metrics[k] = summarize(v, "ms");
      if (CHROMIUM !== undefined) {
        progress(NAME, "chromium: open and scrub");
        const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_FLAGS] });
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const open: number[] = [];
        const scrub: number[] = [];
        for (let i = 0; i < 3; i++) {
          const t0 = performance.now();
          await page.goto(`${srv.url}#/s/${session}`);
          await page.locator(`[data-test="tree"][data-at="${head}"]`).waitFor({ timeout: 60_000 });
          open.push(performance.now() - t0);
          await page.locator('[data-test="events"]').focus();
          const t1 = performance.now();
          await page.keyboard.press("Home");
          await page.locator('[data-test="tree"][data-at="1"]').waitFor({ timeout: 60_000 });
          scrub.push(performance.now() - t1);
          await page.goto("about:blank");
        }
        metrics.open = summarize(open, "ms");
        metrics.scrub = summarize(scrub, "ms");
        await browser.close();
      }
      await srv.close();
      values.events = STEPS * 3 + 1;
      store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    return [
      `### ${mod.title}`,
      "",
      `A session of ${agg.values.events?.median.toLocaleString("en-US")} events (the store benchmarks' agent workload) served by \`strata serve\`. The session page makes three requests; the tree comes windowed (long child lists and texts cut to what a screen shows). Baseline: \`materialize\` of the head in the server's process.`,
      "",
      table(
        [
          "GET session",
          "GET first 500 events",
          "GET tree at an event",
          "tree response",
          "materialize (baseline)",
          "Chromium: open → tree shown",
          "Chromium: scrub to event 1",
        ],
        [
          [
            cell(agg, "session"),
            cell(agg, "events"),
            cell(agg, "tree"),
            byteValue(agg, "treeBytes"),
            cell(agg, "materialize"),
            cell(agg, "open"),
            cell(agg, "scrub"),
          ],
        ],
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const open = agg.metrics.open?.median;
    return [
      `**REPORTED** — opening a ${agg.values.events?.median.toLocaleString("en-US")}-event session: API ${cell(agg, "tree")} for the tree; in Chromium ${open === undefined ? "not measured (no chromium)" : `${Math.round(open)} ms to the tree shown`}`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
