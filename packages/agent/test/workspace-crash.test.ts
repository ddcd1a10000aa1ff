/**
 * WS-26: kill -9 while the agent writes files, then resume, with real processes. The child's
 * `run` calls write files slowly; the parent kills it at random moments (and once in the middle
 * of a `run`), then resumes it in a new process. After the resume the tree and the disk agree —
 * a checkout of the head into a fresh directory is the workspace, byte for byte — the call left
 * running settles with the files it wrote before the kill, and nothing committed before the kill
 * is lost or changed.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Element } from "@strata/dom";
import { replayVerify, Session } from "@strata/engine";
import { openStore } from "@strata/store";
import { afterEach, describe, expect, it } from "vitest";
import { checkoutWorkspace, diffWorkspaces, LABEL } from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import { readDir, render } from "./workspace-kit.ts";

afterEach(cleanup);
const child = join(import.meta.dirname, "workspace-crash-child.ts");

/** Starts the child and SIGKILLs it `delayMs` after it printed `after` (a line prefix). Resolves with the session id and what it printed. */
function startAndKill(db: string, root: string, after: string, delayMs: number): Promise<{ session: string; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", child, db, root, "start"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let armed = false;
    p.stderr.on("data", (c) => {
      err += c;
    });
    p.stdout.on("data", (c) => {
      out += c;
      if (!armed && out.split("\n").some((l) => l.startsWith(after))) {
        armed = true;
        setTimeout(() => p.kill("SIGKILL"), delayMs);
      }
    });
    p.on("exit", (_code, signal) => {
      const session = /SESSION (\S+)/.exec(out)?.[1];
      if (signal === "SIGKILL" && session !== undefined) resolve({ session, out });
      else reject(new Error(`the child ended without being killed (${signal}):\n${out}\n${err}`));
    });
  });
}

function resume(db: string, root: string, session: string): Promise<{ stop: string; calls: string[] }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", child, db, root, "resume", session], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (c) => {
      out += c;
    });
    p.stderr.on("data", (c) => {
      err += c;
    });
    p.on("exit", (code) => {
      const m = /RESULT (.*)/.exec(out);
      if (code === 0 && m) resolve(JSON.parse(m[1] as string));
      else reject(new Error(`resume failed (${code}):\n${out}\n${err}`));
    });
  });
}

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One crash and resume; returns what the resume found. */
async function crashAndResume(after: string, delayMs: number) {
  const dir = tempDir("strata-wscrash-");
  const db = join(dir, "s.db");
  const root = join(dir, "ws");
  mkdirSync(root);
  const { session: id, out } = await startAndKill(db, root, after, delayMs);
  // What was committed when the process died: every event on the branch, with its digest.
  const before = openStore(db);
  const head = before.branch(id as never, "main")?.head;
  const committed = head === undefined ? [] : before.chainMeta(head, 0, Number.MAX_SAFE_INTEGER).map((e) => [e.id, e.digest] as const);
  before.close();
  const result = await resume(db, root, id);
  const store = openStore(db);
  const { session } = Session.open(store, id as never);
  const context = `killed ${delayMs} ms after ${JSON.stringify(after)}; the child printed:\n${out}`;
  // nothing committed is lost or changed, and the new head follows the old one
  for (const [event, digest] of committed) expect(store.eventMeta(event)?.digest, context).toBe(digest);
  if (head !== undefined) expect(store.isAncestor(head, session.head.id), context).toBe(true);
  // the tree and the disk agree
  expect(result.stop, context).toBe("end-turn");
  expect(
    result.calls.every((c) => !/:(pending|running|arguments)$/.test(c)),
    context,
  ).toBe(true);
  const out2 = tempDir("strata-wscrash-out-");
  await checkoutWorkspace(session.durableTree, out2, store);
  expect(render(readDir(out2)), context).toEqual(render(readDir(root)));
  expect(replayVerify(store, session.id).ok, context).toBe(true);
  const interrupted = session.select("body call[status=interrupted]");
  const settle = (c: Element) =>
    session.log().findLast((e) => e.by === `e${c.id}` && (e.label === LABEL.callOutcome || e.label === LABEL.callInterrupted));
  const interruptedChanges = interrupted.map((c) => {
    const e = settle(c);
    return e === undefined || e.prior === null ? [] : diffWorkspaces(session.at(e.prior), session.at(e.id));
  });
  store.close();
  return { interrupted, interruptedChanges, out };
}

describe("WS-26 kill -9 while a run writes files, then resume", () => {
  it("WS-26 killed in the middle of a run command that writes files: the interrupted call records what it wrote; tree == disk", async () => {
    const r = await crashAndResume("RUNNING run", 300);
    expect(r.interrupted.map((c) => c.attrs.tool)).toEqual(["run"]);
    const paths = (r.interruptedChanges[0] ?? []).map((c) => (c.type === "delete" ? c.before.path : c.entry.path));
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => /^slow-[1-8]\.txt$/.test(p))).toBe(true);
  }, 120_000);

  it("WS-26 killed at random moments of a run that writes, edits and runs commands: after the resume the tree is the disk and nothing committed is lost", async () => {
    const seed = Number(process.env.WS_CRASH_SEED ?? Date.now() % 100_000);
    const next = random(seed);
    for (let i = 0; i < 5; i++) {
      const delay = Math.floor(next() * 2200);
      // the seed and the delay are in every assertion's message
      await crashAndResume("SESSION", delay).catch((e: Error) => {
        throw new Error(`seed ${seed}, round ${i}: ${e.message}`);
      });
    }
  }, 240_000);
});
