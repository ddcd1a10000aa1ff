/**
 * Managing sessions (CLI-46 … CLI-49, decision 0040): `strata rename`, `strata rm` (whole sessions,
 * one transaction each, confirmed on a terminal, refused while driven), `strata archive` (hidden
 * from `ls` and `@last`, reversible) and `strata gc` (the blobs nothing reaches any more). On
 * SQLite and on PostgreSQL alike: the store does the work (ST-35, ST-36).
 */
import { createInterface } from "node:readline/promises";
import { storedBlobRefs } from "@strata/engine";
import {
  type BranchInfo,
  InUse,
  isAsyncStore,
  type LeaseInfo,
  type RemovedSession,
  type SessionInfo,
  type SqliteStore,
  type Store,
} from "@strata/store";
import { findSession, LAST } from "../address.ts";
import { ARCHIVED, archivedAt } from "../archive.ts";
import { type Args, type CommandImpl, flag } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, UsageError } from "../errors.ts";
import { describeHolder, holderGone } from "../lease.ts";
import { handlesOf } from "../sessions.ts";
import { isTerminalSafe, oneLine } from "../terminal.ts";

type Port = Awaited<ReturnType<Context["writer"]>>;

/** SESSION arguments name whole sessions: an address with a branch or event is a usage error. */
function checkSessions(args: Args, verb: string): void {
  for (const p of args.positionals) {
    const bare = p.toLowerCase() === LAST || /^[0-9A-Za-z]+$/.test(p);
    if (!bare)
      throw new UsageError(
        `${verb} takes whole sessions (a handle, an id or id prefix, or @last), got "${p}"; a session's branches and events go with it`,
      );
  }
}

/** The sessions the arguments name, each once, in order; every reference resolves before anything changes. */
async function sessionsOf(store: Port, args: Args): Promise<SessionInfo[]> {
  const out = new Map<string, SessionInfo>();
  for (const p of args.positionals) {
    const s = await findSession(store, p);
    out.set(s.id, s);
  }
  return [...out.values()];
}

async function handles(store: Port): Promise<Map<string, string>> {
  return handlesOf((await store.listSessions()).map((s) => s.id));
}

/** Whether a lease holder still drives its branch, as `run` and `resume` judge it (CLI-12). */
function liveJudge(store: Port): (holder: LeaseInfo) => boolean {
  const renewing = isAsyncStore(store);
  return (holder) => !holderGone(holder, Date.now(), renewing);
}

/** Exit 3 naming the driver, for a refused removal or collection. */
function driven(e: InUse, what: string): CliError {
  const h = e.holder;
  return new CliError(
    `${what}: ${h.session}@${h.branch} is being driven by ${describeHolder(h)}; nothing was removed — wait for it to finish, or stop it (Ctrl-C), then retry`,
    EXIT.conflict,
  );
}

const title = (s: SessionInfo): string => (s.title === null || s.title === "" ? "(untitled)" : `"${oneLine(s.title, 60)}"`);

const bytesText = (n: number): string =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;

export const rename: CommandImpl = {
  check(args) {
    checkSessions({ ...args, positionals: args.positionals.slice(0, 1) }, "rename");
    const t = args.positionals[1] as string;
    if (!isTerminalSafe(t) || /[\n\r]/.test(t))
      throw new UsageError("rename: the TITLE holds control characters or line breaks; give one line of plain text");
    if (t.length > 1000) throw new UsageError(`rename: the TITLE is ${t.length} characters long; give at most 1000`);
  },
  async run(ctx, args) {
    const store = await ctx.writer();
    const [s] = await sessionsOf(store, { ...args, positionals: args.positionals.slice(0, 1) });
    const session = s as SessionInfo;
    const next = (args.positionals[1] as string).trim();
    const updated = await store.updateSession(session.id, { title: next === "" ? null : next });
    const handle = (await handles(store)).get(session.id) ?? session.id;
    if (ctx.out.json) {
      ctx.out.data({ session: session.id, handle, title: updated.title, previousTitle: session.title });
      return;
    }
    ctx.out.line(`${ctx.out.paint("cyan", handle)}  ${title(session)} → ${title(updated)}`);
  },
};

/** Asks on the terminal; true for y or yes. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^\s*y(es)?\s*$/i.test(await rl.question(question));
  } finally {
    rl.close();
  }
}

/** A removal to make: the session, what the store counted, its branches. */
interface Planned {
  readonly s: SessionInfo;
  readonly counts: RemovedSession;
  readonly branches: readonly BranchInfo[];
}

