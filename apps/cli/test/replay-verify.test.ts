/**
 * CLI-22 `replay --verify` proves both replay and every request (PR-16): on a demo session it says
 * every request re-renders byte-identical; after the recorded template is changed in the blob
 * table it exits 1, naming each turn's event and the `system` part, with the lines that differ.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { Session } from "@strata/engine";
import { openStore, type SessionId } from "@strata/store";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, json, ROOT, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

const Database = createRequire(join(ROOT, "packages", "store", "package.json"))("better-sqlite3");

describe("CLI-22 replay --verify re-renders every request", () => {
  it("ok on a fresh session; a tampered template is named with its event, part and diff (exit 1)", async () => {
    const dir = tempDir();
    expect((await strata(dir, ["run"])).code).toBe(0);
    const ok = await strata(dir, ["replay", "@last", "--verify"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/ok: 5 of 5 requests re-render byte-identical/);

    const path = join(dir, ".strata", "strata.db");
    const store = openStore(path, { readonly: true });
    const id = (store.listSessions()[0] as { id: SessionId }).id;
    const { session } = Session.open(store, id);
    const hash = session.selectOne("meta > config > templates > template")?.attrs.hash as string;
    const text = (store.getBlob(hash) as Buffer).toString("utf8");
    store.close();
    expect(text).toContain("careful coding agent");
    const db = new Database(path);
    db.prepare("UPDATE blobs SET data = ? WHERE hash = ?").run(
      Buffer.from(text.replace("careful coding agent", "reckless coding agent")),
      Buffer.from(hash, "hex"),
    );
    db.close();

    const bad = await strata(dir, ["replay", "@last", "--verify"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/REQUESTS DIFFER: 5 of 5 requests/);
    expect(bad.stdout).toMatch(/event \d+ \(turn #\d+, rendered at event \d+\): system/);
    expect(bad.stdout).toContain("- You are a careful coding agent");
    expect(bad.stdout).toContain("+ You are a reckless coding agent");
    const doc = json<{ ok: boolean; requests: { mismatchCount: number; mismatches: { part: string }[] } }>(
      await strata(dir, ["replay", "@last", "--verify", "--json"]),
    );
    expect(doc.ok).toBe(false);
    expect(doc.requests.mismatchCount).toBe(5);
    expect(doc.requests.mismatches.every((m) => m.part === "system")).toBe(true);
  }, 120_000);
});
