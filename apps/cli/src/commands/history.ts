/**
 * Commands that move history: fork and rewind (CLI-18, CLI-19), with the files (CLI-31, CLI-33).
 * Nothing is ever deleted: a fork gets a working directory of its own, checked out from the fork
 * point; a rewind restores the branch's directory to the target, and refuses (exit 3) to overwrite
 * what changed there outside the agent unless `--force` records that change first. Both run on
 * SQLite and on PostgreSQL (every call awaited; on PostgreSQL a fork is one branch row).
 */
import { resolve } from "node:path";
import { checkoutWorkspace, diffWorkspaces, type FileChange, outsideChanges, workspaceElement } from "@strata/agent";
import { type LifecycleWork, materialize, type Port, Session } from "@strata/engine";
import { type EventMeta, isAsyncStore, type Store } from "@strata/store";
import { checkEventText, eventOnBranch, parseAddress, resolveAddress } from "../address.ts";
import { startingFiles } from "../branch-dir.ts";
import { type Args, branchName, type CommandImpl, flag, str } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { fileChangeJson } from "../filediff.ts";
import { acquireLease, refuseIfDriven } from "../lease.ts";
import type { Out } from "../output.ts";
import { type AnySession, settled } from "../port.ts";
import { handleOf } from "../sessions.ts";
import {
  branchDirLabel,
  checkApart,
  checkFreshDir,
  defaultBranchDir,
  dirState,
  filesAt,
  lineDir,
  outsideRefusal,
  recordBranchDir,
  recordOutside,
  shownPath,
  trackerFor,
} from "../workspace.ts";

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

/** One line per file a restore changes. */
function fileLines(out: Out, changes: readonly FileChange[]): string[] {
  return changes.map((c) =>
    c.type === "add"
      ? out.paint("green", `  restore    ${c.entry.path}`)
      : c.type === "delete"
        ? out.paint("red", `  remove     ${c.before.path}`)
        : out.paint("yellow", `  revert     ${c.entry.path}`),
  );
}

