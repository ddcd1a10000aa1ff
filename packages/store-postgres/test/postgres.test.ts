/**
 * What only the PostgreSQL backend has (decision 0035), against the real server the run started:
 * its costs in statements and rows (one statement per append on the hot path, one row per fork),
 * many handles racing (compare-and-swap, fencing leases), a writer killed with SIGKILL, and opening
 * what is not a store of this build. The contract itself is conformance.test.ts.
 */
import { type EventId, HeadConflict, LeaseLost, registerSearchText, type SessionId, StoreError } from "@strata/store";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { channelOf } from "../src/follow.ts";
import { openPgStore, PG_SCHEMA_VERSION, type PgStore } from "../src/index.ts";
import { acknowledged, start } from "./processes.ts";

const url = inject("pgUrl");
let n = 0;
const fresh = () => `p${process.pid}_${Date.now().toString(36)}_${n++}`;
const opened: PgStore[] = [];
const open = async (schema = fresh(), max = 4) => {
  const s = await openPgStore(url, { schema, max });
  opened.push(s);
  return s;
};
afterAll(async () => {
  for (const s of opened) if (!s.closed) await s.close();
});

const ev = (data: string, label: string | null = null) => ({ kind: "patch@1", label, data });

/** Counts the statements the store's pool sends (on every connection it hands out, from now on). */
function countStatements(store: PgStore): { readonly count: number; readonly wakes: number } {
  const pool = (store as unknown as { inner: { pool: pg.Pool } }).inner.pool;
  const counter = { count: 0, wakes: 0 };
  // pool.query runs on a client it acquires: counting on the clients counts every statement once.
  pool.on("acquire", (client: pg.PoolClient & { __counted?: boolean }) => {
    if (client.__counted) return;
    client.__counted = true;
    const q = client.query.bind(client);
    (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
      const sent = args[0] as string | { text: string };
      if (/pg_notify/.test(typeof sent === "string" ? sent : sent.text)) counter.wakes++;
      else counter.count++;
      return (q as (...a: unknown[]) => unknown)(...args);
    };
  });
  return counter;
}

async function rows(schema: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: Record<string, number> = {};
    for (const t of ["sessions", "segments", "branches", "events", "snapshots", "blobs", "leases"])
      out[t] = Number((await c.query(`SELECT count(*)::int AS n FROM "${schema}".${t}`)).rows[0].n);
    return out;
  } finally {
    await c.end();
  }
}

