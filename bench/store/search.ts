/**
 * Search (issue 17: "`strata search TEXT` … ≤ 50 ms for a query over 10,000 sessions / 1,000,000
 * events"), through the public API (`store.search`) and the command (`strata search … --json`, a
 * fresh process of the published layout), on one SQLite file of BENCH_SEARCH_SESSIONS sessions
 * (default 10,000) × BENCH_SEARCH_EVENTS events each (default 100): 1,000,000 events, each with
 * the searchable text an agent's step has (~40 words of a 4,000-word vocabulary drawn with a Zipf
 * law, a file path, a tool name; one event in 100 also a unique ticket number). The file is built
 * once (untimed, by `store.append`, one group of 100 events per session, each event with its
 * `search` text) and reused by every process of the run, in the temp dir, keyed by the workload.
 *
 * Measured, each against a baseline in the same process:
 * - `store.search` of five queries of different selectivity (a rare word: 1 event; a common word,
 *   the first page of 20; two common words together; a phrase; a word in one session), warm,
 *   against the floor: an FTS5 `MATCH` of the query's words `… ORDER BY rowid DESC LIMIT` on the same connection (the candidates query; schema 6 checks phrases on the texts, SE-9),
 *   ids only. And the first search of a fresh `openStore`, against the raw query's first run on a
 *   fresh connection.
 * - What there was before the index, for scale: a `LIKE` scan of the same texts (a plain table of
 *   the same rows, what a tool without an index does), for the rare word.
 * - `strata search WORD --json`, the whole command in a fresh process, against `strata --version`
 *   in the same layout (start-up).
 * - The cost of the index on the write path: `store.append` of one event with its `search` text
 *   against the same event without one, on two files of the same build, interleaved.
 *
 * Run: npx tsx bench/run.ts search   (the build must be current for the command's row)
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventId, type EventInput, openStore, SCHEMA_VERSION, type SessionId, type SqliteStore } from "@strata/store";
import { installedLayout, timed, userEnv } from "../cli/process.ts";
import {
  type Aggregate,
  type BenchModule,
  cell,
  isMain,
  med,
  progress,
  provenance,
  type RunResult,
  runAsScript,
  value,
} from "../lib/harness.ts";
import { num, rng, type Sample, summarize, table } from "../lib/stats.ts";

const NAME = "search";
const SESSIONS = Number(process.env.BENCH_SEARCH_SESSIONS ?? 10_000);
const EVENTS = Number(process.env.BENCH_SEARCH_EVENTS ?? 100);
const ROUNDS = Number(process.env.BENCH_SEARCH_ROUNDS ?? 60);
const CLI_ROUNDS = Number(process.env.BENCH_SEARCH_CLI_ROUNDS ?? 5);
const APPENDS = 256 * 9;
const TARGET_MS = 50;

// ---- the workload: deterministic texts ----

const SYLLABLES = ["ka", "lo", "mi", "ter", "san", "vo", "rel", "dun", "pix", "gra", "shel", "tor", "ben", "qui", "zar", "fen"];
/** 4,000 words; the first few are the most frequent (Zipf). */
const VOCAB = Array.from({ length: 4000 }, (_, k) => {
  let w = "";
  let x = k + 17;
  do {
    w += SYLLABLES[x % SYLLABLES.length];
    x = Math.floor(x / SYLLABLES.length);
  } while (x > 0);
  return w;
});
const ZIPF: number[] = (() => {
  const cum: number[] = [];
  let total = 0;
  for (let k = 0; k < VOCAB.length; k++) cum.push((total += 1 / (k + 1)));
  return cum.map((c) => c / total);
})();
function word(r: () => number): string {
  const x = r();
  let lo = 0;
  let hi = ZIPF.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((ZIPF[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo] as string;
}
const TOOLS = ["read_file", "write_file", "edit_file", "run", "grep", "list_dir"];

/** The searchable text of event `e` of session `s`. */
function textOf(s: number, e: number, r: () => number): string {
  const words = Array.from({ length: 40 }, () => word(r));
  const tool = TOOLS[(s + e) % TOOLS.length] as string;
  const path = `src/${VOCAB[(s * 7 + e) % 300]}/${VOCAB[(e * 13) % 500]}.ts`;
  const ticket = e % 100 === 42 ? ` ticket-${s}-${e}` : "";
  return `${tool} ${path}\n${words.join(" ")}${ticket}`;
}

/** The rare word: the ticket of one event in the middle of the store. */
const RARE = `ticket-${Math.floor(SESSIONS / 2)}-42`;
const COMMON = VOCAB[0] as string;
const TWO = `${VOCAB[3]} ${VOCAB[40]}`;
const PHRASE = `"${TOOLS[2]} src"`;

interface Built {
  readonly path: string;
  readonly middle: SessionId;
  readonly bytes: number;
}

function build(): Built {
  // Keyed by the schema too: a file built by an older build would keep its older index when it migrates.
  const dir = join(tmpdir(), `strata-bench-search-v${SCHEMA_VERSION}-${SESSIONS}x${EVENTS}`);
  const path = join(dir, "search.db");
  const done = join(dir, "done");
  mkdirSync(dir, { recursive: true });
  let store: SqliteStore;
  try {
    statSync(done);
    store = openStore(path);
  } catch {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    store = openStore(path);
    const t0 = Date.now();
    for (let s = 0; s < SESSIONS; s++) {
      const r = rng(s + 1);
      const { session, genesis } = store.createSession({ title: `task ${s}`, genesis: { kind: "genesis@1", data: "{}" } });
      const events: EventInput[] = Array.from({ length: EVENTS }, (_, e) => ({
        kind: "patch@1",
        label: e % 2 === 0 ? "call.output" : "turn.assistant",
        data: '{"ops":[]}',
        search: textOf(s, e, r),
      }));
      store.append(session.id, "main", genesis.id, events);
      if (s % 1000 === 999) progress(NAME, `built ${s + 1} of ${SESSIONS} sessions (${Math.round((Date.now() - t0) / 1000)} s)`);
    }
    store.database.pragma("wal_checkpoint(TRUNCATE)");
    store.database.exec("INSERT INTO search(search) VALUES ('optimize')");
    mkdirSync(done);
  }
  const sessions = store.listSessions();
  const middle = (sessions[sessions.length - 1 - Math.floor(SESSIONS / 2)] as { id: SessionId }).id;
  store.close();
  return { path, middle, bytes: statSync(path).size };
}

/**
 * The raw query's MATCH: every word of the text, AND (schema 6's index has no positions, SE-9:
 * this is the candidates query `store.search` issues; it then checks phrases on the texts).
 */
function words(text: string): string {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => `"${w}"`).join(" AND ");
}

function ms(f: () => unknown): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

function measureSearch(b: Built, metrics: Record<string, Sample>, values: Record<string, number>): void {
  // First search of a fresh store, against the raw query's first run on a fresh connection.
  const t = process.hrtime.bigint();
  const cold = openStore(b.path, { readonly: true });
  const first = cold.search({ text: COMMON });
  const coldMs = Number(process.hrtime.bigint() - t) / 1e6;
  cold.close();
  const t2 = process.hrtime.bigint();
  const rawCold = openStore(b.path, { readonly: true });
  rawCold.database.prepare("SELECT rowid FROM search WHERE search MATCH ? ORDER BY rowid DESC LIMIT 20").all(words(COMMON));
  const rawColdMs = Number(process.hrtime.bigint() - t2) / 1e6;
  rawCold.close();
  if (first.length !== 20) throw new Error(`the common word found ${first.length} hits, not 20`);
  values["cold.ms"] = coldMs;
  values["cold.rawMs"] = rawColdMs;

  const store = openStore(b.path, { readonly: true });
  const db = store.database;
  const raw = db.prepare("SELECT rowid FROM search WHERE search MATCH ? ORDER BY rowid DESC LIMIT ?").pluck();
  const rawIn = db.prepare(
    "SELECT x.rowid FROM search x JOIN events e ON e.id = x.rowid JOIN segments g ON g.id = e.segment WHERE search MATCH ? AND g.session = ? ORDER BY x.rowid DESC LIMIT ?",
  );
  const queries: { key: string; run: () => number; floor: () => number; expect?: number }[] = [
    {
      key: "rare",
      run: () => store.search({ text: RARE }).length,
      floor: () => raw.all(words(RARE), 20).length,
      expect: 1,
    },
    { key: "common", run: () => store.search({ text: COMMON }).length, floor: () => raw.all(words(COMMON), 20).length, expect: 20 },
    { key: "two", run: () => store.search({ text: TWO }).length, floor: () => raw.all(words(TWO), 20).length },
    { key: "phrase", run: () => store.search({ text: PHRASE }).length, floor: () => raw.all(words(PHRASE), 20).length, expect: 20 },
    {
      key: "session",
      run: () => store.search({ text: COMMON, session: b.middle }).length,
      floor: () => rawIn.all(`${words(COMMON)} AND "${b.middle}"`, b.middle, 20).length,
    },
  ];
  for (const q of queries) {
    const got = q.run();
    if (got !== q.floor()) throw new Error(`${q.key}: search found ${got}, the raw query ${q.floor()}`);
    if (q.expect !== undefined && got !== q.expect) throw new Error(`${q.key}: ${got} hits, expected ${q.expect}`);
    values[`${q.key}.hits`] = got;
    for (let i = 0; i < 5; i++) {
      q.run();
      q.floor();
    }
    const ours: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2 === 0) {
        ours.push(ms(q.run));
        floor.push(ms(q.floor));
      } else {
        floor.push(ms(q.floor));
        ours.push(ms(q.run));
      }
    }
    metrics[`${q.key}.api`] = summarize(ours, "ms");
    metrics[`${q.key}.raw`] = summarize(floor, "ms");
    values[`${q.key}.ms`] = summarize(ours, "ms").median;
    values[`${q.key}.ratio`] = summarize(ours, "ms").median / summarize(floor, "ms").median;
  }
  store.close();
}

