/**
 * A worker of the agent fleet test (fleet-agent.test.ts): `node --import tsx fleet-agent-worker.ts
 * URL SCHEMA NAME`. It takes sessions nobody drives — or whose driver stopped renewing its lease:
 * dead — opens each fenced by its lease token, renews the lease while it runs, and runs the agent
 * to the end with `runAgent` (no task: it continues the recorded one, and reconciles first what a
 * dead driver left open). Prints `took SESSION`, `exec KEY K` when its tool starts, `done SESSION
 * STOP`, and `lost SESSION` when the fence refused a commit (another worker took over).
 */
import { runAgent } from "@strata/agent";
import { Session } from "@strata/engine";
import { HeadConflict, LeaseLost, type LeaseResult, type SessionId, StoreError } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";
import { FleetModel, fleetRegistry } from "./fleet-agent-kit.ts";

const [url, schema, name] = process.argv.slice(2) as [string, string, string];
/** A driver that has not renewed its lease for this long is dead (it renews every 300 ms). */
const STALE_MS = 3000;
const AT_ONCE = 4;
const store = await openPgStore(url, { schema, max: 4 });
const model = new FleetModel();
const registry = fleetRegistry((key, k) => process.stdout.write(`exec ${key} ${k} ${name}\n`));
const driving = new Set<string>();

async function drive(id: SessionId, token: number): Promise<void> {
  const renew = setInterval(() => void store.renewLease(id, "main", token).catch(() => undefined), 300);
  try {
    const { session } = await Session.open(store, id, { lease: token });
    const r = await runAgent(session, { model, registry });
    await store.updateSession(id, { metadata: { done: r.stop } });
    await session.close();
    await store.releaseLease(id, "main", token);
    process.stdout.write(`done ${id} ${r.stop}\n`);
  } finally {
    clearInterval(renew);
  }
}

for (;;) {
  const sessions = await store.listSessions();
  let open = 0;
  for (const s of sessions) {
    if (driving.size >= AT_ONCE) break;
    if (driving.has(s.id)) {
      open++;
      continue;
    }
    if (s.metadata.done !== undefined) continue;
    open++;
    const now = Date.now();
    let r: LeaseResult;
    try {
      r = await store.acquireLease(s.id, "main", name, (holder) => holder.renewed < now - STALE_MS);
    } catch (e) {
      if (e instanceof StoreError && e.code === "busy") continue;
      throw e;
    }
    if (!r.ok) continue;
    // Finished by another worker between the listing and the lease: nothing to do.
    if ((await store.getSession(s.id))?.metadata.done !== undefined) {
      await store.releaseLease(s.id, "main", r.lease.token);
      continue;
    }
    driving.add(s.id);
    process.stdout.write(`took ${s.id}\n`);
    void drive(s.id, r.lease.token)
      .catch((e: unknown) => {
        // A replaced driver's commit is refused by the fence (or meets the new driver's head): it stops.
        if (e instanceof LeaseLost || e instanceof HeadConflict) process.stdout.write(`lost ${s.id}\n`);
        else process.stderr.write(`${name}: ${e instanceof Error ? e.stack : String(e)}\n`);
      })
      .finally(() => driving.delete(s.id));
  }
  if (open === 0 && driving.size === 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
await store.close();
