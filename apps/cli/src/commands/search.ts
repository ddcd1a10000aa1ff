/**
 * `strata search TEXT` (CLI-38, SE-4 … SE-6): every session's messages, tool calls and outputs,
 * found in the store's full-text index (SQLite FTS5; PostgreSQL's text search), newest first, as
 * `HANDLE@EVENT` — an address every command takes — with the snippet around the match. A file
 * older than the index is opened for writing once, migrated, and its events indexed (with progress).
 */
import { indexSearchBacklog, type Port } from "@strata/engine";
import { type EventId, SCHEMA_VERSION, type SearchHit, type SessionId, type SqliteStore, StoreError, searchTerms } from "@strata/store";
import { findSession } from "../address.ts";
import { type Args, type CommandImpl, int, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { ago } from "../output.ts";
import { handlesOf } from "../sessions.ts";
import { terminalSafe } from "../terminal.ts";

const MAX_LIMIT = 1000;

function limitOf(args: Args): number {
  const limit = int(args, "limit", 20);
  if (limit < 1 || limit > MAX_LIMIT) throw new UsageError(`--limit takes a number from 1 to ${MAX_LIMIT}, got ${limit}`);
  return limit;
}

function beforeOf(args: Args): EventId | undefined {
  const v = str(args, "before");
  if (v === undefined) return undefined;
  if (!/^[1-9][0-9]{0,15}$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new UsageError(`--before takes an event id (a whole number, the "next" of the page before), got ${JSON.stringify(v)}`);
  return Number(v) as EventId;
}

function textOf(args: Args): string {
  const text = args.positionals.join(" ");
  try {
    searchTerms(text);
  } catch (e) {
    if (e instanceof StoreError) throw new UsageError(`strata search: ${e.message}; e.g. strata search 'read_file planning'`);
    throw e;
  }
  return text;
}

/** The store to search: opened for writing first when the file predates the index or has a backlog (SE-6). */
async function searchable(ctx: Parameters<CommandImpl["run"]>[0]): Promise<{ store: Port; indexed: number }> {
  let store: Port = await ctx.reader();
  const older = !ctx.remote && (store as SqliteStore).schemaVersion < SCHEMA_VERSION;
  if (!older && (await store.searchBacklog()) === 0) return { store, indexed: 0 };
  if (older) {
    await ctx.close();
    store = await ctx.writer();
  }
  const total = await store.searchBacklog();
  ctx.out.note(`indexing ${total.toLocaleString("en-US")} older events for search (once; later events are indexed as they are written)…`);
  const indexed = await indexSearchBacklog(store, {
    progress: (left) => ctx.out.progress(`indexing for search: ${Math.round(((total - left) / Math.max(1, total)) * 100)}%`),
  });
  ctx.out.progressDone();
  return { store, indexed };
}

/** The snippet with its matches in bold (on a terminal). */
function painted(ctx: Parameters<CommandImpl["run"]>[0], hit: SearchHit): string {
  let out = "";
  let at = 0;
  for (const [s, e] of hit.marks) {
    out += terminalSafe(hit.snippet.slice(at, s)) + ctx.out.paint("bold", terminalSafe(hit.snippet.slice(s, e)));
    at = e;
  }
  return out + terminalSafe(hit.snippet.slice(at));
}

export const search: CommandImpl = {
  check(args) {
    textOf(args);
    limitOf(args);
    beforeOf(args);
  },
  async run(ctx, args) {
    const text = textOf(args);
    const limit = limitOf(args);
    const before = beforeOf(args);
    const { store, indexed } = await searchable(ctx);
    const only = str(args, "session");
    const session: SessionId | undefined = only === undefined ? undefined : (await findSession(store, only)).id;
    // One more than asked says whether there is a next page.
    const found = await store.search({
      text,
      limit: Math.min(limit + 1, MAX_LIMIT),
      ...(session === undefined ? {} : { session }),
      ...(before === undefined ? {} : { before }),
    });
    const more = found.length > limit;
    const hits = found.slice(0, limit);
    const handles = handlesOf(hits.length === 0 ? [] : (await store.listSessions()).map((s) => s.id));
    const next = more ? (hits[hits.length - 1]?.event ?? null) : null;
    const rows = hits.map((h) => {
      const handle = handles.get(h.session) ?? h.session;
      return {
        address: `${handle}@${h.event}`,
        session: h.session,
        handle,
        event: h.event,
        ts: h.ts,
        label: h.label,
        by: h.by,
        kind: h.kind,
        snippet: h.snippet,
        marks: h.marks,
      };
    });
    if (ctx.out.json) {
      ctx.out.data({ query: text, session: session ?? null, hits: rows, next, indexedCount: indexed });
      return undefined;
    }
    if (ctx.out.quiet) {
      for (const r of rows) ctx.out.line(r.address);
      return undefined;
    }
    if (rows.length === 0) {
      ctx.out.info(
        `no event${session === undefined ? "" : ` of session ${session}`} holds ${JSON.stringify(text)}${before === undefined ? "" : ` before event ${before}`}`,
      );
      return undefined;
    }
    const now = ctx.now();
    for (const [k, r] of rows.entries()) {
      const hit = hits[k] as SearchHit;
      ctx.out.line(
        `${ctx.out.paint("cyan", r.address)}  ${ctx.out.paint("dim", `${ago(r.ts, now)}${r.label === null ? "" : `  ${terminalSafe(r.label)}`}`)}`,
      );
      ctx.out.line(`  ${painted(ctx, hit)}`);
    }
    if (more)
      ctx.out.info(
        ctx.out.paint("dim", `more: strata search ${shellQuote(text)}${only === undefined ? "" : ` --session ${only}`} --before ${next}`),
      );
    return undefined;
  },
};

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./@-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}
