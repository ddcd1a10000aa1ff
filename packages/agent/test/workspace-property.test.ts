/**
 * WS-5, WS-9, WS-13 … WS-16, property: random writes, edits (same size too, right after a capture:
 * the racy case), deletes, renames, mode changes, symlinks (pointing inside, outside, at
 * directories), ignored files and process restarts applied to a directory; after each step a
 * capture committed to a real session. After each capture the tree's files equal the model; a
 * checkout of the tree at every step into a fresh directory equals the model at that step byte
 * for byte; in-place checkouts (incremental, with `from`) between random steps equal the model
 * and leave ignored files alone. Failing seeds are pinned below.
 */
import { createHash } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Tree } from "@strata/dom";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { checkoutWorkspace, WorkspaceTracker, workspaceFiles } from "../src/index.ts";
import { cleanup, tempDir } from "./agent-kit.ts";
import {
  commitCapture,
  type FileModel,
  file,
  link,
  type Model,
  type ModelEntry,
  newSession,
  put,
  readDir,
  render,
} from "./workspace-kit.ts";

afterEach(cleanup);

type Op =
  | { readonly op: "write"; readonly path: string; readonly bytes: Uint8Array; readonly exec: boolean }
  | { readonly op: "edit"; readonly pick: number; readonly bytes: Uint8Array }
  | { readonly op: "same-size"; readonly pick: number }
  | { readonly op: "delete"; readonly pick: number }
  | { readonly op: "rename"; readonly pick: number; readonly to: string }
  | { readonly op: "chmod"; readonly pick: number }
  | { readonly op: "symlink"; readonly path: string; readonly target: string }
  | { readonly op: "ignored"; readonly path: string; readonly bytes: Uint8Array }
  | { readonly op: "toggle-ignore" }
  | { readonly op: "restart" };

/** The two ignore files the directory switches between: with `tmp/` ignored, and without. */
const IGNORE = "*.log\ntmp/\n";
const IGNORE_LOGS = "*.log\n";
/** What the ignore file `rules` leaves out, for the paths this test uses. */
const ignoredBy = (rules: string, path: string): boolean => path.endsWith(".log") || (rules === IGNORE && path.startsWith("tmp/"));
const seg = fc.constantFrom("a", "b", "c", "d.txt");
const pathArb = fc.array(seg, { minLength: 1, maxLength: 3 }).map((s) => s.join("/"));
const bytesArb = fc.uint8Array({ maxLength: 48 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("write" as const), path: pathArb, bytes: bytesArb, exec: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("edit" as const), pick: fc.nat(), bytes: bytesArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("same-size" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("delete" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("rename" as const), pick: fc.nat(), to: pathArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("chmod" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("symlink" as const),
      path: pathArb,
      target: fc.constantFrom("a", "b/c", "../outside", "/etc", ".", "..", "nowhere"),
    }),
  },
  // Ignored files live apart from the tracked names (a, b, c, d.txt): they never stand in a tracked file's way.
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("ignored" as const),
      path: fc.constantFrom("x.log", "z.log", "tmp/z", "tmp/q/b"),
      bytes: bytesArb,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: "toggle-ignore" as const }) },
  { weight: 1, arbitrary: fc.constant({ op: "restart" as const }) },
);

/** The directory as the test knows it: tracked files (the record's truth), ignored files on disk, the ignore file. */
interface World {
  readonly model: Model;
  readonly extras: Model;
  rules: string;
}

/** Paths of the model in order (ops pick among them by index). */
const keys = (m: Model): string[] => [...m.keys()].filter((p) => p !== ".gitignore").sort();

function isLinkOrFile(abs: string): boolean {
  try {
    return !lstatSync(abs).isDirectory();
  } catch {
    return false;
  }
}

/** Makes room for `path`: files and links above it, and anything below it, go (from the disk and the world). */
function clear(dir: string, w: World, path: string): void {
  const parts = path.split("/");
  for (let i = 1; i < parts.length; i++) {
    const above = parts.slice(0, i).join("/");
    if (isLinkOrFile(join(dir, above))) {
      w.model.delete(above);
      w.extras.delete(above);
      rmSync(join(dir, above), { force: true });
    }
  }
  for (const m of [w.model, w.extras]) for (const p of [...m.keys()]) if (p.startsWith(`${path}/`)) m.delete(p);
  rmSync(join(dir, path), { recursive: true, force: true });
}

