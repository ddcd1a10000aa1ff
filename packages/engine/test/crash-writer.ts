/**
 * Crash harness (kill -9 at random moments), on both storage ports (decision 0036): SQLite (a
 * file, the synchronous `Store`) and PostgreSQL (a schema of a server, the asynchronous port). One
 * file, two roles, one code path for both ports:
 *
 * - Run as a program — `node --import tsx packages/engine/test/crash-writer.ts --db PATH|URL
 *   [--schema NAME] --trial N [--session ID] [--durability normal|full] [--seed S] [--snapshot-every K]`
 *   — it is the WRITER: it opens the store (a SQLite file at PATH, or schema NAME of the PostgreSQL
 *   server at URL `postgres://…`) and the session's Journal (creating the session when no id is
 *   given) and commits patches forever: mostly single commits (ins, set, append of multi-KB text,
 *   text, mv, rm), sometimes group commits of 2–6 patches, and every ~50 commits a fork of a side
 *   branch, a few commits there and sometimes a rewind (`moveHead`). It writes through the
 *   Journal's steps (`drive`) and awaits every store call, so the same lines run on either port (a
 *   value awaited is itself). After each call returns it writes one JSON line to stdout and waits
 *   until the line has been handed to the pipe before the next call, so at any moment at most one
 *   commit can be durable without its line having been printed — durable meaning synced as
 *   `--durability` says on SQLite, committed on the server on PostgreSQL.
 *   Every patch event is labelled `t<trial>g<group>/<index>/<size>`; a commit line carries the ids
 *   and a digest of each payload as stored (read back after the commit returned).
 *
 * - Imported (crash.test.ts, scripts/crash-long.ts), {@link runCrashTrials} is the PARENT: it spawns
 *   the writer on one database (a file; on PostgreSQL a schema — a fresh schema plays the part of a
 *   fresh file), SIGKILLs it at a random moment, and after each kill opens the database and checks,
 *   the same on either port: verify is clean (SQLite: `verifyStore`; PostgreSQL: `verifyPort`, the
 *   store's checks and then the same engine checks: every payload decodes, and every snapshot is
 *   the replay of its chain); every printed id is present
 *   with its label; every group is complete (all its events, consecutive on their chain) or absent;
 *   no payload is partial (printed ones match the digests the writer read back); each branch head
 *   is the last printed commit or the end of the one commit that was in flight; `Journal.open`
 *   gives the same tree as a replay from genesis (L1).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { applyPatch, type Element, type NodeId, type NodeSpec, nodeId, type Op, type Tree, toSnapshot } from "@strata/dom";
import { loadTree, materialize, type Port, verifyPort, verifyStore } from "@strata/engine";
import { type CommitInput, Journal } from "@strata/engine/internal";
import {
  drive,
  type EventId,
  type EventMeta,
  eventId,
  isAsyncStore,
  openStore,
  type SessionId,
  SqliteStore,
  sessionId,
  type VerifyReport,
} from "@strata/store";
import type { PgStore } from "@strata/store-postgres";

const HERE = fileURLToPath(new URL(".", import.meta.url));
/** The repository root (cwd of the writer, where `tsx` resolves). */
export const ROOT = resolve(HERE, "../../..");
export const WRITER = fileURLToPath(import.meta.url);

const BODY = nodeId(3);
const LABEL = /^(t\d+g\d+)\/(\d+)\/(\d+)$/;

// ── shared helpers ──────────────────────────────────────────────────────────────────────────────

/** A small seeded PRNG (mulberry32): trials are reproducible up to timing. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** Lines the writer prints (one JSON object per line). */
export type WriterLine =
  | { readonly t: "session"; readonly id: string }
  | { readonly t: "ready"; readonly head: number }
  | {
      readonly t: "commit";
      readonly branch: string;
      readonly group: string;
      readonly ids: readonly number[];
      /** `digest(data)` of each event's payload as stored. */
      readonly sums: readonly string[];
    }
  | { readonly t: "fork"; readonly branch: string; readonly at: number }
  | { readonly t: "move"; readonly branch: string; readonly to: number; readonly old: number; readonly kept: string | null };

// ── the writer ──────────────────────────────────────────────────────────────────────────────────

const ALPHABET = [..."abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_\n\t<&>\"'éßø漢字🙂"];

function text(r: Rand, length: number): string {
  let s = "";
  while (s.length < length) s += pick(r, ALPHABET);
  return s;
}

