/**
 * A remover for remove-crash.test.ts: removes every session of the file named by argv[2], oldest
 * first, printing "start ID" before each removal and "done ID" after it returned (committed),
 * then collects garbage ("gc") and prints "end". The test kills it with SIGKILL at any moment.
 */
import { openStore, textRefs } from "../src/index.ts";

const store = openStore(process.argv[2] as string);
for (const s of store.listSessions().reverse()) {
  process.stdout.write(`start ${s.id}\n`);
  store.removeSession(s.id);
  process.stdout.write(`done ${s.id}\n`);
}
process.stdout.write("gc\n");
store.collectGarbage({ refs: textRefs });
process.stdout.write("end\n");
