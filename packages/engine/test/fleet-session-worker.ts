/**
 * A worker of the session fleet test (fleet-session.test.ts): the store-level fleet worker's job
 * (packages/store-postgres/test/fleet-worker.ts) done with `Session`, the engine on PostgreSQL. It
 * takes sessions whose `main` nobody drives (or whose driver stopped renewing its lease: dead),
 * opens each with its lease token (every commit fenced) and drives it to the end: a step is a
 * `<call step=k status="running">` committed, a pause, then its status set to `done`. A session
 * taken over from a dead driver is resumed with the lifecycle work `Session.open` hands back (L7):
 * every call it lists to spawn — one a dead driver left running — is marked `interrupted`, and
 * its step is run again. Prints `took SESSION` and `done SESSION`.
 * Usage: fleet-session-worker.ts URL SCHEMA NAME STEPS
 */
import type { NodeId } from "@strata/dom";
import { bodyOf, Session } from "@strata/engine";
import { LeaseLost, type LeaseResult, type SessionId, StoreError } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";

const [url, schema, name, stepsArg] = process.argv.slice(2) as [string, string, string, string];
const STEPS = Number(stepsArg);
/** A driver that has not renewed for this long is dead (renewals come with every commit, every ~100 ms). */
const STALE_MS = 3000;
/** Sessions one worker drives at once. */
const AT_ONCE = 4;
const store = await openPgStore(url, { schema, max: 8 });
const driving = new Set<string>();

async function drive(id: SessionId, token: number): Promise<void> {
  const { session: s, work } = await Session.open(store, id, { lease: token });
  const by = { by: name };
  const renew = () => store.renewLease(id, "main", token);
  // What a dead driver left running is in the resume's work list: it did not finish, so it is
  // marked interrupted (what `strata resume` does with a call that is not safe to repeat).
  for (const e of work.spawn)
    if (e.element.tag === "call") await s.commit([["set", e.element.id, "status", "interrupted"]], { label: "call.interrupted", ...by });
  await s.load(); // read whole below (decision 0037)
  // Finished between the look at its tail and the lease: nothing to do.
  if (s.select("done").length > 0) return void (await store.releaseLease(id, "main", token));
  const done = new Set(s.select("call[status=done]").map((c) => c.attr("step")));
  for (let step = 1; step <= STEPS; step++) {
    if (done.has(String(step))) continue;
    let call = 0 as NodeId;
    await s.commit(
      (d) => {
        call = d.appendChild(bodyOf(d.tree).id, { tag: "call", attrs: { step: String(step), status: "running" } });
      },
      { label: "call.start", ...by },
    );
    await renew();
    await new Promise((r) => setTimeout(r, 60 + Math.random() * 60));
    await s.commit([["set", call, "status", "done"]], { label: "call.end", ...by });
    await renew();
  }
  await s.commit((d) => void d.appendChild(bodyOf(d.tree).id, { tag: "done" }), { label: "done", ...by });
  await store.releaseLease(id, "main", token);
  process.stdout.write(`done ${id}\n`);
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
    const b = await store.branch(s.id, "main");
    const tail = b === undefined ? undefined : (await store.chainMeta(b.head, 0, 1, true))[0];
    if (tail?.label === "done") continue;
    open++;
    const now = Date.now();
    let r: LeaseResult;
    try {
      r = await store.acquireLease(s.id, "main", name, (holder) => holder.renewed < now - STALE_MS);
    } catch (e) {
      // Another process is deciding this lease and does not finish (paused mid-transaction): later.
      if (e instanceof StoreError && e.code === "busy") continue;
      throw e;
    }
    if (!r.ok) continue;
    driving.add(s.id);
    process.stdout.write(`took ${s.id}\n`);
    void drive(s.id, r.lease.token)
      .catch((e: unknown) => {
        // A replaced driver's commit is refused by the fence: it stops, having written nothing.
        if (!(e instanceof LeaseLost)) process.stderr.write(`${name}: ${String(e)}\n`);
      })
      .finally(() => driving.delete(s.id));
  }
  if (open === 0 && driving.size === 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
await store.close();
