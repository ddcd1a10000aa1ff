/**
 * ST-17: verify reads one consistent state — one read transaction over everything it reads — so a
 * writer committing in another process meanwhile never shows up as damage.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, type VerifyFinding } from "../src/index.ts";
import { fileStore, ROOT, session } from "./helpers.ts";

describe("ST-17 verify while another process writes", () => {
  it("a writer appending events and snapshots continuously: repeated verifies find nothing", async () => {
    const { store, path } = fileStore();
    const s = session(store, 3);
    store.close();
    const child = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "ro-writer.ts"), path, s.id, "60000"], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    while (!out.startsWith("ready\n")) await new Promise((r) => setTimeout(r, 20));
    const reader = openStore(path, { readonly: true });
    const findings: VerifyFinding[] = [];
    const seen = new Set<number>();
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      const r = reader.verify(s.id);
      findings.push(...r.findings);
      seen.add(r.snapshots);
      await new Promise((r) => setTimeout(r, 1)); // let the writer's output through
    }
    reader.close();
    child.stdin.end("stop\n");
    expect(await closed).toBe(0);
    expect(findings).toEqual([]);
    expect(seen.size, "verify ran while snapshots were being added").toBeGreaterThan(2);
  });
});
