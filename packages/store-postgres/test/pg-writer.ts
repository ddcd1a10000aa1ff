/**
 * A writer for the crash and follow tests (postgres.test.ts): appends groups of three events to main
 * forever (or single events, with `single`), printing each event id once its append returned. The
 * test kills it with SIGKILL.
 * Usage: pg-writer.ts URL SCHEMA SESSION HEAD [single]
 */
import type { EventId, SessionId } from "@strata/store";
import { openPgStore } from "../src/index.ts";

const [url, schema, session, head, mode] = process.argv.slice(2) as [string, string, string, string, string?];
const size = mode === "single" ? 1 : 3;
const store = await openPgStore(url, { schema, max: 2 });
let at = Number(head) as EventId;
for (let g = 0; ; g++) {
  const group = Array.from({ length: size }, (_, k) => ({ kind: "patch@1", data: JSON.stringify({ g, k, pad: "x".repeat(500) }) }));
  const written = await store.append(session as SessionId, "main", at, group);
  at = (written.at(-1) as { id: EventId }).id;
  process.stdout.write(`${written.map((e) => e.id).join("\n")}\n`);
}