describe("ST-32/33 PostgreSQL: costs", () => {
  it("a burst of appends wakes followers at once and then at most every 10 ms; close sends the one waiting", async () => {
    const schema = fresh();
    const store = await open(schema);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const told: number[] = [];
    listener.on("notification", (m) => {
      if (m.payload === session.id) told.push(performance.now());
    });
    await listener.query(`LISTEN "${channelOf(schema)}"`);
    try {
      const counter = countStatements(store);
      let head = genesis.id;
      const t0 = performance.now();
      for (let i = 0; i < 60; i++) head = ((await store.append(session.id, "main", head, [ev(`{"i":${i}}`)]))[0] as { id: EventId }).id;
      const last = performance.now();
      // Closed at once: the notification waiting out its interval is sent, not dropped.
      await store.close();
      const until = Date.now() + 3000;
      while ((told.at(-1) ?? 0) < last && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(told.at(-1), "the last append is told").toBeGreaterThanOrEqual(last);
      expect(told[0], "the first append is told at once").toBeLessThan(t0 + (last - t0) / 2);
      expect(counter.wakes).toBe(told.length);
      expect(counter.wakes).toBeLessThanOrEqual(Math.ceil((last - t0) / 10) + 2);
      expect(counter.wakes).toBeLessThan(30);
    } finally {
      await listener.end();
    }
  });

  it("close called twice at once closes once", async () => {
    const store = await open();
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    await store.append(session.id, "main", genesis.id, [ev("one")]);
    await expect(Promise.all([store.close(), store.close()])).resolves.toEqual([undefined, undefined]);
    expect(store.closed).toBe(true);
  });

  it("an append to a branch this process writes is one statement (and at most one wake-up); a fork is one statement and one row, and so is the first append on it", async () => {
    const schema = fresh();
    const store = await open(schema);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    let head = genesis.id;
    head = ((await store.append(session.id, "main", head, [ev("warm")]))[0] as { id: EventId }).id;
    const counter = countStatements(store);
    for (let i = 0; i < 50; i++) head = ((await store.append(session.id, "main", head, [ev(`{"i":${i}}`)]))[0] as { id: EventId }).id;
    expect(counter.count).toBe(50);
    expect(counter.wakes).toBeGreaterThan(0);
    expect(counter.wakes).toBeLessThanOrEqual(50);
    const before = await rows(schema);
    const at = counter.count;
    await store.fork(session.id, genesis.id, "side");
    expect(counter.count - at).toBe(1);
    const after = await rows(schema);
    expect(after).toEqual({ ...before, branches: (before.branches as number) + 1 });
    // The first append on the fork is one statement too: its new segment, the branch's move and the event.
    const mark = counter.count;
    const [first] = await store.append(session.id, "side", genesis.id, [ev("on the fork")]);
    expect(counter.count - mark).toBe(1);
    expect(first).toMatchObject({ prior: genesis.id, depth: 2 });
    const [second] = await store.append(session.id, "side", first?.id as EventId, [ev("and again")]);
    expect(counter.count - mark).toBe(2);
    expect((await store.log(session.id, { branch: "side" })).map((e) => e.id)).toEqual([genesis.id, first?.id, second?.id]);
    expect((await store.verify(session.id)).ok).toBe(true);
  });

  it("a fenced append is one statement too, and a group commit is one transaction", async () => {
    const store = await open();
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    const lease = await store.acquireLease(session.id, "main", "me");
    if (!lease.ok) throw new Error("no lease");
    let head = ((await store.append(session.id, "main", genesis.id, [ev("a")], { lease: lease.lease.token }))[0] as { id: EventId }).id;
    const counter = countStatements(store);
    head = ((await store.append(session.id, "main", head, [ev("b")], { lease: lease.lease.token }))[0] as { id: EventId }).id;
    expect(counter.count).toBe(1);
    const group = await store.append(session.id, "main", head, [ev("c"), ev("d"), ev("e")]);
    expect(group.map((e) => e.depth)).toEqual([4, 5, 6]);
    expect(group[1]?.prior).toBe(group[0]?.id);
  });
});

describe("ST-32 PostgreSQL: many handles on one branch", () => {
  it("8 handles append after the same head at once: exactly one writes, the others get HeadConflict, the chain does not fork", async () => {
    const schema = fresh();
    const first = await open(schema);
    const { session, genesis } = await first.createSession({ genesis: ev("{}") });
    const handles = await Promise.all(Array.from({ length: 8 }, () => open(schema, 2)));
    for (let round = 0; round < 5; round++) {
      const head = ((await first.branch(session.id, "main")) as { head: EventId }).head;
      const results = await Promise.allSettled(handles.map((h, i) => h.append(session.id, "main", head, [ev(`{"w":${i},"r":${round}}`)])));
      const ok = results.filter((r) => r.status === "fulfilled");
      expect(ok).toHaveLength(1);
      for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(HeadConflict);
    }
    const log = await first.log(session.id);
    expect(log.map((e) => e.depth)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await first.verify(session.id)).ok).toBe(true);
    void genesis;
  });

  it("8 handles race for one branch's lease: exactly one drives; a stale driver can never write after the takeover", async () => {
    const schema = fresh();
    const first = await open(schema);
    const { session, genesis } = await first.createSession({ genesis: ev("{}") });
    const handles = await Promise.all(Array.from({ length: 8 }, () => open(schema, 2)));
    const tries = await Promise.all(handles.map((h, i) => h.acquireLease(session.id, "main", `worker ${i}`)));
    const winners = tries.filter((t) => t.ok);
    expect(winners).toHaveLength(1);
    const driver = handles[tries.findIndex((t) => t.ok)] as PgStore;
    const token = (winners[0] as { lease: { token: number } }).lease.token;
    // The driver appends in a loop while another worker declares it stale and takes over.
    let head = genesis.id;
    let stop = false;
    const written: EventId[] = [];
    let lost: unknown;
    const loop = (async () => {
      while (!stop) {
        try {
          const [m] = await driver.append(session.id, "main", head, [ev(`{"n":${written.length}}`)], { lease: token });
          head = (m as { id: EventId }).id;
          written.push(head);
        } catch (e) {
          lost = e;
          return;
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 150));
    const other = handles.find((h) => h !== driver) as PgStore;
    const takeover = await other.acquireLease(session.id, "main", "successor", () => true);
    expect(takeover.ok).toBe(true);
    const lastBefore = ((await other.branch(session.id, "main")) as { head: EventId }).head;
    await new Promise((r) => setTimeout(r, 100));
    stop = true;
    await loop;
    expect(lost).toBeInstanceOf(LeaseLost);
    // Nothing the old driver wrote lands after the takeover committed.
    expect(((await other.branch(session.id, "main")) as { head: EventId }).head).toBe(lastBefore);
    expect(written.at(-1)).toBe(lastBefore);
    expect(written.length).toBeGreaterThan(0);
  });
});

describe("ST-35 PostgreSQL: removing a session while other handles write to it", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (const what of ["append", "fork"] as const)
    it(`a ${what} from another handle waits for the removal, then finds the session gone: nothing of it is left behind`, async () => {
      const schema = fresh();
      const a = await open(schema);
      const b = await open(schema);
      const { session, genesis } = await a.createSession({ genesis: { kind: "genesis@1", data: "{}" } });
      // b writes this session (no lease): its tip of main is warm, so its next append is the one-statement path
      const [m] = await b.append(session.id, "main", genesis.id, [ev('{"n":1}')]);
      let late: Promise<unknown> | undefined;
      await a.transaction(async () => {
        await a.removeSession(session.id, { live: () => true });
        late = (
          what === "append"
            ? b.append(session.id, "main", (m as { id: EventId }).id, [ev('{"n":2}')])
            : b.fork(session.id, (m as { id: EventId }).id, "f")
        ).then(
          () => "written",
          (e: unknown) => e,
        );
        expect(await Promise.race([late, sleep(400).then(() => "waiting")])).toBe("waiting");
      });
      const e = await late;
      expect(e).toBeInstanceOf(StoreError);
      expect((e as StoreError).code).toMatch(/^(not-found|conflict)$/);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        for (const table of ["events", "branches", "segments", "sessions", "snapshots"])
          expect((await client.query(`SELECT count(*)::int AS n FROM ${schema}.${table}`)).rows[0].n, table).toBe(0);
      } finally {
        await client.end();
      }
    });
});