/** Applies `op` to the directory and the world. */
function apply(dir: string, w: World, op: Op): void {
  const { model } = w;
  const pick = (n: number): string | undefined => {
    const k = keys(model);
    return k.length === 0 ? undefined : k[n % k.length];
  };
  const pickFile = (n: number): string | undefined => {
    const k = keys(model).filter((p) => model.get(p)?.kind === "file");
    return k.length === 0 ? undefined : k[n % k.length];
  };
  switch (op.op) {
    case "write": {
      clear(dir, w, op.path);
      const e = file(Buffer.from(op.bytes), op.exec);
      put(dir, op.path, e);
      model.set(op.path, e);
      return;
    }
    case "edit": {
      const p = pickFile(op.pick);
      if (p === undefined) return;
      const e = model.get(p) as FileModel;
      const next = file(Buffer.concat([e.bytes, op.bytes, Buffer.from("+")]), e.exec);
      writeFileSync(join(dir, p), next.bytes);
      model.set(p, next);
      return;
    }
    case "same-size": {
      const p = pickFile(op.pick);
      if (p === undefined) return;
      const e = model.get(p) as FileModel;
      if (e.bytes.length === 0) return;
      const flipped = Buffer.from(e.bytes.map((b) => b ^ 0xff));
      // Same size, right after a capture: on a coarse clock only the racy rule notices this one.
      writeFileSync(join(dir, p), flipped);
      model.set(p, file(flipped, e.exec));
      return;
    }
    case "delete": {
      const p = pick(op.pick);
      if (p === undefined) return;
      rmSync(join(dir, p), { force: true });
      model.delete(p);
      return;
    }
    case "rename": {
      const p = pick(op.pick);
      if (p === undefined || op.to === p || op.to.startsWith(`${p}/`) || p.startsWith(`${op.to}/`)) return;
      const e = model.get(p) as ModelEntry;
      model.delete(p);
      clear(dir, w, op.to);
      mkdirSync(dirname(join(dir, op.to)), { recursive: true });
      renameSync(join(dir, p), join(dir, op.to));
      model.set(op.to, e);
      return;
    }
    case "chmod": {
      const p = pickFile(op.pick);
      if (p === undefined) return;
      const e = model.get(p) as FileModel;
      chmodSync(join(dir, p), e.exec ? 0o644 : 0o755);
      model.set(p, file(e.bytes, !e.exec));
      return;
    }
    case "symlink": {
      clear(dir, w, op.path);
      const e = link(op.target);
      put(dir, op.path, e);
      model.set(op.path, e);
      return;
    }
    case "ignored": {
      const e = file(Buffer.from(op.bytes));
      put(dir, op.path, e);
      // Written where the rules ignore it, it stays out of the record, unless the record tracks it already.
      if (model.has(op.path) || !ignoredBy(w.rules, op.path)) model.set(op.path, e);
      else w.extras.set(op.path, e);
      return;
    }
    case "toggle-ignore": {
      w.rules = w.rules === IGNORE ? IGNORE_LOGS : IGNORE;
      const e = file(w.rules);
      put(dir, ".gitignore", e);
      model.set(".gitignore", e);
      // What the new rules no longer ignore is tracked from now on; what they ignore stays tracked if it was (as in git).
      for (const [p, x] of [...w.extras])
        if (!ignoredBy(w.rules, p)) {
          model.set(p, x);
          w.extras.delete(p);
        }
      return;
    }
    case "restart":
      return;
    default:
      op satisfies never;
  }
}

const sha = (b: Buffer | string): string => createHash("sha256").update(b).digest("hex");

/** The model as the tree should record it. */
function expectedRecord(model: Model): string[] {
  return [...model.entries()]
    .map(([p, e]) =>
      e.kind === "link"
        ? `${p} link ${Buffer.byteLength(e.target)} ${sha(e.target)}`
        : `${p} ${e.exec ? "755" : "644"} ${e.bytes.length} ${sha(e.bytes)}`,
    )
    .sort();
}
function recordOf(tree: Tree): string[] {
  return [...workspaceFiles(tree).values()].map((e) => `${e.path} ${e.mode} ${e.size} ${e.hash}`).sort();
}

