/**
 * Writes fixtures/store/v1.db: a small store of schema version 1 (a session with a fork, a rewind
 * and a blob-sized payload) that the tests open forever after (ST-4). Run once per schema version;
 * never rewrite an existing fixture.
 *
 * Usage: tsx scripts/make-store-fixture.ts fixtures/store/v1.db
 */
import { existsSync } from "node:fs";
import { type EventId, openStore } from "@strata/store";

const path = process.argv[2] ?? "fixtures/store/v1.db";
if (existsSync(path)) {
  console.error(`${path} exists; fixtures are never rewritten`);
  process.exit(1);
}
let t = Date.UTC(2026, 10, 29, 12, 0, 0);
const store = openStore(path, { now: () => t++, inlineLimit: 64 });
const { session, genesis } = store.createSession({
  title: "v1 fixture",
  metadata: { purpose: "schema v1" },
  genesis: { kind: "genesis@1", label: "genesis", data: "{}" },
});
let head: EventId = genesis.id;
const ids: EventId[] = [];
for (const label of ["e1", "e2", "e3", "e4"]) {
  const [m] = store.append(session.id, "main", head, [
    { kind: "patch@1", label, data: JSON.stringify({ ops: [], note: label.repeat(label === "e4" ? 40 : 1) }) },
  ]);
  head = (m as { id: EventId }).id;
  ids.push(head);
}
store.fork(session.id, ids[2] as EventId, "experiment");
store.append(session.id, "experiment", ids[2] as EventId, [{ kind: "patch@1", label: "x1", data: "{}" }]);
const [more] = store.append(session.id, "main", head, [{ kind: "patch@1", label: "e5", data: "{}" }]);
store.moveHead(session.id, "main", ids[3] as EventId);
store.append(session.id, "main", ids[3] as EventId, [{ kind: "patch@1", label: "after-rewind", data: "{}" }]);
store.putSnapshot(ids[1] as EventId, '{"format":"fixture"}', [store.putBlob("page 0"), null]);
console.log(`wrote ${path}: session ${session.id}, ${(more as { id: number }).id} events`);
store.close();