describe("ST-23 PostgreSQL: a lease row held by a process that stopped mid-transaction", () => {
  it("an acquisition is told busy within seconds, not after its statement timeout; once the other transaction ends, it decides", async () => {
    const schema = fresh();
    const store = await open(schema);
    const { session } = await store.createSession({ genesis: ev("{}") });
    expect((await store.acquireLease(session.id, "main", "first")).ok).toBe(true);
    // Another process decides the lease and stops (SIGSTOP, a partition) holding the row's lock.
    const stuck = new pg.Client({ connectionString: url });
    await stuck.connect();
    try {
      await stuck.query("BEGIN");
      await stuck.query(`SELECT token FROM "${schema}".leases WHERE session = $1 AND branch = 'main' FOR UPDATE`, [session.id]);
      const t0 = Date.now();
      const err = await store.acquireLease(session.id, "main", "second", () => true).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe("busy");
      expect(Date.now() - t0).toBeLessThan(10_000);
      await stuck.query("ROLLBACK");
      const after = await store.acquireLease(session.id, "main", "second", () => true);
      expect(after.ok && after.lease.owner).toBe("second");
    } finally {
      await stuck.end();
    }
  });
});

describe("ST-19 PostgreSQL: crashes", () => {
  it("a writer killed with SIGKILL mid-append loses nothing it was told was written and leaves nothing partial", async () => {
    const schema = fresh();
    const store = await open(schema);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    const writer = start("pg-writer.ts", [url, schema, session.id, String(genesis.id)]);
    const { child } = writer;
    const killAt = 30 + Math.floor(Math.random() * 40);
    await new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (acknowledged(writer).length >= killAt) {
          clearInterval(t);
          child.kill("SIGKILL");
          resolve();
        }
      }, 5);
      child.on("exit", (code, signal) => {
        clearInterval(t);
        if (signal !== "SIGKILL") reject(new Error(`the writer exited on its own (${code})`));
      });
    });
    await writer.exited;
    const reopened = await open(schema);
    const log = await reopened.log(session.id as SessionId);
    const ids = new Set(log.map((e) => e.id as number));
    for (const a of acknowledged(writer)) expect(ids.has(a), `acknowledged event ${a}`).toBe(true);
    // Every group of 3 is all there or not at all.
    const data = await reopened.chainData(log.at(-1)?.id as EventId);
    const groups = data.slice(1).map((d) => JSON.parse(d) as { g: number; k: number });
    for (let i = 0; i < groups.length; i += 3) expect(groups.slice(i, i + 3).map((g) => g.k)).toEqual([0, 1, 2]);
    expect((await reopened.verify(session.id)).ok).toBe(true);
  });
});

