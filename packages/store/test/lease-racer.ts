/**
 * A child process for the ST-23 lease race: in each round (all racers start it at the same wall
 * clock time) it tries to take the lease of a session's "main", replacing a holder only if that
 * holder took it in an earlier round; a winner appends one event fenced with its token (which
 * fails with LeaseLost if the next round's winner took over first). Prints one
 * JSON line per round: {round, ok, token, appended}.
 *
 *   node --import tsx lease-racer.ts <db> <session> <racer> <rounds> <start ms> <interval ms>
 */
import { type EventId, LeaseLost, openStore, type SessionId } from "../src/index.ts";

const [db, session, racer, rounds, start, interval] = process.argv.slice(2) as [string, SessionId, string, string, string, string];
const store = openStore(db, { busyTimeout: 30_000 });
const roundOf = (owner: string) => Number(/round (\d+)/.exec(owner)?.[1] ?? -1);
const lines: string[] = [];
for (let round = 0; round < Number(rounds); round++) {
  while (Date.now() < Number(start) + round * Number(interval)) {
    // lockstep: every racer starts the round at the same moment
  }
  const r = store.acquireLease(session, "main", `racer ${racer} round ${round}`, (holder) => roundOf(holder.owner) < round);
  let appended = false;
  if (r.ok) {
    const head = store.branch(session, "main")?.head as EventId;
    try {
      store.append(session, "main", head, [{ kind: "patch@1", label: `round ${round} racer ${racer}`, data: "{}" }], {
        lease: r.lease.token,
      });
      appended = true;
    } catch (e) {
      // A racer of the next round took over between our acquisition and our append: fenced off.
      if (!(e instanceof LeaseLost)) throw e;
    }
  }
  lines.push(JSON.stringify({ round, ok: r.ok, token: r.ok ? r.lease.token : r.holder.token, appended }));
}
store.close();
process.stdout.write(`${lines.join("\n")}\n`);
