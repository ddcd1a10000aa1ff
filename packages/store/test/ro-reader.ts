/**
 * A child process for the ST-24 tests: opens a store read-only (possibly as another user, in a
 * directory it cannot write) and reads it. With a duration, it reads again and again for that long,
 * each time inside one read transaction: every session's main log, and verify. Prints one JSON line:
 * {access, sessions, events, findings, reads, grew, error?}.
 *
 *   node --import tsx ro-reader.ts <db> [duration ms]
 */
import { openStore, type SqliteStore, StoreError } from "../src/index.ts";

const [db, duration] = process.argv.slice(2) as [string, string | undefined];
const out: Record<string, unknown> = {};
try {
  const store = openStore(db, { readonly: true }) as SqliteStore;
  out.access = store.access;
  const until = Date.now() + Number(duration ?? 0);
  let reads = 0;
  let last = -1;
  let grew = 0;
  const findings: unknown[] = [];
  do {
    const events = store.readTransaction(() => {
      const sessions = store.listSessions();
      out.sessions = sessions.length;
      let n = 0;
      for (const s of sessions) n += store.log(s.id).length;
      return n;
    });
    // Each read transaction sees one committed state; states only move forward.
    if (events < last) findings.push(`went back from ${last} to ${events} events`);
    if (last >= 0 && events > last) grew++;
    last = events;
    findings.push(...store.verify().findings);
    reads++;
  } while (Date.now() < until);
  Object.assign(out, { events: last, findings, reads, grew });
  store.close();
} catch (e) {
  out.error = e instanceof StoreError ? { code: e.code, message: e.message } : String(e);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