describe("ST-34 PostgreSQL: following a branch other machines write", () => {
  it("delivers every event once, in order, as another process writes; a rewind is told as a move", async () => {
    const schema = fresh();
    const store = await open(schema);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    const seen: number[] = [];
    const moves: number[] = [];
    const follower = store.follow(
      session.id,
      "main",
      (u) => {
        if (u.kind === "events") for (const e of u.events) seen.push(e.id);
        else moves.push(u.head.head);
      },
      { pollMs: 60_000 }, // only notifications wake it here: the poll would hide a lost one
    );
    await follower.ready;
    const writer = start("pg-writer.ts", [url, schema, session.id, String(genesis.id), "single"]);
    const { child } = writer;
    while (acknowledged(writer).length < 150) await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGKILL");
    await writer.exited;
    // The writer's last commit may have no notification (killed between the two: the poll makes
    // that up, and it is a minute here), so one more event from another handle wakes the follower;
    // it then has every event once, in order, those the killed writer left unannounced included.
    const other = await open(schema);
    // (A COMMIT the killed writer sent may still land after the head is read: then read it again.)
    for (let tries = 0; ; tries++) {
      const head = (await store.branch(session.id, "main"))?.head as EventId;
      const done = await other
        .append(session.id, "main", head, [ev("one more")])
        .catch((e: unknown) => (tries < 5 ? undefined : Promise.reject(e)));
      if (done !== undefined) break;
    }
    const log = (await store.log(session.id)).map((e) => e.id as number);
    const deadline = Date.now() + 5000;
    while (seen.length < log.length - 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual(log.slice(1));
    // A rewind from another handle: the follower is told where the branch went, then follows on from there.
    const back = log[3] as EventId;
    await other.moveHead(session.id, "main", back);
    const [next] = await other.append(session.id, "main", back, [ev("after the rewind")]);
    const until = Date.now() + 5000;
    while (seen.at(-1) !== next?.id && moves.at(-1) !== next?.id && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    // Told once: either the rewind, then the event after it, or (woken after both) the branch's new head.
    expect(moves).toHaveLength(1);
    if (moves[0] === back) expect(seen.at(-1)).toBe(next?.id);
    else expect(moves).toEqual([next?.id]);
    await follower.close();
  });
});

describe("ST-31 PostgreSQL: opening", () => {
  it("a server that is not there is cannot-open, naming the address, without a stack of the driver's", async () => {
    const e = await openPgStore("postgres://strata@127.0.0.1:1/postgres", { connectTimeout: 2000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StoreError);
    expect((e as StoreError).code).toBe("cannot-open");
    expect((e as Error).message).toMatch(/127\.0\.0\.1:1.*is the server running/);
  });

  it("a schema holding other tables is not-strata; a newer store is newer-schema; neither is changed", async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const foreign = fresh();
      await c.query(`CREATE SCHEMA ${foreign}; CREATE TABLE ${foreign}.things (x int)`);
      const e = await openPgStore(url, { schema: foreign }).catch((x: unknown) => x);
      expect((e as StoreError).code).toBe("not-strata");
      expect((await c.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1", [foreign])).rows[0].n).toBe(1);
      const newer = fresh();
      (await open(newer)).close();
      await c.query(`UPDATE ${newer}.meta SET value = $1 WHERE key = 'schema_version'`, [String(PG_SCHEMA_VERSION + 1)]);
      const e2 = await openPgStore(url, { schema: newer }).catch((x: unknown) => x);
      expect((e2 as StoreError).code).toBe("newer-schema");
      expect((e2 as Error).message).toMatch(/upgrade strata/);
    } finally {
      await c.end();
    }
  });

  it("SE-6: a schema of version 1 migrates to the search index; its events are the backlog, indexed by indexSearch", async () => {
    const schema = fresh();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      // Version 1 as it was stored: this build's schema without what version 2 added.
      const made = await open(schema);
      const { session, genesis } = await made.createSession({ genesis: ev("{}") });
      const [a, b] = await made.append(session.id, "main", genesis.id, [ev('{"said":"older planning notes"}', "a"), ev("{}", "b")]);
      await made.close();
      await c.query(`ALTER TABLE ${schema}.events DROP COLUMN search, DROP COLUMN search_tsv;
        DELETE FROM ${schema}.meta WHERE key = 'search_backlog';
        UPDATE ${schema}.meta SET value = '1' WHERE key = 'schema_version'`);
      const store = await open(schema);
      expect(store.schemaVersion, "the version found").toBe(1);
      expect((await c.query(`SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`)).rows[0].value).toBe(
        String(PG_SCHEMA_VERSION),
      );
      expect(await store.searchBacklog()).toBe(b?.id);
      expect(await store.search({ text: "planning" })).toEqual([]);
      // New events are indexed as they are written, the backlog is not.
      const [d] = await store.append(session.id, "main", b?.id as EventId, [{ ...ev("{}", "d"), search: "newer planning notes" }]);
      expect((await store.search({ text: "planning" })).map((h) => h.label)).toEqual(["d"]);
      await store.indexSearch([{ event: a?.id as EventId, text: "older planning notes" }], 0);
      expect(await store.searchBacklog()).toBe(0);
      expect((await store.search({ text: "planning notes" })).map((h) => [h.label, h.snippet])).toEqual([
        ["d", "newer planning notes"],
        ["a", "older planning notes"],
      ]);
      expect(d?.id).toBeGreaterThan(b?.id as number);
      expect((await store.verify()).findings).toEqual([]);
    } finally {
      await c.end();
    }
  });

  it("SE-4: a search finds old matches below the newest ids through the GIN index, and pages across both parts", async () => {
    const schema = fresh();
    const store = await open(schema);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { session, genesis } = await store.createSession({ genesis: ev("{}") });
      const said = (text: string, label: string) => ({ ...ev("{}", label), search: text });
      let head = genesis.id;
      const put = async (text: string, label: string) => {
        head = ((await store.append(session.id, "main", head, [said(text, label)]))[0] as { id: EventId }).id;
        return head;
      };
      const old1 = await put("an old rare marker", "old1");
      const old2 = await put("another old rare marker", "old2");
      // Ids far apart (as after 30,000 other events): the newest ids are walked first, the rest found in the index.
      await c.query(`SELECT setval(pg_get_serial_sequence('${schema}.events', 'id'), (SELECT max(id) FROM ${schema}.events) + 30000)`);
      const recent: EventId[] = [];
      for (let i = 0; i < 5; i++) recent.push(await put(`a recent marker ${i}`, `r${i}`));
      expect((await store.search({ text: "rare marker" })).map((h) => h.event)).toEqual([old2, old1]);
      expect((await store.search({ text: "marker" })).map((h) => h.event)).toEqual([...recent.reverse(), old2, old1]);
      const page = await store.search({ text: "marker", limit: 6 });
      expect(page.map((h) => h.label)).toEqual(["r4", "r3", "r2", "r1", "r0", "old2"]);
      expect((await store.search({ text: "marker", before: page[5]?.event })).map((h) => h.event)).toEqual([old1]);
      expect((await store.search({ text: "marker", session: session.id })).map((h) => h.event)).toHaveLength(7);
    } finally {
      await c.end();
    }
  });

  it("decision 0048: lexemes are stored without positions; a version 2 schema's positional rows are found by words and phrases", async () => {
    const schema = fresh();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const made = await open(schema);
      const { session, genesis } = await made.createSession({ genesis: ev("{}") });
      const said = (text: string, label: string) => ({ ...ev("{}", label), search: text });
      const [a, b] = await made.append(session.id, "main", genesis.id, [
        said("the merge conflict again", "a"),
        said("conflict, merge", "b"),
      ]);
      const stored = await c.query(`SELECT search_tsv::text AS v FROM ${schema}.events WHERE id = $1`, [a?.id]);
      expect(stored.rows[0].v, "no positions").toBe("'again' 'conflict' 'merge' 'the'");
      await made.close();
      // Version 2 as it was stored: the rows' lexemes made by the server's parser, with positions.
      await c.query(`UPDATE ${schema}.events SET search_tsv = to_tsvector('simple', search) WHERE search IS NOT NULL;
        COMMENT ON INDEX ${schema}.events_search IS NULL;
        UPDATE ${schema}.meta SET value = '2' WHERE key = 'schema_version'`);
      const store = await open(schema);
      expect(store.schemaVersion, "the version found").toBe(2);
      expect((await c.query(`SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`)).rows[0].value).toBe(
        String(PG_SCHEMA_VERSION),
      );
      expect((await c.query(`SELECT search_tsv::text AS v FROM ${schema}.events WHERE id = $1`, [a?.id])).rows[0].v).toBe(
        "'again':4 'conflict':3 'merge':2 'the':1",
      );
      const [n] = await store.append(session.id, "main", b?.id as EventId, [said("a new merge conflict", "n")]);
      expect((await store.search({ text: "merge conflict" })).map((h) => h.label)).toEqual(["n", "b", "a"]);
      expect((await store.search({ text: '"merge conflict"' })).map((h) => h.event)).toEqual([n?.id, a?.id]);
      expect((await store.search({ text: '"conflict merge"' })).map((h) => h.label)).toEqual(["b"]);
    } finally {
      await c.end();
    }
  });

  it("decision 0048: a text's lexemes are its distinct words; a word too long for one is left out, and the words past a vector's limit", async () => {
    const schema = fresh();
    const store = await open(schema);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    const long = `${"é".repeat(1023)}z`; // 2,047 bytes: one too many
    const fits = `${"é".repeat(1022)}zz`; // 2,046 bytes: the longest lexeme
    // More distinct words than one vector holds (1,048,575 bytes of lexemes): where the server's
    // parser fails the statement, the words past the limit are not indexed and the append stands.
    const many = Array.from({ length: 120_000 }, (_, i) => `w${i.toString(36).padStart(8, "0")}`);
    const [x, y] = await store.append(session.id, "main", genesis.id, [
      { ...ev("{}", "x"), search: `Alpha alpha ${long} ${fits} beta ALPHA` },
      { ...ev("{}", "y"), search: `${many.join(" ")} omega` },
    ]);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const v = await c.query(`SELECT search_tsv::text AS v FROM ${schema}.events WHERE id = $1`, [x?.id]);
      expect(v.rows[0].v).toBe(`'alpha' 'beta' '${fits}'`);
      const n = await c.query(`SELECT length(search_tsv) AS n FROM ${schema}.events WHERE id = $1`, [y?.id]);
      expect(Number(n.rows[0].n)).toBe(Math.floor(1_048_575 / 9));
    } finally {
      await c.end();
    }
    expect((await store.search({ text: "alpha beta" })).map((h) => h.label)).toEqual(["x"]);
    expect((await store.search({ text: fits })).map((h) => h.label)).toEqual(["x"]);
    // A word no lexeme can hold is in no index: nothing is found by it alone; with others, the text is checked.
    expect(await store.search({ text: long })).toEqual([]);
    expect((await store.search({ text: `alpha ${long}` })).map((h) => h.label)).toEqual(["x"]);
    expect((await store.search({ text: `beta ${"y".repeat(3000)}` })).map((h) => h.label)).toEqual([]);
    expect((await store.search({ text: "w00000000 w00000001" })).map((h) => h.label)).toEqual(["y"]);
    expect(await store.search({ text: "omega" }), "past the vector's limit").toEqual([]);
  });

  it("SE-4: words are cut the same whatever the database's locale: a letter beyond ASCII is a letter, case folds", async () => {
    const store = await open();
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    await store.append(session.id, "main", genesis.id, [{ ...ev("{}", "x"), search: "ÉTÉ à Zürich: naïve_café" }]);
    for (const q of ["été", "ZÜRICH", "naïve café", '"naïve café"', "NAÏVE_CAFÉ"])
      expect(
        (await store.search({ text: q })).map((h) => h.label),
        q,
      ).toEqual(["x"]);
    expect(await store.search({ text: "zurich" })).toEqual([]);
    expect(await store.search({ text: "caf" })).toEqual([]);
  });

  it("SE-8: a derived text is indexed with no copy in the row (search NULL, its lexemes kept); its snippet is derived again", async () => {
    registerSearchText("pg-derived@1", (data) => (JSON.parse(data) as { t: string }).t);
    const schema = fresh();
    const store = await open(schema);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    const [d, k] = await store.append(session.id, "main", genesis.id, [
      { kind: "pg-derived@1", label: "d", data: '{"t":"derived planning words"}', search: "derived planning words", searchDerived: true },
      { ...ev("{}", "k"), search: "kept planning words", searchDerived: true },
    ]);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const rows = await c.query(
        `SELECT id, search, search_tsv IS NOT NULL AS indexed FROM ${schema}.events WHERE id = ANY($1) ORDER BY id`,
        [[d?.id, k?.id]],
      );
      expect(rows.rows.map((r) => [Number(r.id), r.search, r.indexed])).toEqual([
        [d?.id, null, true],
        [k?.id, "kept planning words", true],
      ]);
    } finally {
      await c.end();
    }
    expect((await store.search({ text: "planning words" })).map((h) => [h.label, h.snippet])).toEqual([
      ["k", "kept planning words"],
      ["d", "derived planning words"],
    ]);
  });

  it("connections the server ends (a restart, a proxy's timeout) are replaced: the next calls work", async () => {
    const schema = fresh();
    const store = await openPgStore(url, { schema, applicationName: `strata ${schema}` });
    opened.push(store);
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    await Promise.all([store.getSession(session.id), store.getSession(session.id)]); // two idle connections in the pool
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const killed = await c.query(
        "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) t",
        [`strata ${schema}`],
      );
      expect(killed.rows[0].n).toBeGreaterThan(0);
    } finally {
      await c.end();
    }
    await new Promise((r) => setTimeout(r, 100));
    const [e] = await store.append(session.id, "main", genesis.id, [ev("after the restart")]);
    expect(e?.depth).toBe(2);
    expect((await store.log(session.id)).map((x) => x.id)).toEqual([genesis.id, e?.id]);
  });

  it("a bad URL or schema name is bad-input saying what to write", async () => {
    expect(((await openPgStore("postgres//x").catch((x: unknown) => x)) as StoreError).code).toBe("bad-input");
    const e = (await openPgStore(url, { schema: "Robert'); DROP" }).catch((x: unknown) => x)) as StoreError;
    expect(e.code).toBe("bad-input");
    expect(e.message).toMatch(/lowercase letters/);
  });
});

