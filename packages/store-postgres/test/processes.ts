/**
 * Test scripts as real processes of their own (the crash, follow and fleet tests): started with the
 * sources' condition and tsx, their stdout collected line by line (a line cut across chunks is
 * kept whole), killed with SIGKILL after the test file if still running.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll } from "vitest";

export interface Started {
  readonly child: ChildProcess;
  /** Every whole line the process printed so far. */
  readonly lines: string[];
  /** Resolves once the process has exited and its output is read. */
  readonly exited: Promise<void>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** Starts `script` (a file beside this one) with `args`. */
export function start(script: string, args: readonly string[]): Started {
  const child = spawn(process.execPath, ["--conditions=@strata/source", "--import", "tsx", join(import.meta.dirname, script), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (d: Buffer) => {
    buffer += d.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  return { child, lines, exited };
}

/** The event ids a pg-writer.ts process printed (each once its append returned). */
export const acknowledged = (p: Started): number[] => p.lines.filter((l) => /^\d+$/.test(l)).map(Number);
