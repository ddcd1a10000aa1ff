/**
 * EN-16 / ST-17: `verifyStore` (the store's checks and the engine's hooks: payload decoding and
 * snapshot replay) reads one consistent state, so a session being written by another process
 * verifies clean at every moment — no "snapshot does not match the event's place on its chain"
 * for a snapshot committed while verify ran. The writer is the crash harness's: commits, group
 * commits, forks and rewinds, with a snapshot every few events.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, type VerifyFinding } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { verifyStore } from "../src/index.ts";
import { ROOT, WRITER } from "./crash-writer.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("EN-16 verify while a writer commits in another process", () => {
  it("verifyStore repeated during continuous commits, forks and rewinds reports nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-verify-live-"));
    dirs.push(dir);
    const path = join(dir, "s.db");
    const child = spawn(process.execPath, ["--import", "tsx", WRITER, "--db", path, "--trial", "1", "--snapshot-every", "3"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let commits = 0;
    let ready = false;
    let err = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) {
        if (line.includes('"t":"ready"')) ready = true;
        if (line.includes('"t":"commit"')) commits++;
      }
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
    try {
      while (!ready) {
        if (child.exitCode !== null) throw new Error(`the writer ended: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const findings: VerifyFinding[] = [];
      let runs = 0;
      const start = commits;
      const until = Date.now() + 6000;
      while (Date.now() < until) {
        const store = openStore(path, { readonly: true });
        const report = verifyStore(store);
        store.close();
        findings.push(...report.findings);
        runs++;
        await new Promise((r) => setTimeout(r, 5)); // let the writer's lines through
      }
      expect(findings).toEqual([]);
      expect(runs).toBeGreaterThan(3);
      expect(commits - start, "the writer kept committing while verify ran").toBeGreaterThan(runs);
    } finally {
      child.kill("SIGKILL");
      await closed;
    }
    const after = openStore(path, { readonly: true });
    expect(verifyStore(after).findings).toEqual([]);
    after.close();
  });
});
