/**
 * Writes a store fixture of the schema version this build writes: `fixtures/store/v<N>.db`, a
 * small store that the tests open forever after (ST-4) — two sessions, a fork, a rewind (its old
 * head kept as a branch), a blob-sized payload, labels and causes both set and null, and snapshots
 * whose page lists have empty pages, searchable text given and (schema 5 on) derived from a payload. Run once per schema version; an existing fixture is never
 * rewritten (`v1.db` was written by an earlier version of this script: one session, a format-1
 * snapshot).
 *
 * Usage: tsx scripts/make-store-fixture.ts fixtures/store/v<N>.db
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { type EventId, type EventMeta, openStore, registerSearchText, SCHEMA_VERSION } from "@strata/store";

const path = process.argv[2] ?? `fixtures/store/v${SCHEMA_VERSION}.db`;
if (basename(path) !== `v${SCHEMA_VERSION}.db`) {
  console.error(
    `this build writes schema version ${SCHEMA_VERSION}: the fixture must be named v${SCHEMA_VERSION}.db, not ${basename(path)}`,
  );
  process.exit(2);
}
if (existsSync(path)) {
  console.error(`${path} exists; fixtures are never rewritten`);
  process.exit(1);
}
let t = Date.UTC(2026, 11, 1, 12, 0, 0);
const store = openStore(path, { now: () => t++, inlineLimit: 64 });
const one = (m: EventMeta[]): EventMeta => m[0] as EventMeta;

const a = store.createSession({
  title: `v${SCHEMA_VERSION} fixture`,
  metadata: { purpose: `schema v${SCHEMA_VERSION}`, nested: { k: [1, 2] } },
  genesis: { kind: "genesis@1", label: "genesis", by: "fixture", data: "{}" },
});
let head: EventId = a.genesis.id;
const ids: EventId[] = [];
for (const [label, by] of [
  ["e1", "user"],
  ["e2", null],
  ["e3", "model"],
  ["e4", null],
] as const) {
  const data = JSON.stringify({ ops: [], note: label.repeat(label === "e4" ? 40 : 1) }); // e4 is stored as a blob
  head = one(store.append(a.session.id, "main", head, [{ kind: "patch@1", label, by, data }])).id;
  ids.push(head);
}
store.fork(a.session.id, ids[1] as EventId, "experiment");
// Searchable text (SE-4, schema 4 on): one event on a fork, one in the other session.
const x = store.append(a.session.id, "experiment", ids[1] as EventId, [
  { kind: "patch@1", label: "x1", data: '{"x":1}', search: "the experiment branch reads notes/planning.md" },
  { kind: "patch@1", label: null, by: "tool", data: '{"x":2}' },
]);
head = one(store.append(a.session.id, "main", head, [{ kind: "patch@1", label: "e5", data: "{}" }])).id;
store.moveHead(a.session.id, "main", ids[2] as EventId);
head = one(store.append(a.session.id, "main", ids[2] as EventId, [{ kind: "patch@1", label: "after-rewind", data: "{}" }])).id;
const page = store.putBlob("page 0");
store.putSnapshot(ids[1] as EventId, '{"format":"fixture"}', [page, null, null]);
store.putSnapshot(x[1]?.id as EventId, '{"format":"fixture"}', [page, store.putBlob("page 1 on experiment"), null]);

const b = store.createSession({ title: null, genesis: { kind: "genesis@1", data: "{}" } });
store.append(b.session.id, "main", b.genesis.id, [
  { kind: "patch@1", label: "only", by: "user", data: '{"unicode":"é ✓ 𝄞"}', search: "décisions ✓ 𝄞 and open questions" },
  { kind: "patch@1", data: "" },
]);
// Searchable text derived from the payload (SE-8, schema 5 on): indexed with no copy of it kept.
registerSearchText("note@1", (data) => (JSON.parse(data) as { text: string }).text);
store.append(b.session.id, "main", store.branch(b.session.id, "main")?.head as EventId, [
  {
    kind: "note@1",
    label: "derived",
    data: '{"text":"a derived text found again from its payload"}',
    search: "a derived text found again from its payload",
    searchDerived: true,
  },
]);
console.log(`wrote ${path} (schema ${SCHEMA_VERSION}): sessions ${a.session.id} and ${b.session.id}, head of main ${head}`);
store.close();