/** A random text length: often short, sometimes several KB (long texts become references in pages). */
function textLength(r: Rand): number {
  const x = r();
  if (x < 0.55) return int(r, 0, 60);
  if (x < 0.8) return int(r, 128, 1000);
  return int(r, 1024, 6144);
}

function item(r: Rand, n: number): NodeSpec {
  return { tag: "item", attrs: { n: String(n) }, text: text(r, textLength(r)) };
}

/** One op that applies to `tree` (ids only move forward: the journal applies patches monotonically). */
function makeOp(tree: Tree, r: Rand, serial: number): Op {
  const body = tree.get(BODY) as Element;
  const tops = body.children;
  const boxes = tops.filter((e) => e.tag === "box");
  const leaves: Element[] = [];
  for (const e of tops) {
    if (e.tag === "box") leaves.push(...e.children);
    else leaves.push(e);
  }
  const after = (list: readonly Element[], exclude?: NodeId): NodeId | null => {
    const xs = list.filter((e) => e.id !== exclude);
    return xs.length === 0 || r() < 0.2 ? null : pick(r, xs).id;
  };
  if (tops.length > 40) return ["rm", pick(r, tops).id];
  // Keep the tree small; the biggest box goes first.
  if (leaves.length > 600) return ["rm", boxes.reduce((a, b) => (b.children.length > a.children.length ? b : a)).id];
  const x = r();
  if (x < 0.22 || leaves.length === 0) return ["ins", BODY, after(tops), item(r, serial)];
  if (x < 0.27) {
    // Now and then a big box, so the high-water mark crosses id blocks (EN-17) often.
    const big = r() < 0.15;
    const children = Array.from({ length: big ? int(r, 30, 120) : int(r, 1, 3) }, (_, i) =>
      big ? { tag: "item", attrs: { n: String(i) }, text: text(r, int(r, 0, 40)) } : item(r, serial * 10 + i),
    );
    return ["ins", BODY, after(tops), { tag: "box", attrs: { n: String(serial) }, children }];
  }
  if (x < 0.35 && boxes.length > 0) {
    const box = pick(r, boxes);
    return ["ins", box.id, after(box.children), item(r, serial)];
  }
  if (x < 0.62) {
    const leaf = pick(r, leaves);
    // Keep texts bounded: a long one is replaced instead of growing forever.
    if (leaf.text.length > 24_000) return ["text", leaf.id, text(r, int(r, 0, 300))];
    return ["append", leaf.id, text(r, textLength(r))];
  }
  if (x < 0.77) {
    const target = pick(r, r() < 0.7 ? leaves : tops);
    return ["set", target.id, pick(r, ["s", "state", "x-y"]), r() < 0.15 ? null : text(r, int(r, 0, 40)).replace(/\s+/g, " ")];
  }
  if (x < 0.83) return ["text", pick(r, leaves).id, text(r, textLength(r))];
  if (x < 0.91) {
    const leaf = pick(r, leaves);
    const parents = [body, ...boxes];
    const to = pick(r, parents);
    return ["mv", leaf.id, to.id, after(to.children, leaf.id)];
  }
  return ["rm", pick(r, r() < 0.6 ? leaves : tops).id];
}

/** A patch of 1–3 ops against `tree`, and the tree it produces. */
function makePatch(tree: Tree, r: Rand, serial: number): { ops: Op[]; tree: Tree } {
  const ops: Op[] = [];
  let t = tree;
  const n = int(r, 1, 3);
  for (let i = 0; i < n; i++) {
    const op = makeOp(t, r, serial);
    t = applyPatch(t, [op], { monotonic: true });
    ops.push(op);
  }
  return { ops, tree: t };
}

/** Length and sha256 prefix of a payload. */
export function digest(data: string): string {
  return `${data.length}:${createHash("sha256").update(data).digest("hex").slice(0, 16)}`;
}

function emit(line: WriterLine): Promise<void> {
  return new Promise((ok, fail) => {
    process.stdout.write(`${JSON.stringify(line)}\n`, (e) => (e ? fail(e) : ok()));
  });
}

