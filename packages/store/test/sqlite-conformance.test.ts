/**
 * The store conformance suite (ST-27, test/conformance/, decision 0023) against the SQLite backend: on a
 * file (with a second connection for the tests of several handles), in memory, and in memory
 * behind an asynchronous port (every call a promise), which proves the suite awaits every call.
 */
import { join } from "node:path";
import { openStore } from "../src/index.ts";
import { asyncPort } from "./conformance/async-port.ts";
import { describeStoreConformance } from "./conformance/index.ts";
import { tempDir } from "./helpers.ts";

// Every property run makes a file (about 40 ms each on the 2-core machine): a third of the runs
// on files, all of them in memory.
describeStoreConformance("SQLite file", ({ now }) => openStore(join(tempDir(), "strata.db"), { now }), {
  connect: (store) => openStore(store.path),
  propertyRuns: 100,
});

describeStoreConformance("SQLite :memory:", ({ now }) => openStore(":memory:", { now }));

describeStoreConformance("SQLite :memory: behind an asynchronous port", ({ now }) => asyncPort(openStore(":memory:", { now })));
