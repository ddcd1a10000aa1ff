/**
 * The tests' PostgreSQL (pg-server.ts, global-setup.ts): the run's shared server answers over TCP on
 * 127.0.0.1 with trust authentication; `startPgServer` starts a server of its own (fsync on unless
 * STRATA_PG_FSYNC=off; owned by `postgres` when the tests run as root), `stop()` ends it and removes
 * its data directory; and a machine without PostgreSQL is told what to install.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { findPgBin, startPgServer } from "./pg-server.ts";

/** `psql URL -Atc SQL` as this process's user (no runuser: TCP with trust needs no OS user), its trimmed output. */
function psql(url: string, sql: string): Promise<string> {
  const bin = join(findPgBin(), "psql");
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      ["-X", url, "-Atc", sql],
      { encoding: "utf8", env: { ...process.env, PGCONNECT_TIMEOUT: "10" } },
      (err, stdout, stderr) => (err ? reject(new Error(`psql failed: ${stderr.trim() || err.message}`)) : resolve(stdout.trim())),
    );
  });
}

/** The process runs: it exists and is not a zombie (an exited postmaster waits for init, which on some machines reaps late). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return process.platform !== "linux";
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the tests' PostgreSQL server", () => {
  it("the run's shared server (inject('pgUrl')) answers select 1", async () => {
    const url = inject("pgUrl");
    expect(url).toMatch(/^postgres(ql)?:\/\//);
    expect(await psql(url, "select 1")).toBe("1");
  });

  it("startPgServer starts a second server of its own; stop() ends it and removes its data directory", async () => {
    const server = await startPgServer();
    let pid: number;
    try {
      expect(server.url).toBe(`postgres://strata@127.0.0.1:${server.port}/postgres`);
      expect(server.url).not.toBe(inject("pgUrl"));
      expect(
        await psql(server.url, "select current_user || ' ' || current_setting('fsync') || ' ' || current_setting('max_connections')"),
      ).toBe(`strata ${process.env.STRATA_PG_FSYNC === "off" ? "off" : "on"} 200`);
      pid = Number(readFileSync(join(server.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      expect(alive(pid)).toBe(true);
      if (process.getuid?.() === 0) {
        // PostgreSQL refuses root: as root the cluster belongs to, and runs as, `postgres`.
        const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
        expect(statSync(server.dataDir).uid).toBe(uid);
      }
    } finally {
      await server.stop();
    }
    expect(existsSync(server.dataDir)).toBe(false);
    // The postmaster is gone, not merely its directory.
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5_000 });
    await expect(psql(server.url, "select 1")).rejects.toThrow(/psql failed/);
  });

  it("without PostgreSQL's binaries the error says what to install, and that .ci/run does it", async () => {
    vi.stubEnv("STRATA_PG_BIN", "/nonexistent/strata-pg-bin");
    const failure = startPgServer();
    await expect(failure).rejects.toThrow(/apt-get install -y postgresql/);
    await expect(failure).rejects.toThrow(/\.ci\/run/);
  });
});
