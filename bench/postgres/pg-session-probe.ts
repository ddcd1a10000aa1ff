/**
 * A fresh process doing one thing with `Session` on PostgreSQL (or its raw `pg` baseline on the
 * same server) and reporting how long it took, the statements it sent, the bytes it received and
 * its peak RSS, for bench/postgres/pg-session.ts. Modules are imported, the step to commit is
 * generated and the connection is opened before the clock starts (`openPgStore` for strata, which
 * connects and checks the schema; `connect` of one `pg.Client` for raw), and reported apart as
 * `connectMs`. Nothing here imports a package's `/internal` entry.
 *
 *   node --import tsx --conditions=@strata/source bench/postgres/pg-session-probe.ts <mode> <url> <args…>
 *
 * Modes (strata: `openPgStore` + `Session`; raw: tables `raw_<N>` and `raw_branch_<N>` written by
 * bench/postgres/pg-session.ts, one row per event, `id` its primary key):
 *   resume <url> <schema> <session>          `Session.open` (ready to commit at the head)
 *   all <url> <schema> <session>             `Session.open` + `session.load()` + every message of `session.tree` with its text
 *   half <url> <schema> <session> <event>    `Session.open` + `loadTree(await session.at(event))` + every message of it with its text
 *   fork <url> <schema> <session> <event>    `Session.open` + `session.fork(event)` + one `commit` of a step on the fork;
 *                                            then 5 more in the same process (warm), each also with a `store.fork` alone
 *   raw-resume <url> <table> <head>          the last 128 rows up to row `head` read and decoded (what a resume from a snapshot reads of the log)
 *   raw-all <url> <table> <head>             every row up to row `head` (the main line: forks add rows after it) read and decoded, messages counted
 *   raw-half <url> <table> <row>             the same for the rows up to `row`
 *   raw-fork <url> <table> <row>             a branch row at `row` + one event row, one transaction; then 5 more (warm)
 *
 * Output: one JSON line on stdout.
 */
import { select } from "@strata/dom";
import { loadTree, Session } from "@strata/engine";
import { eventId, type SessionId } from "@strata/store";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import pg from "pg";
import { BLOCK, contentOf, MESSAGES, rawPayload, SEED, type Step, stepOps, steps } from "../api/workload.ts";
import { peakRssKb } from "../lib/rss.ts";
import { type Around, StatementCounter } from "./statements.ts";

const [mode, url, a, b, c] = process.argv.slice(2) as [string, string, string, string | undefined, string | undefined];

/** Forks made again after the first one, in the same process (the warm figures: their median). */
const WARM_FORKS = 5;

/** The median of a few numbers. */
function middle(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)] as number;
}

/** Rows the raw resume reads: the tail a resume from the last snapshot folds at most (a snapshot every 128 events). */
const RAW_TAIL = BLOCK;

interface Content {
  messages: number;
  chars: number;
}

/** A step that is not in the session (for the fork's commit). */
function extraStep(i: number): Step {
  const first = steps(1, 0, SEED + 1).next().value as Step;
  return { ...first, i };
}

interface Socketed {
  readonly connection?: { readonly stream?: { readonly bytesRead?: number } };
}

const TRACE = process.env.BENCH_PGS_TRACE === "1";

const bytesOf = (client: object) => (client as Socketed).connection?.stream?.bytesRead ?? 0;

/** BENCH_PGS_TRACE=1: a statement's time to its answer, the bytes it brought and its rows, on stderr. */
const trace: Around = (client, text, args, send) => {
  const t = performance.now();
  const b0 = bytesOf(client);
  const report = (r: { rowCount?: number | null } | undefined) =>
    process.stderr.write(
      `  ${(performance.now() - t).toFixed(1).padStart(7)} ms ${String(bytesOf(client) - b0).padStart(10)} B ${String(r?.rowCount ?? "").padStart(7)} rows  ${text.replace(/\s+/g, " ").slice(0, 110)}\n`,
    );
  const last = args[args.length - 1];
  if (typeof last === "function") {
    // pool.query's form: a callback, no promise.
    args[args.length - 1] = (e: unknown, r: { rowCount?: number }) => {
      report(r);
      (last as (e: unknown, r: unknown) => void)(e, r);
    };
    return send(...args);
  }
  const answer = send(...args) as Promise<{ rowCount?: number }>;
  answer.then(report, () => {});
  return answer;
};