export const fork: CommandImpl = {
  check(args) {
    parseAddress(args.positionals[0] as string);
    branchName(args, "name");
    if (str(args, "workspace") === "") throw new UsageError("--workspace needs a directory");
  },
  async run(ctx, args) {
    const flagged = str(args, "workspace");
    if (flagged !== undefined) checkFreshDir(resolve(ctx.cwd, flagged), "--workspace", false);
    const store = await ctx.writer();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const name = branchName(args, "name");
    if (name !== undefined && (await store.branch(a.session.id, name)) !== undefined)
      throw new CliError(`session ${a.session.id} has a branch "${name}" already; pick another --name (strata branches lists them)`);
    const { session } = await Session.open(store as Port, a.session.id, { branch: a.branch.name });
    const branch = name ?? (await session.freeBranchName(`fork-${a.event}`));
    // Held from the first blob put to the files written (decision 0040): `gc` deletes no blob
    // while a lease is held, and the fork puts the baseline's blobs before the event naming them.
    const lease = await acquireLease(store, a.session.id, branch, "fork");
    try {
      const handle = await handleOf(store, a.session.id);
      const point = await materialize(store as Port, a.event);
      const sourceDir = (await settled(() => lineDir(session.durableTree))) ?? (await settled(() => lineDir(point)));
      const dir = flagged !== undefined ? resolve(ctx.cwd, flagged) : defaultBranchDir(ctx.home, handle, branch);
      checkApart(dir, sourceDir, ctx.home);
      // The files at the fork point: recorded there, else the line's baseline, else the source directory as it is now.
      const { source, recorded } = await startingFiles(store, ctx.dbPath, a.branch.head, a.event, point, sourceDir);
      // The branch and its directory are one transaction: no fork is left that would fall back to the source's directory.
      const label = await settled(() => branchDirLabel(point));
      const forked: AnySession = isAsyncStore(store)
        ? await store.transaction(async () => {
            const f = await (session as Session<typeof store>).fork(a.event, { name: branch });
            await f.commit((d) => recordBranchDir(d, dir, source), { label, by: "strata fork" });
            await f.load(); // its files are written next
            return f;
          })
        : (store as Store).transaction(() => {
            const f = (session as Session).fork(a.event, { name: branch });
            f.commit((d) => recordBranchDir(d, dir, source), { label, by: "strata fork" });
            return f;
          });
      let report: Awaited<ReturnType<typeof checkoutWorkspace>>;
      try {
        report = await checkoutWorkspace(forked.durableTree, dir, store);
      } catch (e) {
        throw new CliError(
          `forked ${handle}@${forked.branch} at event ${a.event}, but writing its files into ${dir} failed: ${(e as Error).message}; \`strata checkout ${handle}@${forked.branch} --to ${dir} --force\` finishes it`,
        );
      }
      const fileCount = report.written + report.unchanged;
      const from =
        recorded === undefined
          ? source === undefined
            ? "an empty directory (the source records no files)"
            : `the files of ${shownPath(ctx.cwd, sourceDir as string)} as they are now (nothing recorded them yet)`
          : recorded === a.event
            ? `the files at event ${a.event}`
            : `the files of the baseline, event ${recorded} (no tool wrote before it)`;
      if (ctx.out.json)
        return void ctx.out.data({
          session: a.session.id,
          branch: forked.branch,
          head: forked.head.id,
          forkedAt: a.event,
          sourceBranch: a.branch.name,
          dir,
          fileCount,
          filesFrom: recorded ?? null,
          work: workJson(forked.work),
        });
      if (ctx.out.quiet) return void ctx.out.line(forked.branch);
      ctx.out.line(
        `${ctx.out.paint("green", "forked")} ${handle}@${ctx.out.paint("cyan", forked.branch)} at event ${a.event} (from ${a.branch.name})`,
      );
      ctx.out.line(
        `${ctx.out.paint("bold", "workspace")} ${shownPath(ctx.cwd, dir)}  ${ctx.out.paint("dim", `— its own: ${fileCount} files, ${from}`)}`,
      );
      ctx.out.line("lifecycle work, from the head of the branch forked to the fork point:");
      for (const l of workLines(ctx.out, forked.work)) ctx.out.line(l);
      return undefined;
    } finally {
      await lease.release();
    }
  },
};

export const rewind: CommandImpl = {
  check(args) {
    const { at, back } = parseAddress(args.positionals[0] as string);
    if (str(args, "to") === undefined) throw new UsageError("rewind needs --to EVENT (an event id on the branch, or head~N)");
    checkEventText("to", str(args, "to"));
    if ((at !== undefined && /^[0-9]+$/.test(at)) || back > 0)
      throw new UsageError(`rewind moves a branch: give SESSION or SESSION@BRANCH, and the event with --to (not ${args.positionals[0]})`);
  },
  run: rewindCommand,
};

