/** What every command gets: output, the store (opened on first use), and the global options. */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { openStore, type Store } from "@strata/store";
import type { Out } from "./output.ts";

export interface Context {
  readonly out: Out;
  readonly dbPath: string;
  /** `--branch`, if given. */
  readonly branch: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly now: () => number;
  /** Opens the store (creating `.strata/` and the file when `create`). */
  store(options?: { create?: boolean; readonly?: boolean }): Store;
  /** Closes what was opened. */
  close(): void;
  /** Set when a command wants Ctrl-C handled itself. */
  readonly signal: AbortSignal;
}

export const DEFAULT_DB = ".strata/strata.db";

export function makeContext(init: {
  out: Out;
  db: string | undefined;
  branch: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  signal: AbortSignal;
}): Context {
  const dbPath = resolve(init.cwd, init.db ?? init.env.STRATA_DB ?? DEFAULT_DB);
  let store: Store | undefined;
  return {
    out: init.out,
    dbPath,
    branch: init.branch,
    env: init.env,
    cwd: init.cwd,
    now: Date.now,
    signal: init.signal,
    store(options = {}) {
      if (store === undefined) {
        const create = options.create ?? false;
        if (!existsSync(dbPath)) {
          if (!create) throw new NoDatabase(dbPath);
          mkdirSync(dirname(dbPath), { recursive: true });
        }
        store = openStore(dbPath, { create, readonly: options.readonly });
      }
      return store;
    },
    close() {
      store?.close();
      store = undefined;
    },
  };
}

export class NoDatabase extends Error {
  constructor(readonly path: string) {
    super(`no strata database at ${path}; run \`strata run\` to start a session there, or point --db (or STRATA_DB) at an existing one`);
  }
}
