/**
 * The store backend conformance suite (ST-27, decision 0023): the behaviour of the `Store` contract —
 * the ST rules of docs/spec/store.md that do not depend on how a backend keeps its data — as one
 * suite parameterized by a store factory, as LangGraph's checkpointer conformance tests are to its
 * savers. Every backend runs it unchanged; what only one backend has (SQLite's files, pragmas,
 * migrations, read-only modes, damage made in SQL) is tested in that backend's own test files.
 *
 * Run it for a backend from a `*.test.ts` file (it is exported as `@strata/store/conformance`):
 *
 *   describeStoreConformance("PostgreSQL", async ({ now }) => openPgStore(url, { now }), {
 *     connect: (store) => openPgStore(url),
 *   });
 *
 * The factory makes a new, empty store per call (it may be async, and must honour `now`, the
 * clock a test pins); `connect`, when the backend has it, opens another handle on a store's
 * database (the tests of several writers and of durability need it). Every test is async and
 * awaits every store call, so an asynchronous port passes it as it is; transaction bodies are
 * generators for the same reason (kit.ts: `body`).
 */
import { describe } from "vitest";
import { chainsConformance } from "./chains.ts";
import { digestsConformance } from "./digests.ts";
import { errorsConformance } from "./errors.ts";
import { type BackendTraits, Kit, type StoreFactory } from "./kit.ts";
import { leasesConformance } from "./leases.ts";
import { logConformance } from "./log.ts";
import { removalConformance } from "./removal.ts";
import { searchConformance } from "./search.ts";
import { sessionsConformance } from "./sessions.ts";
import { snapshotsConformance } from "./snapshots.ts";
import { transactionsConformance } from "./transactions.ts";
import { verifyConformance } from "./verify.ts";

export type { BackendTraits, ConformanceOptions, StoreFactory } from "./kit.ts";

/** Registers the conformance suite for the backend whose stores `factory` makes. */
export function describeStoreConformance(name: string, factory: StoreFactory, traits: BackendTraits = {}): void {
  describe(`ST-27 Store conformance: ${name}`, () => {
    const kit = new Kit(name, factory, traits);
    sessionsConformance(kit);
    logConformance(kit);
    chainsConformance(kit);
    transactionsConformance(kit);
    snapshotsConformance(kit);
    digestsConformance(kit);
    leasesConformance(kit);
    verifyConformance(kit);
    searchConformance(kit);
    removalConformance(kit);
    errorsConformance(kit);
  });
}
