/**
 * A child process for the ST-3 test of concurrent creation: waits for a start time, then opens
 * (creating) the store at a path and writes one session.
 *
 *   node --import tsx create-racer.ts <db> <start (ms since the epoch)>
 */
import { openStore } from "../src/index.ts";

const [db, start] = process.argv.slice(2) as [string, string];
while (Date.now() < Number(start)) {
  // wait for the other creators
}
const store = openStore(db, { busyTimeout: 30_000 });
store.createSession({ title: `pid ${process.pid}`, genesis: { kind: "genesis@1", data: "{}" } });
store.close();
