/**
 * A writer for search-pending.test.ts: appends events with searchable text to one session of the
 * file named by argv[2], one event per append, printing each committed id (after its append has
 * returned, so a printed id is committed) until it is killed.
 */
import { openStore } from "../src/index.ts";

const store = openStore(process.argv[2] as string);
const [first] = store.listSessions();
if (first === undefined) throw new Error("no session");
let head = store.branch(first.id, "main")?.head as never;
for (let i = 0; ; i++) {
  const [e] = store.append(first.id, "main", head, [{ kind: "patch@1", label: "w", data: "{}", search: `token${i} shared words` }]);
  head = e?.id as never;
  process.stdout.write(`${e?.id} ${i}\n`);
}
