/** Commands that move history: fork and rewind (CLI-18, CLI-19). Nothing is ever deleted. */
import { type LifecycleWork, Session } from "@strata/engine";
import { checkEventText, eventOnBranch, parseAddress, resolveAddress } from "../address.ts";
import { branchName, type Command, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { refuseIfDriven } from "../lease.ts";
import type { Out } from "../output.ts";
import { handleOf } from "../sessions.ts";

function workLines(out: Out, w: LifecycleWork): string[] {
  const lines: string[] = [];
  for (const t of w.terminate) lines.push(out.paint("red", `  terminate  <${t.element.tag}> #${t.element.id} ${t.key}`));
  for (const s of w.spawn) lines.push(out.paint("green", `  spawn      <${s.element.tag}> #${s.element.id} ${s.key}`));
  for (const r of w.retained) lines.push(out.paint("dim", `  retained   <${r.after.tag}> #${r.after.id} ${r.key}`));
  if (lines.length === 0) lines.push(out.paint("dim", "  nothing running to stop or start"));
  return lines;
}

function workJson(w: LifecycleWork): unknown {
  const e = (x: { key: string; element: { id: number; tag: string; attrs: object } }) => ({
    key: x.key,
    id: x.element.id,
    tag: x.element.tag,
    attrs: x.element.attrs,
  });
  return {
    terminate: w.terminate.map(e),
    spawn: w.spawn.map(e),
    retained: w.retained.map((r) => ({ key: r.key, id: r.after.id, tag: r.after.tag })),
  };
}

export const fork: Command = {
  name: "fork",
  summary: "branch a session at any event",
  usage: "strata fork SESSION@EVENT [--name NAME]",
  description:
    "Creates a branch whose head is the event (one row; nothing is copied) and prints what a session continued there would have to start or stop.",
  examples: ["strata fork 6CPD71@57 --name try-2", "strata fork @last@main~3"],
  options: {
    name: {
      type: "string",
      value: "NAME",
      description: "the new branch's name: letters, digits and . _ / - (default fork-EVENT)",
    },
  },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  check(args) {
    parseAddress(args.positionals[0] as string);
    branchName(args, "name");
  },
  run(ctx, args) {
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const name = branchName(args, "name");
    if (name !== undefined && store.branch(a.session.id, name) !== undefined)
      throw new CliError(`session ${a.session.id} has a branch "${name}" already; pick another --name (strata branches lists them)`);
    const { session } = Session.open(store, a.session.id, { branch: a.branch.name });
    const forked = session.fork(a.event, { name });
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: forked.branch,
        head: forked.head.id,
        sourceBranch: a.branch.name,
        work: workJson(forked.work),
      });
    if (ctx.out.quiet) return void ctx.out.line(forked.branch);
    ctx.out.line(
      `${ctx.out.paint("green", "forked")} ${handleOf(store, a.session.id)}@${ctx.out.paint("cyan", forked.branch)} at event ${a.event} (from ${a.branch.name})`,
    );
    ctx.out.line("lifecycle work, from the head of the branch forked to the fork point:");
    for (const l of workLines(ctx.out, forked.work)) ctx.out.line(l);
    return undefined;
  },
};

export const rewind: Command = {
  name: "rewind",
  summary: "move a branch back to an earlier event",
  usage: "strata rewind SESSION[@BRANCH] --to EVENT",
  description:
    "Moves the branch head back; the abandoned head stays as branch rewound/BRANCH/HEAD, so nothing is lost. Prints the lifecycle work: calls, jobs and subagents to stop or start.",
  examples: ["strata rewind 6CPD71 --to 40", "strata rewind @last@try-2 --to head~2 --json"],
  options: { to: { type: "string", value: "EVENT", description: "an event id on the branch, or head~N for N events before the head" } },
  positionals: { min: 1, max: 1 },
  takesSession: true,
  json: true,
  check(args) {
    const { at, back } = parseAddress(args.positionals[0] as string);
    if (str(args, "to") === undefined) throw new UsageError("rewind needs --to EVENT (an event id on the branch, or head~N)");
    checkEventText("to", str(args, "to"));
    if ((at !== undefined && /^[0-9]+$/.test(at)) || back > 0)
      throw new UsageError(`rewind moves a branch: give SESSION or SESSION@BRANCH, and the event with --to (not ${args.positionals[0]})`);
  },
  run(ctx, args) {
    const to = str(args, "to") as string;
    const store = ctx.store();
    const a = resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const target = eventOnBranch(store, a.branch, to);
    const { session } = Session.open(store, a.session.id, { branch: a.branch.name });
    const oldHead = session.head.id;
    // Refused while a live process drives the branch (CLI-12); checked in the transaction that
    // moves the head, so no driver can take the lease in between.
    const work = store.transaction(() => {
      refuseIfDriven(store, a.session.id, a.branch.name, `rewind ${a.branch.name}`);
      return session.rewind(target);
    });
    const kept = store.branches(a.session.id).find((b) => b.head === oldHead && b.origin === "rewind");
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        head: target,
        keptAs: kept?.name ?? null,
        work: workJson(work),
      });
    if (ctx.out.quiet) return void ctx.out.line(String(target));
    ctx.out.line(
      `${ctx.out.paint("green", "rewound")} ${handleOf(store, a.session.id)}@${a.branch.name} to event ${target}${kept ? ` (old head ${oldHead} kept as ${ctx.out.paint("cyan", kept.name)})` : ""}`,
    );
    ctx.out.line("lifecycle work:");
    for (const l of workLines(ctx.out, work)) ctx.out.line(l);
    return undefined;
  },
};
