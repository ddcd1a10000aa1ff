/**
 * `strata cost SESSION[@BRANCH]` (CLI-45): the tokens each branch used — what it inherits from
 * its fork point, what its own events added, its total — and the session's distinct total, every
 * event counted once however many branches reach it (cost-ledger.ts); by model, and in US dollars
 * with a prices file (prices.ts). Reads event payloads only, on SQLite or PostgreSQL.
 */
import type { BranchInfo } from "@strata/store";
import { findSession, parseAddress } from "../address.ts";
import { type Args, type CommandImpl, str } from "../command.ts";
import type { Context } from "../context.ts";
import { ledgerOf } from "../cost-ledger.ts";
import { CliError, UsageError } from "../errors.ts";
import { columns } from "../output.ts";
import { costOf, loadPrices, type Price, type Prices, priceOf, pricesFile, usd } from "../prices.ts";
import { handlesOf } from "../sessions.ts";
import { terminalSafe } from "../terminal.ts";
import { type ByModel, type Figures, summed } from "../usage.ts";

/** The session and branch an address names: `SESSION` or `SESSION@BRANCH` (no event). */
function target(args: Args, branchOption: string | undefined): { session: string; branch: string | undefined } {
  const text = args.positionals[0] as string;
  const { session, at, back } = parseAddress(text);
  if (back > 0 || (at !== undefined && /^[0-9]+$/.test(at)))
    throw new UsageError(
      `strata cost takes SESSION or SESSION@BRANCH, not an event (${JSON.stringify(text)}): a branch's cost is its head's`,
    );
  if (at !== undefined && branchOption !== undefined && at !== branchOption)
    throw new UsageError(`${text} names branch "${at}" and --branch names "${branchOption}": give one`);
  return { session, branch: at ?? branchOption };
}

interface ModelRow {
  readonly model: string | null;
  readonly tokens: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly reasoningTokens: number;
  readonly turns: number;
  readonly cost: number | null;
  readonly recordedCost: number | null;
  readonly price: Price | null;
}

interface UsageDoc extends Omit<ModelRow, "model" | "price"> {
  /** Models with tokens and no price: `cost` leaves them out. */
  readonly unpriced: (string | null)[];
  readonly models: ModelRow[];
}

function counts(f: Figures) {
  return {
    tokens: f.input + f.output + f.cacheRead + f.cacheWrite + f.reasoning,
    inputTokens: f.input,
    outputTokens: f.output,
    cacheReadTokens: f.cacheRead,
    cacheWriteTokens: f.cacheWrite,
    reasoningTokens: f.reasoning,
    turns: f.turns,
  };
}

/** The usage of a part of the session: per model (most tokens first), and summed over the priced ones. */
function usageDoc(m: ByModel, prices: Prices | undefined): UsageDoc {
  const models: ModelRow[] = [];
  for (const [model, f] of m) {
    if (f.turns === 0) continue; // every turn it had was replaced on this line
    const price = priceOf(prices, model);
    models.push({
      model: model === "" ? null : model,
      ...counts(f),
      cost: costOf(f, price).cost,
      recordedCost: f.costed > 0 ? usd(f.recordedCost) : null,
      price: price ?? null,
    });
  }
  models.sort((a, b) => b.tokens - a.tokens || ((a.model ?? "") < (b.model ?? "") ? -1 : 1));
  const all = summed(m);
  const unpriced = models.filter((r) => r.cost === null).map((r) => r.model);
  return {
    ...counts(all),
    cost: prices === undefined ? null : usd(models.reduce((s, r) => s + (r.cost ?? 0), 0)),
    recordedCost: all.costed > 0 ? usd(all.recordedCost) : null,
    unpriced,
    models,
  };
}

function branchDoc(b: BranchInfo) {
  return { name: b.name, head: b.head, eventCount: b.headDepth, origin: b.origin, originEvent: b.originEvent, created: b.created };
}

export const cost: CommandImpl = {
  check(args) {
    target(args, undefined);
  },
  async run(ctx, args) {
    const { session: ref, branch: only } = target(args, ctx.branch);
    // A named prices file that is missing is a usage error, found before the database is opened.
    const prices = loadPrices(pricesFile(str(args, "prices"), ctx.env, ctx.cwd, ctx.home));
    const store = await ctx.reader();
    const session = await findSession(store, ref);
    if (only !== undefined && (await store.branch(session.id, only)) === undefined)
      throw new CliError(
        `session ${session.id} has no branch "${only}"; branches: ${(await store.branches(session.id)).map((b) => b.name).join(", ")}`,
      );
    const ledger = await ledgerOf(store, session.id);
    const handle = handlesOf((await store.listSessions()).map((s) => s.id)).get(session.id) ?? session.id;
    const rows = ledger.branches
      .filter((u) => only === undefined || u.branch.name === only)
      .map((u) => {
        const total = new Map(u.inherited);
        for (const [k, f] of u.own) {
          const t = total.get(k);
          total.set(k, t === undefined ? f : sumOf(t, f));
        }
        return {
          ...branchDoc(u.branch),
          forkedAt: u.forkedAt,
          inherited: usageDoc(u.inherited, prices),
          own: usageDoc(u.own, prices),
          total: usageDoc(total, prices),
        };
      });
    const distinct = usageDoc(ledger.distinct, prices);
    if (ctx.out.json) {
      ctx.out.data({
        session: session.id,
        handle,
        branch: only ?? null,
        prices: prices?.path ?? null,
        currency: "USD",
        eventCount: ledger.eventCount,
        branches: rows,
        distinct,
      });
      return undefined;
    }
    render(ctx, { handle, rows, distinct, prices, eventCount: ledger.eventCount, branchTotal: ledger.branches.length });
    return undefined;
  },
};

