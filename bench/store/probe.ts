/**
 * A fresh process that resumes a session and reports how long it took and its peak RSS (used by
 * bench/store/resume.ts; each probe is one cold start: modules are imported before the clock starts).
 *
 *   node --import tsx bench/store/probe.ts <mode> <db> <session> [arg]
 *
 * Modes:
 *   ready       open, materialize the head (snapshot + tail), read the last 50 steps' content
 *   half        the same at the event half-way through the session (cold)
 *   full        every event of the branch with its payload decoded (what peers return)
 *   raw-full    the raw baseline: every row of the plain table, payload decoded
 *   raw-read    the raw baseline without decoding
 *   full-read   every event of the branch without decoding
 */
import type { Tree } from "@strata/dom";
import { materializeVersion, Session } from "@strata/engine";
import { type EventId, openStore, type SessionId } from "@strata/store";
import Database from "better-sqlite3";
import { peakRssKb } from "../lib/rss.ts";

const [mode, db, session, arg] = process.argv.slice(2) as [string, string, string, string | undefined];

/** The content of the last `n` turns under <body>: what the next prompt and the screen need. */
function lastSteps(tree: Tree, n: number): number {
  let chars = 0;
  let turn = tree.rec(3)?.last ?? 0;
  for (let i = 0; i < n && turn !== 0; i++) {
    chars += (tree.get(turn)?.textContent() ?? "").length;
    turn = tree.rec(turn)?.prev ?? 0;
  }
  return chars;
}

const t0 = performance.now();
let detail = 0;
switch (mode) {
  case "ready": {
    const store = openStore(db);
    const { session: s } = Session.open(store, session as SessionId);
    detail = lastSteps(s.tree, 50);
    break;
  }
  case "half": {
    const store = openStore(db);
    const head = store.branch(session as SessionId, "main")?.head as EventId;
    const at = store.atDepth(head, Math.floor(Number(store.eventMeta(head)?.depth) / 2)) as { id: EventId };
    detail = lastSteps(materializeVersion(store, at.id).tree, 50);
    break;
  }
  case "full":
  case "full-read": {
    // Every event's content, in chain order, through the store's narrow payload read.
    const store = openStore(db);
    const head = store.branch(session as SessionId, "main")?.head as EventId;
    for (let depth = 0; ; ) {
      const batch = store.chainData(head, depth, 5000);
      if (batch.length === 0) break;
      for (const data of batch) detail += mode === "full" ? ((JSON.parse(data) as { ops?: unknown[] }).ops ?? []).length : data.length;
      depth += batch.length;
    }
    break;
  }
  case "raw-full":
  case "raw-read": {
    const raw = new Database(db, { readonly: true });
    for (const data of raw.prepare("SELECT data FROM log WHERE session = ? ORDER BY id").pluck().iterate(session) as Iterable<string>)
      detail += mode === "raw-full" ? ((JSON.parse(data) as { ops?: unknown[] }).ops ?? []).length : data.length;
    break;
  }
  default:
    throw new Error(`unknown probe mode ${mode}`);
}
const ms = performance.now() - t0;
process.stdout.write(`${JSON.stringify({ ms, maxRssKb: peakRssKb(), detail, arg: arg ?? null })}\n`);
