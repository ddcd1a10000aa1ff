/**
 * A fresh process doing one thing through strata's public API (or its raw SQLite baseline) and
 * reporting how long it took and its peak RSS, for bench/api/public.ts. Modules are imported and
 * the step to commit is generated before the clock starts; nothing here imports a package's
 * `/internal` entry.
 *
 *   node --import tsx bench/api/probe.ts <mode> <args…>
 *
 * Modes (strata: `openStore` + `Session`; raw: bench/api/raw.ts):
 *   write <dir> <steps>          strata writer: `Session.create`, one `commit` per step, timed in
 *                                blocks; after each block the raw baseline inserts the same payloads
 *                                (read back with `store.chain`) into its table, timed too
 *   write-alone <db> <steps>     the strata writer alone: `Session.create` + one `commit` per step (its own peak RSS)
 *   raw-write <db> <steps>       the raw writer alone (its own peak RSS)
 *   all <db> <session>           `Session.open` + every message of `session.tree` (`select`) with its text
 *   half <db> <session> <event>  `Session.open` + `session.at(event)` + every message of that tree with its text
 *   fork <db> <session> <event>  `Session.open` + `session.fork(event)` + one `commit` of a step on the fork
 *   raw-all <db> <session>       open the raw file + every row decoded, messages counted
 *   raw-half <db> <session> <row>  the same for the rows up to `row`
 *   raw-fork <db> <session> <row>  open + a branch row at `row` + one event row, one transaction
 *
 * Output: one JSON line on stdout.
 */
import { join } from "node:path";
import { select, type Tree } from "@strata/dom";
import { Session } from "@strata/engine";
import { eventId, openStore, type SessionId } from "@strata/store";
import { peakRssKb } from "../lib/rss.ts";
import { type Content, RawSessionLog } from "./raw.ts";
import { BLOCK, MESSAGES, rawPayload, SEED, type Step, stepOps, steps } from "./workload.ts";

const [mode, a, b, c] = process.argv.slice(2) as [string, string, string, string | undefined];

/** Every message of `tree` with its content (`select` + each element's text). */
function readMessages(tree: Tree): Content {
  const out: Content = { messages: 0, chars: 0 };
  for (const e of select(tree, MESSAGES)) {
    out.messages++;
    out.chars += e.text.length;
  }
  return out;
}

/** A step that is not in the session (for the fork's commit). */
function extraStep(i: number): Step {
  const first = steps(1, 0, SEED + 1).next().value as Step;
  return { ...first, i };
}

function rss(): number {
  return peakRssKb();
}

function emit(result: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...result, maxRssKb: rss() })}\n`);
}

function write(dir: string, count: number): void {
  const store = openStore(join(dir, "strata.db"));
  const raw = RawSessionLog.create(join(dir, "raw.db"));
  const s = Session.create(store, { title: `bench ${count}` });
  const commit: number[] = [];
  const insert: number[] = [];
  const ratio: number[] = [];
  let half = 0;
  let halfRow = 0;
  let bytes = 0;
  const gen = steps(count);
  for (let done = 0; done < count; done += BLOCK) {
    const block: Step[] = [];
    for (let i = 0; i < BLOCK && done + i < count; i++) block.push(gen.next().value as Step);
    const from = s.head.depth;
    const t0 = performance.now();
    for (const step of block) {
      const meta = s.commit(stepOps(s.tree, step), { label: "step" });
      if (step.i === Math.floor(count / 2) - 1) half = Number(meta.id);
    }
    const t1 = performance.now();
    const events = store.chain(s.head.id, from, block.length);
    const t2 = performance.now();
    for (const e of events) {
      const row = raw.append(s.id, { ts: e.ts, kind: e.kind, label: e.label, data: e.data });
      if (Number(e.id) === half) halfRow = row;
    }
    const t3 = performance.now();
    for (const e of events) bytes += e.data.length;
    commit.push(((t1 - t0) / block.length) * 1000);
    insert.push(((t3 - t2) / block.length) * 1000);
    ratio.push((t1 - t0) / (t3 - t2));
  }
  const peak = rss();
  s.close();
  store.close();
  raw.close();
  process.stdout.write(
    `${JSON.stringify({ session: s.id, half, halfRow, commit, insert, ratio, bytesPerStep: bytes / count, maxRssKb: peak })}\n`,
  );
}

/** The strata writer alone (no raw inserts in its process): its peak RSS, as the raw writer's is measured. */
function writeAlone(path: string, count: number): void {
  const store = openStore(path);
  const s = Session.create(store, { title: `bench ${count}` });
  for (const step of steps(count)) s.commit(stepOps(s.tree, step), { label: "step" });
  const peak = rss();
  s.close();
  store.close();
  process.stdout.write(`${JSON.stringify({ maxRssKb: peak })}\n`);
}

function rawWrite(path: string, count: number): void {
  const raw = RawSessionLog.create(path);
  const insert: number[] = [];
  const gen = steps(count);
  for (let done = 0; done < count; done += BLOCK) {
    const block: string[] = [];
    for (let i = 0; i < BLOCK && done + i < count; i++) block.push(rawPayload(gen.next().value as Step));
    const t0 = performance.now();
    for (const data of block) raw.append("bench", { ts: Date.now(), kind: "patch@1", label: "step", data });
    insert.push(((performance.now() - t0) / block.length) * 1000);
  }
  const peak = rss();
  raw.close();
  process.stdout.write(`${JSON.stringify({ insert, maxRssKb: peak })}\n`);
}

switch (mode) {
  case "write":
    write(a, Number(b));
    break;
  case "raw-write":
    rawWrite(a, Number(b));
    break;
  case "write-alone":
    writeAlone(a, Number(b));
    break;
  case "all":
  case "half": {
    const t0 = performance.now();
    const { session } = Session.open(openStore(a), b as SessionId);
    const t1 = performance.now();
    const got = readMessages(mode === "all" ? session.tree : session.at(eventId(Number(c))));
    const t2 = performance.now();
    emit({ ms: t2 - t0, openMs: t1 - t0, opMs: t2 - t1, ...got });
    break;
  }
  case "fork": {
    const step = extraStep(1_000_000);
    const t0 = performance.now();
    const { session } = Session.open(openStore(a), b as SessionId);
    const t1 = performance.now();
    const fork = session.fork(eventId(Number(c)));
    fork.commit(stepOps(fork.tree, step), { label: "step" });
    const t2 = performance.now();
    emit({ ms: t2 - t0, openMs: t1 - t0, opMs: t2 - t1, branch: fork.branch });
    break;
  }
  case "raw-all":
  case "raw-half": {
    const t0 = performance.now();
    const raw = RawSessionLog.open(a);
    const t1 = performance.now();
    const got = raw.content(b, mode === "raw-all" ? undefined : Number(c));
    const t2 = performance.now();
    emit({ ms: t2 - t0, openMs: t1 - t0, opMs: t2 - t1, ...got });
    break;
  }
  case "raw-fork": {
    const data = rawPayload(extraStep(1_000_000));
    const name = `fork-${process.pid}-${Date.now()}`;
    const t0 = performance.now();
    const raw = RawSessionLog.open(a);
    const t1 = performance.now();
    raw.fork(b, name, Number(c), { ts: Date.now(), kind: "patch@1", label: "step", data });
    const t2 = performance.now();
    emit({ ms: t2 - t0, openMs: t1 - t0, opMs: t2 - t1, branch: name });
    break;
  }
  default:
    throw new Error(`unknown probe mode ${mode}; see the header of bench/api/probe.ts`);
}
