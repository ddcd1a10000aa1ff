/**
 * IN-2 after ST-35: a session removed while the inspector runs. On SQLite the ids of the removed
 * session's newest events may be handed out again to the next session's events; a tree the server
 * cached for the removed session must never answer for the new one (its cache is keyed by session
 * and event), and the removed session is simply gone (404).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeId } from "@strata/dom";
import { Session } from "@strata/engine";
import { openStore, type Store } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import { type Running, STATIC_DIR, startServer } from "../src/index.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function made(store: Store, word: string): { id: string; head: number } {
  const s = Session.create(store, { title: word });
  for (let i = 0; i < 3; i++) s.commit([["ins", nodeId(3), null, { tag: "note", text: `${word} ${i}` }]], { label: "note" });
  return { id: s.id, head: s.head.id };
}

describe("the inspector after a session is removed", () => {
  it("a new session whose event ids the removed one had is shown as itself, never from the removed one's cached tree", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-removed-"));
    dirs.push(dir);
    const store = openStore(join(dir, "s.db"), { create: true });
    const keep = made(store, "kept");
    const gone = made(store, "removed");
    let srv: Running | undefined;
    try {
      srv = await startServer({ store, port: 0, staticDir: STATIC_DIR, pollMs: 20 });
      const xml = async (session: string, at: number) => {
        const r = await fetch(new URL(`/api/sessions/${session}/tree?at=${at}&format=xml`, srv?.url));
        return { status: r.status, body: await r.text() };
      };
      expect((await xml(gone.id, gone.head)).body).toContain("removed 2");
      store.removeSession(gone.id as never);
      const next = made(store, "new");
      // the point of the test: the new session's events took the removed one's ids
      expect(next.head).toBe(gone.head);
      const shown = await xml(next.id, next.head);
      expect(shown.status).toBe(200);
      expect(shown.body).toContain("new 2");
      expect(shown.body).not.toContain("removed");
      expect((await xml(gone.id, gone.head)).status).toBe(404);
      expect((await xml(keep.id, keep.head)).body).toContain("kept 2");
    } finally {
      await srv?.close();
      store.close();
    }
  });
});
