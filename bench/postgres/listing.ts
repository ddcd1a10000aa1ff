/**
 * Listing sessions on PostgreSQL (issue 15): "listing the 50 most recent of 100,000 sessions
 * ≤ 50 ms", through the public API (`listSessions({ limit: 50 })`, and paging with
 * `{ limit: 50, before }`) of an `openPgStore` store, next to the raw single `SELECT` of the same
 * rows through `pg` on the same private server, in the same process and run. The server is started
 * here (`startPgServer` of `@strata/store-postgres/testing`, fsync on) and stopped at the end.
 *
 * Set-up (untimed), N sessions (BENCH_LIST_SESSIONS, default 100,000) in one schema:
 * - 1,000 real sessions through `createSession` (a title, metadata, a genesis event), 4 at a time;
 * - the other N − 1,000 replicated from them by the server, in one `INSERT … SELECT` per 10,000
 *   (data-modifying CTEs over `unnest` of the new ids): for each, the rows `createSession` writes —
 *   a `sessions` row (the template's title and metadata), a root `segments` row, the `main` branch
 *   (head NULL: it follows its segment's tip, origin "genesis") and the genesis event at depth 1
 *   (the template's kind and payload). Each replica has its own id from `newSessionId(created)` and
 *   its own `created`, one minute apart, older than the real sessions; the genesis `ts` is that
 *   time, so its digest is computed anew (`eventDigest`). Then `VACUUM ANALYZE` (what autovacuum
 *   would do to a store that grew this large).
 * - Checked before anything is timed: row counts of every table; `verify(session)` (digests,
 *   links, heads) of the first page, of one page from the middle and of 100 sessions picked across
 *   the whole store; `getSession`, `branch`, `log` and `chainData` of sessions of both pages; an
 *   `append` on a replicated session, then its `verify`.
 *
 * Measured, each against the raw `SELECT id, title, created, metadata FROM sessions ORDER BY id
 * DESC LIMIT 50` (and `WHERE id < $1` for a later page) on one `pg.Client`, every result checked
 * to be the raw query's rows:
 * - **first call**: a fresh store (`openPgStore`, its own pool) and its first `listSessions`,
 *   against the first query on a fresh `pg.Client`; 5 rounds.
 * - **warm**: the first page on one store, 200 interleaved rounds after a warm-up.
 * - **deep page**: `{ limit: 50, before }` with `before` the id of a session in the middle (the
 *   45,000th–55,000th newest), 200 interleaved rounds.
 * - **every page**: all N sessions, 50 at a time, `before` the last id of the previous page
 *   (checked: each session once, newest first).
 * - **plan**: the store's own statement, captured on its pool's clients, as its connection runs it
 *   (`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE` of its prepared statement, so the plan
 *   cache's choice of a custom or a generic plan is the one it makes), for the first and the deep
 *   page; and the same statement with a forced generic and a forced custom plan.
 *
 * Run: npx tsx bench/run.ts listing   (by hand: BENCH_LIST_SESSIONS=20000 node --import tsx --conditions=@strata/source bench/postgres/listing.ts)
 */
import { type EventId, eventDigest, newSessionId, type SessionId, type SessionInfo } from "@strata/store";
import { openPgStore, type PgStore } from "@strata/store-postgres";
import pg from "pg";
import {
  type Aggregate,
  type BenchModule,
  byteValue,
  cell,
  isMain,
  med,
  progress,
  provenance,
  type RunResult,
  ratio,
  runAsScript,
  value,
} from "../lib/harness.ts";
import { median, num, type Sample, summarize, table } from "../lib/stats.ts";
import { onPgServer } from "./server.ts";

const NAME = "listing";
const SESSIONS = Number(process.env.BENCH_LIST_SESSIONS ?? 100_000);
/** Sessions made through `createSession`; the others are replicated from them. */
const TEMPLATES = Math.min(1000, SESSIONS);
const CREATORS = 4;
/** Replicas per `INSERT … SELECT`. */
const BATCH = 10_000;
/** Minutes between two replicas' creation times. */
const SPACING = 60_000;
const PAGE = 50;
const COLD = 5;
const ROUNDS = 200;
const WARMUP = 20;
/** `before` ids of the deep page: this many sessions from the middle. */
const DEEP = 20;
const SAMPLE = 100;
/** The issue's target for the first page, ms. */
const TARGET_MS = 50;
const SCHEMA = "bench_list";
const S = `"${SCHEMA}"`;

const RAW_FIRST = `SELECT id, title, created, metadata FROM ${S}.sessions ORDER BY id DESC LIMIT ${PAGE}`;
const RAW_PAGE = `SELECT id, title, created, metadata FROM ${S}.sessions WHERE id < $1 ORDER BY id DESC LIMIT ${PAGE}`;

