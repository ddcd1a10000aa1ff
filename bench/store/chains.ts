/**
 * Store benchmark 3 — chain reads in shared files and snapshot directories (review 2, ST-7, ST-13).
 *
 * - **chains**: one file holding S sessions of 600 events each, appended round-robin (ids
 *   interleaved, as when many sessions share a store). For the first session: the last 128 events
 *   (a snapshot + tail read) and the whole chain, next to the same reads in a file that holds that
 *   session alone. ST-7 promises one indexed range read per span whatever else the file holds.
 * - **directories**: `putSnapshot` of a page directory where one page changed since the previous
 *   snapshot, and `nearestSnapshot` (chunks cached), for a dense directory (1,200 pages, all set),
 *   the rewind pattern (48,000 pages, one in 16 set: one line of history per id block) and a sparse
 *   one (48,000 pages, one in 1,024 set); plus the directory's bytes.
 *
 * Run: npx tsx bench/store/chains.ts (the runner's store group does not list it yet)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventId, openStore, type SessionId, type SqliteStore, type Store } from "@strata/store";
import {
  type Aggregate,
  type BenchModule,
  byteValue,
  cell,
  isMain,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  targetLine,
} from "../lib/harness.ts";
import { interleave, type Sample, table } from "../lib/stats.ts";

const NAME = "chains";
const SHARED = Number(process.env.BENCH_SESSIONS ?? 1000);
const STEPS = 600;
const TAIL = 128;
const PAYLOAD = JSON.stringify({ ops: [["ins", 3, null, { tag: "m", text: "x".repeat(300) }]] });

/** A file with `sessions` sessions of STEPS events, appended round-robin; returns the first session's head. */
function build(dir: string, sessions: number): { store: Store; head: EventId } {
  const store = openStore(join(dir, `shared-${sessions}.db`));
  const heads: { id: SessionId; head: EventId }[] = [];
  for (let i = 0; i < sessions; i++) {
    const { session, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
    heads.push({ id: session.id, head: genesis.id });
  }
  const db = (store as SqliteStore).database;
  db.exec("BEGIN");
  for (let k = 0; k < STEPS; k++)
    for (const s of heads) s.head = (store.append(s.id, "main", s.head, [{ kind: "patch@1", data: PAYLOAD }])[0] as { id: EventId }).id;
  db.exec("COMMIT");
  db.pragma("wal_checkpoint(TRUNCATE)");
  return { store, head: (heads[0] as { head: EventId }).head };
}

const DIRECTORIES = [
  { key: "dense", label: "dense: 1,200 pages, all set", pages: 1200, every: 1 },
  { key: "rewind", label: "rewind pattern: 48,000 pages, 1 in 16 set", pages: 48_000, every: 16 },
  { key: "sparse", label: "sparse: 48,000 pages, 1 in 1,024 set", pages: 48_000, every: 1024 },
] as const;

function directories(metrics: Record<string, Sample>, values: Record<string, number>): void {
  for (const d of DIRECTORIES) {
    const store = openStore(":memory:");
    const { session, genesis } = store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
    let head = genesis.id;
    const events: EventId[] = [];
    for (let i = 0; i < 4000; i++) {
      head = (store.append(session.id, "main", head, [{ kind: "patch@1", data: "{}" }])[0] as { id: EventId }).id;
      events.push(head);
    }
    const pages: (string | null)[] = new Array(d.pages).fill(null);
    const set: number[] = [];
    for (let i = 0; i < d.pages; i += d.every) {
      pages[i] = store.putBlob(`page ${i}`);
      set.push(i);
    }
    const fresh = Array.from({ length: 4000 }, (_, k) => store.putBlob(`page v${k}`));
    store.putSnapshot(events[0] as EventId, "h", pages);
    const r = interleave(
      {
        put: (k) => {
          pages[set[(k * 7919) % set.length] as number] = fresh[k % fresh.length] as string;
          store.putSnapshot(events[1 + (k % 3998)] as EventId, "h", pages);
        },
        read: (k) => store.nearestSnapshot(events[1 + (k % 3998)] as EventId),
      },
      { iterations: 15, minSampleMs: 5 },
    );
    metrics[`put.${d.key}`] = r.put;
    metrics[`read.${d.key}`] = r.read;
    const db = (store as SqliteStore).database;
    values[`dirBytes.${d.key}`] = db.prepare("SELECT length(pages) FROM snapshots ORDER BY event DESC LIMIT 1").pluck().get() as number;
    store.close();
  }
}

const mod: BenchModule = {
  title: "Chains in shared files, snapshot directories",
  measure(): RunResult {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-chains-"));
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    try {
      progress(NAME, "building a file with one session");
      const alone = build(dir, 1);
      progress(NAME, `building a file with ${SHARED} interleaved sessions`);
      const shared = build(dir, SHARED);
      progress(NAME, "chain reads");
      const r = interleave(
        {
          tailAlone: () => alone.store.chain(alone.head, STEPS + 1 - TAIL),
          tailShared: () => shared.store.chain(shared.head, STEPS + 1 - TAIL),
          fullAlone: () => alone.store.chain(alone.head),
          fullShared: () => shared.store.chain(shared.head),
        },
        { iterations: 21, minSampleMs: 5 },
      );
      Object.assign(metrics, r);
      values.tailRatio = r.tailShared.median / r.tailAlone.median;
      values.fullRatio = r.fullShared.median / r.fullAlone.median;
      alone.store.close();
      shared.store.close();
      progress(NAME, "snapshot directories");
      directories(metrics, values);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `One session of ${STEPS} events read from a file that holds it alone, and from a file where ${SHARED.toLocaleString("en-US")} sessions were appended round-robin (ids interleaved). *Tail*: the last ${TAIL} events (what a resume reads after its snapshot).`,
      "",
      table(
        ["read", "alone", `${SHARED.toLocaleString("en-US")} sessions interleaved`, "interleaved / alone"],
        [
          [`last ${TAIL} events`, cell(agg, "tailAlone"), cell(agg, "tailShared"), ratio(agg, "tailRatio")],
          [`whole chain (${STEPS + 1} events)`, cell(agg, "fullAlone"), cell(agg, "fullShared"), ratio(agg, "fullRatio")],
        ],
      ),
      "",
      "Snapshot directories: `putSnapshot` with one page changed since the previous snapshot, `nearestSnapshot` with chunks cached, and the directory row's bytes.",
      "",
      table(
        ["directory", "putSnapshot", "nearestSnapshot", "directory bytes"],
        DIRECTORIES.map((d) => [d.label, cell(agg, `put.${d.key}`), cell(agg, `read.${d.key}`), byteValue(agg, `dirBytes.${d.key}`)]),
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    return [
      targetLine(
        agg,
        `ST-7: reads of a session's chain cost the same with ${SHARED} sessions interleaved in the file`,
        [
          { key: "tailRatio", label: "tail" },
          { key: "fullRatio", label: "whole chain" },
        ],
        "<=",
        2,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
