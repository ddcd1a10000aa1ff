/**
 * The store conformance suite (ST-27, test/conformance/, decision 0023) against the SQLite backend: on a
 * file (with a second connection for the tests of several handles), in memory, and in memory
 * behind an asynchronous port (every call a promise), which proves the suite awaits every call.
 */
import { join } from "node:path";
import { asyncStore, openStore, type Store } from "../src/index.ts";
import { describeStoreConformance } from "./conformance/index.ts";
import { tempDir } from "./helpers.ts";

// Every property run makes a file (about 40 ms each on the 2-core machine): a third of the runs
// on files, all of them in memory.
describeStoreConformance("SQLite file", ({ now }) => openStore(join(tempDir(), "strata.db"), { now }), {
  connect: (store) => openStore(store.path),
  propertyRuns: 100,
});

describeStoreConformance("SQLite :memory:", ({ now }) => openStore(":memory:", { now }));

// The port's promises, settled on a later turn (a test that forgot an await fails here); the suite
// is typed against Store and awaits every call.
describeStoreConformance(
  "SQLite :memory: behind the asynchronous port (asyncStore)",
  ({ now }) => asyncStore(openStore(":memory:", { now }), { defer: true }) as unknown as Store,
);