async function rewindCommand(ctx: Context, args: Args): Promise<number | undefined> {
  const to = str(args, "to") as string;
  const store = await ctx.writer();
  const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
  const target = await eventOnBranch(store, a.branch, to);
  const doing = `rewind ${a.branch.name}`;
  // Refused while a live process drives the branch (CLI-12), before anything is looked at; then
  // held for the whole move, so no driver starts between the head moving and the files following.
  await refuseIfDriven(store, a.session.id, a.branch.name, doing);
  const lease = await acquireLease(store, a.session.id, a.branch.name, "rewind");
  try {
    const { session } = await Session.open(store as Port, a.session.id, { branch: a.branch.name, lease: lease.token });
    if (isAsyncStore(store)) await session.load(); // the restore reads the files of the head
    const dir = lineDir(session.durableTree);
    const tracked = workspaceElement(session.durableTree) !== undefined && dir !== undefined;
    let outside: EventMeta | undefined;
    // A directory that is gone holds nothing to protect: it is checked out whole.
    const gone = tracked && dirState(dir) === "missing";
    if (tracked && !gone) {
      const tracker = trackerFor(ctx.dbPath, dir, store);
      const paths = await outsideChanges(session.durableTree, dir, store, tracker);
      if (paths.length > 0) {
        if (!flag(args, "force")) throw outsideRefusal(doing, dir, session.head.id, paths);
        outside = await recordOutside(session, tracker, "strata rewind --force");
      }
    }
    const from = session.durableTree;
    const oldHead = session.head.id;
    const targetTree = await materialize(store as Port, target);
    // Looked up on the line being left: before its baseline, the files are the baseline's.
    const files = tracked ? await filesAt(store, oldHead, target, targetTree) : undefined;
    // The target names another line's directory (a fork rewound to or before its fork point):
    // the branch records its own again, so it never falls back to a directory it does not own.
    const own = tracked && (await settled(() => lineDir(targetTree))) !== dir;
    const label = await settled(() => branchDirLabel(targetTree));
    const by = { label, by: "strata rewind" };
    let recorded: EventMeta | undefined;
    const work: LifecycleWork = isAsyncStore(store)
      ? await store.transaction(async () => {
          const w = await (session as Session<typeof store>).rewind(target);
          if (own) recorded = await session.commit((d) => recordBranchDir(d, dir, files?.tree), by);
          return w;
        })
      : (store as Store).transaction(() => {
          const w = (session as Session).rewind(target);
          if (own) recorded = (session as Session).commit((d) => recordBranchDir(d, dir, files?.tree), by);
          return w;
        });
    const changes = tracked && files !== undefined ? diffWorkspaces(from, files.tree) : [];
    if (tracked && files !== undefined) {
      try {
        // The directory holds `from` (checked above, or just recorded): only the difference is written.
        await checkoutWorkspace(files.tree, dir, store, gone ? {} : { from });
      } catch (e) {
        throw new CliError(
          `rewound ${a.session.id}@${a.branch.name} to event ${target}, but restoring its files in ${dir} failed: ${(e as Error).message}; \`strata checkout ${a.session.id}@${files.event} --to ${dir} --force\` finishes it`,
        );
      }
    }
    const kept = (await store.branches(a.session.id)).find((b) => b.head === oldHead && b.origin === "rewind");
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        head: session.head.id,
        to: target,
        keptAs: kept?.name ?? null,
        outside: outside?.id ?? null,
        dir: tracked ? dir : null,
        files: changes.map(fileChangeJson),
        work: workJson(work),
      });
    if (ctx.out.quiet) return void ctx.out.line(String(session.head.id));
    const out = ctx.out;
    const handle = await handleOf(store, a.session.id);
    if (outside !== undefined)
      out.line(
        `${out.paint("yellow", "recorded")} the changes made outside the agent as event ${outside.id} (workspace.outside); \`strata checkout ${handle}@${outside.id} --to DIR\` brings them back`,
      );
    out.line(
      `${out.paint("green", "rewound")} ${handle}@${a.branch.name} to event ${target}${kept ? ` (old head ${oldHead} kept as ${out.paint("cyan", kept.name)})` : ""}`,
    );
    if (recorded !== undefined)
      out.line(
        out.paint("dim", `  event ${recorded.id} records the branch's own working directory again (${shownPath(ctx.cwd, dir as string)})`),
      );
    out.line("lifecycle work:");
    for (const l of workLines(out, work)) out.line(l);
    if (tracked) {
      out.line(`files in ${shownPath(ctx.cwd, dir as string)}:`);
      const lines = fileLines(out, changes);
      for (const l of lines.length === 0 ? [out.paint("dim", "  nothing to restore")] : lines) out.line(l);
    }
    return undefined;
  } finally {
    await lease.release();
  }
}