// ---- the sessions ----

const GENESIS_KIND = "genesis@1";
const titleOf = (k: number) => `fix the flaky retry test in service-${k % 41} (#${1000 + k})`;
const metadataOf = (k: number) => ({
  agent: "coder",
  model: k % 3 === 0 ? "claude-sonnet-4-5" : "gpt-5-codex",
  cwd: `/home/dev/src/service-${k % 41}`,
  tags: ["bench", `team-${k % 7}`],
});
const genesisOf = (k: number) =>
  JSON.stringify({
    system: "You are a careful coding agent. Read before you write; run the tests after every change.",
    tools: ["read_file", "write_file", "edit", "run", "grep"],
    cwd: `/home/dev/src/service-${k % 41}`,
    task: k,
  });

interface Statement {
  readonly name?: string;
  readonly text: string;
  readonly values?: readonly unknown[];
}

/**
 * Records the statements a store's pool sends (as pg.ts counts them: every client the pool hands
 * out is wrapped on its "acquire" event).
 */
class StatementLog {
  list: Statement[] = [];
  readonly #wrapped = new WeakSet<object>();

  constructor(store: PgStore) {
    const pool = (store as unknown as { inner: { pool: pg.Pool } }).inner.pool;
    pool.on("acquire", (client) => {
      if (this.#wrapped.has(client)) return;
      this.#wrapped.add(client);
      const send = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const q = args[0];
        if (typeof q === "string") this.list.push({ text: q, values: Array.isArray(args[1]) ? args[1] : undefined });
        else if (typeof (q as { text?: unknown })?.text === "string") this.list.push(q as Statement);
        return send(...args);
      };
    });
  }
}

const poolOf = (store: PgStore) => (store as unknown as { inner: { pool: pg.Pool } }).inner.pool;

// ---- plans ----

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly "Scan Direction"?: string;
  readonly "Actual Rows"?: number;
  readonly "Actual Loops"?: number;
  readonly "Shared Hit Blocks"?: number;
  readonly "Shared Read Blocks"?: number;
  readonly Plans?: readonly PlanNode[];
}

interface PlanFacts {
  /** The sessions table is read by an index scan (plain or index-only) of its primary key, backwards. */
  readonly pkeyBackward: boolean;
  /** A Sort node anywhere, or a sequential scan of the sessions table. */
  readonly sort: boolean;
  readonly seqScan: boolean;
  /** Rows the sessions scan returned (all loops). */
  readonly rows: number;
  /** Buffers the statement touched (hit + read). */
  readonly buffers: number;
  readonly serverMs: number;
}

function planFacts(explained: unknown): PlanFacts {
  const top = (explained as { Plan: PlanNode; "Execution Time": number }[])[0];
  if (top === undefined) throw new Error("EXPLAIN returned no plan");
  const nodes: PlanNode[] = [];
  const walk = (n: PlanNode) => {
    nodes.push(n);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(top.Plan);
  const scans = nodes.filter((n) => n["Relation Name"] === "sessions");
  return {
    pkeyBackward:
      scans.length === 1 &&
      scans.every(
        (n) =>
          (n["Node Type"] === "Index Scan" || n["Node Type"] === "Index Only Scan") &&
          n["Index Name"] === "sessions_pkey" &&
          n["Scan Direction"] === "Backward",
      ),
    sort: nodes.some((n) => n["Node Type"].includes("Sort")),
    seqScan: scans.some((n) => n["Node Type"] === "Seq Scan"),
    rows: scans.reduce((a, n) => a + (n["Actual Rows"] ?? 0) * (n["Actual Loops"] ?? 1), 0),
    buffers: (top.Plan["Shared Hit Blocks"] ?? 0) + (top.Plan["Shared Read Blocks"] ?? 0),
    serverMs: top["Execution Time"],
  };
}

/** An index scan of the primary key, backwards, reading no more rows than the page, and no sort. */
const planOk = (f: PlanFacts) => f.pkeyBackward && !f.sort && !f.seqScan && f.rows <= PAGE;

function putPlan(values: Record<string, number>, key: string, f: PlanFacts): void {
  values[`plan.${key}.ok`] = planOk(f) ? 1 : 0;
  values[`plan.${key}.pkeyBackward`] = f.pkeyBackward ? 1 : 0;
  values[`plan.${key}.sort`] = f.sort ? 1 : 0;
  values[`plan.${key}.seqScan`] = f.seqScan ? 1 : 0;
  values[`plan.${key}.rows`] = f.rows;
  values[`plan.${key}.buffers`] = f.buffers;
  values[`plan.${key}.serverMs`] = f.serverMs;
}

/** A SQL literal of a parameter (the EXECUTE of a prepared statement takes expressions). */
function literal(client: pg.ClientBase, v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number") return String(v);
  return client.escapeLiteral(String(v));
}

/**
 * The plan of the store's prepared statement `st` as its own connection runs it: that connection
 * (the pool's most recently used; the listing calls run one at a time) is taken from the store's
 * pool, and `EXPLAIN (ANALYZE) EXECUTE` of the statement's name makes the plan cache's choice the
 * store's calls make. Also says whether the plan was a generic one.
 */
async function storePlan(store: PgStore, st: Statement): Promise<{ facts: PlanFacts; generic: boolean }> {
  if (st.name === undefined) throw new Error("the store's listing statement is not a prepared statement; cannot EXPLAIN EXECUTE it");
  const client = await poolOf(store).connect();
  try {
    const counts = async () =>
      (await client.query("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1", [st.name])).rows[0] as
        | { generic_plans: number; custom_plans: number }
        | undefined;
    const before = await counts();
    if (before === undefined) throw new Error(`the store's connection has no prepared statement ${st.name}`);
    const args = (st.values ?? []).map((v) => literal(client, v)).join(", ");
    const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${st.name}(${args})`);
    const after = (await counts()) as { generic_plans: number };
    return { facts: planFacts(r.rows[0]?.["QUERY PLAN"]), generic: Number(after.generic_plans) > Number(before.generic_plans) };
  } finally {
    client.release();
  }
}

/** The plan of statement `st` under `plan_cache_mode = mode`, prepared by SQL on `admin`. */
async function forcedPlan(admin: pg.Client, st: Statement, mode: "force_generic_plan" | "force_custom_plan"): Promise<PlanFacts> {
  await admin.query("DEALLOCATE ALL");
  await admin.query(`PREPARE listing AS ${st.text}`);
  await admin.query(`SET plan_cache_mode = ${mode}`);
  try {
    const args = (st.values ?? []).map((v) => literal(admin, v)).join(", ");
    const r = await admin.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE listing(${args})`);
    return planFacts(r.rows[0]?.["QUERY PLAN"]);
  } finally {
    await admin.query("RESET plan_cache_mode");
    await admin.query("DEALLOCATE listing");
  }
}

