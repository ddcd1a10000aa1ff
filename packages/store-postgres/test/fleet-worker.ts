/**
 * A worker of the fleet test (fleet.test.ts): takes sessions whose `main` nobody drives (or whose
 * driver stopped renewing its lease: dead), and drives each to the end — a step is a "call": its
 * start is recorded, the call runs (a pause), its end is recorded, every append fenced with the
 * lease token. A session taken over from a dead driver first records the call that driver left
 * running as interrupted (what `strata resume` does with a call not safe to repeat), then runs it
 * again. Prints `took SESSION` when it takes one and `done SESSION` when it finishes one.
 * Usage: fleet-worker.ts URL SCHEMA NAME STEPS
 */
import { type EventId, type EventMeta, LeaseLost, type LeaseResult, type SessionId, StoreError } from "@strata/store";
import { openPgStore } from "../src/index.ts";

const [url, schema, name, stepsArg] = process.argv.slice(2) as [string, string, string, string];
const STEPS = Number(stepsArg);
/** A driver that has not renewed for this long is dead (renewals come with every event, every ~100 ms). */
const STALE_MS = 3000;
/** Sessions one worker drives at once. */
const AT_ONCE = 4;
const store = await openPgStore(url, { schema, max: 8 });
const driving = new Set<string>();

type Step = { readonly step: number };

async function drive(session: SessionId, token: number): Promise<void> {
  let head = ((await store.branch(session, "main")) as { head: EventId }).head;
  const lastEvent = (await store.event(head)) as { kind: string; data: string };
  let step = 1;
  const append = async (kind: string, data: Step) => {
    const [m] = await store.append(session, "main", head, [{ kind, by: name, data: JSON.stringify(data) }], { lease: token });
    head = (m as EventMeta).id;
    await store.renewLease(session, "main", token);
  };
  if (lastEvent.kind !== "genesis@1") {
    const { step: n } = JSON.parse(lastEvent.data) as Step;
    if (lastEvent.kind === "done") return;
    if (lastEvent.kind === "call.start") {
      await append("call.interrupted", { step: n });
      step = n;
    } else step = n + 1;
  }
  for (; step <= STEPS; step++) {
    await append("call.start", { step });
    await new Promise((r) => setTimeout(r, 60 + Math.random() * 60));
    await append("call.end", { step });
  }
  await append("done", { step: STEPS });
  await store.releaseLease(session, "main", token);
  process.stdout.write(`done ${session}\n`);
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
    const tail = (await store.chainMeta(((await store.branch(s.id, "main")) as { head: EventId }).head, 0, 1, true))[0];
    if (tail?.kind === "done") continue;
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
        if (!(e instanceof LeaseLost)) process.stderr.write(`${name}: ${String(e)}\n`);
      })
      .finally(() => driving.delete(s.id));
  }
  if (open === 0 && driving.size === 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
await store.close();