function sumOf(a: Figures, b: Figures): Figures {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof Figures)[]) out[k] += b[k];
  return out;
}

const n = (x: number): string => x.toLocaleString("en-US");
const dollars = (x: number): string => `$${x.toFixed(x !== 0 && x < 1 ? 4 : 2)}`;

/** A cost cell: dollars, `+ unpriced` when some model had no price, or `unpriced`. */
function costText(ctx: Context, u: UsageDoc): string {
  if (u.cost === null) return "";
  if (u.unpriced.length === 0) return dollars(u.cost);
  return u.models.every((m) => m.cost === null)
    ? ctx.out.paint("yellow", "unpriced")
    : `${dollars(u.cost)} ${ctx.out.paint("yellow", "+ unpriced")}`;
}

function render(
  ctx: Context,
  v: {
    handle: string;
    rows: { name: string; forkedAt: number | null; inherited: UsageDoc; own: UsageDoc; total: UsageDoc }[];
    distinct: UsageDoc;
    prices: Prices | undefined;
    eventCount: number;
    branchTotal: number;
  },
): void {
  const priced = v.prices !== undefined;
  if (ctx.out.quiet) {
    for (const r of v.rows) ctx.out.line([r.name, String(r.total.tokens), ...(priced ? [costText(ctx, r.total)] : [])].join(" ").trimEnd());
    return;
  }
  const head = (cells: string[]) => cells.map((h) => ctx.out.paint("bold", h));
  ctx.out.info(
    `session ${ctx.out.paint("cyan", v.handle)}: ${v.branchTotal} branch${v.branchTotal === 1 ? "" : "es"}, ${n(v.eventCount)} events, each counted once`,
  );
  ctx.out.info(
    priced
      ? ctx.out.paint("dim", `prices: ${v.prices?.path} (USD per million tokens)`)
      : ctx.out.paint("dim", "no prices (--prices FILE, $STRATA_PRICES or prices.json beside the database): tokens only"),
  );
  ctx.out.info();
  const table = [head(["BRANCH", "FORKED AT", "INHERITED", "OWN", "TOTAL", ...(priced ? ["OWN COST", "COST"] : [])])];
  for (const r of v.rows)
    table.push([
      ctx.out.paint("cyan", r.name),
      r.forkedAt === null ? "-" : String(r.forkedAt),
      n(r.inherited.tokens),
      n(r.own.tokens),
      n(r.total.tokens),
      ...(priced ? [costText(ctx, r.own), costText(ctx, r.total)] : []),
    ]);
  table.push([
    ctx.out.paint("bold", "session"),
    ctx.out.paint("dim", "each event once"),
    "",
    "",
    n(v.distinct.tokens),
    ...(priced ? ["", costText(ctx, v.distinct)] : []),
  ]);
  for (const l of columns(table)) ctx.out.line(l);
  if (v.distinct.models.length === 0) {
    ctx.out.info();
    ctx.out.info(ctx.out.paint("dim", "no model turn of this session records its usage"));
    return;
  }
  ctx.out.info();
  ctx.out.info(ctx.out.paint("dim", "by model, the session (each event once):"));
  const anyCache = v.distinct.cacheReadTokens + v.distinct.cacheWriteTokens > 0;
  const anyReasoning = v.distinct.reasoningTokens > 0;
  const anyRecorded = v.distinct.recordedCost !== null;
  const models = [
    head([
      "MODEL",
      "TURNS",
      "INPUT",
      "OUTPUT",
      ...(anyCache ? ["CACHE READ", "CACHE WRITE"] : []),
      ...(anyReasoning ? ["REASONING"] : []),
      "TOKENS",
      ...(priced ? ["COST"] : []),
      ...(anyRecorded ? ["RECORDED COST"] : []),
    ]),
  ];
  for (const m of v.distinct.models)
    models.push([
      m.model === null ? ctx.out.paint("dim", "(not recorded)") : terminalSafe(m.model),
      n(m.turns),
      n(m.inputTokens),
      n(m.outputTokens),
      ...(anyCache ? [n(m.cacheReadTokens), n(m.cacheWriteTokens)] : []),
      ...(anyReasoning ? [n(m.reasoningTokens)] : []),
      n(m.tokens),
      ...(priced
        ? [
            m.cost === null
              ? ctx.out.paint("yellow", m.price === null ? "unpriced" : "unpriced (no price for its cache tokens)")
              : dollars(m.cost),
          ]
        : []),
      ...(anyRecorded ? [m.recordedCost === null ? "-" : dollars(m.recordedCost)] : []),
    ]);
  for (const l of columns(models)) ctx.out.line(l);
}