// ---- checks ----

const idsOf = (rows: readonly { id: string }[]) => rows.map((r) => r.id).join(",");

function samePage(what: string, got: readonly SessionInfo[], raw: readonly { id: string }[]): void {
  if (got.length !== PAGE || raw.length !== PAGE)
    throw new Error(`${what}: strata listed ${got.length} sessions, raw ${raw.length}, expected ${PAGE}`);
  if (idsOf(got) !== idsOf(raw)) throw new Error(`${what}: strata's page is not the raw query's rows`);
}

async function setUp(url: string, admin: pg.Client, values: Record<string, number>): Promise<void> {
  const store = await openPgStore(url, { schema: SCHEMA });
  try {
    // 1. Real sessions through the API.
    progress(NAME, `set-up: ${TEMPLATES} sessions through createSession (${CREATORS} at a time)`);
    const t0 = performance.now();
    const templates: { id: SessionId; created: number; k: number }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATORS }, async () => {
        for (let k = next++; k < TEMPLATES; k = next++) {
          const { session } = await store.createSession({
            title: titleOf(k),
            metadata: metadataOf(k),
            genesis: { kind: GENESIS_KIND, data: genesisOf(k) },
          });
          templates.push({ id: session.id, created: session.created, k });
        }
      }),
    );
    templates.sort((a, b) => a.k - b.k);
    const t1 = performance.now();
    values["setup.createSeconds"] = (t1 - t0) / 1000;

    // 2. The others replicated by the server, older than the real ones.
    const replicas = SESSIONS - TEMPLATES;
    progress(NAME, `set-up: ${replicas} sessions replicated by INSERT … SELECT, ${BATCH} per statement`);
    const oldest = Math.min(...templates.map((t) => t.created));
    for (let from = 0; from < replicas; from += BATCH) {
      const ids: string[] = [];
      const created: number[] = [];
      const tmpl: string[] = [];
      const digests: Buffer[] = [];
      for (let j = from; j < Math.min(replicas, from + BATCH); j++) {
        const t = templates[j % TEMPLATES] as { id: SessionId; k: number };
        const at = oldest - (j + 1) * SPACING;
        ids.push(newSessionId(at));
        created.push(at);
        tmpl.push(t.id);
        digests.push(Buffer.from(eventDigest(null, { kind: GENESIS_KIND, label: null, by: null, ts: at, data: genesisOf(t.k) }), "hex"));
      }
      const r = await admin.query(
        `WITH n AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bytea[]) AS n(id, created, tmpl, digest)),
              ss AS (INSERT INTO ${S}.sessions (id, title, created, metadata)
                     SELECT n.id, t.title, n.created, t.metadata FROM n JOIN ${S}.sessions t ON t.id = n.tmpl RETURNING 1),
              sg AS (INSERT INTO ${S}.segments (session, parent, fork_depth) SELECT n.id, NULL, 0 FROM n RETURNING id, session),
              br AS (INSERT INTO ${S}.branches (session, name, segment, head, created, origin)
                     SELECT sg.session, 'main', sg.id, NULL, n.created, 'genesis' FROM sg JOIN n ON n.id = sg.session RETURNING 1),
              ev AS (INSERT INTO ${S}.events (segment, depth, prior, kind, label, by, ts, digest, blob, data)
                     SELECT sg.id, 1, NULL, g.kind, g.label, g.by, n.created, n.digest, g.blob, g.data
                     FROM sg JOIN n ON n.id = sg.session
                     JOIN ${S}.segments tg ON tg.session = n.tmpl AND tg.parent IS NULL
                     JOIN ${S}.events g ON g.segment = tg.id AND g.depth = 1 RETURNING 1)
         SELECT (SELECT count(*) FROM ss)::int AS sessions, (SELECT count(*) FROM sg)::int AS segments,
                (SELECT count(*) FROM br)::int AS branches, (SELECT count(*) FROM ev)::int AS events`,
        [ids, created, tmpl, digests],
      );
      const row = r.rows[0] as Record<string, number>;
      for (const t of ["sessions", "segments", "branches", "events"])
        if (row[t] !== ids.length) throw new Error(`set-up: a batch of ${ids.length} replicas wrote ${row[t]} ${t} rows`);
    }
    const t2 = performance.now();
    values["setup.replicateSeconds"] = (t2 - t1) / 1000;
    await admin.query(`VACUUM ANALYZE ${S}.sessions, ${S}.segments, ${S}.branches, ${S}.events`);
    values["setup.vacuumSeconds"] = (performance.now() - t2) / 1000;
    for (const t of ["sessions", "segments", "branches", "events"]) {
      const n = Number((await admin.query(`SELECT count(*)::int AS n FROM ${S}.${t}`)).rows[0]?.n);
      if (n !== SESSIONS) throw new Error(`set-up: ${t} holds ${n} rows, expected ${SESSIONS}`);
    }
    const size = await admin.query(
      `SELECT pg_total_relation_size('${S}.sessions')::bigint AS total, pg_indexes_size('${S}.sessions')::bigint AS indexes`,
    );
    values["bytes.sessions"] = Number(size.rows[0]?.total);
    values["bytes.sessionsIndexes"] = Number(size.rows[0]?.indexes);

    // 3. The sessions are sessions the store reads and writes.
    progress(
      NAME,
      `set-up: checking (verify of the first page, a page from the middle and ${SAMPLE} sessions across the store; reads; an append)`,
    );
    const first = await store.listSessions({ limit: PAGE });
    const midId = (await admin.query(`SELECT id FROM ${S}.sessions ORDER BY id DESC OFFSET $1 LIMIT 1`, [Math.floor(SESSIONS / 2)])).rows[0]
      ?.id as SessionId;
    const middle = await store.listSessions({ limit: PAGE, before: midId });
    const picked = (await admin.query(`SELECT id FROM ${S}.sessions ORDER BY md5(id) LIMIT ${SAMPLE}`)).rows.map((r) => r.id as SessionId);
    const byId = new Map(templates.map((t) => [t.id, t.k]));
    const kOf = (s: SessionInfo): number => {
      const real = byId.get(s.id);
      if (real !== undefined) return real;
      const t = templates.find((x) => titleOf(x.k) === s.title);
      if (t === undefined) throw new Error(`set-up: session ${s.id} has a title no template has`);
      return t.k;
    };
    for (const s of [...first.slice(0, 5), ...middle.slice(0, 5)]) {
      const k = kOf(s);
      const got = await store.getSession(s.id);
      if (JSON.stringify(got) !== JSON.stringify(s)) throw new Error(`set-up: getSession(${s.id}) differs from its listing`);
      if (JSON.stringify(s.metadata) !== JSON.stringify(metadataOf(k))) throw new Error(`set-up: session ${s.id} has other metadata`);
      const main = await store.branch(s.id, "main");
      const log = await store.log(s.id);
      if (main === undefined || main.headDepth !== 1 || main.origin !== "genesis" || log.length !== 1 || log[0]?.id !== main.head)
        throw new Error(`set-up: session ${s.id}'s main branch is not its genesis event`);
      if (log[0]?.ts !== s.created && byId.get(s.id) === undefined)
        throw new Error(`set-up: replica ${s.id}'s genesis ts is not its creation time`);
      const data = await store.chainData(main.head);
      if (data.length !== 1 || data[0] !== genesisOf(k)) throw new Error(`set-up: session ${s.id}'s genesis payload differs`);
    }
    // A replica takes an append like any session.
    const replica = middle[0] as SessionInfo;
    const head = (await store.branch(replica.id, "main"))?.head as EventId;
    await store.append(replica.id, "main", head, [{ kind: "patch@1", label: "x", data: '{"ops":[]}' }]);
    if ((await store.log(replica.id)).length !== 2) throw new Error(`set-up: the append on ${replica.id} is not in its log`);
    let findings = 0;
    let verified = 0;
    for (const id of new Set([...first.map((s) => s.id), ...middle.map((s) => s.id), ...picked, replica.id])) {
      const report = await store.verify(id);
      verified++;
      findings += report.findings.length;
      if (!report.ok) throw new Error(`set-up: verify(${id}) found ${report.findings.map((f) => f.message).join("; ")}`);
    }
    values["setup.verified"] = verified;
    values["setup.findings"] = findings;
  } finally {
    await store.close().catch(() => {});
  }
}

