/**
 * `strata replay --rerun` and `--override` (CLI-22): a re-run of a branch on a new branch. When the
 * branch records its files, the re-run plays in a directory of its own (CLI-31) that gets the
 * recorded files, and its file effects are compared with the recording's (WS-29).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Override, rerun, ToolRegistry, workspaceElement, workspaceTools } from "@strata/agent";
import { type Port, Session } from "@strata/engine";
import { isAsyncStore } from "@strata/store";
import { resolveAddress } from "../address.ts";
import { type Args, branchName, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { acquireLease } from "../lease.ts";
import { handleOf } from "../sessions.ts";
import { oneLine } from "../terminal.ts";
import { checkFreshDir, defaultBranchDir, lineDir, shownPath, trackerFor } from "../workspace.ts";

export const OVERRIDE = /^(llm|tool):([^=]+)=(.+)$/;

/** Runs `replay --rerun` or `--override SPEC …`: the new branch, and the first divergence (exit 1 for a plain re-run that diverged). */
export async function rerunCommand(ctx: Context, args: Args, specs: readonly string[]): Promise<number> {
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
  const store = await ctx.writer();
  const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
  if (a.explicitEvent) throw new UsageError("a re-run replays a whole branch: give SESSION or SESSION@BRANCH");
  if (str(args, "name") !== undefined && (await store.branch(a.session.id, str(args, "name") as string)) !== undefined)
    throw new CliError(`session ${a.session.id} has a branch "${str(args, "name")}" already; pick another --name`);
  const { session } = await Session.open(store as Port, a.session.id, { branch: a.branch.name });
  // A re-run reads the whole branch (its replies, calls and files): over PostgreSQL it is loaded in one go.
  if (isAsyncStore(store)) await session.load();
  const flagged = str(args, "workspace");
  // A session imported from another tool (IM-23): its calls are to that tool's tools, which strata
  // does not have; the re-run answers every one from the recording, and runs nothing of its own.
  const info = await store.getSession(a.session.id);
  const foreign = (info?.metadata as { import?: { from?: unknown } } | undefined)?.import;
  const recorded = foreign === undefined ? undefined : (await import("@strata/import")).recordedTools(session.durableTree);
  const name = await session.freeBranchName(branchName(args, "name") ?? `${overrides.length > 0 ? "whatif" : "rerun"}/${a.branch.name}`);
  const handle = await handleOf(store, a.session.id);
  let workspace: string;
  const records = workspaceElement(session.durableTree) !== undefined;
  if (records) {
    // The re-run's own directory, given the recorded files: nothing of the recording's is touched,
    // and an imported session needs no directory of the machine it came from.
    workspace = flagged !== undefined ? resolve(ctx.cwd, flagged) : defaultBranchDir(ctx.home, handle, name);
    checkFreshDir(workspace, "--workspace", false);
    mkdirSync(workspace, { recursive: true });
  } else {
    const importedFrom = info?.metadata.importedFrom;
    // An imported session's recorded workspace names someone else's machine: safe tools would read there.
    if (importedFrom !== undefined && flagged === undefined && recorded === undefined)
      throw new UsageError(
        `session ${a.session.id} was imported (from ${String(importedFrom)}); a re-run executes its safe tools for real — pass --workspace DIR to choose where`,
      );
    workspace = resolve(ctx.cwd, flagged ?? lineDir(session.durableTree) ?? ".");
    if (!existsSync(workspace)) {
      const message = `the workspace ${workspace} does not exist; pass --workspace DIR (safe tools run there)`;
      throw flagged !== undefined ? new UsageError(message) : new CliError(message);
    }
  }
  // The new branch is driven by this process for the whole re-run (CLI-12): no other driver takes
  // it, and `gc` (which deletes no blob while a lease is held) cannot run between a blob put and
  // the event that names it — the override's reply, a tool's files, a snapshot's pages (decision 0040).
  const lease = await acquireLease(store, a.session.id, name, "replay --rerun");
  let report: Awaited<ReturnType<typeof rerun>>;
  try {
    report = await rerun(session, {
      registry: new ToolRegistry(recorded ?? workspaceTools({ root: workspace })),
      overrides,
      name,
      ...(records ? { workspace: trackerFor(ctx.dbPath, workspace, store) } : {}),
      signal: ctx.signal,
      onProgress: (n) => ctx.out.progress(`re-running: model reply ${n}`),
    });
  } finally {
    await lease.release();
  }
  ctx.out.progressDone();
  const diverged = report.divergence !== undefined;
  const { files: compared, ...counts } = report;
  if (ctx.out.json)
    ctx.out.data({
      session: a.session.id,
      sourceBranch: a.branch.name,
      ...counts,
      stop: report.stop ?? null,
      divergence: report.divergence ?? null,
      endedAt: report.endedAt ?? null,
      dir: workspace,
      filesCompared: compared,
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
    if (report.endedAt !== undefined)
      o.line(
        o.paint(
          "dim",
          `  the recording ends while call ${report.endedAt} ran (its process stopped): the re-run stopped there too, the call interrupted on both`,
        ),
      );
    if (compared)
      o.line(o.paint("dim", `  in ${shownPath(ctx.cwd, workspace)}: its own copy of the recorded files, file effects compared`));
    if (d === undefined)
      o.line(
        `${o.paint("green", "reproduced")}: every reply, call${compared ? ", observation and file effect" : " and observation"} matches ${a.branch.name}`,
      );
    else {
      o.line(`${o.paint(overrides.length > 0 ? "yellow" : "red", "diverged")}: ${d.message}`);
      o.line(`  ${a.branch.name}: element #${d.source.element ?? "-"}${d.source.event !== null ? ` (event ${d.source.event})` : ""}`);
      o.line(`  ${report.branch}: element #${d.rerun.element ?? "-"}${d.rerun.event !== null ? ` (event ${d.rerun.event})` : ""}`);
      o.line(o.paint("red", `  - ${oneLine(d.before, 160)}`));
      o.line(o.paint("green", `  + ${oneLine(d.after, 160)}`));
      o.line(o.paint("dim", `  compare: strata diff ${handle}@${a.branch.name} ${handle}@${report.branch}`));
    }
  }
  return diverged && overrides.length === 0 ? 1 : 0;
}