function arg(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

/** A PostgreSQL server's URL (anything else given as `--db` is a SQLite file). */
const POSTGRES = /^postgres(ql)?:\/\//i;

/** Opens the writer's store: a SQLite file, or a schema on a PostgreSQL server (loaded only then). */
async function openPort(args: readonly string[]): Promise<Port> {
  const db = arg(args, "--db");
  if (db === undefined) throw new Error("crash-writer: --db PATH|URL is required");
  if (!POSTGRES.test(db)) return openStore(db, { durability: arg(args, "--durability") === "full" ? "full" : "normal" });
  const schema = arg(args, "--schema");
  if (schema === undefined) throw new Error("crash-writer: --schema NAME is required with a PostgreSQL URL");
  const { openPgStore } = await import("@strata/store-postgres");
  return openPgStore(db, { schema, max: 2 });
}

async function writerMain(args: readonly string[]): Promise<void> {
  const trial = Number(arg(args, "--trial") ?? "0");
  const r = rng(Number(arg(args, "--seed") ?? "1"));
  const options = { snapshotEvery: Number(arg(args, "--snapshot-every") ?? "16") };
  // Every store call below is awaited: a value over SQLite (awaited, itself), a promise over PostgreSQL.
  const store = await openPort(args);
  const given = arg(args, "--session");
  let journal: Journal;
  let session: SessionId;
  if (given === undefined) {
    const created = await drive(Journal.createSteps(store, { title: "crash" }, options));
    journal = created.journal;
    session = created.session.id;
    await emit({ t: "session", id: session });
  } else {
    session = sessionId(given);
    journal = await drive(Journal.openSteps(store, session, "main", options));
  }
  await emit({ t: "ready", head: journal.head.id });

  let group = 0;
  let forks = 0;
  const commit = async (j: Journal, size: number): Promise<void> => {
    const g = `t${trial}g${++group}`;
    // The patches are made from the tree's texts: over the asynchronous port it is loaded first (decision 0037).
    let tree = isAsyncStore(store) ? await loadTree(j.tree) : j.tree;
    const inputs: CommitInput[] = [];
    for (let i = 0; i < size; i++) {
      const p = makePatch(tree, r, group);
      tree = p.tree;
      inputs.push({ ops: p.ops, label: `${g}/${i}/${size}`, by: "crash-writer" });
    }
    const { metas } = await drive(j.commitWithOpsSteps(inputs));
    // The journal may rewrite ops (id floors), so the digest is of the payload as stored.
    const ids = metas.map((m) => m.id);
    const sums = (await store.events(ids)).map((e) => digest(e.data));
    await emit({ t: "commit", branch: j.branch, group: g, ids, sums });
  };
  const size = (): number => (r() < 0.2 ? int(r, 2, 6) : 1);

  for (let n = 1; ; n++) {
    if (n % 50 !== 0) {
      await commit(journal, size());
      continue;
    }
    // A side line of history: fork (at the head or an earlier event), commit there, maybe rewind.
    const head = journal.head;
    const at = r() < 0.5 ? head : ((await store.atDepth(head.id, int(r, 1, head.depth))) as EventMeta);
    const name = `side/t${trial}/${++forks}`;
    await store.fork(session, at.id, name);
    await emit({ t: "fork", branch: name, at: at.id });
    const side = await drive(Journal.openSteps(store, session, name, options));
    for (let k = int(r, 1, 3); k > 0; k--) await commit(side, size());
    if (r() < 0.5) {
      const old = side.head;
      const to = (await store.atDepth(old.id, Math.max(1, old.depth - int(r, 1, 4)))) as EventMeta;
      const moved = await store.moveHead(session, name, to.id, { expected: old.id });
      await emit({ t: "move", branch: name, to: to.id, old: old.id, kept: moved.kept?.name ?? null });
    }
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === WRITER) {
  writerMain(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`crash-writer: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(70);
  });
}

// ── the parent ──────────────────────────────────────────────────────────────────────────────────

/** The port the trials run on: SQLite files (default), or schemas of the PostgreSQL server at `postgres`. */
export type CrashPort = "sqlite" | { readonly postgres: string };

export interface CrashOptions {
  /** Number of kill trials. */
  readonly trials: number;
  /** The storage port (default "sqlite"). */
  readonly port?: CrashPort;
  /** Seed of the harness PRNG (kill delays, durability, writer seeds); default: time-based. */
  readonly seed?: number;
  /** Start a new database (file or schema) every N trials (0: one for the whole run). */
  readonly freshEvery?: number;
  /** Snapshot interval of the writer's journals (small, so snapshots are often cut mid-write). */
  readonly snapshotEvery?: number;
  /** Kill delay after the writer reports ready, in ms (uniform in [min, max]). */
  readonly killAfter?: readonly [number, number];
  /** Fraction of trials killed at a random moment after spawn instead (may land while opening). */
  readonly earlyFraction?: number;
  /** Fraction of SQLite trials run with `durability: "full"`. */
  readonly fullFraction?: number;
  /** Keep the temporary directory, or the schemas (they are kept anyway when a trial fails). */
  readonly keep?: boolean;
  /** Progress callback, after each trial. */
  readonly onTrial?: (t: TrialResult, done: number) => void;
}

/** What "durable" means in a trial: SQLite's `durability` setting, or committed on the PostgreSQL server. */
export type Durability = "normal" | "full" | "server";

export interface TrialResult {
  readonly trial: number;
  /** The database: a file's path, or a PostgreSQL URL with `?schema=`. */
  readonly db: string;
  readonly seed: number;
  readonly durability: Durability;
  readonly early: boolean;
  readonly killAfterMs: number;
  /** True when the process died of our SIGKILL. */
  readonly killed: boolean;
  readonly readyBeforeKill: boolean;
  readonly commitsPrinted: number;
  readonly eventsPrinted: number;
  /** Events in the database after the kill that were not there before it. */
  readonly eventsCommitted: number;
  /** Printed events missing after the kill (must be 0). */
  readonly eventsLost: number;
  /** Events of a commit that was durable but whose line was not printed (the one in flight). */
  readonly eventsInFlight: number;
  readonly eventsTotal: number;
  readonly snapshotsTotal: number;
  readonly verifyMs: number;
  /** Time of all the checks after the kill (verify included). */
  readonly checkMs: number;
  readonly problems: readonly string[];
}

export interface CrashSummary {
  readonly port: "sqlite" | "postgres";
  readonly seed: number;
  /** Where the databases were: the temporary directory, or the PostgreSQL server's URL. */
  readonly dir: string;
  readonly trials: number;
  readonly kills: number;
  readonly earlyKills: number;
  readonly killsBeforeReady: number;
  readonly fullDurabilityTrials: number;
  readonly databases: number;
  readonly commitsPrinted: number;
  readonly eventsPrinted: number;
  readonly eventsCommitted: number;
  readonly maxEventsLostPerKill: number;
  /** Kills after which the commit in flight turned out durable (its line never arrived). */
  readonly inFlightDurable: number;
  readonly largestDbEvents: number;
  readonly largestDbBytes: number;
  readonly maxVerifyMs: number;
  readonly elapsedMs: number;
  readonly failures: readonly { trial: number; db: string; seed: number; problems: readonly string[] }[];
}

interface DbState {
  /** The database's place on its port: a file's path, or a schema's name. */
  where: string;
  session: SessionId | undefined;
  /** Head of main after the last check (the last commit known durable). */
  mainHead: EventId | undefined;
  events: number;
  /** Every printed event id and the label prefix it must carry, across the database's history. */
  printed: Map<number, string>;
}

/** An event row as the log table holds it. */
interface EventRow {
  readonly id: number;
  readonly prior: number | null;
  readonly label: string | null;
}

/** A database opened by the parent after a kill. */
interface Opened {
  readonly store: Port;
  /** The store's verify with the engine's checks (`verifyStore` on SQLite, `verifyPort` on PostgreSQL). */
  verify(): Promise<VerifyReport>;
  /** Every event in the database, whether a branch reaches it or not, by id. */
  rows(): Promise<EventRow[]>;
  close(): Promise<void>;
}

/** Where a port keeps the trials' databases. */
interface Place {
  readonly port: "sqlite" | "postgres";
  /** Where the databases are (the summary's `dir`). */
  readonly dir: string;
  /** A new database's place (`n` counts them from 1). */
  fresh(n: number): string;
  /** The database as a failure names it. */
  shown(where: string, failed: boolean): string;
  /** The writer's arguments naming the database. */
  writerArgs(where: string, durability: Durability): string[];
  open(where: string): Promise<Opened>;
  /** Done with a database: removed (unless kept), or kept for a look when a trial failed there. Answers its size in bytes. */
  retire(where: string, failed: boolean): Promise<number>;
  /** Done with every database; `failed`: some trial failed. */
  close(failed: boolean): Promise<void>;
}

function sqlitePlace(keep: boolean): Place {
  const dir = mkdtempSync(join(tmpdir(), "strata-crash-"));
  return {
    port: "sqlite",
    dir,
    fresh: (n) => join(dir, `crash-${n}.db`),
    shown: (path, failed) => (failed ? path.replace(/\.db$/, ".failed.db") : path),
    writerArgs: (path, durability) => ["--db", path, "--durability", durability],
    async open(path) {
      const store = openStore(path);
      if (!(store instanceof SqliteStore)) throw new Error("openStore did not return a SqliteStore");
      return {
        store,
        // SQLite integrity, chains, heads, blobs, payloads, snapshots = replay of their chains.
        verify: async () => verifyStore(store),
        rows: async () => store.database.prepare("SELECT id, prior, label FROM events ORDER BY id").all() as EventRow[],
        close: async () => store.close(),
      };
    },
    async retire(path, failed) {
      let bytes = 0;
      try {
        bytes = statSync(path).size;
      } catch {}
      if (failed) {
        for (const ext of ["", "-wal", "-shm"]) {
          try {
            renameSync(path + ext, path.replace(/\.db$/, ".failed.db") + ext);
          } catch {}
        }
      } else if (!keep) for (const ext of ["", "-wal", "-shm"]) rmSync(path + ext, { force: true });
      return bytes;
    },
    async close(failed) {
      if (!failed && !keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The little of `pg` the parent uses to read tables directly (the driver is @strata/store-postgres's dependency). */
interface RawClient {
  connect(): Promise<void>;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

function postgresPlace(url: string, keep: boolean): Place {
  const require = createRequire(join(ROOT, "packages/store-postgres/package.json"));
  const pg = require("pg") as { Client: new (o: { connectionString: string }) => RawClient };
  let raw: Promise<RawClient> | undefined;
  const sql = (text: string, values?: unknown[]) => {
    raw ??= (async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    })();
    return raw.then((c) => c.query(text, values)).then((r) => r.rows);
  };
  const q = (schema: string) => `"${schema}"`;
  const tag = `crash_${process.pid}_${Date.now().toString(36)}`;
  return {
    port: "postgres",
    dir: url,
    fresh: (n) => `${tag}_${n}`,
    shown: (schema) => {
      const u = new URL(url);
      u.searchParams.set("schema", schema);
      return u.href;
    },
    writerArgs: (schema) => ["--db", url, "--schema", schema],
    async open(schema) {
      const { openPgStore } = await import("@strata/store-postgres");
      const store: PgStore = await openPgStore(url, { schema, max: 2 });
      const rows = async (): Promise<EventRow[]> =>
        (await sql(`SELECT id, prior, label FROM ${q(schema)}.events ORDER BY id`)).map((r) => ({
          id: Number(r.id),
          prior: r.prior === null ? null : Number(r.prior),
          label: r.label as string | null,
        }));
      return { store, verify: () => verifyPort(store), rows, close: () => store.close() };
    },
    async retire(schema, failed) {
      let bytes = 0;
      try {
        const [r] = await sql(
          "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
          [schema],
        );
        bytes = Number(r?.n ?? 0);
        if (!failed && !keep) await sql(`DROP SCHEMA IF EXISTS ${q(schema)} CASCADE`);
      } catch {}
      return bytes;
    },
    async close() {
      if (raw !== undefined) await (await raw).end();
    },
  };
}

interface Spawned {
  readonly lines: WriterLine[];
  readonly killed: boolean;
  readonly readyBeforeKill: boolean;
  readonly exit: string;
  readonly stderr: string;
}

function runWriter(args: string[], early: boolean, delayMs: number): Promise<Spawned> {
  return new Promise((done) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", WRITER, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const lines: WriterLine[] = [];
    let buf = "";
    let stderr = "";
    let killed = false;
    let ready = false;
    let readyBeforeKill = false;
    let timer: NodeJS.Timeout | undefined;
    const kill = () => {
      if (killed) return;
      killed = true;
      readyBeforeKill = ready;
      child.kill("SIGKILL");
    };
    // A writer that never gets ready is killed (and the trial fails on its stderr).
    const watchdog = setTimeout(kill, 60_000);
    if (early) timer = setTimeout(kill, delayMs);
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      buf += chunk;
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = JSON.parse(buf.slice(0, nl)) as WriterLine;
        buf = buf.slice(nl + 1);
        lines.push(line);
        if (line.t === "ready" && !ready) {
          ready = true;
          if (!early) timer = setTimeout(kill, delayMs);
        }
        nl = buf.indexOf("\n");
      }
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      if (stderr.length < 20_000) stderr += chunk;
    });
    child.on("close", (code, signal) => {
      clearTimeout(watchdog);
      if (timer !== undefined) clearTimeout(timer);
      done({ lines, killed: killed && signal === "SIGKILL", readyBeforeKill, exit: signal ?? `exit ${code}`, stderr });
    });
  });
}

/** Runs `trials` kill trials and returns what was measured; never throws for a failed check. */
export async function runCrashTrials(options: CrashOptions): Promise<CrashSummary> {
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const r = rng(seed);
  const given = options.port ?? "sqlite";
  const place = given === "sqlite" ? sqlitePlace(options.keep === true) : postgresPlace(given.postgres, options.keep === true);
  const started = Date.now();
  const [minDelay, maxDelay] = options.killAfter ?? [20, 400];
  const failures: { trial: number; db: string; seed: number; problems: readonly string[] }[] = [];
  let kills = 0;
  let earlyKills = 0;
  let killsBeforeReady = 0;
  let full = 0;
  let databases = 0;
  let commitsPrinted = 0;
  let eventsPrinted = 0;
  let eventsCommitted = 0;
  let maxLost = 0;
  let inFlightDurable = 0;
  let largestEvents = 0;
  let largestBytes = 0;
  let maxVerifyMs = 0;
  let state: DbState | undefined;
  const fresh = (): DbState => ({
    where: place.fresh(++databases),
    session: undefined,
    mainHead: undefined,
    events: 0,
    printed: new Map(),
  });
  const retire = async (s: DbState, failed: boolean) => {
    largestBytes = Math.max(largestBytes, await place.retire(s.where, failed));
  };

  try {
    for (let trial = 1; trial <= options.trials; trial++) {
      if (state === undefined || (options.freshEvery !== undefined && options.freshEvery > 0 && (trial - 1) % options.freshEvery === 0)) {
        if (state !== undefined) await retire(state, false);
        state = fresh();
      }
      const s = state;
      const trialSeed = Math.floor(r() * 2 ** 31);
      // (Drawn on PostgreSQL too, so a seed gives the same kill delays and writer seeds on both.)
      const sqliteDurability = r() < (options.fullFraction ?? 0.3) ? "full" : "normal";
      const durability: Durability = place.port === "sqlite" ? sqliteDurability : "server";
      // Some kills land at a random moment after spawn: while node starts, while the store opens (or,
      // on a new database, is created and migrated, or the session is created), or while committing.
      const early = r() < (options.earlyFraction ?? 0.15);
      const killAfterMs = early ? int(r, 100, 1200) : int(r, minDelay, maxDelay);
      const args = [...place.writerArgs(s.where, durability), "--trial", String(trial), "--seed", String(trialSeed)];
      args.push("--snapshot-every", String(options.snapshotEvery ?? 16));
      if (s.session !== undefined) args.push("--session", s.session);
      const run = await runWriter(args, early, killAfterMs);
      const result = await checkTrial(place, s, run, { trial, seed: trialSeed, durability, early, killAfterMs });
      if (result.killed) kills++;
      if (early && result.killed) earlyKills++;
      if (!result.readyBeforeKill) killsBeforeReady++;
      if (durability === "full") full++;
      commitsPrinted += result.commitsPrinted;
      eventsPrinted += result.eventsPrinted;
      eventsCommitted += result.eventsCommitted;
      maxLost = Math.max(maxLost, result.eventsLost);
      if (result.eventsInFlight > 0) inFlightDurable++;
      largestEvents = Math.max(largestEvents, result.eventsTotal);
      maxVerifyMs = Math.max(maxVerifyMs, result.verifyMs);
      options.onTrial?.(result, trial);
      if (result.problems.length > 0) {
        failures.push({ trial, db: place.shown(s.where, true), seed: trialSeed, problems: result.problems });
        await retire(s, true);
        state = undefined; // go on with a fresh database
      }
    }
    if (state !== undefined) await retire(state, false);
  } finally {
    await place.close(failures.length > 0);
  }
  return {
    port: place.port,
    seed,
    dir: place.dir,
    trials: options.trials,
    kills,
    earlyKills,
    killsBeforeReady,
    fullDurabilityTrials: full,
    databases,
    commitsPrinted,
    eventsPrinted,
    eventsCommitted,
    maxEventsLostPerKill: maxLost,
    inFlightDurable,
    largestDbEvents: largestEvents,
    largestDbBytes: largestBytes,
    maxVerifyMs,
    elapsedMs: Date.now() - started,
    failures,
  };
}

interface TrialInfo {
  readonly trial: number;
  readonly seed: number;
  readonly durability: Durability;
  readonly early: boolean;
  readonly killAfterMs: number;
}

/** Opens the database after a kill and checks everything the issue asks for, the same on either port. */
async function checkTrial(place: Place, s: DbState, run: Spawned, info: TrialInfo): Promise<TrialResult> {
  const started = performance.now();
  const problems: string[] = [];
  const fail = (m: string) => {
    if (problems.length < 50) problems.push(m);
  };
  if (!run.killed) fail(`the writer was not killed by SIGKILL (${run.exit}); stderr: ${run.stderr.trim().slice(0, 4000)}`);
  const commits = run.lines.filter((l): l is Extract<WriterLine, { t: "commit" }> => l.t === "commit");
  let eventsPrinted = 0;
  for (const c of commits) eventsPrinted += c.ids.length;
  const base = {
    ...info,
    db: place.shown(s.where, false),
    killed: run.killed,
    readyBeforeKill: run.readyBeforeKill,
    commitsPrinted: commits.length,
    eventsPrinted,
  };

  let opened: Opened;
  try {
    opened = await place.open(s.where);
  } catch (e) {
    fail(`the database does not open after the kill: ${(e as Error).message}`);
    return {
      ...base,
      eventsCommitted: 0,
      eventsLost: eventsPrinted,
      eventsInFlight: 0,
      eventsTotal: 0,
      snapshotsTotal: 0,
      verifyMs: 0,
      checkMs: performance.now() - started,
      problems,
    };
  }
  let eventsCommitted = 0;
  let eventsLost = 0;
  let eventsInFlight = 0;
  let snapshotsTotal = 0;
  let verifyMs = 0;
  const store = opened.store;
  try {
    // 1. verify: integrity, chains, heads, blobs, payloads, snapshots = replay of their chains.
    const t0 = performance.now();
    const report = await opened.verify();
    verifyMs = performance.now() - t0;
    snapshotsTotal = report.snapshots;
    if (!report.ok || report.findings.length > 0)
      fail(`verify found ${report.findings.length} problem(s): ${report.findings.map((f) => `[${f.code}] ${f.message}`).join("; ")}`);

    // The session: given, printed, or created by a writer killed before it printed it.
    const printedSession = run.lines.find((l) => l.t === "session");
    if (s.session === undefined && printedSession !== undefined) s.session = sessionId(printedSession.id);
    const sessions = await store.listSessions();
    if (s.session === undefined && sessions.length === 1) s.session = (sessions[0] as { id: SessionId }).id;
    if (sessions.length > 1) fail(`the file has ${sessions.length} sessions, expected one`);
    if (s.session !== undefined && (await store.getSession(s.session)) === undefined) fail(`session ${s.session} is missing`);

    // 2. every id ever printed on this file is present with its label; this trial's payloads are
    // byte for byte what the writer read back after its commit returned (no event is partial).
    const sums = new Map<number, string>();
    for (const c of commits)
      c.ids.forEach((id, i) => {
        s.printed.set(id, `${c.group}/${i}/${c.ids.length}`);
        sums.set(id, c.sums[i] as string);
      });
    for (const [id, label] of s.printed) {
      const meta = await store.eventMeta(eventId(id));
      if (meta === undefined) {
        eventsLost++;
        fail(`printed event ${id} (${label}) is missing`);
      } else if (meta.label !== label) fail(`event ${id} has label ${meta.label}, printed as ${label}`);
    }
    const read = await store.events([...sums.keys()].map(eventId));
    for (const e of read)
      if (digest(e.data) !== sums.get(e.id)) fail(`event ${e.id}: payload ${digest(e.data)}, printed ${sums.get(e.id)}`);

    // 3. no partial group: every group is complete, its events consecutive on their chain (an
    // unprinted event's payload is judged by verify: it decodes, and replays into the snapshots).
    const rows = await opened.rows();
    const groups = new Map<string, { i: number; n: number; id: number; prior: number | null }[]>();
    for (const row of rows) {
      if (row.prior === null) {
        if (row.label !== "session.start") fail(`event ${row.id} has no prior but is not a genesis event (label ${row.label})`);
        continue;
      }
      const m = LABEL.exec(row.label ?? "");
      if (m === null) {
        fail(`event ${row.id} has label ${JSON.stringify(row.label)}, which the writer never writes`);
        continue;
      }
      const list = groups.get(m[1] as string) ?? [];
      list.push({ i: Number(m[2]), n: Number(m[3]), id: row.id, prior: row.prior });
      groups.set(m[1] as string, list);
    }
    const groupOf = new Map<number, string>();
    for (const [g, list] of groups) {
      list.sort((a, b) => a.i - b.i);
      const n = (list[0] as { n: number }).n;
      const complete =
        list.length === n && list.every((e, k) => e.i === k && e.n === n && (k === 0 || e.prior === (list[k - 1] as { id: number }).id));
      if (!complete) fail(`group ${g} is partial: ${list.map((e) => `${e.id}=${e.i}/${e.n}`).join(", ")} (size ${n})`);
      for (const e of list) groupOf.set(e.id, g);
    }
    eventsCommitted = rows.length - s.events;
    s.events = rows.length;

    if (s.session !== undefined) {
      const session = s.session;
      // 4. heads: each branch is at its last printed commit, or at the end of the one commit in flight.
      const checkHead = async (branch: string, last: EventId | undefined): Promise<number> => {
        const b = await store.branch(session, branch);
        if (b === undefined) {
          fail(`branch ${branch} is missing`);
          return 0;
        }
        if (last === undefined) return 0;
        if (!(await store.isAncestor(last, b.head))) {
          // A rewind (moveHead) can land without its line, like a commit: then the head is an
          // earlier event of the same line and the old head is kept as a rewound branch.
          const kept = (await store.branches(session)).some((k) => k.origin === "rewind" && k.head === last && k.originEvent === b.head);
          if (kept && (await store.isAncestor(b.head, last))) return 0;
          fail(`branch ${branch} is at ${b.head}, which does not descend from the last printed commit ${last}`);
          return 0;
        }
        const lastMeta = (await store.eventMeta(last)) as EventMeta;
        const extra = await store.chainMeta(b.head, lastMeta.depth);
        if (extra.length === 0) return 0;
        const gs = new Set(extra.map((e) => groupOf.get(e.id)));
        const g = extra[0] === undefined ? undefined : groupOf.get(extra[0].id);
        if (gs.size !== 1 || g === undefined)
          fail(
            `branch ${branch} has ${extra.length} unprinted events after ${last} from more than one commit: ${extra.map((e) => e.label).join(", ")}`,
          );
        else if (commits.some((c) => c.group === g))
          fail(`branch ${branch}: group ${g} was printed but lies after the last printed commit ${last}`);
        const head = extra[extra.length - 1] as EventMeta;
        const m = LABEL.exec(head.label ?? "");
        if (m === null || Number(m[2]) !== Number(m[3]) - 1)
          fail(`branch ${branch} is at ${head.id} (${head.label}), not at the end of a commit`);
        return extra.length;
      };
      const lastPrinted = new Map<string, EventId>();
      if (s.mainHead !== undefined) lastPrinted.set("main", s.mainHead);
      const ready = run.lines.find((l) => l.t === "ready");
      if (ready !== undefined) {
        if (s.mainHead !== undefined && ready.head !== s.mainHead)
          fail(`the writer opened main at ${ready.head}, the last check left it at ${s.mainHead}`);
        lastPrinted.set("main", eventId(ready.head));
      }
      const moved = new Map<string, Extract<WriterLine, { t: "move" }>>();
      for (const l of run.lines) {
        if (l.t === "fork") {
          lastPrinted.set(l.branch, eventId(l.at));
        } else if (l.t === "commit") lastPrinted.set(l.branch, eventId(l.ids[l.ids.length - 1] as number));
        else if (l.t === "move") moved.set(l.branch, l);
      }
      for (const [branch, last] of lastPrinted) {
        if (moved.has(branch)) continue;
        const n = await checkHead(branch, last);
        if (branch === "main") eventsInFlight = n;
      }
      for (const [branch, m] of moved) {
        const at = (await store.branch(session, branch))?.head;
        if (at !== m.to) fail(`branch ${branch} was moved to ${m.to} but is at ${at}`);
        const keeps = m.kept === null ? undefined : (await store.branch(session, m.kept))?.head;
        if (m.kept !== null && keeps !== m.old) fail(`branch ${m.kept} should keep ${m.old} but is at ${keeps}`);
      }
      s.mainHead = (await store.branch(session, "main"))?.head;

      // 5. L1: opening a branch (snapshot + tail) gives the replay from genesis, byte for byte.
      for (const branch of new Set(["main", ...lastPrinted.keys()])) {
        const b = await store.branch(session, branch);
        if (b === undefined) continue;
        try {
          const live = await loadTree((await drive(Journal.openSteps(store, session, branch))).tree);
          const replay = await loadTree(await materialize(store, b.head, { fromGenesis: true }));
          if (toSnapshot(live) !== toSnapshot(replay)) fail(`Journal.open(${branch}) at ${b.head} differs from the replay from genesis`);
        } catch (e) {
          fail(`Journal.open(${branch}) at ${b.head} throws: ${(e as Error).message}`);
        }
      }
    }
  } catch (e) {
    fail(`check crashed: ${(e as Error)?.stack ?? String(e)}`);
  } finally {
    await opened.close();
  }
  const checkMs = performance.now() - started;
  return { ...base, eventsCommitted, eventsLost, eventsInFlight, eventsTotal: s.events, snapshotsTotal, verifyMs, checkMs, problems };
}
