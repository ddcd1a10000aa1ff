/**
 * A probe, not part of the runner (issue 17: search on PostgreSQL): starts a private server, fills
 * one schema with 1,000,000 events of ~40 words each (a Zipf-like draw of 4,000 words, one event in
 * 100 with a unique ticket word) by the server itself, then times `store.search` for common words,
 * a phrase, a mid-rare word and rare words at the start, middle and end of the ids (median of 9,
 * warm), and prints the plan of the rare word's one-statement query for comparison.
 *
 * Run: npx tsx --conditions=@strata/source bench/postgres/search-probe.ts
 * Knob: BENCH_TSV=positional builds the rows as schema version 2 wrote them (`to_tsvector`, with
 * positions) instead of as version 3 writes them (decision 0048: the words, no positions).
 */

import { openPgStore } from "@strata/store-postgres";
import { startPgServer } from "@strata/store-postgres/testing";
import pg from "pg";

const server = await startPgServer({ log: () => {} });
try {
  const url = server.url;
  const store = await openPgStore(url, { schema: "bs" });
  const { session, genesis } = await store.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
  await store.append(session.id, "main", genesis.id, [{ kind: "patch@1", data: "{}", search: "seed words" }]);
  await store.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const t0 = Date.now();
  const tsv = process.env.BENCH_TSV === "positional" ? "to_tsvector('simple', t)" : "array_to_tsvector(string_to_array(t, ' '))";
  // 10,000 sessions' worth of events in one segment per 100 (shape does not matter for search): 1M rows.
  const seg = (await c.query(`SELECT segment FROM bs.events LIMIT 1`)).rows[0]?.segment;
  await c.query(`CREATE TEMP TABLE vocab AS SELECT i, 'w' || i AS w FROM generate_series(0, 3999) i`);
  for (let b = 0; b < 10; b++) {
    await c.query(
      `INSERT INTO bs.events (segment, depth, prior, kind, label, by, ts, digest, blob, data, search, search_tsv)
      SELECT $1, 1000 + g, NULL, 'patch@1', 'x', NULL, 0, '\\x00'::bytea, NULL, '{}', t, ${tsv}
      FROM (SELECT g, (SELECT string_agg('w' || floor(4000 * power(random(), 4))::int, ' ') FROM generate_series(1, 40) WHERE g > 0) || CASE WHEN g % 100 = 42 THEN ' ticket' || g ELSE '' END AS t
            FROM generate_series($2::int, $3::int) g) s`,
      [seg, b * 100000 + 1, (b + 1) * 100000],
    );
    console.log("batch", b, Date.now() - t0, "ms");
  }
  await c.query("VACUUM ANALYZE bs.events");
  console.log("built", Date.now() - t0);
  const s2 = await openPgStore(url, { schema: "bs" });
  for (const q of ["w0", "ticket500042", "w1 w2", '"w0 w1"', '"w1 w0 w2"', '"w3999 w0"', "w3999", "ticket900042", "ticket100042"]) {
    await s2.search({ text: q });
    const ts: number[] = [];
    let n = 0;
    for (let i = 0; i < 9; i++) {
      const a = performance.now();
      n = (await s2.search({ text: q })).length;
      ts.push(performance.now() - a);
    }
    ts.sort((a, b) => a - b);
    console.log(q, "hits", n, "median ms", (ts[4] as number).toFixed(2));
  }
  const plan = await c.query(
    `EXPLAIN ANALYZE SELECT e.id FROM bs.events e JOIN bs.segments g ON g.id = e.segment WHERE e.search_tsv @@ phraseto_tsquery('simple','ticket500042') ORDER BY e.id DESC LIMIT 21`,
  );
  console.log(plan.rows.map((r) => r["QUERY PLAN"]).join("\n"));
  await s2.close();
  await c.end();
} finally {
  await server.stop();
}
