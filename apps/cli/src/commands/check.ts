/** Commands that prove and search: verify, replay (--verify, --rerun, --override), bisect (CLI-21, CLI-22, CLI-24, CLI-36). */
import { diffWorkspaces, verifyRequests } from "@strata/agent";
import { diffTrees } from "@strata/dom";
import { type Port, replayVerify, Session, verifyPort } from "@strata/engine";
import type { EventId } from "@strata/store";
import { findSession, parseAddress, resolveAddress } from "../address.ts";
import { allHold, fileCondition, parseFileCondition, selectorCondition } from "../bisect-conditions.ts";
import { branchName, type CommandImpl, flag, list, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { fileDiffsOn, fileDiffView } from "../filediff.ts";
import { wholeTreeAt } from "../port.ts";
import { diffView } from "../render.ts";
import { checkSelector } from "../selectors.ts";
import { oneLine } from "../terminal.ts";
import { OVERRIDE, rerunCommand } from "./rerun.ts";

export const verify: CommandImpl = {
  async run(ctx, args) {
    // On either port: on PostgreSQL the store's checks, then the engine's (verifyPort).
    const store = await ctx.reader();
    const session = args.positionals[0] === undefined ? undefined : (await findSession(store, args.positionals[0])).id;
    const report = await verifyPort(store, session, (done, total) => ctx.out.progress(`verifying: ${done}/${total} events`));
    ctx.out.progressDone();
    if (ctx.out.json)
      ctx.out.data({
        ok: report.ok,
        session: session ?? null,
        sessionCount: report.sessions,
        eventCount: report.events,
        snapshotCount: report.snapshots,
        blobCount: report.blobs,
        findings: report.findings.map((f) => ({ code: f.code, session: f.session ?? null, event: f.event ?? null, message: f.message })),
      });
    else {
      ctx.out.line(
        `${report.ok ? ctx.out.paint("green", "ok") : ctx.out.paint("red", "FAILED")}: ${report.sessions} sessions, ${report.events} events, ${report.snapshots} snapshots, ${report.blobs} blobs checked`,
      );
      for (const f of report.findings)
        ctx.out.line(`  ${ctx.out.paint("red", f.code)}${f.event !== undefined ? ` (event ${f.event})` : ""}: ${oneLine(f.message, 400)}`);
    }
    return report.ok ? 0 : 1;
  },
};

export const replay: CommandImpl = {
  check(args) {
    parseAddress(args.positionals[0] as string);
    const rerunning = flag(args, "rerun") || list(args, "override").length > 0;
    if (flag(args, "verify") && rerunning)
      throw new UsageError("--verify checks the stored states; --rerun and --override make a new branch: give one of them");
    if (!flag(args, "verify") && !rerunning) throw new UsageError("replay needs --verify, --rerun or --override (strata replay --help)");
    if (!rerunning)
      for (const o of ["name", "workspace"])
        if (str(args, o) !== undefined) throw new UsageError(`--${o} applies to --rerun and --override, not to --verify`);
    branchName(args, "name");
    for (const spec of list(args, "override"))
      if (!OVERRIDE.test(spec)) throw new UsageError(`--override ${JSON.stringify(spec)}: use llm:CALL_ID=FILE or tool:CALL_ID=FILE`);
  },
  async run(ctx, args) {
    const overrides = list(args, "override");
    if (flag(args, "rerun") || overrides.length > 0) return rerunCommand(ctx, args, overrides);
    // SQLite read-only, or PostgreSQL (decision 0038): the same proof on either port.
    const store = await ctx.reader();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const r = await replayVerify(store, a.session.id, {
      branch: a.branch.name,
      progress: (d, t) => ctx.out.progress(`replaying: ${d}/${t} events`),
    });
    ctx.out.progressDone();
    const { session } = await Session.open(store as Port, a.session.id, { branch: a.branch.name });
    const q = await verifyRequests(session, { progress: (d, t) => ctx.out.progress(`re-rendering requests: ${d}/${t} events`) });
    ctx.out.progressDone();
    const ok = r.ok && q.ok;
    if (ctx.out.json) {
      ctx.out.data({
        session: a.session.id,
        branch: r.branch,
        head: r.head,
        ok,
        eventCount: r.events,
        snapshotCount: r.snapshots,
        mismatch: r.mismatch ?? null,
        requests: {
          ok: q.ok,
          turnCount: q.turns,
          verifiedCount: q.verified,
          unrecordedCount: q.unrecorded,
          mismatchCount: q.mismatched,
          mismatches: q.mismatches.map((m) => ({
            event: m.event,
            at: m.at,
            turn: m.turn,
            part: m.part,
            parts: m.parts,
            message: m.message ?? null,
            recorded: m.recorded,
            rendered: m.rendered,
            detail: m.detail,
            diff: m.diff,
          })),
        },
      });
      return ok ? 0 : 1;
    }
    if (r.ok)
      ctx.out.line(
        `${ctx.out.paint("green", "ok")}: replayed ${r.events} events from genesis; ${r.snapshots} snapshots and the reopened head are byte-identical`,
      );
    else ctx.out.line(`${ctx.out.paint("red", "MISMATCH")} at event ${r.mismatch?.event}: ${oneLine(r.mismatch?.reason ?? "", 400)}`);
    const unrecorded = q.unrecorded > 0 ? ` (${q.unrecorded} turns recorded no request: written by an older strata)` : "";
    if (q.ok)
      ctx.out.line(
        `${ctx.out.paint("green", "ok")}: ${q.verified} of ${q.turns} requests re-render byte-identical to what the model was sent${unrecorded}`,
      );
    else {
      ctx.out.line(
        `${ctx.out.paint("red", "REQUESTS DIFFER")}: ${q.mismatched} of ${q.turns} requests do not re-render to what the model was sent${unrecorded}`,
      );
      for (const m of q.mismatches) {
        ctx.out.line(`  event ${m.event} (turn #${m.turn}, rendered at event ${m.at}): ${m.part} — ${oneLine(m.detail, 300)}`);
        for (const l of m.diff.split("\n")) ctx.out.line(`    ${l}`);
      }
      if (q.mismatched > q.mismatches.length) ctx.out.line(`  … and ${q.mismatched - q.mismatches.length} more`);
    }
    return ok ? 0 : 1;
  },
};

export const bisect: CommandImpl = {
  check(args) {
    parseAddress(args.positionals[0] as string);
    if (str(args, "until") === undefined && list(args, "until-file").length === 0)
      throw new UsageError("bisect needs --until CSS or --until-file PATH (PATH~REGEX for its content): the condition to search for");
    checkSelector("until", str(args, "until"));
    for (const spec of list(args, "until-file")) parseFileCondition(spec);
  },
  async run(ctx, args) {
    const css = str(args, "until");
    // SQLite read-only, or PostgreSQL: each probe's state is fetched whole there.
    const store = await ctx.reader();
    const conditions = [
      ...(css === undefined ? [] : [selectorCondition(css)]),
      ...list(args, "until-file").map((spec) => fileCondition(store, spec)),
    ];
    const what = conditions.map((c) => c.text).join(" and ");
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const chain = await store.chainMeta(a.event, 0, Number.MAX_SAFE_INTEGER);
    let steps = 0;
    const probe = async (i: number): Promise<boolean> => {
      steps++;
      ctx.out.progress(`bisect: step ${steps}, event ${chain[i]?.id}`);
      return (await allHold(conditions, await wholeTreeAt(store, (chain[i] as { id: EventId }).id))) !== undefined;
    };
    if (!(await probe(chain.length - 1))) {
      ctx.out.progressDone();
      throw new CliError(
        css !== undefined && conditions.length === 1
          ? `${css} matches nothing at the head of ${a.branch.name} (event ${a.event}); nothing to find`
          : `${what} does not hold at the head of ${a.branch.name} (event ${a.event}); nothing to find`,
      );
    }
    let lo = 0;
    let hi = chain.length - 1;
    if (await probe(0)) hi = 0;
    else
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (await probe(mid)) hi = mid;
        else lo = mid;
      }
    ctx.out.progressDone();
    const found = chain[hi] as { id: EventId; label: string | null; ts: number };
    const before = hi === 0 ? undefined : await wholeTreeAt(store, (chain[hi - 1] as { id: EventId }).id);
    const after = await wholeTreeAt(store, found.id);
    const d = before === undefined ? undefined : diffTrees(before, after);
    const matched = (await allHold(conditions, after)) ?? [];
    const files = await fileDiffsOn(store, diffWorkspaces(before, after));
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        event: found.id,
        label: found.label,
        probes: steps,
        until: conditions.map((c) => c.text),
        matches: matched,
        diff: d ?? null,
        files,
      });
    if (ctx.out.quiet) return void ctx.out.line(String(found.id));
    ctx.out.line(
      `${ctx.out.paint("bold", `first event after which ${what}: ${found.id}`)} (${oneLine(found.label ?? "no label", 40)}; ${steps} states materialized)`,
    );
    ctx.out.line(`matching: ${matched.map((id) => `#${id}`).join(", ")}`);
    if (before !== undefined && d !== undefined) for (const l of diffView(ctx.out, d, before, after)) ctx.out.line(l);
    for (const l of fileDiffView(ctx.out, files)) ctx.out.line(l);
    return undefined;
  },
};
