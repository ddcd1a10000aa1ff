/**
 * Driving leases on PostgreSQL (ST-23): a row per branch, its token raised by every acquisition
 * and checked by every fenced append (appends.ts), decided under the row's lock, which nobody
 * waits for longer than LEASE_LOCK_WAIT_MS.
 */
import type { LeaseInfo, LeaseResult, SessionId } from "@strata/store";
import { leaseOf, notFound } from "@strata/store/backend";
import type { PgConnection } from "./connection.ts";

/** How long an acquisition waits for a lease row another process has locked before it is told `busy` (ms). */
const LEASE_LOCK_WAIT_MS = 2000;

/** What the lease statements use of their backend. */
export interface LeaseHost {
  readonly db: PgConnection;
  /** The schema, quoted. */
  readonly s: string;
  clock(where: string): number;
}

export async function acquireLease(
  host: LeaseHost,
  session: SessionId,
  branch: string,
  owner: string,
  stale?: (holder: LeaseInfo) => boolean | Promise<boolean>,
): Promise<LeaseResult> {
  const s = host.s;
  return host.db.write(async () => {
    // A lease's row is locked for a moment by whoever decides it. A process paused or cut off in
    // the middle of that (SIGSTOP, a partition) holds the lock until the server ends its
    // transaction (idle_in_transaction_session_timeout): the others are told `busy` after
    // LEASE_LOCK_WAIT instead of waiting for it past their statement timeout, and try again.
    await host.db.q(`SET LOCAL lock_timeout = ${LEASE_LOCK_WAIT_MS}`);
    if ((await host.db.one(`SELECT 1 FROM ${s}.sessions WHERE id = $1`, [session])) === undefined) notFound(`session ${session}`);
    // The row exists from the first attempt on (token 0, nobody), so it can be locked: whoever
    // holds the lock decides, the others wait and then see the new holder.
    await host.db.q(`INSERT INTO ${s}.leases (session, branch, token, owner) VALUES ($1, $2, 0, NULL) ON CONFLICT DO NOTHING`, [
      session,
      branch,
    ]);
    const row = await host.db.one(`SELECT token, owner, acquired, renewed FROM ${s}.leases WHERE session = $1 AND branch = $2 FOR UPDATE`, [
      session,
      branch,
    ]);
    const holder = leaseOf(session, branch, row as never);
    if (holder !== undefined && (stale === undefined || (await stale(holder)) !== true)) return { ok: false, holder };
    const now = host.clock("acquireLease");
    const taken = await host.db.one<{ token: number }>(
      `UPDATE ${s}.leases SET token = token + 1, owner = $3, acquired = $4, renewed = $4 WHERE session = $1 AND branch = $2 RETURNING token`,
      [session, branch, owner, now],
    );
    return { ok: true, lease: { session, branch, token: Number(taken?.token), owner, acquired: now, renewed: now } };
  });
}

export async function renewLease(host: LeaseHost, session: SessionId, branch: string, token: number): Promise<boolean> {
  const rows = await host.db.q(
    `UPDATE ${host.s}.leases SET renewed = $1 WHERE session = $2 AND branch = $3 AND token = $4 AND owner IS NOT NULL RETURNING 1`,
    [host.clock("renewLease"), session, branch, token],
  );
  return rows.length === 1;
}

export async function releaseLease(host: LeaseHost, session: SessionId, branch: string, token: number): Promise<boolean> {
  const rows = await host.db.q(
    `UPDATE ${host.s}.leases SET owner = NULL, acquired = NULL, renewed = NULL WHERE session = $1 AND branch = $2 AND token = $3 AND owner IS NOT NULL RETURNING 1`,
    [session, branch, token],
  );
  return rows.length === 1;
}

export async function readLease(host: LeaseHost, session: SessionId, branch: string): Promise<LeaseInfo | undefined> {
  const row = await host.db.one(`SELECT token, owner, acquired, renewed FROM ${host.s}.leases WHERE session = $1 AND branch = $2`, [
    session,
    branch,
  ]);
  return leaseOf(session, branch, row as never);
}
