/** What every command gets: output, the store (opened on first use), and the global options. */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type AsyncStore, openStore, type Store } from "@strata/store";
import { UsageError } from "./errors.ts";
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
  /**
   * Where local state goes (new branches' working directories): the SQLite file's directory; for
   * a PostgreSQL URL, `.strata` in the current directory.
   */
  readonly home: string;
  /** True when `--db` (or STRATA_DB) is a PostgreSQL URL: only `port()` opens it. */
  readonly remote: boolean;
  /** Opens the PostgreSQL store `--db` names, behind the asynchronous port (decision 0035). */
  port(): Promise<AsyncStore>;
  /**
   * The store to read, on either port: the PostgreSQL store when `--db` is a URL, else the SQLite
   * file read-only (for the commands written once for both, decision 0036).
   */
  reader(): Promise<Store | AsyncStore>;
  /**
   * The store to drive sessions in, on either port: the PostgreSQL store when `--db` is a URL,
   * else the SQLite file (created with `create`): for `run` and `resume` (decision 0038).
   */
  writer(options?: { create?: boolean }): Promise<Store | AsyncStore>;
  /** Closes what was opened. */
  close(): Promise<void>;
  /** Set when a command wants Ctrl-C handled itself. */
  readonly signal: AbortSignal;
}

export const DEFAULT_DB = ".strata/strata.db";

/**
 * The database a command uses when neither `--db` nor STRATA_DB names one (CLI-44, decision 0043):
 * inside a git work tree, the nearest `.strata/strata.db` from `cwd` up to the work tree's root,
 * else the root's (where a new one is made) — so every directory of a project sees its sessions;
 * outside one, `./.strata/strata.db`. Nothing above the work tree, or above `cwd` outside one, is
 * ever looked at: an unrelated database in a parent directory is never picked up.
 */
export function defaultDbPath(cwd: string): string {
  const start = resolve(cwd);
  let root: string | undefined;
  for (let d = start; ; ) {
    if (existsSync(join(d, ".git"))) {
      root = d;
      break;
    }
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  if (root === undefined) return join(start, DEFAULT_DB);
  for (let d = start; ; d = dirname(d)) {
    const here = join(d, DEFAULT_DB);
    if (existsSync(here)) return here;
    if (d === root) return here;
  }
}

export function makeContext(init: {
  out: Out;
  db: string | undefined;
  branch: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  signal: AbortSignal;
}): Context {
  const named = init.db ?? (init.env.STRATA_DB === "" ? undefined : init.env.STRATA_DB);
  const given = named ?? defaultDbPath(init.cwd);
  const remote = /^postgres(ql)?:\/\//i.test(given);
  const dbPath = remote ? given.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@") : resolve(init.cwd, given);
  let store: Store | undefined;
  let port: Promise<AsyncStore> | undefined;
  return {
    remote,
    home: remote ? resolve(init.cwd, ".strata") : dirname(dbPath),
    port() {
      if (!remote) throw new UsageError(`${dbPath} is not a PostgreSQL URL (postgres://…)`);
      port ??= import("@strata/store-postgres").then((m) => m.openPgStore(given));
      return port;
    },
    async reader() {
      return remote ? await this.port() : this.store({ readonly: true });
    },
    async writer(options = {}) {
      return remote ? await this.port() : this.store(options);
    },
    out: init.out,
    dbPath,
    branch: init.branch,
    env: init.env,
    cwd: init.cwd,
    now: Date.now,
    signal: init.signal,
    store(options = {}) {
      // The SQLite file; every command reaches the store through `reader()` or `writer()`, which
      // answer the PostgreSQL port for a postgres:// URL (issue 15), so this is never asked for one.
      if (remote) throw new Error(`internal: ctx.store() opens a SQLite file, and ${dbPath} is a PostgreSQL URL; use reader() or writer()`);
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
    async close() {
      store?.close();
      store = undefined;
      const p = port;
      port = undefined;
      if (p !== undefined) await (await p.catch(() => undefined))?.close();
    },
  };
}

export class NoDatabase extends Error {
  constructor(readonly path: string) {
    super(`no strata database at ${path}; run \`strata run\` to start a session there, or point --db (or STRATA_DB) at an existing one`);
  }
}
