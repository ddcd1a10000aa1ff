/**
 * `strata checkout SESSION@EVENT --to DIR` (CLI-32): writes the workspace exactly as it was after
 * the event — byte-identical files, modes, symlinks, and nothing the record does not have — from
 * the blobs in the database. It only reads the database; DIR must be new or empty unless
 * `--force`, and may never hold the database itself. On SQLite and on PostgreSQL.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { checkoutWorkspace, workspaceElement, workspaceFiles } from "@strata/agent";
import { parseAddress, resolveAddress } from "../address.ts";
import { type CommandImpl, flag, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { wholeTreeAt } from "../port.ts";
import { handleOf } from "../sessions.ts";
import { checkFreshDir, filesAt, shownPath } from "../workspace.ts";

export const checkout: CommandImpl = {
  check(args) {
    parseAddress(args.positionals[0] as string);
    const to = str(args, "to");
    if (to === undefined || to === "") throw new UsageError("checkout needs --to DIR (the directory to write the files into)");
  },
  async run(ctx, args) {
    const dir = resolve(ctx.cwd, str(args, "to") as string);
    const force = flag(args, "force");
    // The target is checked before the database is opened (CLI-2).
    checkFreshDir(dir, "--to", force);
    const db = relative(dir, ctx.dbPath);
    // (a PostgreSQL URL is in no directory)
    const holdsDb = !ctx.remote && !db.startsWith("..") && !isAbsolute(db) && db.split("/")[0] !== ".strata";
    if (holdsDb) throw new UsageError(`--to ${dir} holds the database ${ctx.dbPath}; check out into another directory`);
    const store = await ctx.reader();
    const a = await resolveAddress(store, args.positionals[0] as string, ctx.branch);
    const tree = await wholeTreeAt(store, a.event);
    const handle = await handleOf(store, a.session.id);
    if (workspaceElement(tree) === undefined) {
      const later = await filesAt(store, a.branch.head, a.event, tree);
      throw new CliError(
        later === undefined
          ? `event ${a.event} of ${handle}@${a.branch.name} records no workspace: files are recorded from the first tool call that may write (write_file, edit_file, run), and this line has none yet; nothing was written`
          : `event ${a.event} of ${handle}@${a.branch.name} records no workspace: its files were first recorded at event ${later.event} (workspace.baseline), and no tool wrote before it — \`strata checkout ${handle}@${later.event} --to ${dir}\` writes them; nothing was written`,
      );
    }
    const report = await checkoutWorkspace(tree, dir, store);
    const fileCount = workspaceFiles(tree).size;
    if (ctx.out.json)
      return void ctx.out.data({
        session: a.session.id,
        branch: a.branch.name,
        event: a.event,
        dir,
        fileCount,
        writtenCount: report.written,
        unchangedCount: report.unchanged,
        removedCount: report.removed,
      });
    if (ctx.out.quiet) return void ctx.out.line(dir);
    const where = shownPath(ctx.cwd, dir);
    ctx.out.line(
      `${ctx.out.paint("green", "checked out")} ${handle}@${a.event} (${a.branch.name}) into ${where}: ${fileCount} files (${report.written} written, ${report.unchanged} unchanged, ${report.removed} removed)`,
    );
    return undefined;
  },
};
