/**
 * An `opencode.db` for the tests (IM-17, IM-19), made from OpenCode's own schema
 * (`fixtures/foreign/opencode/opencode-schema.sql`, the tables of a database OpenCode 1.16 wrote)
 * and our storage fixture, the way OpenCode's JSON-to-SQLite migration copies a storage directory
 * (`packages/opencode/src/storage/json-migration.ts`): the ids come from the file paths, a
 * message's and a part's `data` is its JSON without the id columns, sessions of no project and
 * files that do not parse are left behind.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { FIXTURES } from "./helpers.ts";

export const OPENCODE = join(FIXTURES, "opencode");
export const STORAGE = join(OPENCODE, "storage");

const ls = (dir: string): string[] => {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
};

function readJson(path: string): Record<string, unknown> | unknown[] | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

export interface DbOptions {
  /** The `version` column of a session, by id (OpenCode 1.16 writes `v1.16.0`). */
  readonly version?: (id: string, recorded: string) => string;
  /** Anything else to do to the database before it is closed. */
  readonly extra?: (db: Database.Database) => void;
}

/** Writes `path` as an opencode.db holding the storage fixture's sessions. */
export function buildOpenCodeDb(path: string, options: DbOptions = {}): void {
  const db = new Database(path);
  db.exec(readFileSync(join(OPENCODE, "opencode-schema.sql"), "utf8"));
  db.prepare("INSERT INTO migration VALUES (?, ?)").run("20260127222353_familiar_lady_ursula", 1767600000000);
  const now = 1767600000000;
  const projects = new Set<string>();
  for (const f of ls(join(STORAGE, "project"))) {
    const p = readJson(join(STORAGE, "project", f)) as Record<string, unknown>;
    const id = f.replace(/\.json$/, "");
    projects.add(id);
    const time = (p.time ?? {}) as Record<string, number>;
    db.prepare(
      "INSERT INTO project (id, worktree, vcs, time_created, time_updated, time_initialized, sandboxes) VALUES (?, ?, ?, ?, ?, ?, '[]')",
    ).run(id, p.worktree, p.vcs ?? null, time.created ?? now, time.updated ?? now, time.initialized ?? null);
  }
  const sessions = new Set<string>();
  for (const project of ls(join(STORAGE, "session"))) {
    if (!projects.has(project)) continue;
    for (const f of ls(join(STORAGE, "session", project))) {
      const s = readJson(join(STORAGE, "session", project, f)) as Record<string, unknown> | undefined;
      if (s === undefined) continue;
      const id = f.replace(/\.json$/, "");
      sessions.add(id);
      const time = (s.time ?? {}) as Record<string, number>;
      const summary = (s.summary ?? {}) as Record<string, number>;
      db.prepare(
        `INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, share_url, summary_additions, summary_deletions,
          summary_files, revert, permission, time_created, time_updated, time_compacting, time_archived)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        project,
        s.parentID ?? null,
        s.slug ?? "",
        s.directory ?? "",
        s.title ?? "",
        options.version?.(id, String(s.version)) ?? s.version ?? "",
        (s.share as { url?: string } | undefined)?.url ?? null,
        summary.additions ?? null,
        summary.deletions ?? null,
        summary.files ?? null,
        s.revert === undefined ? null : JSON.stringify(s.revert),
        s.permission === undefined ? null : JSON.stringify(s.permission),
        time.created ?? now,
        time.updated ?? now,
        time.compacting ?? null,
        time.archived ?? null,
      );
    }
  }
  const messageSession = new Map<string, string>();
  for (const sid of ls(join(STORAGE, "message"))) {
    if (!sessions.has(sid)) continue;
    for (const f of ls(join(STORAGE, "message", sid))) {
      const m = readJson(join(STORAGE, "message", sid, f)) as Record<string, unknown> | undefined;
      if (m === undefined || Array.isArray(m)) continue;
      const id = f.replace(/\.json$/, "");
      messageSession.set(id, sid);
      const { id: _id, sessionID: _s, ...data } = m;
      const time = (m.time ?? {}) as Record<string, number>;
      db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)").run(id, sid, time.created ?? now, time.updated ?? now, JSON.stringify(data));
    }
  }
  for (const mid of ls(join(STORAGE, "part"))) {
    const sid = messageSession.get(mid);
    if (sid === undefined) continue;
    for (const f of ls(join(STORAGE, "part", mid))) {
      const p = readJson(join(STORAGE, "part", mid, f));
      if (p === undefined || Array.isArray(p)) continue;
      const { id: _id, sessionID: _s, messageID: _m, ...data } = p;
      db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)").run(f.replace(/\.json$/, ""), mid, sid, now, now, JSON.stringify(data));
    }
  }
  for (const f of ls(join(STORAGE, "todo"))) {
    const sid = f.replace(/\.json$/, "");
    if (!sessions.has(sid)) continue;
    for (const [position, t] of ((readJson(join(STORAGE, "todo", f)) ?? []) as Record<string, string>[]).entries())
      db.prepare("INSERT INTO todo VALUES (?, ?, ?, ?, ?, ?, ?)").run(sid, t.content, t.status, t.priority, position, now, now);
  }
  options.extra?.(db);
  db.close();
}
