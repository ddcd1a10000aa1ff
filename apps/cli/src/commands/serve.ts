/** `strata serve` (CLI-25, IN-1 … IN-9): the read-only web inspector over the database. */
import { buildApp, needsBuild, STATIC_DIR, startServer } from "@strata/inspector";
import { type CommandImpl, int, str } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";

export const serve: CommandImpl = {
  check(args) {
    if (int(args, "port", 7357) > 65535) throw new UsageError(`--port ${str(args, "port")} is not a port (0–65535)`);
    const given = str(args, "token");
    if (given !== undefined && given.length < 8) throw new UsageError("--token must be at least 8 characters");
    if (str(args, "host")?.trim() === "") throw new UsageError("--host is empty; give an address such as 127.0.0.1");
  },
  async run(ctx, args) {
    const port = int(args, "port", 7357);
    const host = str(args, "host") ?? "127.0.0.1";
    const given = str(args, "token");
    // SQLite read-only, or the PostgreSQL store `--db` names (the inspector runs on both ports).
    const store = await ctx.reader();
    if ((store as { access?: string }).access === "read-only copy")
      ctx.out.note(
        ctx.out.paint(
          "yellow",
          "note: the database's directory is not writable and no writer has it open, so this serves a copy taken now: runs that start later are not shown (serve from a writable directory to follow them live)",
        ),
      );
    if (needsBuild()) {
      ctx.out.note("building the inspector web app (first run)…");
      await buildApp();
    }
    let running: Awaited<ReturnType<typeof startServer>>;
    try {
      running = await startServer({ store, port, host, ...(given !== undefined ? { token: given } : {}), staticDir: STATIC_DIR });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") throw new CliError(`port ${port} is in use; pick another with --port`);
      if (code === "EADDRNOTAVAIL") throw new CliError(`cannot bind ${host}: not an address of this machine`);
      throw e;
    }
    const url = running.token === undefined ? running.url : `${running.url}?token=${running.token}`;
    if (ctx.out.json) ctx.out.data({ url, token: running.token ?? null, db: ctx.dbPath });
    else {
      ctx.out.line(
        `strata inspector on ${ctx.out.paint("cyan", url)}  ${ctx.out.paint("dim", `(${ctx.dbPath}, read-only; Ctrl-C stops it)`)}`,
      );
      if (running.token !== undefined && given === undefined)
        ctx.out.line(ctx.out.paint("yellow", `token: ${running.token} — every request must carry it`));
    }
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      ctx.signal.addEventListener("abort", stop, { once: true });
    });
    await running.close();
    return 0;
  },
};
