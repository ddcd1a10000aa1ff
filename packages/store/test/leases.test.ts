/**
 * ST-23 on SQLite: leases of read-only opens and of a file without the lease table, and six
 * processes racing for one lease. The lease behaviour itself is the conformance suite
 * (conformance/leases.ts).
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, type SessionId, StoreError } from "../src/index.ts";
import { fileStore, run, session, tempDir } from "./helpers.ts";

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError);
    return (e as StoreError).code;
  }
  throw new Error("expected a StoreError");
};

describe("ST-23 leases", () => {
  it("read-only opens: the holder is visible; a file without the lease table (schema 2, unmigrated) has none; acquiring is read-only", () => {
    const { store, path } = fileStore();
    const s = session(store, 1);
    store.acquireLease(s.id, "main", "driver");
    store.close();
    const ro = openStore(path, { readonly: true });
    expect(ro.lease(s.id, "main")?.owner).toBe("driver");
    expect(code(() => ro.acquireLease(s.id, "main", "reader", () => true))).toBe("read-only");
    ro.close();
    const v2 = join(tempDir(), "v2.db");
    copyFileSync(join(import.meta.dirname, "../../../fixtures/store/v2.db"), v2);
    const old = openStore(v2, { readonly: true });
    const id = old.listSessions()[0]?.id as SessionId;
    expect(old.lease(id, "main")).toBeUndefined();
    expect(code(() => old.acquireLease(id, "main", "reader"))).toBe("read-only");
    expect(code(() => old.releaseLease(id, "main", 1))).toBe("read-only");
  });

  it("six processes racing in lockstep for many rounds: never two holders, tokens never repeat", async () => {
    const { store, path } = fileStore();
    const s = session(store);
    store.close();
    const rounds = 24;
    const racers = 6;
    const start = Date.now() + 5000;
    const child = join(import.meta.dirname, "lease-racer.ts");
    const results = await Promise.all(
      Array.from({ length: racers }, (_, i) =>
        run(process.execPath, ["--import", "tsx", child, path, s.id, String(i), String(rounds), String(start), "80"]),
      ),
    );
    const lines = results.flatMap((r) => {
      expect(r.code, r.err).toBe(0);
      return r.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { round: number; ok: boolean; token: number; appended: boolean });
    });
    expect(lines).toHaveLength(rounds * racers);
    const wins = lines.filter((l) => l.ok);
    for (let round = 0; round < rounds; round++)
      expect(wins.filter((w) => w.round === round).length, `round ${round}`).toBeLessThanOrEqual(1);
    expect(wins.length).toBeGreaterThan(rounds / 2);
    expect(new Set(wins.map((w) => w.token)).size, "every acquisition got its own token").toBe(wins.length);
    const byRound = [...wins].sort((a, b) => a.round - b.round).map((w) => w.token);
    expect(byRound, "tokens rise round after round").toEqual([...byRound].sort((a, b) => a - b));
    const after = openStore(path);
    const appended = after.log(s.id).filter((e) => e.label?.startsWith("round"));
    expect(appended.length, "a fenced append per acquisition, unless fenced off").toBe(wins.filter((w) => w.appended).length);
    expect(new Set(appended.map((e) => e.label?.split(" ")[1])).size, "never two appends of one round").toBe(appended.length);
    expect(after.lease(s.id, "main")?.token).toBe(Math.max(...byRound));
    after.close();
  });
});
