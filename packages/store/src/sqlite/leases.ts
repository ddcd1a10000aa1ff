/**
 * One-driver leases (ST-23, decision 0014): a row per (session, branch) that was ever leased,
 * holding the last fencing token handed out — kept after a release, so a token is never reused —
 * and the holder (`owner` NULL when released). Acquisition runs in one IMMEDIATE write
 * transaction (the caller's), so reading the holder, deciding it is stale and taking over are
 * atomic against every other process. A file without the table (a legacy file read as it is) has
 * no holders. (The arguments are checked by the contract's wrapper: checks.ts.)
 */

import { leaseOf } from "../rows.ts";
import type { LeaseInfo, LeaseResult, SessionId } from "../types.ts";
import type { Statements } from "./statements.ts";

export class LeaseTable {
  constructor(
    private readonly st: Statements,
    private readonly clock: (where: string) => number,
  ) {}

  /** The current holder; undefined when released, never leased, or the file has no lease table. */
  holder(session: SessionId, branch: string): LeaseInfo | undefined {
    return this.st.lease === undefined ? undefined : leaseOf(session, branch, this.st.lease.get(session, branch));
  }

  /** Takes the lease if it is free or `stale(holder)`; to be called inside an IMMEDIATE transaction. */
  acquire(session: SessionId, branch: string, owner: string, stale: ((holder: LeaseInfo) => boolean) | undefined): LeaseResult {
    const holder = this.holder(session, branch);
    if (holder !== undefined && (stale === undefined || stale(holder) !== true)) return { ok: false, holder };
    const now = this.clock("acquireLease");
    // Insert with token 1, or raise the kept token by one: a token is never handed out twice.
    const token = Number(this.st.takeLease.get(session, branch, owner, now, now));
    return { ok: true, lease: { session, branch, token, owner, acquired: now, renewed: now } };
  }

  renew(session: SessionId, branch: string, token: number): boolean {
    return this.st.renewLease.run(this.clock("renewLease"), session, branch, token).changes === 1;
  }

  release(session: SessionId, branch: string, token: number): boolean {
    return this.st.releaseLease.run(session, branch, token).changes === 1;
  }
}