/** A LIKE scan of the same texts, for scale: what finding a word costs without an index. */
function measureScan(b: Built, values: Record<string, number>): void {
  const store = openStore(b.path, { readonly: true });
  const db = store.database;
  // The texts given without a way to derive them are kept in search_text (one row per event, SE-8): the scan reads them all.
  const like = db.prepare("SELECT id FROM search_text WHERE text LIKE ? ORDER BY id DESC LIMIT 20").pluck();
  const times: number[] = [];
  let n = 0;
  for (let i = 0; i < 3; i++) times.push(ms(() => (n = like.all(`%${RARE}%`).length)));
  if (n !== 1) throw new Error(`the LIKE scan found ${n}`);
  values["scan.ms"] = summarize(times, "ms").median;
  store.close();
}

function measureCli(b: Built, values: Record<string, number>, metrics: Record<string, Sample>): void {
  const dir = mkdtempSync(join(tmpdir(), "strata-bench-search-cli-"));
  try {
    const bin = installedLayout(dir);
    const env = userEnv();
    const cmd = (args: string[]) => [process.execPath, bin, "--db", b.path, ...args];
    timed(cmd(["search", COMMON, "--json"]), env, dir);
    const search: number[] = [];
    const version: number[] = [];
    const rare: number[] = [];
    for (let i = 0; i < CLI_ROUNDS; i++) {
      version.push(timed([process.execPath, bin, "--version"], env, dir).wall);
      search.push(timed(cmd(["search", COMMON, "--json"]), env, dir).wall);
      rare.push(timed(cmd(["search", RARE, "--json"]), env, dir).wall);
    }
    metrics["cli.search"] = summarize(search, "ms");
    metrics["cli.rare"] = summarize(rare, "ms");
    metrics["cli.version"] = summarize(version, "ms");
    values["cli.searchMs"] = summarize(search, "ms").median;
    values["cli.rareMs"] = summarize(rare, "ms").median;
    values["cli.versionMs"] = summarize(version, "ms").median;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `append` of one event with its search text against the same event without, on two files, per
 * event over blocks of 256 appends (so the move of each batch into the index is in the figure),
 * blocks interleaved; for a short text (~300 characters) and an agent step's (~2.7 KB: the
 * assistant text, the call's arguments, its output).
 */
function measureAppend(values: Record<string, number>, metrics: Record<string, Sample>): void {
  const dir = mkdtempSync(join(tmpdir(), "strata-bench-search-append-"));
  try {
    for (const [key, repeat] of [
      ["short", 1],
      ["step", 9],
    ] as const) {
      const a = openStore(join(dir, `with-${key}.db`));
      const b = openStore(join(dir, `without-${key}.db`));
      const r = rng(7);
      const sa = a.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      const sb = b.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      let ha: EventId = sa.genesis.id;
      let hb: EventId = sb.genesis.id;
      const withText: number[] = [];
      const without: number[] = [];
      const BLOCK = 256;
      for (let k = 0; k < APPENDS / BLOCK; k++) {
        const texts = Array.from({ length: BLOCK }, (_, i) => Array.from({ length: repeat }, () => textOf(1, k * BLOCK + i, r)).join("\n"));
        const datas = texts.map((text) => JSON.stringify({ ops: [["ins", 3, null, { tag: "turn", text }]] }));
        const one = () => {
          for (let i = 0; i < BLOCK; i++)
            ha = (
              a.append(sa.session.id, "main", ha, [{ kind: "patch@1", label: "step", data: datas[i] as string, search: texts[i] }])[0] as {
                id: EventId;
              }
            ).id;
        };
        const two = () => {
          for (let i = 0; i < BLOCK; i++)
            hb = (b.append(sb.session.id, "main", hb, [{ kind: "patch@1", label: "step", data: datas[i] as string }])[0] as { id: EventId })
              .id;
        };
        if (k % 2 === 0) {
          withText.push((ms(one) * 1000) / BLOCK);
          without.push((ms(two) * 1000) / BLOCK);
        } else {
          without.push((ms(two) * 1000) / BLOCK);
          withText.push((ms(one) * 1000) / BLOCK);
        }
      }
      metrics[`append.${key}.with`] = summarize(withText.slice(1), "µs");
      metrics[`append.${key}.without`] = summarize(without.slice(1), "µs");
      values[`append.${key}.ratio`] = summarize(withText.slice(1), "µs").median / summarize(without.slice(1), "µs").median;
      a.close();
      b.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mod: BenchModule = {
  title: "Search",
  async measure(): Promise<RunResult> {
    const metrics: Record<string, Sample> = {};
    const values: Record<string, number> = {};
    const b = build();
    values.bytes = b.bytes;
    progress(NAME, "store.search");
    measureSearch(b, metrics, values);
    progress(NAME, "LIKE scan");
    measureScan(b, values);
    progress(NAME, "strata search");
    measureCli(b, values, metrics);
    progress(NAME, "append");
    measureAppend(values, metrics);
    return { metrics, values };
  },
  render(agg: Aggregate): string {
    const rows: string[][] = [];
    const labels: Record<string, string> = {
      rare: `a rare word (\`${RARE}\`: 1 event)`,
      common: `a common word (\`${COMMON}\`: the newest 20 of ${Math.round((SESSIONS * EVENTS) / 10_000) / 100} M)`,
      two: "two common words together (first 20)",
      phrase: 'a phrase (`"edit_file src"`, first 20)',
      session: "a common word in one session (`--session`)",
    };
    for (const k of ["rare", "common", "two", "phrase", "session"])
      rows.push([labels[k] as string, cell(agg, `${k}.api`), cell(agg, `${k}.raw`), value(agg, `${k}.ratio`, (x) => `${num(x)}×`)]);
    return [
      `### Search over ${SESSIONS.toLocaleString("en-US")} sessions / ${(SESSIONS * EVENTS).toLocaleString("en-US")} events (SQLite FTS5)`,
      "",
      provenance(agg),
      "",
      `One SQLite file of ${SESSIONS.toLocaleString("en-US")} sessions × ${EVENTS} events, each event ~40 words of a 4,000-word Zipf vocabulary, a tool name and a path (${num(med(agg, "bytes") / 2 ** 20)} MiB with its index). Warm, ${ROUNDS} interleaved rounds per query; the baseline is the bare FTS5 query on the same connection (ids only, no rows joined, no snippet).`,
      "",
      table(["query (`store.search`, limit 20)", "strata", "bare FTS5 query", "ratio"], rows),
      "",
      "The baseline of the one-session row is the query without the `session` column: the same words, every match filtered by a join to its session (the plan the index had before it), so its ratio is what that column saves.",
      "",
      table(
        ["what", "figure", "baseline"],
        [
          [
            "first search of a fresh `openStore` (open + query)",
            `${value(agg, "cold.ms")} ms`,
            `${value(agg, "cold.rawMs")} ms (open + bare query)`,
          ],
          ["the rare word by a `LIKE` scan of the same texts (no index)", `${value(agg, "scan.ms")} ms`, "—"],
          [
            `\`strata search ${COMMON} --json\`, fresh process`,
            `${value(agg, "cli.searchMs")} ms`,
            `${value(agg, "cli.versionMs")} ms (\`strata --version\`)`,
          ],
          [
            `\`strata search ${RARE} --json\`, fresh process`,
            `${value(agg, "cli.rareMs")} ms`,
            `${value(agg, "cli.versionMs")} ms (\`strata --version\`)`,
          ],
          [
            "`append` of one event with its search text (~300 characters), per event over blocks of 256",
            cell(agg, "append.short.with"),
            `${cell(agg, "append.short.without")} without (${value(agg, "append.short.ratio", (x) => `${num(x)}×`)})`,
          ],
          [
            "`append` of one event with an agent step's text (~2.7 KB), per event over blocks of 256",
            cell(agg, "append.step.with"),
            `${cell(agg, "append.step.without")} without (${value(agg, "append.step.ratio", (x) => `${num(x)}×`)})`,
          ],
        ],
      ),
    ].join("\n");
  },
  verdicts(agg: Aggregate): string[] {
    const worst = Math.max(...["rare", "common", "two", "phrase", "session"].map((k) => med(agg, `${k}.ms`)));
    return [
      `${worst <= TARGET_MS ? "**PASS**" : "**FAIL**"} — a query over ${SESSIONS.toLocaleString("en-US")} sessions / ${(SESSIONS * EVENTS).toLocaleString("en-US")} events ≤ ${TARGET_MS} ms (\`store.search\`, warm): the slowest of five queries ${num(worst)} ms; the first search of a fresh store ${value(agg, "cold.ms")} ms.`,
    ];
  },
};

export default mod;
if (isMain(import.meta.url)) await runAsScript(NAME, mod);
