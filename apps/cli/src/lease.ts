/**
 * One driver per branch (CLI-12). The store's compare-and-swap already refuses a second writer's
 * append; a lease makes `run` and `resume` refuse at once, before any tool runs, instead of
 * failing at their first commit. The lease is a file next to the database naming the process;
 * a lease whose process is gone (killed with -9, say) is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CliError, EXIT } from "./errors.ts";

export interface Lease {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function acquireLease(dbPath: string, session: string, branch: string): Lease {
  const dir = join(dirname(dbPath), "leases");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${session}@${encodeURIComponent(branch)}.lease`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, JSON.stringify({ pid: process.pid, since: Date.now() }), { flag: "wx" });
      return { release: () => rmSync(file, { force: true }) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      let holder: { pid?: number; since?: number } = {};
      try {
        holder = JSON.parse(readFileSync(file, "utf8"));
      } catch {
        // a half-written lease: its writer died between create and write
      }
      if (holder.pid !== undefined && holder.pid !== process.pid && alive(holder.pid))
        throw new CliError(
          `${session}@${branch} is being driven by another process (pid ${holder.pid}, since ${new Date(holder.since ?? 0).toISOString()}); wait for it, or stop it and run \`strata resume\``,
          EXIT.conflict,
        );
      rmSync(file, { force: true });
    }
  }
  throw new CliError(`cannot take the lease on ${session}@${branch}; try again`, EXIT.conflict);
}
