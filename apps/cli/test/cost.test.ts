/**
 * `strata cost` (CLI-45) through the real binary in fresh processes: a session run with scripted
 * models, forked at several points (a fork of a fork, a fork nobody ran, a rewind that keeps a
 * head), each branch's inherited, own and total tokens checked against the `<usage>` elements of
 * the trees at its head and fork point (`show --select usage`), and the session's distinct total
 * against the union of every head's usage elements — which is less than the sum of the branches'
 * totals, so counting a fork's inherited history again would fail. Prices applied, an unpriced
 * model, a missing and malformed prices file; an imported Claude Code session (cache tokens, one
 * response's usage repeated on its lines); and the same numbers on PostgreSQL.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cleanup, demoDir, json, type Result, ROOT, script, strata, tempDir } from "./cli-kit.ts";
import { checkVocabulary, SCHEMAS } from "./schemas.ts";

afterAll(cleanup);
const ajv = new Ajv2020({ strict: false, allErrors: true });
const check = ajv.compile(SCHEMAS.cost);

interface ModelRow {
  model: string | null;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  turns: number;
  cost: number | null;
  recordedCost: number | null;
}
interface Usage extends Omit<ModelRow, "model"> {
  unpriced: (string | null)[];
  models: ModelRow[];
}
interface CostDoc {
  session: string;
  branch: string | null;
  prices: string | null;
  eventCount: number;
  branches: { name: string; head: number; forkedAt: number | null; inherited: Usage; own: Usage; total: Usage }[];
  distinct: Usage;
}

function doc(r: Result): CostDoc {
  expect(r.code, r.stderr).toBe(0);
  const d = json<CostDoc>(r);
  if (!check(d)) throw new Error(`--json of cost: ${ajv.errorsText(check.errors)}`);
  expect(checkVocabulary(d)).toEqual([]);
  return d;
}

interface UsageEl {
  id: number;
  attrs: Record<string, string>;
}
/** The `<usage>` elements of the tree at an address (the oracle: a materialized tree). */
async function usageAt(dir: string, db: string[], address: string): Promise<UsageEl[]> {
  const r = await strata(dir, [...db, "show", address, "--select", "usage", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return json<{ elements: UsageEl[] }>(r).elements;
}
const sum = (els: readonly UsageEl[], attr: string): number => els.reduce((s, e) => s + Number(e.attrs[attr] ?? 0), 0);
const tokensOf = (els: readonly UsageEl[]): number => sum(els, "input") + sum(els, "output");

/** The model's turns for a fork that already holds `before` assistant turns: the script plays turn N for N assistant messages. */
function forkScript(dir: string, name: string, before: number, text: string): string {
  return script(dir, name, [...Array.from({ length: before }, () => ({ text: "(not played)" })), { text }]);
}

describe("CLI-45 strata cost: tokens per branch, the history a fork shares counted once", () => {
  let dir = "";
  let session = "";
  const branchNames = ["main", "a", "b", "c", "idle"];
  let kept = "";
  let rewoundTo = 0;

  beforeAll(async () => {
    dir = demoDir();
    const alt = `scripted:${join(ROOT, "fixtures/models/alt.json")}`;
    const run = json<{ session: string }>(await strata(dir, ["run", "summarize the notes", "--model", alt, "--workspace", "ws", "--json"]));
    session = run.session;
    const log = json<{ events: { id: number; label: string }[] }>(await strata(dir, ["log", session, "--limit", "0", "--json"]));
    // At rest before the second and the third model turn: every call of the turn before settled.
    const starts = log.events.flatMap((e, i) => (e.label === "turn.start" ? [log.events[i - 1]?.id as number] : []));
    expect(starts).toHaveLength(3);
    const fork = async (at: string, name: string) => {
      const r = await strata(dir, ["fork", at, "--name", name]);
      expect(r.code, r.stderr).toBe(0);
    };
    const runOn = async (branch: string, model: string) => {
      const r = await strata(dir, ["run", `more on ${branch}`, "--session", `${session}@${branch}`, "--model", model]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    };
    await fork(`${session}@${starts[1]}`, "a");
    await runOn("a", forkScript(dir, "other", 1, "On the fork."));
    await fork(`${session}@${starts[2]}`, "b");
    await runOn("b", forkScript(dir, "other", 2, "On the second fork."));
    // A fork of a fork, at a's head, and a fork nobody runs.
    await fork(`${session}@a`, "c");
    await runOn("c", forkScript(dir, "third", 2, "On the fork of the fork."));
    await fork(`${session}@main`, "idle");
    // b runs again, then is rewound to before that run: the kept head owns what it added.
    await runOn("b", forkScript(dir, "other", 3, "Once more."));
    const bLog = json<{ events: { id: number; label: string }[] }>(await strata(dir, ["log", `${session}@b`, "--limit", "0", "--json"]));
    const lastUser = bLog.events.filter((e) => e.label === "turn.user").at(-1)?.id as number;
    const before = bLog.events[bLog.events.findIndex((e) => e.id === lastUser) - 1]?.id as number;
    const rewound = await strata(dir, ["rewind", `${session}@b`, "--to", String(before), "--json"]);
    expect(rewound.code, rewound.stderr).toBe(0);
    kept = json<{ keptAs: string }>(rewound).keptAs;
    rewoundTo = before;
    branchNames.push(kept);
  }, 120_000);

  it("each branch: inherited = the usage of the tree at its fork point, own = what its events added, total = its head's; the session: every usage element once", async () => {
    const d = doc(await strata(dir, ["cost", session, "--json"]));
    expect(d.prices).toBeNull();
    expect(d.branches.map((b) => b.name).sort()).toEqual([...branchNames].sort());
    expect(d.branches[0]?.name).toBe("main");
    const union = new Map<number, UsageEl>();
    let sumOfTotals = 0;
    for (const b of d.branches) {
      const head = await usageAt(dir, [], `${session}@${b.name}`);
      for (const e of head) union.set(e.id, e);
      const base = b.forkedAt === null ? [] : await usageAt(dir, [], `${session}@${b.forkedAt}`);
      expect(b.total.tokens, b.name).toBe(tokensOf(head));
      expect(b.total.inputTokens, b.name).toBe(sum(head, "input"));
      expect(b.total.outputTokens, b.name).toBe(sum(head, "output"));
      expect(b.total.turns, b.name).toBe(head.length);
      expect(b.inherited.tokens, b.name).toBe(tokensOf(base));
      expect(b.own.tokens, b.name).toBe(tokensOf(head) - tokensOf(base));
      // What a branch inherits is exactly the fork point's usage elements, and its own are new ones.
      expect(
        base.every((e) => head.some((h) => h.id === e.id)),
        b.name,
      ).toBe(true);
      sumOfTotals += b.total.tokens;
    }
    const all = [...union.values()];
    expect(d.distinct.tokens).toBe(tokensOf(all));
    expect(d.distinct.turns).toBe(all.length);
    expect(d.distinct.tokens).toBe(d.branches.reduce((s, b) => s + b.own.tokens, 0));
    // The bug six other tools shipped: adding up the branches counts shared history again.
    expect(sumOfTotals).toBeGreaterThan(d.distinct.tokens);

    const by = Object.fromEntries(d.branches.map((b) => [b.name, b]));
    const main = await usageAt(dir, [], session);
    expect(main).toHaveLength(3);
    // a forked before the second turn: it inherits the first turn's usage, exactly.
    expect(by.a?.inherited.tokens).toBe(tokensOf(main.slice(0, 1)));
    expect(by.b?.inherited.tokens).toBe(tokensOf(main.slice(0, 2)));
    expect(by.main?.own.tokens).toBe(tokensOf(main));
    expect(by.main?.inherited.tokens).toBe(0);
    expect(by.main?.forkedAt).toBeNull();
    // c forked at a's head: it inherits all of a's.
    expect(by.c?.forkedAt).toBe(by.a?.head);
    expect(by.c?.inherited.tokens).toBe(by.a?.total.tokens);
    expect(by.c?.own.models.map((m) => m.model)).toEqual(["scripted:third"]);
    // A fork nobody ran has nothing of its own; the kept head owns the run the rewind left.
    expect(by.idle?.own.tokens).toBe(0);
    expect(by.idle?.total.tokens).toBe(by.main?.total.tokens);
    expect(by[kept]?.own.turns).toBe(1);
    expect(by[kept]?.forkedAt).toBe(rewoundTo);
    // By model, each event once.
    const models = Object.fromEntries(d.distinct.models.map((m) => [m.model, m.turns]));
    expect(models).toEqual({ "scripted:alt": 3, "scripted:other": 3, "scripted:third": 1 });

    // SESSION@BRANCH: that branch alone, the same numbers; the distinct total is still the session's.
    const only = doc(await strata(dir, ["cost", `${session}@c`, "--json"]));
    expect(only.branch).toBe("c");
    expect(only.branches).toEqual([by.c]);
    expect(only.distinct).toEqual(d.distinct);
  });

  it("the table on stdout: one row a branch and the session's total; -q one line a branch", async () => {
    const r = await strata(dir, ["cost", session]);
    expect(r.code, r.stderr).toBe(0);
    const d = doc(await strata(dir, ["cost", session, "--json"]));
    const main = d.branches[0] as CostDoc["branches"][number];
    expect(r.stdout).toMatch(/^session [0-9A-Z]{6}: 6 branches, \d+ events, each counted once\n/);
    expect(r.stdout).toContain("no prices");
    expect(r.stdout).toMatch(
      new RegExp(`\\nmain +- +0 +${main.own.tokens.toLocaleString("en-US")} +${main.total.tokens.toLocaleString("en-US")}\\n`),
    );
    expect(r.stdout).toMatch(new RegExp(`\\nsession +each event once +${d.distinct.tokens.toLocaleString("en-US")}\\n`));
    expect(r.stdout).toMatch(/\nscripted:other +3 +/);
    expect(r.stdout).not.toMatch(/\x1b\[/);
    const q = await strata(dir, ["cost", session, "-q"]);
    expect(q.stdout.trimEnd().split("\n")).toEqual(d.branches.map((b) => `${b.name} ${b.total.tokens}`));
  });

  it("prices: USD per million tokens per model, by id or by name without the provider; a model without a price is unpriced, never guessed", async () => {
    const prices = join(dir, "prices.json");
    writeFileSync(prices, JSON.stringify({ models: { "scripted:alt": { input: 3, output: 15 }, other: { input: 1, output: 2 } } }));
    const d = doc(await strata(dir, ["cost", session, "--prices", prices, "--json"]));
    expect(d.prices).toBe(prices);
    const rows = Object.fromEntries(d.distinct.models.map((m) => [m.model, m]));
    const want = (m: ModelRow | undefined, i: number, o: number) =>
      Math.round(((m?.inputTokens ?? 0) * i + (m?.outputTokens ?? 0) * o) * 1000) / 1e9;
    expect(rows["scripted:alt"]?.cost).toBe(want(rows["scripted:alt"], 3, 15));
    expect(rows["scripted:other"]?.cost).toBe(want(rows["scripted:other"], 1, 2));
    expect(rows["scripted:third"]?.cost).toBeNull();
    expect(d.distinct.unpriced).toEqual(["scripted:third"]);
    expect(d.distinct.cost).toBeCloseTo((rows["scripted:alt"]?.cost ?? 0) + (rows["scripted:other"]?.cost ?? 0), 9);
    const main = d.branches.find((b) => b.name === "main");
    expect(main?.total.unpriced).toEqual([]);
    expect(main?.total.cost).toBe(rows["scripted:alt"]?.cost);
    // The same from STRATA_PRICES, and from prices.json beside the database.
    const viaEnv = doc(await strata(dir, ["cost", session, "--json"], { env: { STRATA_PRICES: prices } }));
    expect(viaEnv.distinct).toEqual(d.distinct);
    writeFileSync(join(dir, ".strata", "prices.json"), JSON.stringify({ models: { "scripted:alt": { input: 3, output: 15 } } }));
    const beside = doc(await strata(dir, ["cost", session, "--json"]));
    expect(beside.prices).toBe(join(dir, ".strata", "prices.json"));
    expect(beside.distinct.unpriced.sort()).toEqual(["scripted:other", "scripted:third"]);
    const table = await strata(dir, ["cost", session, "--prices", prices]);
    expect(table.stdout).toMatch(/\nscripted:third .* unpriced\n/);
    expect(table.stdout).toMatch(/\nsession .*\$\d+\.\d+ \+ unpriced\n/);
  });

  it("a missing prices file is a usage error (exit 2); a malformed one fails naming the file and the field (exit 1); nothing is printed on stdout", async () => {
    const missing = await strata(dir, ["cost", session, "--prices", "nope.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--prices ${join(dir, "nope.json")}: no such file`);
    expect(missing.stdout).toBe("");
    const env = await strata(dir, ["cost", session], { env: { STRATA_PRICES: join(dir, "gone.json") } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("STRATA_PRICES");
    const cases: [unknown, string][] = [
      [{ models: { "scripted:alt": { input: "cheap", output: 1 } } }, 'models["scripted:alt"].input must be a number'],
      [{ models: { "scripted:alt": { input: 1 } } }, 'models["scripted:alt"].output is missing'],
      [{ models: { "scripted:alt": { input: 1, output: 2, cached: 0.1 } } }, 'models["scripted:alt"].cached is not a known field'],
      [{ model: {} }, 'field "model" is not known'],
      [[1, 2], "the document must be an object"],
    ];
    for (const [content, message] of cases) {
      const file = join(dir, "bad.json");
      writeFileSync(file, JSON.stringify(content));
      const r = await strata(dir, ["cost", session, "--prices", file]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`${file}: ${message}`);
      expect(r.stdout).toBe("");
    }
    writeFileSync(join(dir, "bad.json"), "{not json");
    const notJson = await strata(dir, ["cost", session, "--prices", "bad.json", "--json"]);
    expect(notJson.code).toBe(1);
    expect(json<{ error: { code: number; message: string } }>(notJson).error.message).toContain(`${join(dir, "bad.json")}: is not JSON`);
    // An event address is not a branch: a usage error before anything is opened.
    const at = await strata(dir, ["cost", `${session}@3`]);
    expect(at.code).toBe(2);
    expect(at.stderr).toContain("SESSION or SESSION@BRANCH");
    const unknown = await strata(dir, ["cost", `${session}@nope`]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no branch "nope"');
  });
});

describe("CLI-45 strata cost of an imported session", () => {
  it("counts what the source recorded: cache tokens apart, one response's usage (repeated on each of its lines) once, per model and branch", async () => {
    const dir = tempDir();
    const src = join(ROOT, "packages/import/test/fixtures/foreign/claude-code/session.jsonl");
    const imp = await strata(dir, ["import", "--from", "claude-code", src, "--json"]);
    expect(imp.code, imp.stderr).toBe(0);
    const session = json<{ sessions: { session: string }[] }>(imp).sessions[0]?.session as string;
    const prices = join(dir, "prices.json");
    writeFileSync(
      prices,
      JSON.stringify({
        models: {
          "claude-sonnet-4-5-20250929": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
          "claude-opus-4-1-20250805": { input: 15, output: 75 },
        },
      }),
    );
    const d = doc(await strata(dir, ["cost", session, "--prices", prices, "--json"]));
    const union = new Map<number, UsageEl>();
    for (const b of d.branches) {
      const head = await usageAt(dir, [], `${session}@${b.name}`);
      for (const e of head) union.set(e.id, e);
      expect(b.total.inputTokens, b.name).toBe(sum(head, "input"));
      expect(b.total.cacheReadTokens, b.name).toBe(sum(head, "cache-read"));
      expect(b.total.cacheWriteTokens, b.name).toBe(sum(head, "cache-write"));
      expect(b.total.outputTokens, b.name).toBe(sum(head, "output"));
    }
    const all = [...union.values()];
    expect(d.distinct.turns).toBe(all.length);
    expect(d.distinct.outputTokens).toBe(sum(all, "output"));
    const sonnet = d.distinct.models.find((m) => m.model === "anthropic:claude-sonnet-4-5-20250929");
    // Priced by the name after the provider the import recorded (anthropic:…).
    // msg_A is four lines with the same usage (its last says output 55), msg_B one line: counted once each.
    expect(sonnet).toMatchObject({ turns: 2, inputTokens: 12 + 40, outputTokens: 55 + 8, cacheReadTokens: 2000, cacheWriteTokens: 100 });
    expect(sonnet?.cost).toBe(Math.round((52 * 3 + 63 * 15 + 2000 * 0.3 + 100 * 3.75) * 1000) / 1e9);
    const opus = d.distinct.models.find((m) => m.model === "anthropic:claude-opus-4-1-20250805");
    expect(opus?.cost).toBe(Math.round(((opus?.inputTokens ?? 0) * 15 + (opus?.outputTokens ?? 0) * 75) * 1000) / 1e9);
    // `<synthetic>` used no tokens: it costs nothing, priced or not.
    expect(d.distinct.models.find((m) => m.model === "anthropic:<synthetic>")).toMatchObject({ tokens: 0, cost: 0 });
    expect(d.distinct.unpriced).toEqual([]);
    // A price without the cache kinds the model used: unpriced, not guessed.
    writeFileSync(prices, JSON.stringify({ models: { "claude-sonnet-4-5-20250929": { input: 3, output: 15 } } }));
    const partial = doc(await strata(dir, ["cost", session, "--prices", prices, "--json"]));
    expect(partial.distinct.models.find((m) => m.model === "anthropic:claude-sonnet-4-5-20250929")?.cost).toBeNull();
    const table = await strata(dir, ["cost", session, "--prices", prices]);
    expect(table.stdout).toContain("unpriced (no price for its cache tokens)");
    expect(table.stdout).toMatch(/CACHE READ +CACHE WRITE/);
  });

  it("shows the cost a source recorded (pi), beside the one the prices give", async () => {
    const dir = tempDir();
    const imp = await strata(dir, [
      "import",
      "--from",
      "pi",
      join(ROOT, "packages/import/test/fixtures/foreign/pi/session.jsonl"),
      "--json",
    ]);
    expect(imp.code, imp.stderr).toBe(0);
    const session = json<{ sessions: { session: string }[] }>(imp).sessions[0]?.session as string;
    const d = doc(await strata(dir, ["cost", session, "--json"]));
    const union = new Map<number, UsageEl>();
    for (const b of d.branches) for (const e of await usageAt(dir, [], `${session}@${b.name}`)) union.set(e.id, e);
    expect(d.distinct.recordedCost).toBeCloseTo(sum([...union.values()], "cost"), 9);
    expect(d.distinct.recordedCost).toBeGreaterThan(0);
    expect(d.distinct.cost).toBeNull();
    const table = await strata(dir, ["cost", session]);
    expect(table.stdout).toContain("RECORDED COST");
  });
});

describe("CLI-45 strata cost on PostgreSQL", () => {
  it("gives the numbers it gives on SQLite for the same session", async () => {
    const dir = demoDir();
    const alt = `scripted:${join(ROOT, "fixtures/models/alt.json")}`;
    const run = json<{ session: string }>(await strata(dir, ["run", "summarize", "--model", alt, "--workspace", "ws", "--json"]));
    const log = json<{ events: { id: number; label: string }[] }>(await strata(dir, ["log", run.session, "--limit", "0", "--json"]));
    const at = log.events.filter((e) => e.label === "turn.end")[0]?.id as number;
    const forkAt = log.events[log.events.findIndex((e) => e.id === at) + 3]?.id as number;
    expect((await strata(dir, ["fork", `${run.session}@${forkAt}`, "--name", "side"])).code).toBe(0);
    expect((await strata(dir, ["fork", `${run.session}@main`, "--name", "tip"])).code).toBe(0);
    const bundle = await strata(dir, ["export", run.session]);
    writeFileSync(join(dir, "s.json"), bundle.stdout);
    const remote = `${inject("pgUrl")}?schema=cost_${process.pid}_${Date.now().toString(36)}`;
    const moved = json<{ session: string }>(await strata(dir, ["--db", remote, "import", "s.json", "--json"]));
    const here = doc(await strata(dir, ["cost", run.session, "--json"]));
    const there = doc(await strata(dir, ["--db", remote, "cost", moved.session, "--json"]));
    const numbers = (d: CostDoc) => ({
      branches: d.branches.map((b) => [b.name, b.forkedAt === null, b.inherited, b.own, b.total]),
      distinct: d.distinct,
      eventCount: d.eventCount,
    });
    expect(numbers(there)).toEqual(numbers(here));
    expect(here.branches.find((b) => b.name === "side")?.inherited.turns).toBe(1);
    expect(here.distinct.tokens).toBeLessThan(here.branches.reduce((s, b) => s + b.total.tokens, 0));
  }, 60_000);
});
