/** Spawns the real `strata` binary against a temp database (the e2e tests' only way in). */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

/** The environment without the settings that change what strata does (a developer's model, database, key). */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(STRATA_|OPENAI_)/.test(k)) delete env[k];
  return env;
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
      env: { ...cleanEnv(), NO_COLOR: "1", ...options.env },
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
      env: { ...cleanEnv(), NO_COLOR: "1" },
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

/** Writes a scripted model (`fixtures/README.md` describes the format) and returns its `--model` spec. */
export function script(dir: string, name: string, turns: readonly unknown[], extra: Record<string, unknown> = {}): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ name, turns, ...extra }));
  return `scripted:${path}`;
}

/** The alt script: reads both notes, writes SUMMARY.md, submits (needs the demo workspace). */
export const ALT = `scripted:${join(ROOT, "fixtures", "models", "alt.json")}`;

/** The handle `strata run` printed first (`session HANDLE (ID)`). */
export function handleIn(stdout: string): string {
  const m = /^session (\S+) \(([0-9A-Z]{26})\)/m.exec(stdout);
  if (m === null) throw new Error(`no "session HANDLE (ID)" line in:\n${stdout}`);
  return m[1] as string;
}

export function json<T = Record<string, unknown>>(r: Result): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.code}):\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

/** Runs a bash script in `cwd`; `$STRATA` (unquoted) is the real binary (the paths have no spaces). */
export function sh(cwd: string, script: string, env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    const p = spawn("bash", ["-c", script], {
      cwd,
      env: { ...cleanEnv(), NO_COLOR: "1", STRATA: `${process.execPath} ${BIN}`, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
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

/** Runs `tasks` with at most `n` at a time (the machine is shared: keep process fan-out small). */
export async function limited<T>(n: number, tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, tasks.length) }, worker));
  return out;
}

/**
 * Runs `main()` in this process with captured streams: for tables of usage errors, which never
 * open a file (a few rows of each table also go through the real binary).
 */
export async function inProcess(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<Result> {
  const { main } = await import("../src/main.ts");
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    cwd,
    env: { ...cleanEnv(), NO_COLOR: "1", ...env },
    stdout: { write: (s: string) => void (stdout += s) },
    stderr: { write: (s: string) => void (stderr += s) },
  });
  return { code, signal: null, stdout, stderr };
}

/** `strata serve ARGS` as a child process, resolved with its one JSON document once it listens. */
export function serve(
  cwd: string,
  args: readonly string[],
): Promise<{ proc: ChildProcess; doc: { url: string; token: string | null; db: string } }> {
  const proc = spawn(process.execPath, [BIN, "serve", "--json", ...args], {
    cwd,
    env: { ...cleanEnv(), NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    proc.stdout?.on("data", (c) => {
      out += c;
      try {
        resolve({ proc, doc: JSON.parse(out) });
      } catch {
        // not the whole document yet
      }
    });
    proc.stderr?.on("data", (c) => {
      err += c;
    });
    proc.on("exit", (code) => reject(new Error(`strata serve exited (${code}):\n${out}\n${err}`)));
  });
}