describe("ST-7 PostgreSQL: places of events this handle read or wrote", () => {
  it("a fork's chain and snapshot reads skip the lookup of the fork point: one statement each", async () => {
    const store = await open();
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    let head = genesis.id;
    for (let i = 0; i < 5; i++) head = ((await store.append(session.id, "main", head, [ev(`{"i":${i}}`)]))[0] as { id: EventId }).id;
    const other = await openPgStore(url, { schema: store.schema, max: 2 });
    opened.push(other);
    await other.chain(genesis.id); // the segment's ancestry, read once per handle
    await other.fork(session.id, head, "f");
    const counter = countStatements(other);
    expect((await other.chain(head, 0, 10)).map((e) => e.data)).toEqual(["{}", '{"i":0}', '{"i":1}', '{"i":2}', '{"i":3}', '{"i":4}']);
    expect(counter.count).toBe(1);
    expect(await other.nearestSnapshot(head)).toBeUndefined();
    expect(counter.count).toBe(2);
  });

  it("a place remembered before its session was removed elsewhere reads as not-found, never as a chain or a snapshot", async () => {
    const schema = fresh();
    const a = await open(schema);
    const b = await open(schema);
    const { session, genesis } = await a.createSession({ genesis: ev("{}") });
    const [m] = await b.append(session.id, "main", genesis.id, [ev('{"n":1}')]);
    const id = (m as { id: EventId }).id;
    expect((await b.chain(id)).length).toBe(2);
    await a.removeSession(session.id);
    for (const read of [() => b.chain(id), () => b.chain(id, 2), () => b.chainMeta(id, 0, 10, true), () => b.nearestSnapshot(id)]) {
      const e = await read().then(
        () => "read",
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(StoreError);
      expect((e as StoreError).code).toBe("not-found");
    }
  });

  it("an append rolled back is not remembered as an event: reading it is not-found", async () => {
    const store = await open();
    const { session, genesis } = await store.createSession({ genesis: ev("{}") });
    let appended: EventId | undefined;
    await store
      .transaction(async () => {
        appended = ((await store.append(session.id, "main", genesis.id, [ev('{"n":1}')]))[0] as { id: EventId }).id;
        throw new Error("abort");
      })
      .catch(() => {});
    expect(appended).toBeDefined();
    const e = await store.chain(appended as EventId).then(
      () => "read",
      (x: unknown) => x,
    );
    expect((e as StoreError).code).toBe("not-found");
    expect((await store.chain(genesis.id)).length).toBe(1);
  });
});
