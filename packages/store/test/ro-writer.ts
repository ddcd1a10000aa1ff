/**
 * A child process for the ST-24 and ST-17 tests: appends events to a session's "main" (a snapshot
 * every 5th) until it is told to stop (a line on stdin) or a time limit passes; prints "ready" once
 * the store is open, and the number of events written at the end.
 *
 *   node --import tsx ro-writer.ts <db> <session> <limit ms>
 */
import { type EventId, openStore, type SessionId } from "../src/index.ts";

const [db, session, limit] = process.argv.slice(2) as [string, SessionId, string];
const store = openStore(db, { busyTimeout: 30_000 });
let head = store.branch(session, "main")?.head as EventId;
let stop = false;
process.stdin.on("data", () => {
  stop = true;
});
process.stdout.write("ready\n");
const until = Date.now() + Number(limit);
let written = 0;
const step = () => {
  for (let i = 0; i < 5 && Date.now() < until; i++) {
    const [m] = store.append(session, "main", head, [{ kind: "patch@1", label: `w${written}`, data: JSON.stringify({ n: written }) }]);
    head = m?.id as EventId;
    if (++written % 5 === 0) store.putSnapshot(head, `{"n":${written}}`, [store.putBlob(`page ${written}`), null]);
  }
  if (stop || Date.now() >= until) {
    store.close();
    process.stdout.write(`${written}\n`);
  } else setTimeout(step, 5); // a steady trickle: readers get to read while it lands
};
step();
