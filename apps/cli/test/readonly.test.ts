/**
 * CLI-30 read commands open the database read-only (ST-24): in a directory the user cannot write,
 * as another user, `ls`, `log`, `show` (with `--files`), `diff`, `branches`, `prompt`, `bisect`
 * (with `--until-file`), `replay --verify`, `checkout`, `export` and `verify` work and leave no file behind (no -wal or -shm owned by the reader), and
 * none of them migrates or changes the file.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cleanEnv, cleanup, type Result, strata, tempDir } from "./cli-kit.ts";

const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) {
    const p = join(dir, f);
    const st = statSync(p);
    out[f] = st.isDirectory() ? `${st.uid}:dir` : `${st.uid}:${createHash("sha256").update(readFileSync(p)).digest("hex")}`;
  }
  return out;
}

/** Runs strata as `nobody` when this process is root (so the directory is truly not writable to it). */
function asReader(cwd: string, args: readonly string[]): Promise<Result> {
  const argv = [BIN, ...args];
  const [cmd, full] = ROOT_USER
    ? ["setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, ...argv]]
    : [process.execPath, argv];
  return new Promise((resolve) => {
    const p = spawn(cmd, full, { cwd, env: { ...cleanEnv(), NO_COLOR: "1", HOME: "/tmp" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (c) => {
      stdout += c;
    });
    p.stderr.on("data", (c) => {
      stderr += c;
    });
    p.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const locked: string[] = [];
afterAll(() => {
  for (const d of locked) chmodSync(d, 0o755);
  cleanup();
});

describe("CLI-30 read commands in a directory the reader cannot write", () => {
  it("every read command works as another user and leaves the directory byte-for-byte as it was", async () => {
    const base = tempDir();
    chmodSync(base, 0o755);
    const work = join(base, "work");
    mkdirSync(work);
    chmodSync(work, 0o755);
    const made = await strata(work, ["run"]);
    expect(made.code, made.stderr).toBe(0);
    const db = join(work, ".strata");
    chmodSync(join(db, "strata.db"), 0o644);
    chmodSync(db, 0o555);
    locked.push(db);
    const before = listing(db);
    const out = join(base, "out");
    mkdirSync(out);
    chmodSync(out, 0o777);
    const commands: string[][] = [
      ["ls"],
      ["log", "@last", "--limit", "3"],
      ["show", "@last", "--tree"],
      ["show", "@last@4", "--select", "todo item"],
      ["diff", "@last@4", "@last"],
      ["branches", "@last"],
      ["prompt", "@last", "--at", "4"],
      ["bisect", "@last", "--until", "call[status=executed]"],
      ["show", "@last", "--files"],
      ["bisect", "@last", "--until-file", "SUMMARY.md~Open questions"],
      ["checkout", "@last", "--to", join(out, "files")],
      ["replay", "@last", "--verify"],
      ["export", "@last"],
      ["verify"],
    ];
    for (const args of commands) {
      const r = await asReader(work, args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.stderr, args.join(" ")).not.toMatch(/unexpected error|read-only|readonly|SQLITE_/i);
      expect(listing(db), args.join(" ")).toEqual(before);
    }
    // checkout wrote the files where it was told, and only there
    expect(readdirSync(join(out, "files")).sort()).toEqual(["AGENTS.md", "SUMMARY.md", "notes"]);
  }, 180_000);
});
