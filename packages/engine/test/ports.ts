/**
 * The storage ports the engine's suites run on (decision 0036): a session written once runs on the
 * synchronous `Store` (SQLite), on the asynchronous port over SQLite (`asyncStore`, every promise
 * settled on a later turn, so a forgotten `await` shows) and on PostgreSQL (a fresh schema of the
 * server the test run started). A test awaits every call: a value awaited is itself.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AsyncStore, asyncStore, openStore, type Store } from "@strata/store";
import { openPgStore } from "@strata/store-postgres";
import { inject } from "vitest";

export type AnyPort = Store | AsyncStore;

/** A place to keep sessions: `open()` gives a handle on it (a new one each call, as a new process would). */
export interface PortPlace {
  open(): Promise<AnyPort>;
  /** Closes every handle opened and removes what was stored. */
  dispose(): Promise<void>;
}

export interface PortKind {
  readonly name: "sqlite" | "sqlite-async" | "postgres";
  readonly async: boolean;
  place(): PortPlace;
}

let schemas = 0;

function sqlitePlace(wrap: (s: Store) => AnyPort): PortPlace {
  const dir = mkdtempSync(join(tmpdir(), "strata-port-"));
  const opened: Store[] = [];
  return {
    async open() {
      const s = openStore(join(dir, "s.db"));
      opened.push(s);
      return wrap(s);
    },
    async dispose() {
      for (const s of opened) if (!s.closed) s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const PORTS: readonly PortKind[] = [
  { name: "sqlite", async: false, place: () => sqlitePlace((s) => s) },
  { name: "sqlite-async", async: true, place: () => sqlitePlace((s) => asyncStore(s, { defer: true })) },
  {
    name: "postgres",
    async: true,
    place() {
      const url = inject("pgUrl");
      const schema = `e${process.pid}_${Date.now().toString(36)}_${schemas++}`;
      const opened: AsyncStore[] = [];
      return {
        async open() {
          const s = await openPgStore(url, { schema, max: 4 });
          opened.push(s);
          return s;
        },
        async dispose() {
          for (const s of opened) if (!s.closed) await s.close();
        },
      };
    },
  },
];