async function measureAll(url: string, metrics: Record<string, Sample>, values: Record<string, number>): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const raw = new pg.Client({ connectionString: url });
  const stores: PgStore[] = [];
  try {
    await raw.connect();
    values.sessions = SESSIONS;
    values.templates = TEMPLATES;
    await setUp(url, admin, values);

    // 1. First call on a fresh store, against the first query on a fresh client.
    progress(NAME, `first call on a fresh store: ${COLD} rounds`);
    const openMs: number[] = [];
    const connectMs: number[] = [];
    const coldStrata: number[] = [];
    const coldRaw: number[] = [];
    const coldRatios: number[] = [];
    const totalStrata: number[] = [];
    const totalRaw: number[] = [];
    const totalRatios: number[] = [];
    for (let round = 0; round < COLD; round++) {
      const a = performance.now();
      const fresh = await openPgStore(url, { schema: SCHEMA });
      const b = performance.now();
      const got = await fresh.listSessions({ limit: PAGE });
      const c = performance.now();
      await fresh.close();
      const client = new pg.Client({ connectionString: url });
      const c2 = performance.now();
      await client.connect();
      const d = performance.now();
      const rawRows = (await client.query(RAW_FIRST)).rows;
      const e = performance.now();
      await client.end();
      samePage("first call", got, rawRows);
      openMs.push(b - a);
      connectMs.push(d - c2);
      coldStrata.push(c - b);
      coldRaw.push(e - d);
      coldRatios.push((c - b) / (e - d));
      totalStrata.push(c - a);
      totalRaw.push(e - c2);
      totalRatios.push((c - a) / (e - c2));
    }
    metrics["open.strata"] = summarize(openMs, "ms");
    metrics["open.raw"] = summarize(connectMs, "ms");
    metrics["cold.strata"] = summarize(coldStrata, "ms");
    metrics["cold.raw"] = summarize(coldRaw, "ms");
    values.coldRatio = median(coldRatios);
    metrics["coldTotal.strata"] = summarize(totalStrata, "ms");
    metrics["coldTotal.raw"] = summarize(totalRaw, "ms");
    values.coldTotalRatio = median(totalRatios);

    // The store the warm figures are taken on.
    const store = await openPgStore(url, { schema: SCHEMA });
    stores.push(store);
    const log = new StatementLog(store);
    const befores: SessionId[] = [];
    const deepFrom = Math.floor(SESSIONS * 0.45);
    const deepStep = Math.max(1, Math.floor((SESSIONS * 0.1) / DEEP));
    for (let i = 0; i < DEEP; i++)
      befores.push(
        (await admin.query(`SELECT id FROM ${S}.sessions ORDER BY id DESC OFFSET $1 LIMIT 1`, [deepFrom + i * deepStep - 1])).rows[0]
          ?.id as SessionId,
      );
    values.deepFrom = deepFrom + 1;
    values.deepTo = deepFrom + (DEEP - 1) * deepStep + PAGE;

    // 2. Warm first page and deep page, interleaved with the raw query, alternating which goes first.
    progress(NAME, `first page and deep page: ${ROUNDS} interleaved rounds (+${WARMUP} warm-up)`);
    const firstRows = (await raw.query(RAW_FIRST)).rows;
    const deepRows: { id: string }[][] = [];
    for (const id of befores) deepRows.push((await raw.query(RAW_PAGE, [id])).rows);
    const firstIds = idsOf(firstRows);
    const deepIds = deepRows.map(idsOf);
    const firstStrata: number[] = [];
    const firstRaw: number[] = [];
    const firstRatios: number[] = [];
    const deepStrata: number[] = [];
    const deepRaw: number[] = [];
    const deepRatios: number[] = [];
    log.list = [];
    let listCalls = 0;
    let firstStatement: Statement | undefined;
    let deepStatement: Statement | undefined;
    for (let round = -WARMUP; round < ROUNDS; round++) {
      const before = befores[((round % DEEP) + DEEP) % DEEP] as SessionId;
      const expectDeep = deepIds[((round % DEEP) + DEEP) % DEEP] as string;
      const strataFirst = async () => {
        const a = performance.now();
        const got = await store.listSessions({ limit: PAGE });
        const t = performance.now() - a;
        if (got.length !== PAGE || idsOf(got) !== firstIds) throw new Error("first page: strata's page is not the raw query's rows");
        return t;
      };
      const rawFirst = async () => {
        const a = performance.now();
        const rows = (await raw.query(RAW_FIRST)).rows;
        const t = performance.now() - a;
        if (idsOf(rows) !== firstIds) throw new Error("first page: the raw rows changed");
        return t;
      };
      const strataDeep = async () => {
        const a = performance.now();
        const got = await store.listSessions({ limit: PAGE, before });
        const t = performance.now() - a;
        if (got.length !== PAGE || idsOf(got) !== expectDeep) throw new Error("deep page: strata's page is not the raw query's rows");
        return t;
      };
      const rawDeep = async () => {
        const a = performance.now();
        const rows = (await raw.query(RAW_PAGE, [before])).rows;
        const t = performance.now() - a;
        if (idsOf(rows) !== expectDeep) throw new Error("deep page: the raw rows changed");
        return t;
      };
      const strataFirstGoes = round % 2 === 0;
      let sf: number;
      let rf: number;
      let sd: number;
      let rd: number;
      const mark = log.list.length;
      if (strataFirstGoes) {
        sf = await strataFirst();
        rf = await rawFirst();
      } else {
        rf = await rawFirst();
        sf = await strataFirst();
      }
      firstStatement ??= log.list[mark];
      const markDeep = log.list.length;
      if (strataFirstGoes) {
        sd = await strataDeep();
        rd = await rawDeep();
      } else {
        rd = await rawDeep();
        sd = await strataDeep();
      }
      deepStatement = log.list[markDeep];
      listCalls += 2;
      if (round < 0) continue;
      firstStrata.push(sf);
      firstRaw.push(rf);
      firstRatios.push(sf / rf);
      deepStrata.push(sd);
      deepRaw.push(rd);
      deepRatios.push(sd / rd);
    }
    metrics["first.strata"] = summarize(firstStrata, "ms");
    metrics["first.raw"] = summarize(firstRaw, "ms");
    values.firstRatio = median(firstRatios);
    metrics["deep.strata"] = summarize(deepStrata, "ms");
    metrics["deep.raw"] = summarize(deepRaw, "ms");
    values.deepRatio = median(deepRatios);
    values.statementsPerList = log.list.length / listCalls;

    // 3. The plans of the store's statement.
    if (firstStatement === undefined || deepStatement === undefined)
      throw new Error("the store's listing statement was not seen on its pool");
    if (firstStatement.text !== deepStatement.text) throw new Error("the first and the deep page are different statements");
    progress(NAME, `plan of the store's statement: ${firstStatement.text.replace(/\s+/g, " ")}`);
    const planFirst = await storePlan(store, firstStatement);
    const planDeep = await storePlan(store, deepStatement);
    putPlan(values, "first", planFirst.facts);
    putPlan(values, "deep", planDeep.facts);
    values["plan.first.generic"] = planFirst.generic ? 1 : 0;
    values["plan.deep.generic"] = planDeep.generic ? 1 : 0;
    putPlan(values, "forcedGeneric", await forcedPlan(admin, firstStatement, "force_generic_plan"));
    putPlan(values, "forcedCustom", await forcedPlan(admin, firstStatement, "force_custom_plan"));
    progress(
      NAME,
      `plans: first page ${JSON.stringify(planFirst)}, deep page ${JSON.stringify(planDeep)}, forced generic ok ${values["plan.forcedGeneric.ok"]}, forced custom ok ${values["plan.forcedCustom.ok"]}`,
    );

    // 4. Every page, each session once, newest first; then the raw walk.
    progress(NAME, `every page: ${SESSIONS} sessions, ${PAGE} at a time, strata then raw`);
    const a = performance.now();
    const walked: string[] = [];
    let calls = 0;
    for (let before: SessionId | undefined; ; ) {
      const page = await store.listSessions(before === undefined ? { limit: PAGE } : { limit: PAGE, before });
      calls++;
      for (const s of page) walked.push(s.id);
      if (page.length < PAGE) break;
      before = (page[page.length - 1] as SessionInfo).id;
    }
    const b = performance.now();
    const rawWalked: string[] = [];
    for (let before: string | undefined; ; ) {
      const rows = (before === undefined ? await raw.query(RAW_FIRST) : await raw.query(RAW_PAGE, [before])).rows as { id: string }[];
      for (const r of rows) rawWalked.push(r.id);
      if (rows.length < PAGE) break;
      before = (rows[rows.length - 1] as { id: string }).id;
    }
    const c = performance.now();
    if (walked.length !== SESSIONS || new Set(walked).size !== SESSIONS)
      throw new Error(`every page: strata listed ${walked.length} sessions (${new Set(walked).size} distinct), expected ${SESSIONS}`);
    for (let i = 1; i < walked.length; i++)
      if ((walked[i] as string) >= (walked[i - 1] as string)) throw new Error(`every page: session ${i} is not older than the one before`);
    if (walked.join(",") !== rawWalked.join(",")) throw new Error("every page: strata's listing is not the raw query's");
    metrics["walk.strata"] = summarize([b - a], "ms");
    metrics["walk.raw"] = summarize([c - b], "ms");
    values.walkRatio = (b - a) / (c - b);
    values.walkCalls = calls;
  } finally {
    for (const s of stores) await s.close().catch(() => {});
    await raw.end().catch(() => {});
    await admin.end().catch(() => {});
  }
}

