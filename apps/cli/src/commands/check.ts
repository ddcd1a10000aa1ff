/** Commands that prove and search: verify, replay (--verify, --rerun, --override), bisect (CLI-21, CLI-22, CLI-24, CLI-36). */
import { diffWorkspaces, verifyRequests } from "@strata/agent";
import { DomError, diffTrees, select, skeletonTree } from "@strata/dom";
import { materialize, replayVerify, Session, verifyStore } from "@strata/engine";
import type { EventId } from "@strata/store";
import { findSession, parseAddress, resolveAddress } from "../address.ts";
import { allHold, fileCondition, parseFileCondition, selectorCondition } from "../bisect-conditions.ts";
import { branchName, type Command, flag, list, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { fileDiffs, fileDiffView } from "../filediff.ts";
import { diffView } from "../render.ts";
import { oneLine } from "../terminal.ts";
import { OVERRIDE, rerunCommand } from "./rerun.ts";

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
      description:
        "where the re-run plays: a new or empty directory that gets the recorded files (default <database dir>/workspaces/<handle>/<branch>); for a session that records no files, where its safe tools run (default: the recorded workspace; required for an imported session)",
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
  summary: "find the first event after which a condition holds: a selector matches, a file exists or matches",
  usage: "strata bisect SESSION[@BRANCH] (--until CSS | --until-file PATH[~REGEX]) …",
  description: [
    "Binary search over the branch: materializes O(log n) states and reports the first event after which every condition holds (assuming that, once true, it stays true), with that event's diff and file changes. -q prints only the event id (for scripts: strata rewind S --to $(strata bisect S --until … -q)).",
    "--until CSS: a selector matches an element of the tree. --until-file PATH: the workspace the event records has the file; PATH~REGEX: and its content matches the regular expression (JavaScript syntax; PATH~/REGEX/i for flags i, m, s, u; the path is everything before the first ~). Conditions can be repeated and combined: all must hold.",
  ].join("\n"),
  examples: [
    "strata bisect @last --until 'call[status=env_error]'",
    "strata bisect 6CPD71@try-2 --until 'todo item[status=completed]' --json",
    "strata bisect @last --until-file SUMMARY.md",
    "strata bisect @last --until-file 'src/app.ts~/TODO|FIXME/i'",
  ],
  options: {
    until: { type: "string", value: "CSS", description: "a selector that starts matching" },
    "until-file": {
      type: "string",
      multiple: true,
      value: "PATH[~REGEX]",
      description: "a file that starts to exist in the workspace (with ~REGEX: whose content starts to match); repeatable",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  check(args) {
    parseAddress(args.positionals[0] as string);
    if (str(args, "until") === undefined && list(args, "until-file").length === 0)
      throw new UsageError("bisect needs --until CSS or --until-file PATH (PATH~REGEX for its content): the condition to search for");
    checkSelector("until", str(args, "until"));
    for (const spec of list(args, "until-file")) parseFileCondition(spec);
  },
  run(ctx, args) {
    const css = str(args, "until");
    const store = ctx.store({ readonly: true });
    const conditions = [
      ...(css === undefined ? [] : [selectorCondition(css)]),
      ...list(args, "until-file").map((spec) => fileCondition(store, spec)),
    ];
    const what = conditions.map((c) => c.text).join(" and ");
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const chain = store.chainMeta(a.event, 0, Number.MAX_SAFE_INTEGER);
    let steps = 0;
    const probe = (i: number): boolean => {
      steps++;
      ctx.out.progress(`bisect: step ${steps}, event ${chain[i]?.id}`);
      return allHold(conditions, materialize(store, (chain[i] as { id: EventId }).id)) !== undefined;
    };
    if (!probe(chain.length - 1)) {
      ctx.out.progressDone();
      throw new CliError(
        css !== undefined && conditions.length === 1
          ? `${css} matches nothing at the head of ${a.branch.name} (event ${a.event}); nothing to find`
          : `${what} does not hold at the head of ${a.branch.name} (event ${a.event}); nothing to find`,
      );
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
    const matched = allHold(conditions, after) ?? [];
    const files = fileDiffs(store, diffWorkspaces(before, after));
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
