/** Shared set-up for store tests: temp directories and small sessions. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import { type EventId, type EventInput, type EventMeta, openStore, type SessionId, type Store, type StoreOptions } from "../src/index.ts";

/** The repository root: children run there, where `tsx` resolves. */
export const ROOT = resolve(import.meta.dirname, "../../..");

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "strata-store-"));
  dirs.push(d);
  return d;
}

/** A store on a real file in a fresh temporary directory. */
export function fileStore(options: StoreOptions = {}): { store: Store; path: string } {
  const path = join(tempDir(), "strata.db");
  return { store: openStore(path, options), path };
}

export const ev = (data: string, label?: string): EventInput => ({ kind: "patch@1", label: label ?? null, data });

/** A session with `n` events after genesis on main. */
export function session(store: Store, n = 0): { id: SessionId; genesis: EventId; events: EventMeta[] } {
  const { session, genesis } = store.createSession({ title: "test", genesis: { kind: "genesis@1", data: "{}" } });
  const events: EventMeta[] = [];
  let head = genesis.id;
  for (let i = 0; i < n; i++) {
    const [m] = store.append(session.id, "main", head, [ev(`{"n":${i}}`, `e${i}`)]);
    events.push(m as EventMeta);
    head = (m as EventMeta).id;
  }
  return { id: session.id, genesis: genesis.id, events };
}

/** Runs a child process to its end: exit code, stdout and stderr. */
export function run(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], cwd: options.cwd ?? ROOT });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => {
      out += d;
    });
    p.stderr.on("data", (d) => {
      err += d;
    });
    p.on("error", reject);
    p.on("close", (code) => resolve({ code, out, err }));
  });
}

/**
 * Runs search-writer.ts on `path` (with `mode`, if any) and kills it with SIGKILL — the real
 * process — once it has printed `target` committed events. Answers the printed events: step
 * number → event id (a printed id was committed before it was printed).
 */
export function killWriterAfter(path: string, target: number, mode?: "derived", sessionIndex = 0): Promise<Map<number, number>> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "search-writer.ts"), path, mode ?? "given", String(sessionIndex)],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const out = new Map<number, number>();
    let buf = "";
    let err = "";
    child.stdout?.on("data", (c: Buffer) => {
      buf += c.toString();
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const l of lines) {
        const [id, i] = l.split(" ").map(Number);
        out.set(i as number, id as number);
      }
      if (out.size >= target) child.kill("SIGKILL");
    });
    child.stderr?.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.on("close", (_code, signal) => (signal === "SIGKILL" ? done(out) : fail(new Error(`writer ended without a kill: ${err}`))));
  });
}