/**
 * Counts the statements a store's pool sends (statements.ts) and the bytes its connections
 * receive; with BENCH_PGS_TRACE=1 each statement's time to its answer and its bytes, on stderr.
 */
class Meter {
  readonly #counter: StatementCounter;
  #bytes0 = 0;

  constructor(store: PgStore) {
    this.#counter = new StatementCounter(store, TRACE ? trace : undefined);
  }

  #bytes(): number {
    let n = 0;
    for (const cl of this.#counter.clients) n += bytesOf(cl);
    return n;
  }

  /** Starts a phase: counts from zero. */
  start(): void {
    this.#counter.reset();
    this.#bytes0 = this.#bytes();
  }

  /** What the phase since `start` sent and received. */
  phase(): { statements: number; kinds: Record<string, number>; bytes: number } {
    return { statements: this.#counter.total, kinds: Object.fromEntries(this.#counter.kinds), bytes: this.#bytes() - this.#bytes0 };
  }
}

/** Every message with its content: `select` + each element's text. */
function count(list: readonly { readonly text: string }[]): Content {
  const out: Content = { messages: 0, chars: 0 };
  for (const e of list) {
    out.messages++;
    out.chars += e.text.length;
  }
  return out;
}

function emit(result: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...result, maxRssKb: peakRssKb() })}\n`);
}

async function strata(): Promise<void> {
  const schema = a;
  const session = b as SessionId;
  const step = extraStep(1_000_000);
  const c0 = performance.now();
  const store = await openPgStore(url, { schema, max: 4 });
  const meter = new Meter(store);
  const c1 = performance.now();
  try {
    meter.start();
    const t0 = performance.now();
    const { session: s } = await Session.open(store, session);
    const t1 = performance.now();
    const open = meter.phase();
    const base = { connectMs: c1 - c0, openMs: t1 - t0, open, headDepth: s.head.depth };
    switch (mode) {
      case "resume":
        emit({ ms: t1 - t0, opMs: 0, ...base });
        break;
      case "all": {
        meter.start();
        // Over the asynchronous port a tree reads what was fetched (decision 0037): loaded whole first.
        await s.load();
        const got = count(s.select(MESSAGES));
        const t2 = performance.now();
        emit({ ms: t2 - t0, opMs: t2 - t1, ...base, op: meter.phase(), ...got });
        break;
      }
      case "half": {
        meter.start();
        const tree = await loadTree(await s.at(eventId(Number(c))));
        const t2 = performance.now();
        const at = meter.phase();
        const got = count(select(tree, MESSAGES));
        const t3 = performance.now();
        emit({ ms: t3 - t0, opMs: t3 - t1, atMs: t2 - t1, ...base, op: at, ...got });
        break;
      }
      case "fork": {
        meter.start();
        const fork = await s.fork(eventId(Number(c)));
        const t2 = performance.now();
        const forked = meter.phase();
        meter.start();
        await fork.commit(stepOps(fork.tree, step), { label: "step" });
        const t3 = performance.now();
        const committed = meter.phase();
        // Then the same again in a process that has forked before (warm: its code compiled, its
        // pool connected), and the store's fork alone (the one row).
        const warm: number[] = [];
        const warmFork: number[] = [];
        const storeFork: number[] = [];
        for (let k = 0; k < WARM_FORKS; k++) {
          const w0 = performance.now();
          const again = await s.fork(eventId(Number(c)));
          const w1 = performance.now();
          await again.commit(stepOps(again.tree, step), { label: "step" });
          const w2 = performance.now();
          await store.fork(session, eventId(Number(c)), `probe-${process.pid}-${k}`);
          const w3 = performance.now();
          warm.push(w2 - w0);
          warmFork.push(w1 - w0);
          storeFork.push(w3 - w2);
        }
        emit({
          warmMs: middle(warm),
          warmForkMs: middle(warmFork),
          storeForkMs: middle(storeFork),
          ms: t3 - t0,
          opMs: t3 - t1,
          forkMs: t2 - t1,
          commitMs: t3 - t2,
          ...base,
          op: forked,
          commit: committed,
          branch: fork.branch,
        });
        break;
      }
      default:
        throw new Error(`unknown probe mode ${mode}; see the header of bench/postgres/pg-session-probe.ts`);
    }
  } finally {
    await store.close();
  }
}

async function raw(): Promise<void> {
  const table = a;
  if (!/^raw_[0-9]+$/.test(table)) throw new Error(`not a raw table: ${table}`);
  const data = rawPayload(extraStep(1_000_000));
  const c0 = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const c1 = performance.now();
  try {
    const bytes0 = bytesOf(client);
    const t0 = performance.now();
    const phase = () => ({ statements: 1, kinds: {}, bytes: bytesOf(client) - bytes0 });
    switch (mode) {
      case "raw-resume":
      case "raw-all":
      case "raw-half": {
        const got: Content = { messages: 0, chars: 0 };
        const r =
          mode === "raw-resume"
            ? await client.query(`SELECT data FROM ${table} WHERE id <= $1 ORDER BY id DESC LIMIT ${RAW_TAIL}`, [Number(b)])
            : await client.query(`SELECT data FROM ${table} WHERE id <= $1 ORDER BY id`, [Number(b)]);
        const rows = r.rows as { data: string }[];
        if (mode === "raw-resume") rows.reverse();
        for (const row of rows) contentOf(row.data, got);
        const t1 = performance.now();
        emit({ ms: t1 - t0, opMs: t1 - t0, connectMs: c1 - c0, open: phase(), rows: rows.length, ...got });
        break;
      }
      case "raw-fork": {
        const name = `fork-${process.pid}-${Date.now()}`;
        const at = await client.query(`SELECT id FROM ${table} WHERE id = $1`, [Number(b)]);
        if (at.rows.length !== 1) throw new Error(`raw fork: row ${b} is not in ${table}`);
        await rawFork(client, table, Number(b), data, name);
        const t1 = performance.now();
        const open = { ...phase(), statements: 5 };
        const warm: number[] = [];
        for (let k = 0; k < WARM_FORKS; k++) {
          const w0 = performance.now();
          await rawFork(client, table, Number(b), data, `${name}-${k}`);
          warm.push(performance.now() - w0);
        }
        emit({ ms: t1 - t0, opMs: t1 - t0, warmMs: middle(warm), connectMs: c1 - c0, open, branch: name });
        break;
      }
      default:
        throw new Error(`unknown probe mode ${mode}; see the header of bench/postgres/pg-session-probe.ts`);
    }
  } finally {
    await client.end();
  }
}

/** A raw fork: a branch row at `row` and one event row after it, one transaction. */
async function rawFork(client: pg.Client, table: string, row: number, data: string, name: string): Promise<void> {
  await client.query("BEGIN");
  const ins = await client.query(`INSERT INTO ${table} (parent, ts, kind, label, data) VALUES ($1, $2, $3, $4, $5) RETURNING id`, [
    row,
    Date.now(),
    "patch@1",
    "step",
    data,
  ]);
  await client.query(`INSERT INTO ${table.replace("raw_", "raw_branch_")} (name, head) VALUES ($1, $2)`, [name, ins.rows[0]?.id]);
  await client.query("COMMIT");
}

if (mode?.startsWith("raw-")) await raw();
else await strata();
