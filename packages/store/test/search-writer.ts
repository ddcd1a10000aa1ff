/**
 * A writer for search-pending.test.ts and search-watermark.test.ts: appends events with searchable
 * text to one session of the file named by argv[2], one event per append, printing each committed
 * id (after its append has returned, so a printed id is committed) until it is killed. With
 * argv[3] = "derived", the texts are derived from the payload (SE-8) and held, not written (SE-10).
 * argv[4] names the session by creation order (default 0), so writers of several sessions can run at once.
 * With argv[3] = "open", it only opens the file for writing and closes it, in a process where no
 * search text function is registered (the opening writer's flush, SE-4).
 */
import { openStore, registerSearchText } from "../src/index.ts";

if (process.argv[3] === "open") {
  openStore(process.argv[2] as string).close();
  process.exit(0);
}
const derived = process.argv[3] === "derived";
if (derived) registerSearchText("held-test@1", (data) => (JSON.parse(data) as { text: string }).text);
const store = openStore(process.argv[2] as string);
// argv[4]: which session (by creation order, default the first): writers of different sessions run at once.
const first = store.listSessions().sort((a, b) => (a.id < b.id ? -1 : 1))[Number(process.argv[4] ?? 0)];
if (first === undefined) throw new Error("no session");
let head = store.branch(first.id, "main")?.head as never;
for (let i = 0; ; i++) {
  const text = `token${i} shared words`;
  const [e] = store.append(first.id, "main", head, [
    derived
      ? { kind: "held-test@1", label: "w", data: JSON.stringify({ text }), search: text, searchDerived: true }
      : { kind: "patch@1", label: "w", data: "{}", search: text },
  ]);
  head = e?.id as never;
  process.stdout.write(`${e?.id} ${i}\n`);
}