/** A plain figure: a count as a whole number, anything else to three digits. */
const per = (x: number) => (Number.isInteger(x) ? x.toLocaleString("en-US") : num(x));
const yes = (x: number) => (x === 1 ? "yes" : "**no**");

/** "yes: …" of a plan's figures in one cell. */
function planCell(agg: Aggregate, key: string): string {
  const ok = agg.values[`plan.${key}.ok`];
  if (ok === undefined) return "–";
  const all = ok.lo === 1 && ok.hi === 1;
  const facts = [
    `index scan backward of \`sessions_pkey\` ${yes(agg.values[`plan.${key}.pkeyBackward`]?.lo ?? 0)}`,
    `sort ${agg.values[`plan.${key}.sort`]?.hi === 0 ? "none" : "**yes**"}`,
    `rows read ${value(agg, `plan.${key}.rows`, per)}`,
    `buffers ${value(agg, `plan.${key}.buffers`, per)}`,
    `server ${value(agg, `plan.${key}.serverMs`)} ms`,
  ];
  return `${all ? "yes" : "**no**"} (${facts.join(", ")})`;
}

const mod: BenchModule = {
  title: "Listing sessions on PostgreSQL",
  measure(): Promise<RunResult> {
    return onPgServer(NAME, measureAll);
  },
  render(agg: Aggregate): string {
    const n = med(agg, "sessions");
    const t = med(agg, "templates");
    const generic = (key: string) => {
      const g = agg.values[`plan.${key}.generic`];
      if (g === undefined) return "?";
      if (g.hi === 0) return "a custom plan";
      if (g.lo === 1) return "the generic plan";
      return "a custom plan in some runs, the generic one in others";
    };
    const rows = [
      [
        "first page, first call on a fresh store (`listSessions({ limit: 50 })`)",
        cell(agg, "cold.strata"),
        cell(agg, "cold.raw"),
        ratio(agg, "coldRatio"),
        `≤ ${TARGET_MS} ms`,
      ],
      [
        "… with the `openPgStore` before it (raw: with the client's `connect`)",
        cell(agg, "coldTotal.strata"),
        cell(agg, "coldTotal.raw"),
        ratio(agg, "coldTotalRatio"),
        "",
      ],
      ["… of which `openPgStore` (connect, schema check) / `connect`", cell(agg, "open.strata"), cell(agg, "open.raw"), "", ""],
      [
        "first page, warm (`listSessions({ limit: 50 })`)",
        cell(agg, "first.strata"),
        cell(agg, "first.raw"),
        ratio(agg, "firstRatio"),
        `≤ ${TARGET_MS} ms`,
      ],
      [
        `deep page (\`{ limit: 50, before }\`: sessions ${per(med(agg, "deepFrom"))}–${per(med(agg, "deepTo"))} from the newest)`,
        cell(agg, "deep.strata"),
        cell(agg, "deep.raw"),
        ratio(agg, "deepRatio"),
        "",
      ],
      [
        `every page: all ${per(n)} sessions in ${value(agg, "walkCalls", per)} calls, \`before\` = the previous page's last id`,
        cell(agg, "walk.strata"),
        cell(agg, "walk.raw"),
        ratio(agg, "walkRatio"),
        "",
      ],
      ["statements per `listSessions`", value(agg, "statementsPerList", per), "1", "", ""],
      [`plan of the store's statement, first page (${generic("first")})`, planCell(agg, "first"), "", "", "index scan, no sort"],
      [`… deep page (${generic("deep")})`, planCell(agg, "deep"), "", "", "index scan, no sort"],
      ["… the same statement, generic plan forced", planCell(agg, "forcedGeneric"), "", "", ""],
      ["… the same statement, custom plan forced", planCell(agg, "forcedCustom"), "", "", ""],
    ];
    return [
      `### ${mod.title}`,
      "",
      provenance(agg),
      "",
      `A private PostgreSQL server started by the benchmark (packages/store-postgres/test/pg-server.ts: 127.0.0.1, fsync on, \`shared_buffers=128MB\`), one store schema of ${per(n)} sessions. ` +
        `_Set-up_ (untimed): ${per(t)} sessions through \`createSession\` (a title, metadata, a genesis event; ${value(agg, "setup.createSeconds")} s), ` +
        `the other ${per(n - t)} replicated from them by the server in \`INSERT … SELECT\`s of ${per(BATCH)} (data-modifying CTEs over \`unnest\` of the new ids; ${value(agg, "setup.replicateSeconds")} s): ` +
        "each replica gets the rows `createSession` writes — its `sessions` row (the template's title and metadata), a root segment, the `main` branch following it and the genesis event at depth 1 (the template's payload) — with an id of its own from `newSessionId(created)`, " +
        `its own \`created\` (one minute apart, older than the real sessions) as the genesis \`ts\`, and the digest computed anew (\`eventDigest\`); then \`VACUUM ANALYZE\` (${value(agg, "setup.vacuumSeconds")} s). ` +
        `Checked before timing: every table holds ${per(n)} rows; \`verify(session)\` of ${value(agg, "setup.verified", per)} sessions (the first page, a page from the middle, ${SAMPLE} picked across the store, ${value(agg, "setup.findings", per)} findings); ` +
        "`getSession`, `branch`, `log` and `chainData` of sessions of both pages; an `append` on a replicated session. " +
        `The sessions table is ${byteValue(agg, "bytes.sessions")}, of which ${byteValue(agg, "bytes.sessionsIndexes")} its primary key. ` +
        "Only the public API is timed (`openPgStore`, `listSessions`); every page is checked to be the raw query's rows. " +
        `_Raw_: \`SELECT id, title, created, metadata FROM sessions ORDER BY id DESC LIMIT 50\` (and \`WHERE id < $1\` for a later page) through one \`pg.Client\`, parameterized, unnamed. ` +
        `_First call_: ${agg.metrics["cold.strata"]?.n ?? "?"} rounds of a fresh \`openPgStore\` (its own pool) and its first \`listSessions\`, against the first query of a freshly connected \`pg.Client\`, and both again with what comes before them: \`openPgStore\` (it connects and checks the schema; the first call reuses that connection) and the client's \`connect\`; the server's buffers are warm. ` +
        `_Warm_ and _deep page_: ${agg.metrics["first.strata"]?.n ?? "?"} interleaved rounds each on one store after ${WARMUP} of warm-up, alternating which side goes first; the deep page's \`before\` is one of ${DEEP} ids from the middle of the list; ratios per round. ` +
        "_Every page_: the whole list, each session once and newest first (checked), then the raw keyset walk; one pass per process. " +
        "_Plan_: the store's statement as its pool sends it, captured on the pool's clients, explained on the store's own connection (`EXPLAIN (ANALYZE, BUFFERS) EXECUTE` of its prepared statement, so the plan is the one the plan cache picks for the store's calls), and prepared again with `plan_cache_mode` forced either way; yes = an index scan backward of the primary key, reading no more than 50 rows, no sort.",
      "",
      table([`${per(n)} sessions`, "strata", "raw PostgreSQL", "strata / raw", "goal"], rows, ["l", "r", "r", "r", "r"]),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const line = (ok: boolean, text: string) => `${ok ? "**PASS**" : "**FAIL**"} — ${text}`;
    const n = per(med(agg, "sessions"));
    const warm = med(agg, "first.strata");
    const cold = med(agg, "cold.strata");
    const plans = ["first", "deep", "forcedGeneric", "forcedCustom"].map((k) => agg.values[`plan.${k}.ok`]);
    const indexed = plans.every((p) => p !== undefined && p.lo === 1);
    return [
      line(
        warm <= TARGET_MS && cold <= TARGET_MS,
        `listing the 50 most recent of ${n} sessions ≤ ${TARGET_MS} ms (\`listSessions({ limit: 50 })\`): warm ${cell(agg, "first.strata")}, ` +
          `first call on a fresh store ${cell(agg, "cold.strata")}; a deep page (\`before\`) ${cell(agg, "deep.strata")}`,
      ),
      line(
        indexed,
        `the listing statement reads the primary-key index backwards, at most 50 rows, no sort (EXPLAIN ANALYZE: first and deep page, generic and custom plans): rows read ${value(agg, "plan.first.rows", per)} / ${value(agg, "plan.deep.rows", per)}`,
      ),
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
