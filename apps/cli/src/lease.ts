/**
 * One driver per branch (CLI-12, decision 0021). The lease is a row in the database (ST-23),
 * taken in one write transaction: reading the holder, judging it gone and taking over are atomic
 * against every other process. The owner text names the process — pid, host, boot and the
 * process's start time — so a holder is judged gone only when that very process is: a dead pid,
 * a zombie, a pid reused by another process (its start time differs) or a rebooted machine. The
 * lease's token fences the driver's appends (a driver whose lease was taken over cannot write).
 * On PostgreSQL (decision 0038) a driver renews its lease every {@link LEASE_RENEW_MS}, and a
 * holder on another host — whose process cannot be seen from here — is judged gone once it has
 * not renewed for {@link LEASE_STALE_MS}: the handoff between machines. On SQLite nothing changed:
 * no renewals, and a holder on another host is never judged gone.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { type AsyncStore, isAsyncStore, type LeaseInfo, type SessionId, type Store } from "@strata/store";
import { CliError, EXIT } from "./errors.ts";
import { terminalSafe } from "./terminal.ts";

export interface Lease {
  /** The fencing token: pass it to the session so every append checks it still holds. */
  readonly token: number;
  /** Gives the lease up (idempotent; never throws; over PostgreSQL it answers once the row is written). */
  release(): void | Promise<void>;
}

/** How often a driver marks its lease alive (ms). */
export const LEASE_RENEW_MS = 10_000;
/** A lease held on another host and not renewed for this long is judged abandoned (ms). */
export const LEASE_STALE_MS = 30_000;

interface Owner {
  readonly pid: number;
  readonly host: string;
  readonly boot: string | null;
  /** The process's start time in clock ticks since boot (`/proc/PID/stat` field 22), if known. */
  readonly start: string | null;
  readonly command: string;
  readonly since: number;
}

function readOr(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

const BOOT = readOr("/proc/sys/kernel/random/boot_id")?.trim() ?? null;

/** State and start time of a process from `/proc`, or null when there is no such process (or no /proc). */
function procStat(pid: number): { state: string; start: string } | null {
  const stat = readOr(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces: fields resume after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "?", start: fields[19] ?? "?" };
}

function signalAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function me(command: string): Owner {
  return {
    pid: process.pid,
    host: hostname(),
    boot: BOOT,
    start: procStat(process.pid)?.start ?? null,
    command,
    since: Date.now(),
  };
}

function parseOwner(text: string): Owner | undefined {
  try {
    const o = JSON.parse(text) as Partial<Owner>;
    return typeof o.pid === "number" && typeof o.host === "string" ? (o as Owner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that holds `holder` is gone. A holder on another host (whose process cannot
 * be seen from here) is gone, where drivers renew (`renewing`: PostgreSQL), when it stopped
 * renewing its lease {@link LEASE_STALE_MS} ago, and never otherwise; garbage owner text is gone.
 */
export function holderGone(holder: LeaseInfo, now = Date.now(), renewing = true): boolean {
  const o = parseOwner(holder.owner);
  if (o === undefined) return true;
  if (o.host !== hostname()) return renewing && now - holder.renewed > LEASE_STALE_MS;
  if (o.boot !== null && BOOT !== null && o.boot !== BOOT) return true;
  if (o.pid === process.pid && o.start === (procStat(process.pid)?.start ?? null)) return true; // a lease this process left behind
  const stat = procStat(o.pid);
  if (stat !== null) return stat.state === "Z" || stat.state === "X" || (o.start !== null && stat.start !== o.start);
  // No /proc entry: on Linux the process is gone; elsewhere ask the kernel.
  return BOOT !== null || !signalAlive(o.pid);
}

/** One line naming the driver of a branch, for messages. */
export function describeHolder(holder: LeaseInfo): string {
  const o = parseOwner(holder.owner);
  if (o === undefined) return `a process (lease ${holder.token})`;
  const where = o.host === hostname() ? "" : ` on ${terminalSafe(o.host)}`;
  return `\`strata ${terminalSafe(o.command)}\` (pid ${o.pid}${where}, since ${new Date(holder.acquired).toISOString()})`;
}

function busy(session: string, branch: string, holder: LeaseInfo): CliError {
  return new CliError(
    `${session}@${terminalSafe(branch)} is being driven by ${describeHolder(holder)}; wait for it to finish, or stop it (Ctrl-C) and run \`strata resume\``,
    EXIT.conflict,
  );
}

/**
 * Takes the lease of `session@branch` for this process, or throws exit 3 naming the live driver
 * (over PostgreSQL: a promise of it). `command` is what the owner is doing (`run`, `resume`), shown
 * to whoever is refused. The lease is renewed every {@link LEASE_RENEW_MS} until it is released.
 */
export function acquireLease(store: Store, session: SessionId, branch: string, command: string): Lease;
export function acquireLease(store: Store | AsyncStore, session: SessionId, branch: string, command: string): Lease | Promise<Lease>;
export function acquireLease(store: Store | AsyncStore, session: SessionId, branch: string, command: string): Lease | Promise<Lease> {
  const owner = JSON.stringify(me(command));
  if (!isAsyncStore(store))
    return held(
      store,
      session,
      branch,
      store.acquireLease(session, branch, owner, (h) => holderGone(h, Date.now(), false)),
    );
  return store.acquireLease(session, branch, owner, (h) => holderGone(h, Date.now(), true)).then((r) => held(store, session, branch, r));
}

function held(
  store: Store | AsyncStore,
  session: SessionId,
  branch: string,
  r: { ok: true; lease: LeaseInfo } | { ok: false; holder: LeaseInfo },
): Lease {
  if (!r.ok) throw busy(session, branch, r.holder);
  const token = r.lease.token;
  let released = false;
  // Over PostgreSQL renewed in the background. A renewal that finds the lease taken stops renewing
  // (the next append is refused then: the token fences it); one that fails (a dropped connection)
  // is tried again at the next tick.
  const renew = isAsyncStore(store)
    ? setInterval(() => {
        if (released || store.closed) return;
        store.renewLease(session, branch, token).then(
          (ok) => {
            if (!ok) clearInterval(renew);
          },
          () => undefined,
        );
      }, LEASE_RENEW_MS)
    : undefined;
  renew?.unref();
  return {
    token,
    release() {
      if (renew !== undefined) clearInterval(renew);
      if (released || store.closed) return;
      released = true;
      // A store that cannot write any more (disk full, damaged, the server gone) cannot keep the
      // lease either: the holder is judged gone as soon as this process ends (or stops renewing).
      try {
        const done = store.releaseLease(session, branch, token);
        if (done instanceof Promise)
          return done.then(
            () => undefined,
            () => undefined,
          );
      } catch {
        // as above
      }
    },
  };
}

/**
 * Refuses (exit 3) when a live process drives `session@branch`. Call it inside the store
 * transaction that moves the branch, so no driver can take the lease in between.
 */
export async function refuseIfDriven(store: Store | AsyncStore, session: SessionId, branch: string, doing: string): Promise<void> {
  const holder = await store.lease(session, branch);
  if (holder === undefined || holderGone(holder, Date.now(), isAsyncStore(store))) return;
  throw new CliError(
    `cannot ${doing}: ${session}@${terminalSafe(branch)} is being driven by ${describeHolder(holder)}; wait for it to finish, or stop it (Ctrl-C) first`,
    EXIT.conflict,
  );
}
