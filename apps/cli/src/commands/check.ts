/** Commands that prove and search: verify, replay (--verify, --rerun, --override), bisect, verify (CLI-21, CLI-22, CLI-24). */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { DomError, diffTrees, select } from "@strata/dom";
import {
  materialize,
  type Override,
  readInputs,
  replayVerify,
  rerun,
  Session,
  ToolRegistry,
  verifyStore,
  workspaceTools,
} from "@strata/engine";
import type { EventId } from "@strata/store";
import { findSession, resolveAddress } from "../address.ts";
import { type Args, type Command, flag, list, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { diffView, oneLine } from "../render.ts";

export const verify: Command = {
  name: "verify",
  summary: "check the database's integrity",
  usage: "strata verify [SESSION]",
  description:
    "SQLite's own check, every chain link and depth, branch heads, blob hashes, every payload decodes, and every snapshot equals the replay of its chain. Exits 1 on any finding.",
  examples: ["strata verify", "strata verify 01JD4 --json"],
  options: {},
  positionals: { min: 0, max: 1 },
  json: true,
  run(ctx, args) {
    const store = ctx.store();
    const session = args.positionals[0] === undefined ? undefined : findSession(store, args.positionals[0]).id;
    const report = verifyStore(store, session, (done, total) => ctx.out.progress(`verifying: ${done}/${total} events`));
    ctx.out.progressDone();
    if (ctx.out.json) ctx.out.data(report);
    else {
      ctx.out.line(
        `${report.ok ? ctx.out.paint("green", "ok") : ctx.out.paint("red", "FAILED")}: ${report.sessions} sessions, ${report.events} events, ${report.snapshots} snapshots, ${report.blobs} blobs checked`,
      );
      for (const f of report.findings)
        ctx.out.line(`  ${ctx.out.paint("red", f.code)}${f.event !== undefined ? ` (event ${f.event})` : ""}: ${f.message}`);
    }
    return report.ok ? 0 : 1;
  },
};

export const replay: Command = {
  name: "replay",
  summary: "prove replay equals the stored states, or re-run a branch deterministically",
  usage: "strata replay SESSION[@BRANCH] (--verify | --rerun | --override llm:CALL=FILE|tool:CALL=FILE …)",
  description: [
    "--verify replays the branch from genesis with no snapshot and compares it with every snapshot on the chain and with the head as a reopen builds it; it reports the first event where they differ.",
    "--rerun forks the branch before its first user turn and drives the loop again: recorded model replies, `safe` tools re-executed for real, `never` tools answered from the recording. It reports the first reply or observation that differs (exit 1 when one does).",
    "--override makes that re-run a counterfactual: llm:CALL=FILE replaces the model reply that made call CALL with FILE (JSON {text, toolCalls:[{name, arguments}]}); tool:CALL=FILE replaces that call's observation with FILE's text. Every override is recorded in the new branch.",
  ].join("\n"),
  examples: [
    "strata replay 01JD4 --verify",
    "strata replay 01JD4 --rerun --json",
    "strata replay 01JD4 --override tool:call_1_0=notes-v2.md --name what-if-notes",
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
    workspace: { type: "string", value: "DIR", description: "where safe tools run (default: the workspace the session recorded)" },
  },
  positionals: { min: 1, max: 1 },
  json: true,
  async run(ctx, args) {
    const overrides = list(args, "override");
    if (flag(args, "rerun") || overrides.length > 0) return rerunCommand(ctx, args, overrides);
    if (!flag(args, "verify")) throw new UsageError("replay needs --verify, --rerun or --override (strata replay --help)");
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const r = replayVerify(store, a.session.id, {
      branch: a.branch.name,
      progress: (d, t) => ctx.out.progress(`replaying: ${d}/${t} events`),
    });
    ctx.out.progressDone();
    if (ctx.out.json) ctx.out.data(r);
    else if (r.ok)
      ctx.out.line(
        `${ctx.out.paint("green", "ok")}: replayed ${r.events} events from genesis; ${r.snapshots} snapshots and the reopened head are byte-identical`,
      );
    else ctx.out.line(`${ctx.out.paint("red", "MISMATCH")} at event ${r.mismatch?.event}: ${r.mismatch?.reason}`);
    return r.ok ? 0 : 1;
  },
};

export const bisect: Command = {
  name: "bisect",
  summary: "find the first event after which a selector matches",
  usage: "strata bisect SESSION[@BRANCH] --until CSS",
  description:
    "Binary search over the branch: materializes O(log n) states and reports the first event after which CSS matches an element (assuming that, once true, it stays true), with that event's diff.",
  examples: [
    "strata bisect 01JD4 --until 'call[status=env_error]'",
    "strata bisect 01JD4@try-2 --until 'todo item[status=completed]' --json",
  ],
  options: { until: { type: "string", value: "CSS", description: "the condition: a selector that starts matching" } },
  positionals: { min: 1, max: 1 },
  json: true,
  run(ctx, args) {
    const css = str(args, "until");
    if (css === undefined) throw new UsageError("bisect needs --until CSS");
    const store = ctx.store();
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
        steps,
        matches: matched,
        diff: d,
      });
    ctx.out.line(
      `${ctx.out.paint("bold", `first event after which ${css} matches: ${found.id}`)} (${found.label ?? "no label"}; ${steps} states materialized)`,
    );
    ctx.out.line(`matching: ${matched.map((id) => `#${id}`).join(", ")}`);
    if (before !== undefined && d !== undefined) for (const l of diffView(ctx.out, d, before, after)) ctx.out.line(l);
    return undefined;
  },
};

const OVERRIDE = /^(llm|tool):([^=]+)=(.+)$/;

async function rerunCommand(ctx: Context, args: Args, specs: readonly string[]): Promise<number> {
  const overrides: Override[] = specs.map((spec) => {
    const m = OVERRIDE.exec(spec);
    if (m === null) throw new UsageError(`--override ${JSON.stringify(spec)}: use llm:CALL_ID=FILE or tool:CALL_ID=FILE`);
    const path = resolve(ctx.cwd, m[3] as string);
    if (!existsSync(path)) throw new UsageError(`--override ${spec}: the file ${path} does not exist`);
    return { kind: m[1] as "llm" | "tool", callId: m[2] as string, content: readFileSync(path, "utf8") };
  });
  const store = ctx.store();
  const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
  if (a.explicitEvent) throw new UsageError("a re-run replays a whole branch: give SESSION or SESSION@BRANCH");
  const { session } = Session.open(store, a.session.id, { branch: a.branch.name });
  const workspace = resolve(ctx.cwd, str(args, "workspace") ?? readInputs(session.durableTree).settings.workspace ?? ".");
  if (!existsSync(workspace)) throw new CliError(`the workspace ${workspace} does not exist; pass --workspace DIR (safe tools run there)`);
  const report = await rerun(session, {
    registry: new ToolRegistry(workspaceTools({ root: workspace })),
    overrides,
    ...(str(args, "name") !== undefined ? { name: str(args, "name") as string } : {}),
    signal: ctx.signal,
    onProgress: (n) => ctx.out.progress(`re-running: model reply ${n}`),
  });
  ctx.out.progressDone();
  const diverged = report.divergence !== undefined;
  if (ctx.out.json) ctx.out.data({ session: a.session.id, source: a.branch.name, ...report });
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
      o.line(o.paint("dim", `  compare: strata diff ${a.session.id}@${a.branch.name} ${a.session.id}@${report.branch}`));
    }
  }
  return diverged && overrides.length === 0 ? 1 : 0;
}