export const rm: CommandImpl = {
  check(args) {
    checkSessions(args, "rm");
  },
  async run(ctx, args) {
    const dryRun = flag(args, "dry-run");
    const store = dryRun ? await ctx.reader() : await ctx.writer();
    const sessions = await sessionsOf(store, args);
    const names = await handles(store);
    const live = liveJudge(store);
    // What each removal takes (counted by the store; a driven session refuses here, before any goes).
    const plan: Planned[] = [];
    for (const s of sessions) {
      try {
        plan.push({ s, counts: await store.removeSession(s.id, { dryRun: true, live }), branches: await store.branches(s.id) });
      } catch (e) {
        if (e instanceof InUse) throw driven(e, `strata rm ${names.get(s.id) ?? s.id}`);
        throw e;
      }
    }
    const row = (p: Planned) => ({
      id: p.s.id,
      handle: names.get(p.s.id) ?? p.s.id,
      title: p.s.title,
      branchCount: p.counts.branches,
      eventCount: p.counts.events,
      snapshotCount: p.counts.snapshots,
    });
    const describe = (p: Planned) => {
      const shownBranches = p.branches.map((b) => b.name);
      const list = shownBranches.length <= 6 ? shownBranches.join(", ") : `${shownBranches.slice(0, 6).join(", ")}, …`;
      return `${ctx.out.paint("cyan", names.get(p.s.id) ?? p.s.id)}  ${title(p.s)}  ${p.counts.branches} branch${p.counts.branches === 1 ? "" : "es"} (${list}), ${p.counts.events} events`;
    };
    if (dryRun) {
      if (ctx.out.json) ctx.out.data({ dryRun: true, sessions: plan.map(row) });
      else {
        for (const p of plan) ctx.out.line(`would remove ${describe(p)}`);
        ctx.out.info(ctx.out.paint("dim", "nothing was removed (--dry-run)"));
      }
      return;
    }
    if (!flag(args, "yes")) {
      if (process.stdin.isTTY !== true)
        throw new UsageError(
          `strata rm asks before it removes, and stdin is not a terminal; give --yes to remove ${plan.length === 1 ? "the session" : `these ${plan.length} sessions`} (nothing was removed)`,
        );
      process.stderr.write(`${plan.map((p) => `  ${describe(p)}\n`).join("")}`);
      const n = plan.length;
      const ok = await confirm(
        `Remove ${n === 1 ? "this session" : `these ${n} sessions`} for good (every branch, event and snapshot)? [y/N] `,
      );
      if (!ok) {
        ctx.out.note("nothing was removed");
        return EXIT.failure;
      }
    }
    const removed = [];
    for (const p of plan) {
      try {
        await store.removeSession(p.s.id, { live });
      } catch (e) {
        if (!(e instanceof InUse)) throw e;
        const done = removed.length === 0 ? "" : ` (already removed: ${removed.map((r) => r.handle).join(", ")})`;
        throw driven(e, `strata rm ${names.get(p.s.id) ?? p.s.id}${done}`);
      }
      removed.push(row(p));
      if (!ctx.out.json) ctx.out.line(`removed ${describe(p)}`);
    }
    if (ctx.out.json) ctx.out.data({ dryRun: false, sessions: removed });
    else ctx.out.info(ctx.out.paint("dim", "their blobs (file contents, outputs, snapshot pages) stay until `strata gc`"));
  },
};

export const archive: CommandImpl = {
  check(args) {
    checkSessions(args, "archive");
  },
  async run(ctx, args) {
    const undo = flag(args, "undo");
    const store = await ctx.writer();
    const sessions = await sessionsOf(store, args);
    const names = await handles(store);
    const out = [];
    for (const s of sessions) {
      const was = archivedAt(s);
      const changed = undo ? was !== null : was === null;
      const now = changed ? await store.updateSession(s.id, { metadata: { [ARCHIVED]: undo ? null : ctx.now() } }) : s;
      out.push({ id: s.id, handle: names.get(s.id) ?? s.id, title: s.title, archived: archivedAt(now), changed });
      if (ctx.out.json) continue;
      const h = ctx.out.paint("cyan", names.get(s.id) ?? s.id);
      ctx.out.line(
        undo
          ? `${changed ? "unarchived" : "was not archived:"} ${h}  ${title(s)}`
          : `${changed ? "archived" : "already archived:"} ${h}  ${title(s)}`,
      );
    }
    if (ctx.out.json) ctx.out.data({ sessions: out });
    else if (!undo)
      ctx.out.info(ctx.out.paint("dim", "`strata ls --archived` lists them; `strata archive --undo SESSION` brings one back"));
  },
};

export const gc: CommandImpl = {
  async run(ctx, args) {
    const dryRun = flag(args, "dry-run");
    const store = dryRun ? await ctx.reader() : await ctx.writer();
    const started = Date.now();
    let report: Awaited<ReturnType<Store["collectGarbage"]>>;
    try {
      report = await store.collectGarbage({ dryRun, live: liveJudge(store), refs: storedBlobRefs });
    } catch (e) {
      if (e instanceof InUse) throw driven(e, "strata gc");
      throw e;
    }
    // SQLite keeps freed pages in the file: returned once a quarter of it is free (decision 0040).
    const file = dryRun || ctx.remote ? undefined : (store as SqliteStore).compact();
    const ms = Date.now() - started;
    if (ctx.out.json) {
      ctx.out.data({
        dryRun,
        blobCount: report.blobs,
        byteCount: report.bytes,
        keptBlobCount: report.keptBlobs,
        keptByteCount: report.keptBytes,
        vacuumed: file?.vacuumed ?? false,
        fileByteCount: file?.after ?? null,
      });
      return;
    }
    const what = `${report.blobs} blob${report.blobs === 1 ? "" : "s"} (${bytesText(report.bytes)})`;
    ctx.out.line(
      `${dryRun ? "would reclaim" : "reclaimed"} ${ctx.out.paint("bold", what)}; kept ${report.keptBlobs} (${bytesText(report.keptBytes)})`,
    );
    if (file?.vacuumed === true)
      ctx.out.info(`returned ${bytesText(file.before - file.after)} to the file system (${ctx.dbPath} is ${bytesText(file.after)})`);
    ctx.out.info(ctx.out.paint("dim", `${ms} ms${dryRun ? "; nothing was deleted (--dry-run)" : ""}`));
  },
};
