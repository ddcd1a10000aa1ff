/**
 * A child process for the ST-5 test of concurrent metadata merges: merges `count` keys named
 * `<prefix><i>` into a session's metadata, one `updateSession` each.
 *
 *   node --import tsx metadata-writer.ts <db> <session> <prefix> <count> <start (ms since the epoch)>
 *
 * Both writers wait for the same start time, so their merges overlap.
 */
import { openStore, type SessionId } from "../src/index.ts";

const [db, session, prefix, count, start] = process.argv.slice(2) as [string, string, string, string, string];
const store = openStore(db, { busyTimeout: 30_000 });
while (Date.now() < Number(start)) {
  // wait for the other writer
}
for (let i = 0; i < Number(count); i++) store.updateSession(session as SessionId, { metadata: { [`${prefix}${i}`]: i } });
store.close();
