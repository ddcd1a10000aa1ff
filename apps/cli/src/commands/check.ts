/** Commands that prove and search: verify, replay (--verify, --rerun, --override), bisect (CLI-21, CLI-22, CLI-24). */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Override, readInputs, rerun, ToolRegistry, verifyRequests, workspaceTools } from "@strata/agent";
import { DomError, diffTrees, select, skeletonTree } from "@strata/dom";
import { materialize, replayVerify, Session, verifyStore } from "@strata/engine";
import type { EventId } from "@strata/store";
import { findSession, parseAddress, resolveAddress } from "../address.ts";
import { type Args, branchName, type Command, flag, list, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { diffView } from "../render.ts";
import { handleOf } from "../sessions.ts";
import { oneLine } from "../terminal.ts";

const OVERRIDE = /^(llm|tool):([^=]+)=(.+)$/;

/** Checks a selector's syntax on an empty tree, before any file is opened (a malformed one is a usage error). */
export function checkSelector(option: string, css: string | undefined): void {
  if (css === undefined) return;
  try {
    select(skeletonTree({ tag: "session" }), css);
  } catch (e) {
    if (e instanceof DomError) throw new UsageError(`--${option}: ${e.message}`);
    throw e;
  }
}

export const verify: Command = {
  name: "verify",
  summary: "check the database's integrity",
  usage: "strata verify [SESSION]",
  description:
    "SQLite's own check, every chain link and depth, branch heads, blob hashes, every payload decodes, and every snapshot equals the replay of its chain. Exits 1 on any finding.",
  examples: ["strata verify", "strata verify 6CPD71 --json"],
  options: {},
  positionals: { min: 0, max: 1 },
  takesSession: true,
  json: true,
  run(ctx, args) {
    const store = ctx.store({ readonly: true });
    const session = args.positionals[0] === undefined ? undefined : findSession(store, args.positionals[0]).id;
    const report = verifyStore(store, session, (done, total) => ctx.out.progress(`verifying: ${done}/${total} events`));
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

export const replay: Command = {
  name: "replay",
  summary: "prove replay equals the stored states, or re-run a branch deterministically",
  usage: "strata replay SESSION[@BRANCH] (--verify | --rerun | --override llm:CALL=FILE|tool:CALL=FILE …)",
  description: [
    "--verify replays the branch from genesis with no snapshot and compares it with every snapshot on the chain and with the head as a reopen builds it; it reports the first event where they differ. It then re-renders every request the model was sent on the branch from the tree and compares it with the hash recorded on its turn: a mismatch names the event and the part (system, tools, settings, messages) and shows the difference.",
    "--rerun forks the branch before its first user turn and drives the loop again: recorded model replies, `safe` tools re-executed for real, `never` tools answered from the recording. It reports the first reply or observation that differs (exit 1 when one does).",
    "--override makes that re-run a counterfactual: llm:CALL=FILE replaces the model reply that made call CALL with FILE (JSON {text, toolCalls:[{name, arguments}]}); tool:CALL=FILE replaces that call's observation with FILE's text. Every override is recorded in the new branch.",
  ].join("\n"),
  examples: [
    "strata replay @last --verify",
    "strata replay 6CPD71 --rerun --json",
    "strata replay 6CPD71 --override tool:call_1_0=notes-v2.md --name what-if-notes",
  ],
  options: {
    verify: { type: "boolean", description: "replay from genesis and compare with the stored states" },
    rerun: { type: "boolean", description: "re-run the branch on a new branch and report the first divergence" },
    override: {
      type: "string",
      multiple: true,
      value: "KIND:CALL=FILE",
      description: "a counterfactual input (llm: or tool:), repeatable; implies --rerun",
    },
    name: { type: "string", value: "NAME", description: "the re-run branch's name (default rerun/BRANCH or whatif/BRANCH)" },
    workspace: {
      type: "string",
      value: "DIR",
      description: "where safe tools run (default: the workspace the session recorded; required for an imported session)",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
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
    const store = ctx.store({ readonly: true });
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const r = replayVerify(store, a.session.id, {
      branch: a.branch.name,
      progress: (d, t) => ctx.out.progress(`replaying: ${d}/${t} events`),
    });
    ctx.out.progressDone();
    const { session } = Session.open(store, a.session.id, { branch: a.branch.name });
    const q = verifyRequests(session, { progress: (d, t) => ctx.out.progress(`re-rendering requests: ${d}/${t} events`) });
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

export const bisect: Command = {
  name: "bisect",
  summary: "find the first event after which a selector matches",
  usage: "strata bisect SESSION[@BRANCH] --until CSS",
  description:
    "Binary search over the branch: materializes O(log n) states and reports the first event after which CSS matches an element (assuming that, once true, it stays true), with that event's diff.",
  examples: [
    "strata bisect @last --until 'call[status=env_error]'",
    "strata bisect 6CPD71@try-2 --until 'todo item[status=completed]' --json",
  ],
  options: { until: { type: "string", value: "CSS", description: "the condition: a selector that starts matching" } },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  check(args) {
    parseAddress(args.positionals[0] as string);
    if (str(args, "until") === undefined) throw new UsageError("bisect needs --until CSS");
    checkSelector("until", str(args, "until"));
  },
  run(ctx, args) {
    const css = str(args, "until") as string;
    const store = ctx.store({ readonly: true });
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const chain = store.chainMeta(a.event, 0, Number.MAX_SAFE_INTEGER);
    const holds = (i: number): boolean => {
      const tree = materialize(store, (chain[i] as { id: EventId }).id);
      try {
        return select(tree, css).length > 0;
      } catch (e) {
        if (e instanceof DomError) throw new UsageError(e.message);
        throw e;
      }
    };
    let steps = 0;
    const probe = (i: number) => {
      steps++;
      ctx.out.progress(`bisect: step ${steps}, event ${chain[i]?.id}`);
      return holds(i);
    };
    if (!probe(chain.length - 1)) {
      ctx.out.progressDone();
      throw new CliError(`${css} matches nothing at the head of ${a.branch.name} (event ${a.event}); nothing to find`);
    }
    let lo = 0;
    let hi = chain.length - 1;
    if (probe(0)) hi = 0;
    else
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (probe(mid)) hi = mid;
        else lo = mid;
      }
    ctx.out.progressDone();
    const found = chain[hi] as { id: EventId; label: string | null; ts: number };
    const before = hi === 0 ? undefined : materialize(store, (chain[hi - 1] as { id: EventId }).id);
    const after = materialize(store, found.id);
    const d = before === undefined ? undefined : diffTrees(before, after);
    const matched = select(after, css).map((e) => e.id);
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        event: found.id,
        label: found.label,
        probes: steps,
        matches: matched,
        diff: d ?? null,
      });
    ctx.out.line(
      `${ctx.out.paint("bold", `first event after which ${css} matches: ${found.id}`)} (${oneLine(found.label ?? "no label", 40)}; ${steps} states materialized)`,
    );
    ctx.out.line(`matching: ${matched.map((id) => `#${id}`).join(", ")}`);
    if (before !== undefined && d !== undefined) for (const l of diffView(ctx.out, d, before, after)) ctx.out.line(l);
    return undefined;
  },
};

async function rerunCommand(ctx: Context, args: Args, specs: readonly string[]): Promise<number> {
  const overrides: Override[] = specs.map((spec) => {
    const m = OVERRIDE.exec(spec);
    if (m === null) throw new UsageError(`--override ${JSON.stringify(spec)}: use llm:CALL_ID=FILE or tool:CALL_ID=FILE`);
    const path = resolve(ctx.cwd, m[3] as string);
    if (!existsSync(path)) throw new UsageError(`--override ${spec}: the file ${path} does not exist`);
    let content: string;
    try {
      content = readFileSync(path, "utf8");
    } catch (e) {
      throw new UsageError(`--override ${spec}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    return { kind: m[1] as "llm" | "tool", callId: m[2] as string, content };
  });
  const store = ctx.store();
  const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
  if (a.explicitEvent) throw new UsageError("a re-run replays a whole branch: give SESSION or SESSION@BRANCH");
  if (str(args, "name") !== undefined && store.branch(a.session.id, str(args, "name") as string) !== undefined)
    throw new CliError(`session ${a.session.id} has a branch "${str(args, "name")}" already; pick another --name`);
  const { session } = Session.open(store, a.session.id, { branch: a.branch.name });
  const importedFrom = store.getSession(a.session.id)?.metadata.importedFrom;
  // An imported session's recorded workspace names someone else's machine: safe tools would read there.
  if (importedFrom !== undefined && str(args, "workspace") === undefined)
    throw new UsageError(
      `session ${a.session.id} was imported (from ${String(importedFrom)}); a re-run executes its safe tools for real — pass --workspace DIR to choose where`,
    );
  const workspace = resolve(ctx.cwd, str(args, "workspace") ?? readInputs(session.durableTree).settings.workspace ?? ".");
  if (!existsSync(workspace)) {
    const message = `the workspace ${workspace} does not exist; pass --workspace DIR (safe tools run there)`;
    throw str(args, "workspace") !== undefined ? new UsageError(message) : new CliError(message);
  }
  const report = await rerun(session, {
    registry: new ToolRegistry(workspaceTools({ root: workspace })),
    overrides,
    ...(branchName(args, "name") !== undefined ? { name: branchName(args, "name") as string } : {}),
    signal: ctx.signal,
    onProgress: (n) => ctx.out.progress(`re-running: model reply ${n}`),
  });
  ctx.out.progressDone();
  const diverged = report.divergence !== undefined;
  if (ctx.out.json)
    ctx.out.data({
      session: a.session.id,
      sourceBranch: a.branch.name,
      ...report,
      stop: report.stop ?? null,
      divergence: report.divergence ?? null,
    });
  else {
    const o = ctx.out;
    o.line(
      `${o.paint("bold", overrides.length > 0 ? "counterfactual" : "re-run")} on branch ${o.paint("cyan", report.branch)} (forked at event ${report.forkedAt})`,
    );
    o.line(
      o.paint(
        "dim",
        `  ${report.turns} model replies, ${report.calls} calls: ${report.rerunSafe} safe calls re-executed, ${report.recordedNever} answered from the recording; stop: ${report.stop ?? "none"}`,
      ),
    );
    const d = report.divergence;
    if (d === undefined) o.line(`${o.paint("green", "reproduced")}: every reply, call and observation matches ${a.branch.name}`);
    else {
      o.line(`${o.paint(overrides.length > 0 ? "yellow" : "red", "diverged")}: ${d.message}`);
      o.line(`  ${a.branch.name}: element #${d.source.element ?? "-"}${d.source.event !== null ? ` (event ${d.source.event})` : ""}`);
      o.line(`  ${report.branch}: element #${d.rerun.element ?? "-"}${d.rerun.event !== null ? ` (event ${d.rerun.event})` : ""}`);
      o.line(o.paint("red", `  - ${oneLine(d.before, 160)}`));
      o.line(o.paint("green", `  + ${oneLine(d.after, 160)}`));
      const h = handleOf(store, a.session.id);
      o.line(o.paint("dim", `  compare: strata diff ${h}@${a.branch.name} ${h}@${report.branch}`));
    }
  }
  return diverged && overrides.length === 0 ? 1 : 0;
}
