/**
 * The store conformance suite (ST-27, decision 0023) against PostgreSQL (decision 0035), unchanged:
 * every store a fresh schema of the one server the test run started (global-setup.ts), with a
 * second handle (another pool) for the tests of several writers, leases across handles and
 * durability.
 */
import type { Store } from "@strata/store";
import { describeStoreConformance } from "@strata/store/conformance";
import { inject } from "vitest";
import { openPgStore, type PgStore } from "../src/index.ts";

const url = inject("pgUrl");
let n = 0;
const fresh = () => `c${process.pid}_${Date.now().toString(36)}_${n++}`;

// The suite is typed against the synchronous Store and awaits every call: the port's promises
// are what it awaits (the cast says so, once).
const asStore = (s: PgStore) => s as unknown as Store;

describeStoreConformance(
  "PostgreSQL, the asynchronous port (ST-29)",
  async ({ now }) => asStore(await openPgStore(url, { schema: fresh(), now, max: 4 })),
  {
    connect: async (store) => asStore(await openPgStore(url, { schema: (store as unknown as PgStore).schema, max: 4 })),
    propertyRuns: 25,
    asynchronous: true,
  },
);
