/** Spawns the real `strata` binary against a temp database (the e2e tests' only way in). */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..", "..");
export const BIN = join(ROOT, "apps", "cli", "bin", "strata.mjs");

export interface Result {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

const dirs: string[] = [];
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "strata-cli-"));
  dirs.push(d);
  return d;
}
export function cleanup(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A temp directory with the demo workspace copied in, as `ws`. */
export function demoDir(): string {
  const d = tempDir();
  cpSync(join(ROOT, "fixtures", "demo-workspace"), join(d, "ws"), { recursive: true });
  return d;
}

export function strata(
  cwd: string,
  args: readonly string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Result> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (c) => {
      stdout += c;
    });
    p.stderr.on("data", (c) => {
      stderr += c;
    });
    p.stdin.end(options.input ?? "");
    p.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Starts `strata` and kills it with SIGKILL as soon as its stdout matches `until`. */
export function strataKilled(cwd: string, args: readonly string[], until: RegExp): Promise<Result> {
  return new Promise((resolve, reject) => {
    const p: ChildProcess = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    p.stdout?.on("data", (c) => {
      stdout += c;
      if (until.test(stdout)) p.kill("SIGKILL");
    });
    p.stderr?.on("data", (c) => {
      stderr += c;
    });
    p.on("close", (code, signal) =>
      signal === "SIGKILL"
        ? resolve({ code, signal, stdout, stderr })
        : reject(new Error(`not killed (exit ${code}):\n${stdout}\n${stderr}`)),
    );
  });
}

export function json<T = Record<string, unknown>>(r: Result): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}