interface Step {
  readonly tree: Tree;
  readonly model: Model;
  readonly rules: string;
}

/** The change summary a capture should report after a checkout of `step`: the ignored files on disk that its rules do not ignore. */
const visibleExtras = (extras: Model, step: Step): string[] =>
  [...extras.keys()]
    .filter((p) => !ignoredBy(step.rules, p) && !step.model.has(p))
    .map((p) => `add ${p}`)
    .sort();

async function runOps(ops: readonly Op[], checkoutOrder: readonly number[]): Promise<void> {
  const { session, store } = newSession();
  const dir = tempDir("strata-prop-");
  const w: World = { model: new Map([[".gitignore", file(IGNORE)]]), extras: new Map(), rules: IGNORE };
  put(dir, ".gitignore", file(IGNORE));
  let tracker = new WorkspaceTracker(dir, store);
  let tree = commitCapture(session, await tracker.baseline(session.tree));
  const steps: Step[] = [{ tree, model: new Map(w.model), rules: w.rules }];
  for (const [i, op] of ops.entries()) {
    apply(dir, w, op);
    if (op.op === "restart") tracker = new WorkspaceTracker(dir, store);
    tree = commitCapture(session, await tracker.capture(tree), "test.step");
    expect(recordOf(tree), `after step ${i}: ${JSON.stringify(op)}`).toEqual(expectedRecord(w.model));
    steps.push({ tree, model: new Map(w.model), rules: w.rules });
  }
  // Every step, checked out fresh: exactly the record.
  for (const [k, step] of steps.entries()) {
    const out = tempDir("strata-out-");
    await checkoutWorkspace(step.tree, out, store);
    expect(render(readDir(out)), `fresh checkout of step ${k}`).toEqual(render(step.model));
  }
  // In place, incrementally, between random steps: the record's files, and the ignored files as they were.
  const extras = new Map(w.extras);
  let at = steps.length - 1;
  for (const n of checkoutOrder) {
    const k = n % steps.length;
    const step = steps[k] as Step;
    await checkoutWorkspace(step.tree, dir, store, { from: (steps[at] as Step).tree });
    at = k;
    for (const p of step.model.keys()) extras.delete(p); // a tracked file of the target replaces an ignored one
    expect(render(readDir(dir)), `in-place checkout of step ${k}`).toEqual(render(new Map([...step.model, ...extras])));
    // The tracker agrees: nothing changed relative to that step, but for ignored files its rules do not ignore.
    const changes = (await tracker.capture(step.tree)).changes.map(
      (c) => `${c.type} ${c.type === "delete" ? c.before.path : c.entry.path}`,
    );
    expect(changes, `capture after the checkout of step ${k}`).toEqual(visibleExtras(extras, step));
  }
  // And without `from`: a full checkout over whatever is there removes what neither set of rules ignores.
  const first = steps[0] as Step;
  const last = steps[at] as Step;
  const disk = new Map([...last.model, ...extras]);
  for (const p of [...disk.keys()]) if (!first.model.has(p) && !ignoredBy(last.rules, p) && !ignoredBy(first.rules, p)) disk.delete(p);
  await checkoutWorkspace(first.tree, dir, store);
  expect(render(readDir(dir)), "full checkout of step 0").toEqual(render(new Map([...disk, ...first.model])));
  expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(IGNORE);
  store.close();
}

describe("WS-5 WS-13 property: capture and checkout follow a model of the directory", () => {
  it("WS-5 WS-8 WS-9 WS-13 WS-15 random operations: the record equals the model after each capture; checkout at every step reproduces it (seeded)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), fc.array(fc.nat(), { maxLength: 5 }), (ops, order) =>
        runOps(ops, order),
      ),
      { numRuns: Number(process.env.WS_PROPERTY_RUNS ?? 60), seed: Number(process.env.WS_PROPERTY_SEED ?? 2713) },
    );
  }, 600_000);

  // Pinned counterexamples (each once failed).
  it("WS-8 WS-13 pinned: a file tracked once its directory stopped being ignored stays tracked; a full checkout to a step ignoring it leaves it", async () => {
    await runOps([{ op: "toggle-ignore" }, { op: "ignored", path: "tmp/q/b", bytes: new Uint8Array() }, { op: "chmod", pick: 0 }], []);
  });
});
