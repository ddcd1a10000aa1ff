/**
 * Test kit for the workspace tests: a real session in a real SQLite file, directories written
 * from a model and read back into one, and `git` for reference behaviour.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Tree } from "@strata/dom";
import { Session } from "@strata/engine";
import { applyFileChanges, type Capture, type FileChange, WS_LABEL } from "../src/index.ts";
import { fileStore } from "./agent-kit.ts";

/** What one path holds: a file's bytes and exec bit, or a link's target. */
export type ModelEntry =
  | { readonly kind: "file"; readonly bytes: Buffer; readonly exec: boolean }
  | { readonly kind: "link"; readonly target: string };
export type Model = Map<string, ModelEntry>;

/** A fresh session in a fresh database file. */
export function newSession(): { session: Session; store: ReturnType<typeof fileStore>["store"] } {
  const { store } = fileStore();
  return { session: Session.create(store), store };
}

/** Commits a capture's changes as one event (as the loop does with a call's outcome); returns the new tree. */
export function commitCapture(session: Session, capture: Capture, label: string = WS_LABEL.baseline): Tree {
  commitChanges(session, capture.changes, label);
  return session.tree;
}

export function commitChanges(session: Session, changes: readonly FileChange[], label = "test.files"): void {
  session.commit((d) => applyFileChanges(d, changes), { label });
}

/** Reads `dir` into a model, leaving out `skip` names at the root (.git, the database …). */
export function readDir(dir: string, skip: readonly string[] = [".git"]): Model {
  const out: Model = new Map();
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel === "" ? e.name : `${rel}/${e.name}`;
      if (rel === "" && skip.includes(e.name)) continue;
      const abs = join(dir, p);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) out.set(p, { kind: "link", target: readlinkSync(abs) });
      else if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.set(p, { kind: "file", bytes: readFileSync(abs), exec: (st.mode & 0o100) !== 0 });
    }
  };
  walk("");
  return out;
}

/** Writes `entry` at `rel` in `dir` (replacing whatever is there). */
export function put(dir: string, rel: string, entry: ModelEntry): void {
  const abs = join(dir, rel);
  mkdirSync(dirname(abs), { recursive: true });
  rmSync(abs, { force: true, recursive: true });
  if (entry.kind === "link") symlinkSync(entry.target, abs);
  else {
    writeFileSync(abs, entry.bytes);
    chmodSync(abs, entry.exec ? 0o755 : 0o644);
  }
}

export type FileModel = Extract<ModelEntry, { kind: "file" }>;
export const file = (text: string | Buffer, exec = false): FileModel => ({
  kind: "file",
  bytes: Buffer.isBuffer(text) ? text : Buffer.from(text),
  exec,
});
export const link = (target: string): ModelEntry => ({ kind: "link", target });

/** A comparable rendering of a model (sorted; bytes as hex). */
export function render(m: Model): string[] {
  return [...m.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, e]) => (e.kind === "link" ? `${p} -> ${e.target}` : `${p} ${e.exec ? "755" : "644"} ${e.bytes.toString("hex")}`));
}

/** Runs git in `dir` with no global or system configuration. */
export function git(dir: string, args: readonly string[], input?: string): string {
  return execFileSync("git", ["-c", "core.excludesFile=/dev/null", ...args], {
    cwd: dir,
    encoding: "utf8",
    input,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1", HOME: dir },
    stdio: ["pipe", "pipe", "pipe"],
  });
}
