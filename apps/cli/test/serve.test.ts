/**
 * CLI-25: `strata serve` runs the read-only inspector over the database until it is stopped: it
 * prints where it listens, refuses a port that is taken with one line, changes nothing stored, and
 * exits 0 on SIGTERM. (What the server answers is `docs/spec/inspector.md`.)
 */
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, handleIn, script, serve, strata, tempDir } from "./cli-kit.ts";

afterAll(cleanup);

function exited(proc: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) resolve(proc.exitCode);
    else proc.once("exit", (code) => resolve(code));
  });
}

describe("CLI-25 serve", () => {
  it("listens on 127.0.0.1 (--port 0: a free port), serves the sessions read-only, refuses a taken port, stops on SIGTERM", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "ws"));
    const model = script(dir, "hello", [{ text: "Hello." }]);
    const handle = handleIn((await strata(dir, ["run", "say hello", "--model", model, "--workspace", "ws"])).stdout);
    const db = join(dir, ".strata", "strata.db");
    const sha = (): string => createHash("sha256").update(readFileSync(db)).digest("hex");
    const before = sha();

    const { proc, doc } = await serve(dir, ["--port", "0"]);
    try {
      expect(doc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(doc.token).toBeNull(); // loopback needs no token
      expect(doc.db).toBe(db);
      const res = await fetch(new URL("api/sessions", doc.url));
      expect(res.status).toBe(200);
      expect(JSON.stringify(await res.json())).toContain(handle);

      const port = new URL(doc.url).port;
      const taken = await strata(dir, ["serve", "--port", port]);
      expect(taken.code).toBe(1);
      expect(taken.stderr.trim()).toBe(`strata: port ${port} is in use; pick another with --port`);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await exited(proc)).toBe(0);
    expect(sha()).toBe(before);
  }, 180_000);
});
