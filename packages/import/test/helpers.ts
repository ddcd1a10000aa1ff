/** Shared helpers of the import tests: a temp store, and the checks every imported session must pass (IM-2, IM-8). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderPrompt } from "@strata/agent";
import { Session, verifyStore } from "@strata/engine";
import { openStore, type SessionId, type Store } from "@strata/store";
import { expect } from "vitest";

export const FIXTURES = join(import.meta.dirname, "fixtures", "foreign");
/** The real recordings (never copied into the repository): STRATA_FOREIGN_SESSIONS, else the shared reference set beside the clone. */
export const REFERENCE =
  process.env.STRATA_FOREIGN_SESSIONS ?? join(import.meta.dirname, "..", "..", "..", "..", "shared", "reference-data", "foreign-sessions");

const dirs: string[] = [];

/** A fresh temp directory, removed by `cleanup`. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "strata-import-"));
  dirs.push(dir);
  return dir;
}

/** A fresh SQLite store in a temp directory. */
export function tempStore(): Store {
  return openStore(join(tempDir(), "strata.db"));
}

export function cleanup(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/**
 * The laws an imported session keeps, whatever the source: the store verifies (every chain,
 * digest, snapshot), no branch head holds live work, and the prompt renders at every event of
 * every branch (IM-2, IM-8). Returns the number of events checked.
 */
export function checkImported(store: Store, id: SessionId): number {
  expect(verifyStore(store, id).findings).toEqual([]);
  const { session } = Session.open(store, id);
  let checked = 0;
  for (const b of session.branches()) {
    const { session: s } = Session.open(store, id, { branch: b.name });
    expect(s.live.size, `branch ${b.name} ends with open calls`).toBe(0);
    for (const e of store.chainMeta(b.head)) {
      expect(() => renderPrompt(s, { at: e.id })).not.toThrow();
      checked++;
    }
    s.close();
  }
  session.close();
  return checked;
}
